/*
 * msg.c — parse relay -> client frames and build client -> relay frames.
 *
 * The parser is one cJSON parse, a table keyed by the type string that
 * gives each type its element count, and one small handler per type that
 * checks element types and points the struct into the tree. Nothing here
 * allocates besides cJSON's tree, and that only after the frame's values
 * were counted (a frame of 1 MiB of "[]," would otherwise cost ~28 MiB of
 * nodes); nothing here logs.
 */
#include <string.h>

#include "core/hex.h"
#include "core/json.h"
#include "core/jsonscan.h"
#include "nostr/event.h"
#include "nostr/filter.h"
#include "nostr/key.h"
#include "relay/msg.h"

typedef enum relay_msg_err (*msg_handler)(struct relay_msg *, cJSON *root,
    const char *frame, size_t len);

struct msg_kind {
	const char		*name;
	enum relay_msg_type	 type;
	int			 min_elems;	/* including the type string */
	int			 max_elems;
	msg_handler		 handler;
};

static enum relay_msg_err msg_event(struct relay_msg *, cJSON *, const char *, size_t);
static enum relay_msg_err msg_sub_only(struct relay_msg *, cJSON *, const char *, size_t);
static enum relay_msg_err msg_sub_text(struct relay_msg *, cJSON *, const char *, size_t);
static enum relay_msg_err msg_text(struct relay_msg *, cJSON *, const char *, size_t);
static enum relay_msg_err msg_ok(struct relay_msg *, cJSON *, const char *, size_t);
static enum relay_msg_err msg_count(struct relay_msg *, cJSON *, const char *, size_t);

/*
 * Element counts. CLOSED and OK tolerate a missing message (some relays
 * omit it); everything else is exact, so a frame of the wrong shape is
 * counted rather than half understood.
 */
static const struct msg_kind msg_kinds[] = {
	{ "EVENT",	RELAY_MSG_EVENT,	3, 3, msg_event },
	{ "EOSE",	RELAY_MSG_EOSE,		2, 2, msg_sub_only },
	{ "CLOSED",	RELAY_MSG_CLOSED,	2, 3, msg_sub_text },
	{ "NOTICE",	RELAY_MSG_NOTICE,	2, 2, msg_text },
	{ "OK",		RELAY_MSG_OK,		3, 4, msg_ok },
	{ "COUNT",	RELAY_MSG_COUNT,	3, 3, msg_count },
	{ "AUTH",	RELAY_MSG_AUTH,		2, 2, msg_text },
	{ "NEG-MSG",	RELAY_MSG_NEG_MSG,	3, 3, msg_sub_text },
	{ "NEG-ERR",	RELAY_MSG_NEG_ERR,	3, 3, msg_sub_text },
};

static const char *const msg_err_names[RELAY_MSG_ERR_COUNT] = {
	[RELAY_MSG_PARSED] = "parsed",
	[RELAY_MSG_ERR_TOO_LARGE] = "too large",
	[RELAY_MSG_ERR_JSON] = "bad json",
	[RELAY_MSG_ERR_NOT_ARRAY] = "not an array",
	[RELAY_MSG_ERR_TYPE] = "no type",
	[RELAY_MSG_ERR_UNKNOWN] = "unknown type",
	[RELAY_MSG_ERR_ARITY] = "wrong element count",
	[RELAY_MSG_ERR_SUBID] = "bad subscription id",
	[RELAY_MSG_ERR_FIELD] = "bad field",
	[RELAY_MSG_ERR_EVENT_ID] = "bad event id",
	[RELAY_MSG_ERR_NOMEM] = "out of memory",
	[RELAY_MSG_ERR_VALUES] = "too many values",
};

static const char *const reason_names[RELAY_REASON_COUNT] = {
	[RELAY_REASON_NONE] = "",
	[RELAY_REASON_DUPLICATE] = "duplicate",
	[RELAY_REASON_POW] = "pow",
	[RELAY_REASON_BLOCKED] = "blocked",
	[RELAY_REASON_RATE_LIMITED] = "rate-limited",
	[RELAY_REASON_INVALID] = "invalid",
	[RELAY_REASON_RESTRICTED] = "restricted",
	[RELAY_REASON_AUTH_REQUIRED] = "auth-required",
	[RELAY_REASON_ERROR] = "error",
	[RELAY_REASON_MUTE] = "mute",
};

