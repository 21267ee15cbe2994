/*
 * negentropy.h — NIP-77 set reconciliation, negentropy protocol version 1
 * (version byte 0x61), for both roles: the initiator (the box asking a
 * relay) and the responder (the box's own relay endpoint answering).
 *
 * A set is a struct neg_storage: a sorted vector of (created_at, id)
 * items. Build it with neg_storage_add() (in any order; adding in the
 * order of the store's (created_at, id) index makes neg_storage_seal() a
 * single pass) and seal it; a sealed storage is read-only and may back
 * any number of sessions. A session (struct neg_session) holds one
 * reconciliation's state and never copies the set.
 *
 * Messages are binary (the NIP-77 wire carries them hex-encoded). The
 * initiator calls neg_initiate() once, sends the message, and passes each
 * reply to neg_reconcile(), which reports the ids only this side has
 * ("have") and only the peer has ("need") through callbacks as they are
 * found (nothing is accumulated) and either writes the next message or
 * says the reconciliation is complete. The responder passes each message
 * to neg_reconcile() and always sends back what it writes. A malformed
 * message fails with a reason (neg_session_reason) meant for the one
 * session's NEG-ERR or log line; nothing here ends the process.
 *
 * Memory: an item is 40 bytes, so a set of 1,000,000 events is 40 MB as a
 * vector, far past the daemon's 16 MiB budget. The daemon therefore never
 * builds a set larger than NEG_MAX_ITEMS: it reconciles a large filter as
 * several sessions over consecutive time windows (since/until), each
 * holding at most NEG_MAX_ITEMS of its own items. neg_window_next() picks
 * such windows from the store's ascending timestamps without ever cutting
 * inside one second (the other side's items of that second would
 * otherwise fall into no window). A responder whose set for a filter
 * would pass its cap answers NEG-ERR "blocked:" instead of building it.
 *
 * Frame-size limit: 0 means none; otherwise at least NEG_FRAME_MIN_BYTES,
 * and no message written is longer. What does not fit is summarised by
 * one closing Fingerprint range up to infinity, so the peer continues in
 * the next round.
 */
#ifndef CACHEBOX_NOSTR_NEGENTROPY_H
#define CACHEBOX_NOSTR_NEGENTROPY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/limits.h"

#define NEG_PROTOCOL_V1		0x61	/* version byte of protocol v1 */
#define NEG_ID_BYTES		32	/* bytes of an id */
#define NEG_FP_BYTES		16	/* bytes of a fingerprint */
#define NEG_TS_INFINITY		UINT64_MAX /* bound after every item; no item has it */

/* One element of a set: an event's created_at and id (40 bytes). */
struct neg_item {
	uint64_t	created_at;
	uint8_t		id[NEG_ID_BYTES];
};

/* A set: items sorted by (created_at, id), unique once sealed. */
struct neg_storage {
	struct neg_item	*items;		/* owned */
	size_t		 count;
	size_t		 cap;		/* items allocated */
	size_t		 max;		/* count never exceeds this */
	bool		 sealed;
};

enum neg_role {
	NEG_INITIATOR,
	NEG_RESPONDER,
};

/* What neg_initiate and neg_reconcile ask the caller to do next. */
enum neg_status {
	NEG_ERROR = -1,		/* the message or call was refused: see the reason */
	NEG_SEND = 0,		/* send the message written to out */
	NEG_DONE = 1,		/* initiator: reconciliation complete, nothing to send */
};

/*
 * Where an initiator's have/need ids go. id points into a message or the
 * storage and is valid during the call only. A callback must not call
 * into the session. Either may be NULL. Without a frame-size limit each id
 * is reported once; with one, an id may come again in a later round (a
 * range reported before the initiator's frame filled up is summarised
 * once more by its closing range, as in the reference implementation), so
 * callers treat reports as idempotent.
 */
struct neg_ids {
	void	(*have)(void *arg, const uint8_t id[NEG_ID_BYTES]);
	void	(*need)(void *arg, const uint8_t id[NEG_ID_BYTES]);
	void	 *arg;
};

struct neg_session {
	const struct neg_storage *st;	/* borrowed; sealed */
	enum neg_role	 role;
	size_t		 frame_limit;	/* bytes, 0 = none */
	bool		 initiated;	/* initiator: neg_initiate done */
	bool		 done;		/* initiator: NEG_DONE returned */
	unsigned long	 rounds;	/* messages reconciled */
	uint64_t	 ts_in;		/* previous timestamp decoded, this message */
	uint64_t	 ts_out;	/* previous timestamp encoded, this message */
	struct buf	 range;		/* one range's output before it is kept */
	char		 reason[NEG_REASON_MAX];
};

/*
 * Storage. neg_storage_init allocates nothing; max (at most the caller's
 * named limit, e.g. NEG_MAX_ITEMS) caps the items it will take.
 */
