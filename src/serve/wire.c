/*
 * wire.c — client -> relay messages in, relay -> client messages out (see
 * wire.h). The parser is one bounded cJSON parse, a table keyed by the
 * type string (element counts and a handler each), and small handlers
 * that check each element and point the struct at it. It never keeps a
 * pointer into the frame beyond the event span the caller asked for.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/errf.h"
#include "core/hex.h"
#include "core/jsonscan.h"
#include "nostr/event.h"
#include "nostr/filter.h"
#include "serve/wire.h"

typedef int (*wire_handler)(struct wire_msg *, const char *, size_t, size_t,
    char *, size_t);

static int	w_req(struct wire_msg *, const char *, size_t, size_t, char *, size_t);
static int	w_sub(struct wire_msg *, const char *, size_t, size_t, char *, size_t);
static int	w_event(struct wire_msg *, const char *, size_t, size_t, char *, size_t);
static int	w_neg_open(struct wire_msg *, const char *, size_t, size_t, char *, size_t);
static int	w_neg_msg(struct wire_msg *, const char *, size_t, size_t, char *, size_t);

/* Any number of filters is read as an array; max_filters bounds it. */
#define WIRE_MANY	(1 << 20)

static const struct wire_kind {
	const char	*name;
	enum wire_type	 type;
	int		 min, max;	/* elements, with the type */
	bool		 sub;		/* element 1 is a subscription id */
	wire_handler	 fn;
} wire_kinds[] = {
	{ "REQ",	WIRE_REQ,	3, WIRE_MANY, true, w_req },
	{ "CLOSE",	WIRE_CLOSE,	2, 2, true, w_sub },
	{ "EVENT",	WIRE_EVENT,	2, 2, false, w_event },
	{ "COUNT",	WIRE_COUNT,	3, WIRE_MANY, true, w_req },
	{ "AUTH",	WIRE_AUTH,	2, 2, false, w_event },
	{ "NEG-OPEN",	WIRE_NEG_OPEN,	4, 4, true, w_neg_open },
	{ "NEG-MSG",	WIRE_NEG_MSG,	3, 3, true, w_neg_msg },
	{ "NEG-CLOSE",	WIRE_NEG_CLOSE,	2, 2, true, w_sub },
};
#define WIRE_NKINDS	(sizeof(wire_kinds) / sizeof(wire_kinds[0]))

const char *
wire_type_name(enum wire_type t)
{
	size_t	i;

	for (i = 0; i < WIRE_NKINDS; i++)
		if (wire_kinds[i].type == t)
			return wire_kinds[i].name;
	return "?";
}

/* ---- parsing ------------------------------------------------------------ */

/* Element 1 as the subscription id: 1..RELAY_SUBID_MAX bytes. */
static int
w_subid(struct wire_msg *m, char *why, size_t whylen)
{
	const cJSON	*s = cJSON_GetArrayItem(m->root, 1);
	size_t		 len;

	if (!cJSON_IsString(s) || s->valuestring == NULL)
		return errf(why, whylen, "invalid: the subscription id is not a "
		    "string");
	len = strlen(s->valuestring);
	if (len == 0 || len > RELAY_SUBID_MAX)
		return errf(why, whylen, "invalid: a subscription id has 1 to "
		    "%d characters", RELAY_SUBID_MAX);
	memcpy(m->subid, s->valuestring, len + 1);
	return 0;
}

static int
w_sub(struct wire_msg *m, const char *f, size_t len, size_t maxf, char *why,
    size_t whylen)
{
	return w_subid(m, why, whylen);
}

/* Parse n filters from element `from` on. */
static int
w_filters(struct wire_msg *m, int from, size_t n, char *why, size_t whylen)
{
	char	err[160];
	size_t	i;

	if ((m->filters = calloc(n, sizeof(*m->filters))) == NULL)
		return errf(why, whylen, "error: out of memory");
	for (i = 0; i < n; i++) {
		if (filter_parse(&m->filters[i], cJSON_GetArrayItem(m->root,
		    from + (int)i), err, sizeof(err)) == -1) {
			errf(why, whylen, "invalid: filter %zu: %s", i + 1, err);
			while (i > 0)
				filter_free(&m->filters[--i]);
			free(m->filters);
			m->filters = NULL;
			m->nfilters = 0;
			return -1;
		}
		filter_sort(&m->filters[i]);
		m->nfilters++;
	}
	return 0;
}