const char *
relay_msg_type_str(enum relay_msg_type t)
{
	size_t	i;

	for (i = 0; i < sizeof(msg_kinds) / sizeof(msg_kinds[0]); i++)
		if (msg_kinds[i].type == t)
			return msg_kinds[i].name;
	return "?";
}

const char *
relay_msg_err_str(enum relay_msg_err e)
{
	if ((unsigned)e >= RELAY_MSG_ERR_COUNT)
		return "?";
	return msg_err_names[e];
}

const char *
relay_reason_str(enum relay_reason r)
{
	if ((unsigned)r >= RELAY_REASON_COUNT)
		return "";
	return reason_names[r];
}

enum relay_reason
relay_reason_parse(const char *text, size_t len)
{
	const char	*colon;
	size_t		 n, i;

	if (text == NULL || (colon = memchr(text, ':', len)) == NULL)
		return RELAY_REASON_NONE;
	n = (size_t)(colon - text);
	for (i = 1; i < RELAY_REASON_COUNT; i++)
		if (strlen(reason_names[i]) == n &&
		    memcmp(reason_names[i], text, n) == 0)
			return (enum relay_reason)i;
	return RELAY_REASON_NONE;
}

bool
relay_subid_valid(const char *s, size_t len)
{
	return s != NULL && len >= 1 && len <= RELAY_SUBID_MAX;
}

/* The i-th element as a string; NULL when absent or not a string. */
static const char *
elem_string(cJSON *root, int i, size_t *len)
{
	cJSON	*e = cJSON_GetArrayItem(root, i);

	if (!cJSON_IsString(e) || e->valuestring == NULL)
		return NULL;
	*len = strlen(e->valuestring);
	return e->valuestring;
}

static enum relay_msg_err
msg_get_subid(struct relay_msg *msg, cJSON *root)
{
	msg->subid = elem_string(root, 1, &msg->subid_len);
	if (!relay_subid_valid(msg->subid, msg->subid_len))
		return RELAY_MSG_ERR_SUBID;
	return RELAY_MSG_PARSED;
}

/* Element i as the message text; absent is "", a non-string is an error. */
static enum relay_msg_err
msg_get_text(struct relay_msg *msg, cJSON *root, int i)
{
	if (i >= cJSON_GetArraySize(root)) {
		msg->text = "";
		msg->text_len = 0;
		return RELAY_MSG_PARSED;
	}
	if ((msg->text = elem_string(root, i, &msg->text_len)) == NULL)
		return RELAY_MSG_ERR_FIELD;
	return RELAY_MSG_PARSED;
}

/* cJSON treats every byte <= 32 as white space; so does this scanner. */
/*
 * Find the bytes of the third element of an ["EVENT", "sub", {...}] that
 * cJSON has already accepted: skip '[' and two strings forward, ']'
 * backward. Leaves event_raw NULL if the frame does not look as expected
 * (it cannot, once parsed, but a miss only costs the fast path).
 */
static void
msg_event_span(struct relay_msg *msg, const char *f, size_t len)
{
	size_t	i = 0, end = len;
	int	k;

	if (len >= 3 && memcmp(f, "\xef\xbb\xbf", 3) == 0)
		i = 3;
	i = jsonscan_skip_ws(f, i, len);
	if (i >= len || f[i++] != '[')
		return;
	for (k = 0; k < 2; k++) {
		i = jsonscan_skip_ws(f, i, len);
		if (i >= len || f[i] != '"')
			return;
		i = jsonscan_skip_ws(f, jsonscan_skip_string(f, i, len), len);
		if (i >= len || f[i++] != ',')
			return;
	}
	i = jsonscan_skip_ws(f, i, len);
	while (end > i && (unsigned char)f[end - 1] <= 32)
		end--;
	if (end <= i || f[--end] != ']')
		return;
	while (end > i && (unsigned char)f[end - 1] <= 32)
		end--;
	if (end <= i + 1 || f[i] != '{' || f[end - 1] != '}')
		return;
	msg->event_raw = f + i;
	msg->event_raw_len = end - i;
}

static enum relay_msg_err
msg_event(struct relay_msg *msg, cJSON *root, const char *frame, size_t len)
{
	enum relay_msg_err	 e;
	cJSON			*ev;

	if ((e = msg_get_subid(msg, root)) != RELAY_MSG_PARSED)
		return e;
	ev = cJSON_GetArrayItem(root, 2);
	if (!cJSON_IsObject(ev))
		return RELAY_MSG_ERR_FIELD;
	msg->event = ev;
	msg_event_span(msg, frame, len);
	return RELAY_MSG_PARSED;
}

