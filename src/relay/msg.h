/*
 * msg.h — the Nostr relay protocol messages, both ways (NIP-01, NIP-42,
 * NIP-45, NIP-77). Relay -> client text frames are parsed into one tagged
 * struct relay_msg that points into a cJSON tree it owns; the event of an
 * ["EVENT", sub, {...}] is handed back as that tree's object (detachable,
 * for event_from_cjson) and as the byte span it occupies in the frame, so
 * ingest never serializes or copies it again. Client -> relay frames are
 * appended to a caller's struct buf.
 *
 * This module only reads and writes text: it never touches a socket, never
 * checks an event's id or signature (ingest does) and never logs. A
 * malformed frame is an enum relay_msg_err the caller counts; it never
 * costs the connection.
 */
#ifndef CACHEBOX_RELAY_MSG_H
#define CACHEBOX_RELAY_MSG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "core/buf.h"
#include "core/limits.h"

struct filter;
struct nostr_key;

enum relay_msg_type {
	RELAY_MSG_EVENT = 0,	/* ["EVENT", subid, {event}] */
	RELAY_MSG_EOSE,		/* ["EOSE", subid] */
	RELAY_MSG_CLOSED,	/* ["CLOSED", subid, message] */
	RELAY_MSG_NOTICE,	/* ["NOTICE", message] */
	RELAY_MSG_OK,		/* ["OK", event id, accepted, message] */
	RELAY_MSG_COUNT,	/* ["COUNT", subid, {"count": n, "approximate"?}] */
	RELAY_MSG_AUTH,		/* ["AUTH", challenge] */
	RELAY_MSG_NEG_MSG,	/* ["NEG-MSG", subid, hex] */
	RELAY_MSG_NEG_ERR,	/* ["NEG-ERR", subid, reason] */
	RELAY_MSG_TYPE_COUNT
};

/* Why a frame was refused. Each has a stable name (relay_msg_err_str). */
enum relay_msg_err {
	RELAY_MSG_PARSED = 0,
	RELAY_MSG_ERR_TOO_LARGE,	/* over the connection's max, not parsed */
	RELAY_MSG_ERR_JSON,		/* not JSON, or trailing garbage */
	RELAY_MSG_ERR_NOT_ARRAY,	/* JSON, but not a non-empty array */
	RELAY_MSG_ERR_TYPE,		/* first element is not a string */
	RELAY_MSG_ERR_UNKNOWN,		/* a type we do not know */
	RELAY_MSG_ERR_ARITY,		/* wrong number of elements */
	RELAY_MSG_ERR_SUBID,		/* not a string of 1..64 bytes */
	RELAY_MSG_ERR_FIELD,		/* an element of the wrong JSON type */
	RELAY_MSG_ERR_EVENT_ID,		/* OK's event id is not 64 lowercase hex */
	RELAY_MSG_ERR_NOMEM,
	RELAY_MSG_ERR_VALUES,		/* over RELAY_MSG_MAX_VALUES or _DEPTH, not parsed */
	RELAY_MSG_ERR_COUNT
};

/*
 * The machine-readable prefix of an OK or CLOSED message (NIP-01), e.g.
 * "rate-limited: slow down". RELAY_REASON_NONE when the message has no
 * prefix or one we do not know.
 */
enum relay_reason {
	RELAY_REASON_NONE = 0,
	RELAY_REASON_DUPLICATE,
	RELAY_REASON_POW,
	RELAY_REASON_BLOCKED,
	RELAY_REASON_RATE_LIMITED,
	RELAY_REASON_INVALID,
	RELAY_REASON_RESTRICTED,
	RELAY_REASON_AUTH_REQUIRED,
	RELAY_REASON_ERROR,
	RELAY_REASON_MUTE,
	RELAY_REASON_COUNT
};

/*
 * One parsed relay -> client message. Strings point into root (NUL-
 * terminated, with their byte length, which may differ from strlen when a
 * relay sends \u0000). Which fields are set depends on type:
 *   EVENT    subid, event, event_raw/event_raw_len
 *   EOSE     subid
 *   CLOSED   subid, text, reason
 *   NOTICE   text
 *   OK       event_id, accepted, text, reason
 *   COUNT    subid, count, approximate
 *   AUTH     text (the challenge)
 *   NEG-MSG  subid, text (the hex message: relay_msg_neg_decode)
 *   NEG-ERR  subid, text, reason
 * text is "" (never NULL) when a message was absent.
 */
