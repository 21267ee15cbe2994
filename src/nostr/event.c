/*
 * event.c — owns the NIP-01 event: strict parse, id, BIP-340 verification
 * and signing (the canonical writer is event_json.c). It must never trust
 * a field it has not checked, never allocate for input longer than the
 * caller's limit or holding more than EVENT_MAX_JSON_VALUES values, and
 * never serialize through cJSON's printer: cJSON escapes differently from
 * NIP-01 (it writes \u00XX for some bytes NIP-01 keeps verbatim), and the
 * id is a hash of exact bytes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <mbedtls/sha256.h>
#include <secp256k1.h>
#include <secp256k1_extrakeys.h>
#include <secp256k1_schnorrsig.h>

#include "core/hex.h"
#include "core/json.h"
#include "core/jsonscan.h"
#include "core/limits.h"
#include "nostr/event.h"
#include "nostr/key.h"
#include "nostr/secp.h"

/* Largest magnitude of an int64 as a double: 2^63. */

static const char *const event_reasons[EVENT_RESULT_COUNT] = {
	[EVENT_OK] = "",
	[EVENT_BAD_JSON] = "invalid: bad json",
	[EVENT_TOO_LARGE] = "invalid: too large",
	[EVENT_MALFORMED_ID] = "invalid: malformed id",
	[EVENT_MALFORMED_PUBKEY] = "invalid: malformed pubkey",
	[EVENT_MALFORMED_SIG] = "invalid: malformed sig",
	[EVENT_MALFORMED_KIND] = "invalid: malformed kind",
	[EVENT_MALFORMED_CREATED_AT] = "invalid: malformed created_at",
	[EVENT_MALFORMED_TAGS] = "invalid: malformed tags",
	[EVENT_MALFORMED_CONTENT] = "invalid: malformed content",
	[EVENT_MISSING_ID] = "invalid: missing id",
	[EVENT_MISSING_PUBKEY] = "invalid: missing pubkey",
	[EVENT_MISSING_SIG] = "invalid: missing sig",
	[EVENT_MISSING_KIND] = "invalid: missing kind",
	[EVENT_MISSING_CREATED_AT] = "invalid: missing created_at",
	[EVENT_MISSING_TAGS] = "invalid: missing tags",
	[EVENT_MISSING_CONTENT] = "invalid: missing content",
	[EVENT_ID_MISMATCH] = "invalid: id mismatch",
	[EVENT_BAD_SIG] = "invalid: bad signature",
	[EVENT_TOO_FUTURE] = "invalid: created_at too far in the future",
	[EVENT_ERR_INTERNAL] = "error: internal error",
};

const char *
event_result_str(enum event_result r)
{
	if ((unsigned)r >= EVENT_RESULT_COUNT)
		return "error: unknown result";
	return event_reasons[r];
}

void
event_init(struct event *ev)
{
	memset(ev, 0, sizeof(*ev));
}

void
event_free(struct event *ev)
{
	cJSON_Delete(ev->json);
	memset(ev, 0, sizeof(*ev));
}

/*
 * Parsing: one table row per field, one small handler each. A field seen
 * twice is malformed (two readers could otherwise disagree about which
 * copy the id covers); unknown fields are ignored.
 */
typedef enum event_result (*event_field_fn)(struct event *, const cJSON *);

/* A JSON string of exactly 2 * n lowercase hex digits, decoded into out. */
static int
event_hex_field(const cJSON *v, uint8_t *out, size_t n)
{
	if (!cJSON_IsString(v) || v->valuestring == NULL)
		return -1;
	if (strlen(v->valuestring) != 2 * n)
		return -1;
	return hex_decode(v->valuestring, 2 * n, out, n);
}

static enum event_result
event_f_id(struct event *ev, const cJSON *v)
{
	if (event_hex_field(v, ev->id, sizeof(ev->id)) == -1)
		return EVENT_MALFORMED_ID;
	ev->id_ok = 1;
	return EVENT_OK;
}

static enum event_result
event_f_pubkey(struct event *ev, const cJSON *v)
{
	if (event_hex_field(v, ev->pubkey, sizeof(ev->pubkey)) == -1)
		return EVENT_MALFORMED_PUBKEY;
	return EVENT_OK;
}