static int
w_req(struct wire_msg *m, const char *f, size_t len, size_t maxf, char *why,
    size_t whylen)
{
	size_t	n = (size_t)cJSON_GetArraySize(m->root) - 2;

	if (w_subid(m, why, whylen) == -1)
		return -1;
	if (n > maxf)
		return errf(why, whylen, "blocked: at most %zu filters in one "
		    "%s", maxf, wire_type_name(m->type));
	return w_filters(m, 2, n, why, whylen);
}

/*
 * cJSON treats every byte <= 32 as white space; so do these scanners.
 * The index just past the raw type string of a frame cJSON accepted as an
 * array, when its bytes are exactly "name" (no escapes, no NUL that would
 * make "AUTH\0..." compare equal to AUTH), or 0.
 */
static size_t
w_type_end(const char *f, size_t len, const char *name)
{
	size_t	i = 0, n = strlen(name);

	if (len >= 3 && memcmp(f, "\xef\xbb\xbf", 3) == 0)
		i = 3;
	i = jsonscan_skip_ws(f, i, len);
	if (i >= len || f[i++] != '[')
		return 0;
	i = jsonscan_skip_ws(f, i, len);
	if (len - i < n + 2 || f[i] != '"' || memcmp(f + i + 1, name, n) != 0 ||
	    f[i + 1 + n] != '"')
		return 0;
	return i + n + 2;
}

/*
 * The bytes of the object that is the second and last element of an
 * ["EVENT", {...}] (or AUTH) cJSON accepted: past the type string and ','
 * forward, before ']' backward.
 */
static int
w_event_span(struct wire_msg *m, const char *f, size_t len)
{
	size_t	i, end = len;

	if ((i = w_type_end(f, len, wire_type_name(m->type))) == 0)
		return -1;
	i = jsonscan_skip_ws(f, i, len);
	if (i >= len || f[i++] != ',')
		return -1;
	i = jsonscan_skip_ws(f, i, len);
	while (end > i && (unsigned char)f[end - 1] <= 32)
		end--;
	if (end <= i || f[--end] != ']')
		return -1;
	while (end > i && (unsigned char)f[end - 1] <= 32)
		end--;
	if (end <= i + 1 || f[i] != '{' || f[end - 1] != '}')
		return -1;
	m->event = f + i;
	m->event_len = end - i;
	return 0;
}

static int
w_event(struct wire_msg *m, const char *f, size_t len, size_t maxf,
    char *why, size_t whylen)
{
	if (!cJSON_IsObject(cJSON_GetArrayItem(m->root, 1)) ||
	    w_event_span(m, f, len) == -1)
		return errf(why, whylen, "invalid: %s needs an event object",
		    wire_type_name(m->type));
	return 0;
}

/* Element i as lowercase hex of an even length, at least 2 digits. */
static int
w_hex(struct wire_msg *m, int i, char *why, size_t whylen)
{
	const cJSON	*h = cJSON_GetArrayItem(m->root, i);
	size_t		 k, len;

	if (!cJSON_IsString(h) || h->valuestring == NULL)
		return errf(why, whylen, "invalid: the negentropy message is not "
		    "a string");
	len = strlen(h->valuestring);
	for (k = 0; k < len; k++)
		if (hex_digit((unsigned char)h->valuestring[k]) == -1 ||
		    (h->valuestring[k] >= 'A' && h->valuestring[k] <= 'F'))
			break;
	if (len < 2 || len % 2 != 0 || k != len)
		return errf(why, whylen, "invalid: the negentropy message is not "
		    "lowercase hex");
	m->hex = h->valuestring;
	m->hex_len = len;
	return 0;
}

static int
w_neg_open(struct wire_msg *m, const char *f, size_t len, size_t maxf,
    char *why, size_t whylen)
{
	if (w_subid(m, why, whylen) == -1 || w_filters(m, 2, 1, why,
	    whylen) == -1)
		return -1;
	return w_hex(m, 3, why, whylen);
}

