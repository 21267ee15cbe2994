/*
 * sweep.h — the authors' rules' work on the loop (store/rules.h): events
 * are removed at their NIP-40 expiration, a vanished author's history
 * (NIP-62) is purged, and a store made before the rules is brought to
 * them once, and its rows are packed (store/rowjson.c). Each runs in bounded steps inside ingest's batch, as
 * retention's do, so the loop never waits long and the removals commit
 * with the batch.
 *
 * The expiry timer is armed at the next expiration the store holds, and
 * moved earlier when ingest stores an event that expires sooner (an
 * ingest listener), so an event is removed within a step of its time.
 */
#ifndef CACHEBOX_SYNC_SWEEP_H
#define CACHEBOX_SYNC_SWEEP_H

#include <stdint.h>

struct ingest;
struct loop;
struct store;
struct sweep;

/* What the sweep did since start. */
struct sweep_stats {
	uint64_t	expired;	/* events removed at their expiration */
	uint64_t	vanished;	/* events of vanished authors removed */
	int64_t		fill_left;	/* rows of an older store still to convert */
	int64_t		pack_left;	/* of its rows still to pack (last step's count) */
	int64_t		vanish_pending;	/* requests to vanish still being purged */
};

/*
 * The sweep of store on loop, its steps inside ingest's batch (ingest is
 * listened to for events that expire). The first look is at once. NULL on
 * allocation failure. Everything passed is borrowed.
 */
struct sweep	*sweep_new(struct loop *, struct store *, struct ingest *);
/* Stop listening, cancel the timers, free. NULL is a no-op. */
void		 sweep_free(struct sweep *);
/* Look again at once (a request to vanish was stored). */
void		 sweep_kick(struct sweep *);
/*
 * The oldest second worth asking relays for of pubkey: after its request
 * to vanish (NIP-62) nothing at or before it is kept, so the drain and
 * NIP-77 never ask for it again. The second after the request, or -1
 * when every second is (or on a store error: asking more is harmless).
 */
int64_t		 sweep_author_floor(struct store *, const uint8_t pubkey[32]);
/* The counts, owned by the sweep. */
const struct sweep_stats *sweep_stats(const struct sweep *);

#endif