static enum event_result
event_f_sig(struct event *ev, const cJSON *v)
{
	if (event_hex_field(v, ev->sig, sizeof(ev->sig)) == -1)
		return EVENT_MALFORMED_SIG;
	return EVENT_OK;
}

static enum event_result
event_f_kind(struct event *ev, const cJSON *v)
{
	int64_t	k;

	if (json_int(v, 0, 65535, &k) == -1)
		return EVENT_MALFORMED_KIND;
	ev->kind = (uint32_t)k;
	return EVENT_OK;
}

static enum event_result
event_f_created_at(struct event *ev, const cJSON *v)
{
	if (json_int(v, INT64_MIN, INT64_MAX,
	    &ev->created_at) == -1)
		return EVENT_MALFORMED_CREATED_AT;
	return EVENT_OK;
}

int
event_tags_check(const cJSON *t, size_t *ntags)
{
	const cJSON	*tag, *item;
	size_t		 n = 0, m;

	if (!cJSON_IsArray(t))
		return -1;
	for (tag = t->child; tag != NULL; tag = tag->next) {
		if (++n > EVENT_MAX_TAGS || !cJSON_IsArray(tag))
			return -1;
		m = 0;
		for (item = tag->child; item != NULL; item = item->next) {
			if (++m > EVENT_MAX_TAG_ITEMS ||
			    !cJSON_IsString(item) || item->valuestring == NULL)
				return -1;
		}
	}
	if (ntags != NULL)
		*ntags = n;
	return 0;
}

static enum event_result
event_f_tags(struct event *ev, const cJSON *v)
{
	if (event_tags_check(v, &ev->ntags) == -1)
		return EVENT_MALFORMED_TAGS;
	ev->tags = v;
	return EVENT_OK;
}

static enum event_result
event_f_content(struct event *ev, const cJSON *v)
{
	if (!cJSON_IsString(v) || v->valuestring == NULL)
		return EVENT_MALFORMED_CONTENT;
	ev->content = v->valuestring;
	ev->content_len = strlen(v->valuestring);
	return EVENT_OK;
}

static const struct event_field {
	const char		*name;
	event_field_fn		 fn;
	enum event_result	 malformed;
	enum event_result	 missing;
} event_fields[] = {
	{ "id", event_f_id, EVENT_MALFORMED_ID, EVENT_MISSING_ID },
	{ "pubkey", event_f_pubkey, EVENT_MALFORMED_PUBKEY,
	    EVENT_MISSING_PUBKEY },
	{ "created_at", event_f_created_at, EVENT_MALFORMED_CREATED_AT,
	    EVENT_MISSING_CREATED_AT },
	{ "kind", event_f_kind, EVENT_MALFORMED_KIND, EVENT_MISSING_KIND },
	{ "tags", event_f_tags, EVENT_MALFORMED_TAGS, EVENT_MISSING_TAGS },
	{ "content", event_f_content, EVENT_MALFORMED_CONTENT,
	    EVENT_MISSING_CONTENT },
	{ "sig", event_f_sig, EVENT_MALFORMED_SIG, EVENT_MISSING_SIG },
};
#define EVENT_NFIELDS	(sizeof(event_fields) / sizeof(event_fields[0]))

/* Row of the field named key, or -1 for a field NIP-01 does not define. */
static int
event_field_index(const char *key)
{
	size_t	i;

	for (i = 0; i < EVENT_NFIELDS; i++)
		if (strcmp(key, event_fields[i].name) == 0)
			return (int)i;
	return -1;
}

/* Run every member of obj through its handler; report missing fields. */
static enum event_result
event_fill(struct event *ev, const cJSON *obj)
{
	const cJSON		*m;
	unsigned		 seen = 0;
	enum event_result	 r;
	size_t			 i;
	int			 f;

	if (!cJSON_IsObject(obj))
		return EVENT_BAD_JSON;
	for (m = obj->child; m != NULL; m = m->next) {
		if (m->string == NULL || (f = event_field_index(m->string)) < 0)
			continue;
		if (seen & (1u << f))
			return event_fields[f].malformed;
		seen |= 1u << f;
		if ((r = event_fields[f].fn(ev, m)) != EVENT_OK)
			return r;
	}
	for (i = 0; i < EVENT_NFIELDS; i++)
		if (!(seen & (1u << i)))
			return event_fields[i].missing;
	return EVENT_OK;
}

