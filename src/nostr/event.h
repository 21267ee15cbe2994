/*
 * event.h — Nostr events (NIP-01): strict parsing of event JSON, the
 * canonical serialization the id is hashed over, id and BIP-340 signature
 * checks, signing, and kind classes. This is the ingest hot path: a parse
 * keeps the cJSON tree and points into it instead of copying, and the
 * serializer writes into a caller's reusable buffer.
 *
 * Every outcome is an enum event_result with a stable reason string
 * (event_result_str) that is sent to peers and printed by cacheboxctl, so
 * the strings never change once released.
 */
#ifndef CACHEBOX_NOSTR_EVENT_H
#define CACHEBOX_NOSTR_EVENT_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "core/buf.h"

struct nostr_key;

enum event_result {
	EVENT_OK = 0,
	EVENT_BAD_JSON,			/* not JSON, or not an object */
	EVENT_TOO_LARGE,		/* input over the byte limit */
	EVENT_MALFORMED_ID,
	EVENT_MALFORMED_PUBKEY,
	EVENT_MALFORMED_SIG,
	EVENT_MALFORMED_KIND,
	EVENT_MALFORMED_CREATED_AT,
	EVENT_MALFORMED_TAGS,
	EVENT_MALFORMED_CONTENT,
	EVENT_MISSING_ID,
	EVENT_MISSING_PUBKEY,
	EVENT_MISSING_SIG,
	EVENT_MISSING_KIND,
	EVENT_MISSING_CREATED_AT,
	EVENT_MISSING_TAGS,
	EVENT_MISSING_CONTENT,
	EVENT_ID_MISMATCH,
	EVENT_BAD_SIG,
	EVENT_TOO_FUTURE,		/* created_at > now + EVENT_MAX_FUTURE_S */
	EVENT_ERR_INTERNAL,		/* out of memory, no secp256k1 context */
	EVENT_RESULT_COUNT
};

/*
 * A parsed event. The fixed-size fields are decoded; tags and content
 * point into json, which the event owns. Zero-initialise (or event_init)
 * before use; event_free releases json.
 */
struct event {
	uint8_t		 id[32];
	uint8_t		 pubkey[32];
	uint8_t		 sig[64];
	int64_t		 created_at;
	uint32_t	 kind;
	int		 id_ok;		/* id decoded, even if parsing failed later */
	const char	*content;	/* NUL-terminated, inside json */
	size_t		 content_len;
	const cJSON	*tags;		/* array of arrays of strings, inside json */
	size_t		 ntags;
	cJSON		*json;		/* owned parse tree */
};

/* Kind classes of NIP-01. */
enum event_class {
	EVENT_CLASS_REGULAR,
	EVENT_CLASS_REPLACEABLE,	/* 0, 3, 10000-19999 */
	EVENT_CLASS_EPHEMERAL,		/* 20000-29999 */
	EVENT_CLASS_ADDRESSABLE,	/* 30000-39999 */
};

/*
 * What a replaceable or addressable event replaces: the newest event with
 * the same (pubkey, kind, d) wins. d is "" for replaceable kinds and for
 * addressable events without a d tag; it points into the event (borrowed,
 * valid while the event lives) and may hold no NUL-free guarantee beyond
 * what cJSON gives: dlen is strlen(d).
 */
struct event_rkey {
	uint8_t		 pubkey[32];
	uint32_t	 kind;
	const char	*d;
	size_t		 dlen;
};

/* The stable reason string, e.g. "invalid: id mismatch"; "" for EVENT_OK. */
const char *event_result_str(enum event_result);

void	event_init(struct event *);
/* Release what the event owns; it is zeroed and may be reused. */
void	event_free(struct event *);

/*
 * Parse event JSON text[0..len). len is checked against max_bytes (the
 * caller passes limits.max_event_bytes), and the values and nesting of the
 * text against EVENT_MAX_JSON_VALUES and EVENT_MAX_JSON_DEPTH, before
 * anything is parsed or allocated (EVENT_TOO_LARGE either way). EVENT_OK with ev filled (caller calls event_free), or a
 * reason with nothing owned by ev (ev->id_ok tells whether ev->id holds
 * the event's id for reporting). Checks form only, not id or signature.
 */
enum event_result event_parse(struct event *ev, const char *text, size_t len,
	    size_t max_bytes);

/*
 * Same, from a cJSON object the caller already parsed (e.g. the third
 * element of a relay's ["EVENT", sub, {...}], detached from it). The event
 * takes ownership of obj in every case: it is freed on failure.
 */
enum event_result event_from_cjson(struct event *ev, cJSON *obj);