void	neg_storage_init(struct neg_storage *, size_t max);
/* Release the items; the storage is empty and unsealed again. */
void	neg_storage_free(struct neg_storage *);
/*
 * Add one item. 0, or -1 if the storage is sealed, already holds max
 * items, created_at is NEG_TS_INFINITY, or memory ran out. An item
 * added twice is kept once by neg_storage_seal. created_at is unsigned
 * here: a caller reading the store leaves out events dated before 1970.
 */
int	neg_storage_add(struct neg_storage *, uint64_t created_at,
	    const uint8_t id[NEG_ID_BYTES]);
/*
 * Sort by (created_at, id) (skipped when already in order) and drop
 * repeated items. After this the storage takes no more items.
 */
void	neg_storage_seal(struct neg_storage *);

/*
 * Sessions. neg_session_init: 0, or -1 (with a reason in the session) if
 * the storage is not sealed or frame_limit is neither 0 nor within
 * [NEG_FRAME_MIN_BYTES, NEG_MAX_MSG_BYTES]. The session borrows st, which
 * must outlive it and stay unchanged. neg_session_free releases what the
 * session owns (not the storage).
 */
int	neg_session_init(struct neg_session *, const struct neg_storage *st,
	    enum neg_role, size_t frame_limit);
void	neg_session_free(struct neg_session *);

/*
 * Initiator only, once: write the first message into out (reset first).
 * NEG_SEND, or NEG_ERROR (wrong role, called twice, out too small).
 */
enum neg_status neg_initiate(struct neg_session *, struct buf *out);

/*
 * Reconcile one message msg[0..len) from the peer and write the answer
 * into out (reset first; out->max must admit the frame-size limit, or
 * NEG_MAX_MSG_BYTES when there is none). The initiator reports ids through
 * ids (may be NULL) and returns NEG_DONE when nothing is left to ask; the
 * responder ignores ids and always returns NEG_SEND. A message in another
 * protocol version is answered by a responder with the single byte 0x61
 * (the version it speaks) and refused by an initiator. NEG_ERROR for a
 * malformed message: the session should be closed with
 * neg_session_reason().
 */
enum neg_status neg_reconcile(struct neg_session *, const uint8_t *msg,
	    size_t len, struct buf *out, const struct neg_ids *ids);

/* Why the last call failed ("" if it did not). Owned by the session. */
const char	*neg_session_reason(const struct neg_session *);

/*
 * The fingerprint of items[lo..hi) of a sealed storage: the first 16
 * bytes of SHA-256 of (sum of the ids as 256-bit little-endian integers,
 * mod 2^256, little-endian) followed by the count as a varint.
 * 0, or -1 if the range is out of bounds or hashing failed.
 */
int	neg_fingerprint(const struct neg_storage *, size_t lo, size_t hi,
	    uint8_t fp[NEG_FP_BYTES]);

/*
 * The round trips an honest reconciliation of n items in all (both sides'
 * together) takes when this side's frames hold at most frame_limit bytes
 * (0: none), before the peer's own full frames: a mismatching range is
 * split into NEG_BUCKETS until ranges of fewer than NEG_IDLIST_BELOW
 * items go as id lists (the tree's depth, one round trip per level, twice
 * over for ranges reported again), plus one round trip per frame this
 * side fills with ids. A peer whose frames are limited needs one more per
 * frame it fills, at least NEG_FRAME_MIN_BYTES - NEG_FRAME_RESERVE_BYTES
 * bytes each: the caller adds those from the bytes it received.
 */
uint64_t	neg_rounds_bound(uint64_t n, size_t frame_limit);

/*
 * Varints (base-128, most significant digit first). neg_varint_put
 * appends v to out: 0, or -1 if it does not fit. neg_varint_get decodes
 * one from p[0..len) into *v and returns the bytes it used, or -1 if the
 * input ends inside it, it has more than NEG_VARINT_MAX_DIGITS digits or
 * its value passes 2^64 - 1.
 */
int	neg_varint_put(struct buf *out, uint64_t v);
int	neg_varint_get(const uint8_t *p, size_t len, uint64_t *v);

/*
 * Time windows for sets larger than one session may hold. ts[0..n) are
 * the created_at of the caller's items from since on, ascending (reading
 * max_items + 1 of them from the store's index is enough). On return w
 * is the next window, [w->since, w->until] inclusive, and w->count the
 * items of ts inside it, never more than max_items:
 *   0   the window is the last one: it runs to the end of time (until is
 *       NEG_TS_INFINITY: no until of its own, the filter's applies);
 *   1   more follow: the next window starts at w->until + 1 == ts[count];
 *   -1  a single second from ts[0] holds more than max_items items, so no
 *       window can both respect the cap and keep that second whole.
 */
struct neg_window {
	uint64_t	since;		/* first second, inclusive */
	uint64_t	until;		/* last second, inclusive */
	size_t		count;		/* of the caller's items inside */
};
int	neg_window_next(const uint64_t *ts, size_t n, uint64_t since,
	    size_t max_items, struct neg_window *w);

#endif