static int
w_neg_msg(struct wire_msg *m, const char *f, size_t len, size_t maxf,
    char *why, size_t whylen)
{
	if (w_subid(m, why, whylen) == -1)
		return -1;
	return w_hex(m, 2, why, whylen);
}

static const struct wire_kind *
wire_kind_find(const char *name)
{
	size_t	i;

	for (i = 0; i < WIRE_NKINDS; i++)
		if (strcmp(wire_kinds[i].name, name) == 0)
			return &wire_kinds[i];
	return NULL;
}

/* The values and nesting of the frame, then cJSON. 0 or -1 (why). */
static int
w_json(struct wire_msg *m, const char *frame, size_t len, char *why,
    size_t whylen)
{
	const char	*end = NULL;

	switch (jsonscan_check(frame, len, RELAY_MSG_MAX_VALUES,
	    RELAY_MSG_MAX_DEPTH, NULL)) {
	case JSONSCAN_OK:
		break;
	case JSONSCAN_TOO_MANY:
		return errf(why, whylen, "blocked: more than %d JSON values in "
		    "one message", RELAY_MSG_MAX_VALUES);
	default:
		return errf(why, whylen, "invalid: JSON nested deeper than %d",
		    RELAY_MSG_MAX_DEPTH);
	}
	m->root = cJSON_ParseWithLengthOpts(frame, len, &end, 0);
	if (m->root != NULL && jsonscan_skip_ws(end, 0, (size_t)(frame + len - end)) !=
	    (size_t)(frame + len - end)) {
		cJSON_Delete(m->root);
		m->root = NULL;
	}
	if (m->root == NULL)
		return errf(why, whylen, "invalid: malformed JSON");
	return 0;
}

int
wire_parse(struct wire_msg *m, const char *frame, size_t len,
    size_t max_filters, char *why, size_t whylen)
{
	const struct wire_kind	*k;
	const cJSON		*t;
	int			 n;

	memset(m, 0, sizeof(*m));
	if (w_json(m, frame, len, why, whylen) == -1)
		return -1;
	t = cJSON_GetArrayItem(m->root, 0);
	if (!cJSON_IsArray(m->root) || !cJSON_IsString(t) ||
	    t->valuestring == NULL) {
		errf(why, whylen, "invalid: a message is an array whose first "
		    "element is its type");
		goto fail;
	}
	if ((k = wire_kind_find(t->valuestring)) == NULL ||
	    w_type_end(frame, len, k->name) == 0) {
		errf(why, whylen, "invalid: unknown message type \"%.32s\"",
		    t->valuestring);
		goto fail;
	}
	m->type = k->type;
	n = cJSON_GetArraySize(m->root);
	if (n < k->min || n > k->max) {
		if (k->sub)	/* so the refusal can name the subscription */
			(void)w_subid(m, why, whylen);
		errf(why, whylen, "invalid: %s takes %d to %d elements, not %d",
		    k->name, k->min, k->max, n);
		goto fail;
	}
	if (k->fn(m, frame, len, max_filters, why, whylen) == -1)
		goto fail;
	return 0;
fail:
	wire_free(m);
	return -1;
}

void
wire_free(struct wire_msg *m)
{
	size_t	i;

	for (i = 0; i < m->nfilters; i++)
		filter_free(&m->filters[i]);
	free(m->filters);
	cJSON_Delete(m->root);
	m->filters = NULL;
	m->nfilters = 0;
	m->root = NULL;
	m->event = m->hex = NULL;
}

/* ---- building ------------------------------------------------------------- */

/* Append ["NAME","subid" (open: the caller closes it). */
static int
open_sub(struct buf *out, const char *name, const char *subid)
{
	return buf_printf(out, "[\"%s\",", name) == -1 ||
	    event_json_string(out, subid, strlen(subid)) == -1 ? -1 : 0;
}

/* Keep out as it was before a builder that failed half-way. */
static int
undo(struct buf *out, size_t was)
{
	out->len = was;
	if (out->data != NULL)
		out->data[was] = '\0';
	return -1;
}