static enum relay_msg_err
msg_sub_only(struct relay_msg *msg, cJSON *root, const char *f, size_t len)
{
	(void)f;
	(void)len;
	return msg_get_subid(msg, root);
}

static enum relay_msg_err
msg_sub_text(struct relay_msg *msg, cJSON *root, const char *f, size_t len)
{
	enum relay_msg_err	e;

	(void)f;
	(void)len;
	if ((e = msg_get_subid(msg, root)) != RELAY_MSG_PARSED ||
	    (e = msg_get_text(msg, root, 2)) != RELAY_MSG_PARSED)
		return e;
	if (msg->type == RELAY_MSG_CLOSED || msg->type == RELAY_MSG_NEG_ERR)
		msg->reason = relay_reason_parse(msg->text, msg->text_len);
	return RELAY_MSG_PARSED;
}

static enum relay_msg_err
msg_text(struct relay_msg *msg, cJSON *root, const char *f, size_t len)
{
	(void)f;
	(void)len;
	return msg_get_text(msg, root, 1);
}

static enum relay_msg_err
msg_ok(struct relay_msg *msg, cJSON *root, const char *f, size_t len)
{
	const char	*id;
	size_t		 idlen;
	cJSON		*b;

	(void)f;
	(void)len;
	if ((id = elem_string(root, 1, &idlen)) == NULL)
		return RELAY_MSG_ERR_FIELD;
	if (hex_decode(id, idlen, msg->event_id, sizeof(msg->event_id)) == -1)
		return RELAY_MSG_ERR_EVENT_ID;
	b = cJSON_GetArrayItem(root, 2);
	if (!cJSON_IsBool(b))
		return RELAY_MSG_ERR_FIELD;
	msg->accepted = cJSON_IsTrue(b);
	if (msg_get_text(msg, root, 3) != RELAY_MSG_PARSED)
		return RELAY_MSG_ERR_FIELD;
	msg->reason = relay_reason_parse(msg->text, msg->text_len);
	return RELAY_MSG_PARSED;
}

static enum relay_msg_err
msg_count(struct relay_msg *msg, cJSON *root, const char *f, size_t len)
{
	enum relay_msg_err	 e;
	cJSON			*o, *c, *a;

	(void)f;
	(void)len;
	if ((e = msg_get_subid(msg, root)) != RELAY_MSG_PARSED)
		return e;
	o = cJSON_GetArrayItem(root, 2);
	c = cJSON_GetObjectItemCaseSensitive(o, "count");
	if (!cJSON_IsObject(o) ||
	    json_int(c, 0, RELAY_COUNT_MAX, &msg->count) == -1)
		return RELAY_MSG_ERR_FIELD;
	a = cJSON_GetObjectItemCaseSensitive(o, "approximate");
	if (a != NULL && !cJSON_IsBool(a))
		return RELAY_MSG_ERR_FIELD;
	msg->approximate = cJSON_IsTrue(a);
	return RELAY_MSG_PARSED;
}

static const struct msg_kind *
msg_kind_find(const char *name)
{
	size_t	i;

	for (i = 0; i < sizeof(msg_kinds) / sizeof(msg_kinds[0]); i++)
		if (strcmp(msg_kinds[i].name, name) == 0)
			return &msg_kinds[i];
	return NULL;
}

/* Parse the whole frame as one JSON value with only white space after it. */
static cJSON *
msg_parse_json(const char *frame, size_t len)
{
	const char	*end = NULL;
	cJSON		*root;

	if ((root = cJSON_ParseWithLengthOpts(frame, len, &end, 0)) == NULL)
		return NULL;
	for (; end != NULL && end < frame + len; end++) {
		if (*end != ' ' && *end != '\t' && *end != '\n' &&
		    *end != '\r') {
			cJSON_Delete(root);
			return NULL;
		}
	}
	return root;
}