enum event_result
event_from_cjson(struct event *ev, cJSON *obj)
{
	enum event_result	r;

	event_init(ev);
	if ((r = event_fill(ev, obj)) != EVENT_OK) {
		cJSON_Delete(obj);
		ev->tags = NULL;
		ev->content = NULL;
		return r;
	}
	ev->json = obj;
	return EVENT_OK;
}

enum event_result
event_parse(struct event *ev, const char *text, size_t len, size_t max_bytes)
{
	const char	*end = NULL;
	cJSON		*obj;

	event_init(ev);
	if (len > max_bytes)
		return EVENT_TOO_LARGE;
	/* Values, not bytes, size cJSON's tree: count them before it. */
	if (jsonscan_check(text, len, EVENT_MAX_JSON_VALUES,
	    EVENT_MAX_JSON_DEPTH, NULL) != JSONSCAN_OK)
		return EVENT_TOO_LARGE;
	obj = cJSON_ParseWithLengthOpts(text, len, &end, 0);
	if (obj == NULL)
		return EVENT_BAD_JSON;
	/* cJSON stops after the value; anything but whitespace is garbage. */
	for (; end < text + len; end++) {
		if (*end != ' ' && *end != '\t' && *end != '\n' &&
		    *end != '\r') {
			cJSON_Delete(obj);
			return EVENT_BAD_JSON;
		}
	}
	return event_from_cjson(ev, obj);
}

int
event_compute_id(const struct event *ev, struct buf *scratch, uint8_t id[32])
{
	buf_reset(scratch);
	if (event_serialize(ev, scratch) == -1)
		return -1;
	if (mbedtls_sha256_ret(buf_rptr(scratch), buf_avail(scratch), id,
	    0) != 0)
		return -1;
	return 0;
}

enum event_result
event_check_id(const struct event *ev, struct buf *scratch)
{
	uint8_t	id[32];

	if (event_compute_id(ev, scratch, id) == -1)
		return EVENT_TOO_LARGE;
	if (memcmp(id, ev->id, sizeof(id)) != 0)
		return EVENT_ID_MISMATCH;
	return EVENT_OK;
}

/*
 * Parsed public keys in sets of EVENT_PUBKEY_CACHE_WAYS, chosen by the
 * key's first bytes. Parsing an x-only key is a field square root, about
 * an eighth of a verification, and a cache sees the same few thousand
 * followed authors over and over. Within a set the most recently used key
 * comes first, so a few authors that share a set do not evict each other
 * (direct mapping missed a third of the time with 200 authors in 512
 * slots). A crafted run of colliding keys only evicts entries (a miss
 * costs one parse); every hit is confirmed by comparing all 32 bytes.
 */
#define EVENT_PK_SETS	(EVENT_PUBKEY_CACHE_SLOTS / EVENT_PUBKEY_CACHE_WAYS)
_Static_assert(EVENT_PK_SETS > 0 &&
    EVENT_PK_SETS * EVENT_PUBKEY_CACHE_WAYS == EVENT_PUBKEY_CACHE_SLOTS,
    "the key cache splits into whole sets");

struct event_pk_slot {
	uint8_t			raw[32];
	secp256k1_xonly_pubkey	pk;
	int			used;
};
static struct event_pk_slot
    event_pk_cache[EVENT_PK_SETS][EVENT_PUBKEY_CACHE_WAYS];