int
wire_event_head(struct buf *out, const char *subid)
{
	size_t	was = out->len;

	if (open_sub(out, "EVENT", subid) == -1 || buf_putc(out, ',') == -1)
		return undo(out, was);
	return 0;
}

int
wire_event_tail(struct buf *out, const char *head, size_t hlen,
    const char *json, size_t len)
{
	size_t	was = out->len;

	if (buf_append(out, head, hlen) == -1 ||
	    buf_append(out, json, len) == -1 || buf_putc(out, ']') == -1)
		return undo(out, was);
	return 0;
}

int
wire_event(struct buf *out, const char *subid, const char *json, size_t len)
{
	size_t	was = out->len;

	if (wire_event_head(out, subid) == -1 ||
	    buf_append(out, json, len) == -1 || buf_putc(out, ']') == -1)
		return undo(out, was);
	return 0;
}

int
wire_eose(struct buf *out, const char *subid)
{
	size_t	was = out->len;

	if (open_sub(out, "EOSE", subid) == -1 || buf_putc(out, ']') == -1)
		return undo(out, was);
	return 0;
}

/* ["NAME","subid","msg"] */
static int
sub_text(struct buf *out, const char *name, const char *subid,
    const char *msg)
{
	size_t	was = out->len;

	if (open_sub(out, name, subid) == -1 || buf_putc(out, ',') == -1 ||
	    event_json_string(out, msg, strlen(msg)) == -1 ||
	    buf_putc(out, ']') == -1)
		return undo(out, was);
	return 0;
}

int
wire_closed(struct buf *out, const char *subid, const char *msg)
{
	return sub_text(out, "CLOSED", subid, msg);
}

int
wire_neg_err(struct buf *out, const char *subid, const char *reason)
{
	return sub_text(out, "NEG-ERR", subid, reason);
}

int
wire_notice(struct buf *out, const char *msg)
{
	size_t	was = out->len;

	if (buf_puts(out, "[\"NOTICE\",") == -1 ||
	    event_json_string(out, msg, strlen(msg)) == -1 ||
	    buf_putc(out, ']') == -1)
		return undo(out, was);
	return 0;
}

int
wire_ok(struct buf *out, const uint8_t id[32], bool accepted, const char *msg)
{
	char	hex[65];
	size_t	was = out->len;

	hex_encode(id, 32, hex, sizeof(hex));
	if (buf_printf(out, "[\"OK\",\"%s\",%s,", hex, accepted ? "true" :
	    "false") == -1 || event_json_string(out, msg, strlen(msg)) == -1 ||
	    buf_putc(out, ']') == -1)
		return undo(out, was);
	return 0;
}

int
wire_count(struct buf *out, const char *subid, uint64_t count)
{
	size_t	was = out->len;

	if (open_sub(out, "COUNT", subid) == -1 || buf_printf(out,
	    ",{\"count\":%llu}]", (unsigned long long)count) == -1)
		return undo(out, was);
	return 0;
}

int
wire_auth(struct buf *out, const char *challenge)
{
	size_t	was = out->len;

	if (buf_puts(out, "[\"AUTH\",") == -1 || event_json_string(out,
	    challenge, strlen(challenge)) == -1 || buf_putc(out, ']') == -1)
		return undo(out, was);
	return 0;
}

int
wire_neg_msg(struct buf *out, const char *subid, const uint8_t *msg,
    size_t len)
{
	static const char	 digits[] = "0123456789abcdef";
	size_t			 was = out->len, i;
	char			*p;

	if (open_sub(out, "NEG-MSG", subid) == -1 || buf_puts(out, ",\"") ==
	    -1 || buf_reserve(out, 2 * len + 3) == -1)
		return undo(out, was);
	p = (char *)out->data + out->len;
	for (i = 0; i < len; i++) {
		*p++ = digits[msg[i] >> 4];
		*p++ = digits[msg[i] & 15];
	}
	out->len += 2 * len;
	if (buf_puts(out, "\"]") == -1)
		return undo(out, was);
	return 0;
}
