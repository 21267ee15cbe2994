/*
 * dedup.h — the ingest path's lookup of an id already in `events`: what
 * the stored row says the event is (author, second, kind). A relay's copy
 * of a stored id is matched against these fields instead of being
 * verified again, so a duplicate costs no signature check and its
 * unverified claims never reach a planner.
 *
 * It only reads; rows enter `events` through store_event_insert alone.
 */
#ifndef CACHEBOX_STORE_DEDUP_H
#define CACHEBOX_STORE_DEDUP_H

#include <stdint.h>

struct store;

/* The fields of a stored event that its id vouches for. */
struct store_dedup {
	uint8_t		pubkey[32];
	int64_t		created_at;	/* wall seconds, as signed */
	uint32_t	kind;
};

/*
 * Look up id in `events`: 1 stored (its fields into *out), 0 not stored,
 * -1 (logged) on a SQLite error. One probe of the id index and one of the
 * row; the JSON is not read.
 */
int	store_dedup_probe(struct store *, const uint8_t id[32],
	    struct store_dedup *out);

#endif