/* The parsed key for raw, from the cache or parsed now. NULL if invalid. */
static const secp256k1_xonly_pubkey *
event_pubkey(const secp256k1_context *ctx, const uint8_t raw[32])
{
	struct event_pk_slot	*set, hit;
	unsigned		 h;
	int			 w;

	h = ((unsigned)raw[0] << 8 | raw[1]) % EVENT_PK_SETS;
	set = event_pk_cache[h];
	for (w = 0; w < EVENT_PUBKEY_CACHE_WAYS; w++)
		if (set[w].used && memcmp(set[w].raw, raw, 32) == 0)
			break;
	if (w == EVENT_PUBKEY_CACHE_WAYS) {
		/* A miss replaces the least recently used, the last way. */
		w--;
		if (!secp256k1_xonly_pubkey_parse(ctx, &set[w].pk, raw)) {
			set[w].used = 0;
			return NULL;
		}
		memcpy(set[w].raw, raw, 32);
		set[w].used = 1;
	}
	if (w > 0) {
		hit = set[w];
		memmove(&set[1], &set[0], (size_t)w * sizeof(set[0]));
		set[0] = hit;
	}
	return &set[0].pk;
}

enum event_result
event_check_sig(const struct event *ev)
{
	const secp256k1_context		*ctx;
	const secp256k1_xonly_pubkey	*pk;

	if ((ctx = nostr_secp()) == NULL)
		return EVENT_ERR_INTERNAL;
	if ((pk = event_pubkey(ctx, ev->pubkey)) == NULL)
		return EVENT_BAD_SIG;
	if (!secp256k1_schnorrsig_verify(ctx, ev->sig, ev->id,
	    sizeof(ev->id), pk))
		return EVENT_BAD_SIG;
	return EVENT_OK;
}

enum event_result
event_check_time(const struct event *ev, int64_t now)
{
	/* Unsigned difference: no overflow for any pair of int64s. */
	if (ev->created_at > now &&
	    (uint64_t)ev->created_at - (uint64_t)now > EVENT_MAX_FUTURE_S)
		return EVENT_TOO_FUTURE;
	return EVENT_OK;
}

enum event_result
event_validate(struct event *ev, const char *text, size_t len,
    size_t max_bytes, int64_t now, struct buf *scratch)
{
	enum event_result	r;

	if ((r = event_parse(ev, text, len, max_bytes)) != EVENT_OK)
		return r;
	if ((r = event_check_time(ev, now)) == EVENT_OK &&
	    (r = event_check_id(ev, scratch)) == EVENT_OK &&
	    (r = event_check_sig(ev)) == EVENT_OK)
		return EVENT_OK;
	cJSON_Delete(ev->json);
	ev->json = NULL;
	ev->tags = NULL;
	ev->content = NULL;
	return r;
}

enum event_result
event_sign(struct event *ev, const struct nostr_key *key, const uint8_t *aux32)
{
	const secp256k1_context	*ctx;
	struct buf		 scratch;
	uint8_t			 aux[32];
	int			 rc;

	if ((ctx = nostr_secp()) == NULL)
		return EVENT_ERR_INTERNAL;
	if (aux32 == NULL) {
		if (nostr_random(aux, sizeof(aux)) == -1)
			return EVENT_ERR_INTERNAL;
		aux32 = aux;
	}
	memcpy(ev->pubkey, key->pubkey, sizeof(ev->pubkey));
	buf_init(&scratch, EVENT_SERIAL_MAX_BYTES);
	rc = event_compute_id(ev, &scratch, ev->id);
	buf_free(&scratch);
	if (rc == -1)
		return EVENT_ERR_INTERNAL;
	ev->id_ok = 1;
	if (!secp256k1_schnorrsig_sign32(ctx, ev->sig, ev->id, &key->keypair,
	    aux32))
		return EVENT_ERR_INTERNAL;
	return EVENT_OK;
}

/* The {"tags":[...],"content":"..."} tree a created event owns. */
static cJSON *
event_new_tree(const cJSON *tags, const char *content)
{
	cJSON	*obj, *t;

	if ((obj = cJSON_CreateObject()) == NULL)
		return NULL;
	t = tags != NULL ? cJSON_Duplicate(tags, 1) : cJSON_CreateArray();
	if (t == NULL || !cJSON_AddItemToObject(obj, "tags", t)) {
		cJSON_Delete(t);
		cJSON_Delete(obj);
		return NULL;
	}
	if (cJSON_AddStringToObject(obj, "content", content) == NULL) {
		cJSON_Delete(obj);
		return NULL;
	}
	return obj;
}