/*
 * Append the NIP-01 canonical form [0,"pubkey",created_at,kind,tags,
 * "content"] to out, with no whitespace and the NIP-01 escaping. 0, or -1
 * if out's max was reached (out may then hold a partial append).
 */
int	event_serialize(const struct event *, struct buf *out);

/*
 * SHA-256 of the canonical form into id. scratch is reset and reused (keep
 * one per caller so the hot path does not allocate). 0, or -1 if the
 * serialization did not fit scratch.
 */
int	event_compute_id(const struct event *, struct buf *scratch,
	    uint8_t id[32]);

/* EVENT_OK, EVENT_ID_MISMATCH, or EVENT_TOO_LARGE (scratch too small). */
enum event_result event_check_id(const struct event *, struct buf *scratch);
/* EVENT_OK, EVENT_BAD_SIG, or EVENT_ERR_INTERNAL. Assumes the id checked. */
enum event_result event_check_sig(const struct event *);
/* EVENT_OK, or EVENT_TOO_FUTURE if created_at > now + EVENT_MAX_FUTURE_S. */
enum event_result event_check_time(const struct event *, int64_t now);

/*
 * Parse, then check time, id and signature, in that order (cheapest
 * first). On EVENT_OK the caller owns ev (event_free); otherwise ev owns
 * nothing, as with event_parse.
 */
enum event_result event_validate(struct event *ev, const char *text,
	    size_t len, size_t max_bytes, int64_t now, struct buf *scratch);

/*
 * Append s[0..len) to out as a quoted JSON string with the NIP-01
 * escaping (the one the id is hashed over). 0, or -1 if out's max was
 * reached.
 */
int	event_json_string(struct buf *out, const char *s, size_t len);

/*
 * Append the whole event as compact JSON (id, pubkey, created_at, kind,
 * tags, content, sig) with the canonical escaping. 0, or -1 if out's max
 * was reached.
 */
int	event_to_json(const struct event *, struct buf *out);
/*
 * Same, and in the same pass the SHA-256 of the canonical form into id
 * (hashed from the pieces just written, which the two forms share). The
 * caller compares id with ev->id: only then is what out holds the
 * canonical JSON of a verified id. 0, or -1 if out's max was reached.
 */
int	event_to_json_id(const struct event *, struct buf *out, uint8_t id[32]);

/*
 * Build a new event owned by ev from fields: tags is copied (NULL means
 * no tags) and must be an array of arrays of strings within the limits,
 * content is copied. Then sign it with key (event_sign with fresh aux
 * randomness). EVENT_OK (caller calls event_free), EVENT_MALFORMED_TAGS,
 * EVENT_MALFORMED_KIND (over 65535), or EVENT_ERR_INTERNAL.
 */
enum event_result event_create(struct event *ev, const struct nostr_key *key,
	    uint32_t kind, int64_t created_at, const cJSON *tags,
	    const char *content);

/*
 * Set ev's pubkey from key, compute its id and sign it. aux32 is the
 * BIP-340 auxiliary randomness; NULL draws 32 fresh bytes. EVENT_OK or
 * EVENT_ERR_INTERNAL.
 */
enum event_result event_sign(struct event *ev, const struct nostr_key *key,
	    const uint8_t *aux32);

enum event_class event_kind_class(uint32_t kind);
/* Fill rk for a replaceable or addressable event: 0, or -1 for others. */
int	event_replace_key(const struct event *, struct event_rkey *rk);

/*
 * The first value of the first tag named name in tags (an event's "tags"
 * array), or NULL when there is none or it has no string value. Borrowed
 * from tags.
 */
const char *event_tag_first(const cJSON *tags, const char *name);
/*
 * NIP-40: the time of the event's "expiration" tag into *at. 1 when it has
 * one that is a whole number of seconds, 0 when not.
 */
int	event_expiration(const cJSON *tags, int64_t *at);
/*
 * A NIP-01 address "kind:pubkey:d" (an "a" tag's value) into *kind,
 * pubkey and d (the rest after the second colon, borrowed from addr, not
 * NUL-terminated: *dlen bytes). 0, or -1 when it is not one.
 */
int	event_addr_parse(const char *addr, uint32_t *kind, uint8_t pubkey[32],
	    const char **d, size_t *dlen);

/*
 * Check that t is an array of at most EVENT_MAX_TAGS arrays of at most
 * EVENT_MAX_TAG_ITEMS strings each. The count in *ntags when not NULL.
 * 0, or -1.
 */
int	event_tags_check(const cJSON *t, size_t *ntags);

#endif