struct relay_msg {
	enum relay_msg_type	 type;
	cJSON			*root;		/* owned; relay_msg_free */
	const char		*subid;
	size_t			 subid_len;
	const char		*text;
	size_t			 text_len;
	enum relay_reason	 reason;
	cJSON			*event;		/* inside root, or NULL once taken */
	const char		*event_raw;	/* span in the caller's frame */
	size_t			 event_raw_len;
	uint8_t			 event_id[32];
	bool			 accepted;
	int64_t			 count;
	bool			 approximate;
};

/*
 * Parse frame[0..len) (need not be NUL-terminated; it is not kept except
 * through event_raw). len is checked against max_bytes, and the frame's
 * values and nesting against RELAY_MSG_MAX_VALUES and RELAY_MSG_MAX_DEPTH,
 * before anything is parsed or allocated. RELAY_MSG_PARSED with msg filled (the caller calls
 * relay_msg_free), or an error with msg owning nothing.
 */
enum relay_msg_err relay_msg_parse(struct relay_msg *msg, const char *frame,
	    size_t len, size_t max_bytes);
/* Release what msg owns (including an event not taken). NULL-safe fields. */
void	relay_msg_free(struct relay_msg *msg);

/*
 * Detach the event object of an EVENT message: the caller owns it (pass
 * it to event_from_cjson, which takes it in every case). NULL for other
 * types or when already taken.
 */
cJSON	*relay_msg_take_event(struct relay_msg *msg);

/* "EVENT", "EOSE", ...; "?" for an out-of-range value. */
const char *relay_msg_type_str(enum relay_msg_type);
/* "too large", "bad json", ...; stable, used as counter and log labels. */
const char *relay_msg_err_str(enum relay_msg_err);
/* The prefix word without the colon, e.g. "rate-limited"; "" for NONE. */
const char *relay_reason_str(enum relay_reason);
/* Classify the prefix of an OK / CLOSED message. NULL gives NONE. */
enum relay_reason relay_reason_parse(const char *text, size_t len);

/* Whether s[0..len) is a subscription id we send or accept: 1..64 bytes. */
bool	relay_subid_valid(const char *s, size_t len);

/*
 * Builders of client -> relay frames. Each appends one complete frame to
 * out and returns 0, or -1 when an argument is invalid (a bad subid, no
 * filter, a challenge or URL too long) or out's max was reached; on -1
 * out is restored to its length before the call.
 */
/* ["REQ", subid, filter...]; n >= 1 filters. */
int	relay_msg_build_req(struct buf *out, const char *subid,
	    const struct filter *filters, size_t n);
/* ["COUNT", subid, filter...] (NIP-45); n >= 1. */
int	relay_msg_build_count(struct buf *out, const char *subid,
	    const struct filter *filters, size_t n);
/* ["CLOSE", subid]. */
int	relay_msg_build_close(struct buf *out, const char *subid);
/*
 * ["EVENT", event] around event_json[0..len), which must be one JSON
 * object (checked only for its braces; the caller got it from the store
 * or from event_to_json).
 */
int	relay_msg_build_event(struct buf *out, const char *event_json,
	    size_t len);
/*
 * ["AUTH", event] (NIP-42): a kind 22242 event with tags
 * [["relay", relay_url], ["challenge", challenge]], empty content,
 * created_at now_s, signed with key. The new event's id goes to id_out
 * (when not NULL) so the caller can match the relay's OK.
 */
int	relay_msg_build_auth(struct buf *out, const struct nostr_key *key,
	    const char *relay_url, const char *challenge, int64_t now_s,
	    uint8_t id_out[32]);
/*
 * ["NEG-OPEN", subid, filter, hex] and ["NEG-MSG", subid, hex] (NIP-77):
 * the binary message msg[0..len) (1..NEG_MAX_MSG_BYTES bytes) is written
 * as lowercase hex straight into out.
 */
int	relay_msg_build_neg_open(struct buf *out, const char *subid,
	    const struct filter *filter, const uint8_t *msg, size_t len);
int	relay_msg_build_neg_msg(struct buf *out, const char *subid,
	    const uint8_t *msg, size_t len);
/* ["NEG-CLOSE", subid] (NIP-77). */
int	relay_msg_build_neg_close(struct buf *out, const char *subid);

/*
 * Decode the hex of a NEG-MSG (hex[0..len), its text) into out, which is
 * reset first. The length is checked before anything is allocated: the
 * text must be 2..2 * max_bytes lowercase hex digits, an even count (a
 * negentropy message holds at least its version byte). 0 with out
 * holding len / 2 bytes, or -1 with *why set to a static "not hex",
 * "too long" or "out of memory" (out then empty).
 */
int	relay_msg_neg_decode(const char *hex, size_t len, size_t max_bytes,
	    struct buf *out, const char **why);

#endif