enum event_result
event_create(struct event *ev, const struct nostr_key *key, uint32_t kind,
    int64_t created_at, const cJSON *tags, const char *content)
{
	enum event_result	r;
	const cJSON		*c;

	event_init(ev);
	if (kind > 65535)
		return EVENT_MALFORMED_KIND;
	if (tags != NULL && event_tags_check(tags, NULL) == -1)
		return EVENT_MALFORMED_TAGS;
	if ((ev->json = event_new_tree(tags, content)) == NULL)
		return EVENT_ERR_INTERNAL;
	ev->kind = kind;
	ev->created_at = created_at;
	ev->tags = cJSON_GetObjectItemCaseSensitive(ev->json, "tags");
	(void)event_tags_check(ev->tags, &ev->ntags);
	c = cJSON_GetObjectItemCaseSensitive(ev->json, "content");
	ev->content = c->valuestring;
	ev->content_len = strlen(c->valuestring);
	if ((r = event_sign(ev, key, NULL)) != EVENT_OK)
		event_free(ev);
	return r;
}

enum event_class
event_kind_class(uint32_t kind)
{
	if (kind == 0 || kind == 3 || (kind >= 10000 && kind < 20000))
		return EVENT_CLASS_REPLACEABLE;
	if (kind >= 20000 && kind < 30000)
		return EVENT_CLASS_EPHEMERAL;
	if (kind >= 30000 && kind < 40000)
		return EVENT_CLASS_ADDRESSABLE;
	return EVENT_CLASS_REGULAR;
}

/* Value of the first "d" tag ("" if none or if it has no value). */
static const char *
event_d_tag(const struct event *ev)
{
	const cJSON	*tag, *k, *v;

	for (tag = ev->tags != NULL ? ev->tags->child : NULL; tag != NULL;
	    tag = tag->next) {
		k = tag->child;
		if (k == NULL || strcmp(k->valuestring, "d") != 0)
			continue;
		v = k->next;
		return v != NULL ? v->valuestring : "";
	}
	return "";
}

int
event_replace_key(const struct event *ev, struct event_rkey *rk)
{
	enum event_class	cls = event_kind_class(ev->kind);

	if (cls != EVENT_CLASS_REPLACEABLE && cls != EVENT_CLASS_ADDRESSABLE)
		return -1;
	memcpy(rk->pubkey, ev->pubkey, sizeof(rk->pubkey));
	rk->kind = ev->kind;
	rk->d = cls == EVENT_CLASS_ADDRESSABLE ? event_d_tag(ev) : "";
	rk->dlen = strlen(rk->d);
	return 0;
}

const char *
event_tag_first(const cJSON *tags, const char *name)
{
	const cJSON	*t, *k, *v;

	if (!cJSON_IsArray(tags))
		return NULL;
	cJSON_ArrayForEach(t, tags) {
		if ((k = t->child) == NULL || !cJSON_IsString(k) ||
		    strcmp(k->valuestring, name) != 0)
			continue;
		if ((v = k->next) == NULL || !cJSON_IsString(v))
			return NULL;
		return v->valuestring;
	}
	return NULL;
}

int
event_expiration(const cJSON *tags, int64_t *at)
{
	const char	*v = event_tag_first(tags, "expiration");
	char		*end;
	long long	 t;

	if (v == NULL || *v < '0' || *v > '9')
		return 0;
	errno = 0;
	t = strtoll(v, &end, 10);
	if (*end != '\0' || errno != 0)
		return 0;
	*at = t;
	return 1;
}

int
event_addr_parse(const char *addr, uint32_t *kind, uint8_t pubkey[32],
    const char **d, size_t *dlen)
{
	const char	*p = addr;
	unsigned long	 k = 0;
	int		 digits = 0;

	for (; *p >= '0' && *p <= '9' && digits < 6; p++, digits++)
		k = k * 10 + (unsigned long)(*p - '0');
	if (digits == 0 || *p != ':' || k > 65535)
		return -1;
	p++;
	if (strlen(p) < 65 || p[64] != ':' || hex_decode(p, 64, pubkey, 32) ==
	    -1)
		return -1;
	*kind = (uint32_t)k;
	*d = p + 65;
	*dlen = strlen(*d);
	return 0;
}