static enum relay_msg_err
msg_dispatch(struct relay_msg *msg, cJSON *root, const char *frame,
    size_t len)
{
	const struct msg_kind	*k;
	cJSON			*t;
	int			 n;

	if (!cJSON_IsArray(root) || (n = cJSON_GetArraySize(root)) < 1)
		return RELAY_MSG_ERR_NOT_ARRAY;
	t = cJSON_GetArrayItem(root, 0);
	if (!cJSON_IsString(t) || t->valuestring == NULL)
		return RELAY_MSG_ERR_TYPE;
	if ((k = msg_kind_find(t->valuestring)) == NULL)
		return RELAY_MSG_ERR_UNKNOWN;
	if (n < k->min_elems || n > k->max_elems)
		return RELAY_MSG_ERR_ARITY;
	msg->type = k->type;
	return k->handler(msg, root, frame, len);
}

enum relay_msg_err
relay_msg_parse(struct relay_msg *msg, const char *frame, size_t len,
    size_t max_bytes)
{
	enum relay_msg_err	 e;
	cJSON			*root;

	memset(msg, 0, sizeof(*msg));
	msg->text = "";
	if (len > max_bytes)
		return RELAY_MSG_ERR_TOO_LARGE;
	if (jsonscan_check(frame, len, RELAY_MSG_MAX_VALUES,
	    RELAY_MSG_MAX_DEPTH, NULL) != JSONSCAN_OK)
		return RELAY_MSG_ERR_VALUES;
	if ((root = msg_parse_json(frame, len)) == NULL)
		return RELAY_MSG_ERR_JSON;
	if ((e = msg_dispatch(msg, root, frame, len)) != RELAY_MSG_PARSED) {
		cJSON_Delete(root);
		memset(msg, 0, sizeof(*msg));
		msg->text = "";
		return e;
	}
	msg->root = root;
	return RELAY_MSG_PARSED;
}

void
relay_msg_free(struct relay_msg *msg)
{
	cJSON_Delete(msg->root);
	memset(msg, 0, sizeof(*msg));
	msg->text = "";
}

cJSON *
relay_msg_take_event(struct relay_msg *msg)
{
	cJSON	*ev;

	if (msg->type != RELAY_MSG_EVENT || msg->event == NULL ||
	    msg->root == NULL)
		return NULL;
	ev = cJSON_DetachItemViaPointer(msg->root, msg->event);
	msg->event = NULL;
	return ev;
}

/* Undo a partial append: out goes back to len bytes. */
static int
out_restore(struct buf *out, size_t len)
{
	out->len = len;
	if (out->data != NULL)
		out->data[len] = '\0';
	if (out->pos > len)
		out->pos = len;
	return -1;
}

/* Append ["TYPE","subid" (no closing bracket). */
static int
put_head(struct buf *out, const char *type, const char *subid)
{
	if (!relay_subid_valid(subid, strlen(subid)))
		return -1;
	if (buf_printf(out, "[\"%s\",", type) == -1)
		return -1;
	return event_json_string(out, subid, strlen(subid));
}

static int
build_filters(struct buf *out, const char *type, const char *subid,
    const struct filter *filters, size_t n)
{
	size_t	start = out->len, i;

	if (filters == NULL || n == 0 || n > RELAY_MSG_MAX_FILTERS ||
	    put_head(out, type, subid) == -1)
		return out_restore(out, start);
	for (i = 0; i < n; i++)
		if (buf_putc(out, ',') == -1 ||
		    filter_to_json(&filters[i], out) == -1)
			return out_restore(out, start);
	if (buf_putc(out, ']') == -1)
		return out_restore(out, start);
	return 0;
}

int
relay_msg_build_req(struct buf *out, const char *subid,
    const struct filter *filters, size_t n)
{
	return build_filters(out, "REQ", subid, filters, n);
}

int
relay_msg_build_count(struct buf *out, const char *subid,
    const struct filter *filters, size_t n)
{
	return build_filters(out, "COUNT", subid, filters, n);
}

static int
build_sub_only(struct buf *out, const char *type, const char *subid)
{
	size_t	start = out->len;

	if (put_head(out, type, subid) == -1 || buf_putc(out, ']') == -1)
		return out_restore(out, start);
	return 0;
}

int
relay_msg_build_close(struct buf *out, const char *subid)
{
	return build_sub_only(out, "CLOSE", subid);
}

int
relay_msg_build_neg_close(struct buf *out, const char *subid)
{
	return build_sub_only(out, "NEG-CLOSE", subid);
}

int
relay_msg_build_event(struct buf *out, const char *event_json, size_t len)
{
	size_t	start = out->len;

	if (event_json == NULL || len < 2 || event_json[0] != '{' ||
	    event_json[len - 1] != '}')
		return -1;
	if (buf_puts(out, "[\"EVENT\",") == -1 ||
	    buf_append(out, event_json, len) == -1 || buf_putc(out, ']') == -1)
		return out_restore(out, start);
	return 0;
}

