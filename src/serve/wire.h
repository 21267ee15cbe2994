/*
 * wire.h — the relay endpoint's side of the Nostr wire (NIP-01, NIP-42,
 * NIP-45, NIP-77): client -> relay messages parsed into one struct
 * wire_msg, relay -> client messages appended to a caller's buffer. The
 * client side of the same protocol is relay/msg.h.
 *
 * Parsing is bounded before anything is allocated: the frame's length
 * (the caller's limit), its values and nesting (RELAY_MSG_MAX_VALUES,
 * _DEPTH) are checked before cJSON builds a node; each filter within
 * FILTER_MAX_* and the REQ within max_filters. A refusal comes with the
 * sentence to answer, prefixed as NIP-01 says ("invalid: ...", "error:
 * ..."), and with the type and subscription id when they were readable,
 * so the answer can be a CLOSED or NEG-ERR for that subscription rather
 * than a NOTICE.
 *
 * Pure: no I/O, no logging, no state.
 */
#ifndef CACHEBOX_SERVE_WIRE_H
#define CACHEBOX_SERVE_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "core/buf.h"
#include "core/limits.h"

struct filter;

enum wire_type {
	WIRE_UNKNOWN = 0,
	WIRE_REQ,		/* ["REQ", subid, filter...] */
	WIRE_CLOSE,		/* ["CLOSE", subid] */
	WIRE_EVENT,		/* ["EVENT", event] */
	WIRE_COUNT,		/* ["COUNT", subid, filter...] (NIP-45) */
	WIRE_AUTH,		/* ["AUTH", event] (NIP-42) */
	WIRE_NEG_OPEN,		/* ["NEG-OPEN", subid, filter, hex] (NIP-77) */
	WIRE_NEG_MSG,		/* ["NEG-MSG", subid, hex] */
	WIRE_NEG_CLOSE,		/* ["NEG-CLOSE", subid] */
};

/*
 * One parsed client message. filters are owned (wire_free), parsed and
 * filter_sort()ed; event points into the caller's frame (the bytes of the
 * event object), hex into root.
 */
struct wire_msg {
	enum wire_type	 type;
	char		 subid[RELAY_SUBID_MAX + 1];	/* "" when none */
	struct filter	*filters;
	size_t		 nfilters;
	const char	*event;
	size_t		 event_len;
	const char	*hex;
	size_t		 hex_len;
	cJSON		*root;
};

/*
 * Parse frame[0..len) (len within the caller's message limit already).
 * 0 with m filled (wire_free it), or -1 with the answer in why and m
 * owning nothing but m->type and m->subid, set when they could be read.
 */
int	wire_parse(struct wire_msg *m, const char *frame, size_t len,
	    size_t max_filters, char *why, size_t whylen);
void	wire_free(struct wire_msg *m);

/* The name of a type ("REQ", ...); "?" for WIRE_UNKNOWN. */
const char *wire_type_name(enum wire_type);

/*
 * Builders of relay -> client messages. Each appends one whole message to
 * out and returns 0, or -1 when out's max was reached (out is then back
 * at its length before the call). Strings are written with the NIP-01
 * escaping; json is a stored event's canonical JSON, written as it is.
 */
int	wire_event(struct buf *out, const char *subid, const char *json,
	    size_t len);
/*
 * The same in two parts, for a subscription that sends many: its head
 * ["EVENT","subid", once, then each event after a copy of it.
 */
int	wire_event_head(struct buf *out, const char *subid);
int	wire_event_tail(struct buf *out, const char *head, size_t hlen,
	    const char *json, size_t len);
int	wire_eose(struct buf *out, const char *subid);
int	wire_closed(struct buf *out, const char *subid, const char *msg);
int	wire_notice(struct buf *out, const char *msg);
int	wire_ok(struct buf *out, const uint8_t id[32], bool accepted,
	    const char *msg);
int	wire_count(struct buf *out, const char *subid, uint64_t count);
int	wire_auth(struct buf *out, const char *challenge);
/* ["NEG-MSG", subid, hex of msg[0..len)] */
int	wire_neg_msg(struct buf *out, const char *subid, const uint8_t *msg,
	    size_t len);
int	wire_neg_err(struct buf *out, const char *subid, const char *reason);

#endif