/* [["relay", url], ["challenge", c]]; NULL on allocation failure. */
static cJSON *
auth_tags(const char *relay_url, const char *challenge)
{
	const char	*relay[2] = { "relay", relay_url };
	const char	*chal[2] = { "challenge", challenge };
	cJSON		*tags, *t;

	if ((tags = cJSON_CreateArray()) == NULL)
		return NULL;
	if ((t = cJSON_CreateStringArray(relay, 2)) == NULL ||
	    !cJSON_AddItemToArray(tags, t) ||
	    (t = cJSON_CreateStringArray(chal, 2)) == NULL ||
	    !cJSON_AddItemToArray(tags, t)) {
		cJSON_Delete(tags);
		return NULL;
	}
	return tags;
}

int
relay_msg_build_auth(struct buf *out, const struct nostr_key *key,
    const char *relay_url, const char *challenge, int64_t now_s,
    uint8_t id_out[32])
{
	struct event	 ev;
	cJSON		*tags;
	size_t		 start = out->len;
	int		 rc = -1;

	if (key == NULL || relay_url == NULL || challenge == NULL ||
	    strlen(challenge) > RELAY_CHALLENGE_MAX ||
	    strlen(relay_url) > URL_MAX_BYTES)
		return -1;
	if ((tags = auth_tags(relay_url, challenge)) == NULL)
		return -1;
	if (event_create(&ev, key, 22242, now_s, tags, "") == EVENT_OK) {
		if (buf_puts(out, "[\"AUTH\",") == 0 &&
		    event_to_json(&ev, out) == 0 && buf_putc(out, ']') == 0)
			rc = 0;
		if (rc == 0 && id_out != NULL)
			memcpy(id_out, ev.id, 32);
		event_free(&ev);
	}
	cJSON_Delete(tags);
	if (rc == -1)
		return out_restore(out, start);
	return 0;
}

/* Append "hex" of msg[0..n), quotes included, encoded in place. */
static int
put_hex_string(struct buf *out, const uint8_t *msg, size_t n)
{
	if (msg == NULL || n == 0 || n > NEG_MAX_MSG_BYTES ||
	    buf_putc(out, '"') == -1 || buf_reserve(out, 2 * n + 1) == -1)
		return -1;
	/* buf_reserve made room for 2n + 1 bytes and the NUL after them. */
	if (hex_encode(msg, n, (char *)out->data + out->len,
	    out->cap - out->len + 1) == -1)
		return -1;
	out->len += 2 * n;
	return buf_putc(out, '"');
}

int
relay_msg_build_neg_open(struct buf *out, const char *subid,
    const struct filter *filter, const uint8_t *msg, size_t len)
{
	size_t	start = out->len;

	if (filter == NULL || put_head(out, "NEG-OPEN", subid) == -1 ||
	    buf_putc(out, ',') == -1 || filter_to_json(filter, out) == -1 ||
	    buf_putc(out, ',') == -1 || put_hex_string(out, msg, len) == -1 ||
	    buf_putc(out, ']') == -1)
		return out_restore(out, start);
	return 0;
}

int
relay_msg_build_neg_msg(struct buf *out, const char *subid,
    const uint8_t *msg, size_t len)
{
	size_t	start = out->len;

	if (put_head(out, "NEG-MSG", subid) == -1 || buf_putc(out, ',') == -1 ||
	    put_hex_string(out, msg, len) == -1 || buf_putc(out, ']') == -1)
		return out_restore(out, start);
	return 0;
}

int
relay_msg_neg_decode(const char *hex, size_t len, size_t max_bytes,
    struct buf *out, const char **why)
{
	buf_reset(out);
	*why = "not hex";
	if (hex == NULL || len == 0 || len % 2 != 0)
		return -1;
	*why = "too long";
	if (len / 2 > max_bytes)
		return -1;
	*why = "out of memory";
	if (buf_reserve(out, len / 2) == -1)
		return -1;
	*why = "not hex";
	if (hex_decode(hex, len, out->data, len / 2) == -1) {
		out->data[0] = '\0';	/* len is still 0 */
		return -1;
	}
	out->len = len / 2;
	out->data[out->len] = '\0';
	*why = "";
	return 0;
}
