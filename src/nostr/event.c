/*
 * event.c — owns the NIP-01 event: strict parse, canonical serialization,
 * id, BIP-340 verification and signing. It must never trust a field it has
 * not checked, never allocate for input longer than the caller's limit
 * or holding more than EVENT_MAX_JSON_VALUES values, and never serialize through cJSON's printer: cJSON escapes differently
 * from NIP-01 (it writes \u00XX for some bytes NIP-01 keeps verbatim), and
 * the id is a hash of exact bytes.
 */
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

/*
 * Serialization. NIP-01 escapes exactly: " \ and the five short escapes
 * \n \r \t \b \f; other bytes below 0x20 as \u00XX; everything else,
 * including '/', DEL and multibyte UTF-8, is copied as is.
 */
static const char event_esc_short[0x20] = {
	['\b'] = 'b', ['\t'] = 't', ['\n'] = 'n', ['\f'] = 'f', ['\r'] = 'r',
};

/* 1 for the bytes event_put_escape handles: below 0x20, '"' and '\\'. */
static const uint8_t event_needs_escape[256] = {
	[0x00] = 1, [0x01] = 1, [0x02] = 1, [0x03] = 1, [0x04] = 1, [0x05] = 1,
	[0x06] = 1, [0x07] = 1, [0x08] = 1, [0x09] = 1, [0x0a] = 1, [0x0b] = 1,
	[0x0c] = 1, [0x0d] = 1, [0x0e] = 1, [0x0f] = 1, [0x10] = 1, [0x11] = 1,
	[0x12] = 1, [0x13] = 1, [0x14] = 1, [0x15] = 1, [0x16] = 1, [0x17] = 1,
	[0x18] = 1, [0x19] = 1, [0x1a] = 1, [0x1b] = 1, [0x1c] = 1, [0x1d] = 1,
	[0x1e] = 1, [0x1f] = 1, ['"'] = 1, ['\\'] = 1,
};

/* Append one byte that needs escaping. 0, or -1. */
static int
event_put_escape(struct buf *out, unsigned char c)
{
	static const char	 digits[] = "0123456789abcdef";
	char			 e[6] = { '\\', 'u', '0', '0', 0, 0 };

	if (c == '"' || c == '\\') {
		e[1] = (char)c;
		return buf_append(out, e, 2);
	}
	if (event_esc_short[c] != 0) {
		e[1] = event_esc_short[c];
		return buf_append(out, e, 2);
	}
	e[4] = digits[c >> 4];
	e[5] = digits[c & 0xf];
	return buf_append(out, e, 6);
}

#define EVENT_W_ONES	0x0101010101010101ULL
#define EVENT_W_HIGHS	0x8080808080808080ULL

/*
 * Nonzero when one of the 8 bytes of w needs escaping (below 0x20, '"'
 * or '\\'), zero when none does. Each term is the usual "has a zero byte"
 * / "has a byte below n" test, exact about whether such a byte exists;
 * '"' and '\\' have no high bit, so ~w masks all three alike.
 */
static uint64_t
event_word_special(uint64_t w)
{
	uint64_t	q = w ^ (EVENT_W_ONES * '"');
	uint64_t	b = w ^ (EVENT_W_ONES * '\\');

	return ((w - EVENT_W_ONES * 0x20) | (q - EVENT_W_ONES) |
	    (b - EVENT_W_ONES)) & ~w & EVENT_W_HIGHS;
}

/*
 * Length of the longest prefix of s[0..len) that needs no escaping. Text
 * is mostly plain, so it is scanned eight bytes at a time and only a word
 * holding a special byte is looked at byte by byte.
 */
static size_t
event_plain_run(const char *s, size_t len)
{
	uint64_t	w;
	size_t		i = 0;

	for (; i + 8 <= len; i += 8) {
		memcpy(&w, s + i, 8);
		if (event_word_special(w) != 0)
			break;
	}
	for (; i < len; i++)
		if (event_needs_escape[(unsigned char)s[i]])
			break;
	return i;
}

/* Short strings (tag items, hex) are quoted in one append. */
#define EVENT_SHORT_STRING	128

int
event_json_string(struct buf *out, const char *s, size_t len)
{
	char	q[EVENT_SHORT_STRING + 2];
	size_t	i = 0, run;

	run = event_plain_run(s, len);
	if (run == len && len <= EVENT_SHORT_STRING) {
		q[0] = '"';
		memcpy(q + 1, s, len);
		q[len + 1] = '"';
		return buf_append(out, q, len + 2);
	}
	if (buf_reserve(out, len + 2) == -1 || buf_putc(out, '"') == -1)
		return -1;
	for (;;) {
		if (buf_append(out, s + i, run) == -1)
			return -1;
		if ((i += run) == len)
			break;
		if (event_put_escape(out, (unsigned char)s[i]) == -1)
			return -1;
		i++;
		run = event_plain_run(s + i, len - i);
	}
	return buf_putc(out, '"');
}

static int
event_put_cstring(struct buf *out, const char *s)
{
	return event_json_string(out, s, strlen(s));
}

/* Lowercase hex needs no escaping: quoted and appended as is. */
static int
event_put_hex(struct buf *out, const uint8_t *b, size_t n)
{
	char	hex[130];

	if (hex_encode(b, n, hex + 1, sizeof(hex) - 1) == -1)
		return -1;
	hex[0] = '"';
	hex[2 * n + 1] = '"';
	return buf_append(out, hex, 2 * n + 2);
}

/* Append the tags array (a checked array of arrays of strings). */
static int
event_put_tags(struct buf *out, const cJSON *tags)
{
	const cJSON	*tag, *item;

	if (buf_putc(out, '[') == -1)
		return -1;
	for (tag = tags != NULL ? tags->child : NULL; tag != NULL;
	    tag = tag->next) {
		if ((tag == tags->child ? buf_putc(out, '[') :
		    buf_append(out, ",[", 2)) == -1)
			return -1;
		for (item = tag->child; item != NULL; item = item->next) {
			if (item != tag->child && buf_putc(out, ',') == -1)
				return -1;
			if (event_put_cstring(out, item->valuestring) == -1)
				return -1;
		}
		if (buf_putc(out, ']') == -1)
			return -1;
	}
	return buf_putc(out, ']');
}

/* Append sep and v in decimal, without printf (this is the hot path). */
static int
event_put_int(struct buf *out, char sep, int64_t v)
{
	char		d[24];
	size_t		i = sizeof(d);
	uint64_t	u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;

	do {
		d[--i] = (char)('0' + u % 10);
		u /= 10;
	} while (u != 0);
	if (v < 0)
		d[--i] = '-';
	d[--i] = sep;
	return buf_append(out, d + i, sizeof(d) - i);
}

int
event_serialize(const struct event *ev, struct buf *out)
{
	if (buf_puts(out, "[0,") == -1 ||
	    event_put_hex(out, ev->pubkey, sizeof(ev->pubkey)) == -1 ||
	    event_put_int(out, ',', ev->created_at) == -1 ||
	    event_put_int(out, ',', ev->kind) == -1 ||
	    buf_putc(out, ',') == -1 ||
	    event_put_tags(out, ev->tags) == -1 ||
	    buf_putc(out, ',') == -1 ||
	    event_json_string(out, ev->content, ev->content_len) == -1)
		return -1;
	return buf_putc(out, ']');
}

/*
 * The stored form {"id":..,"pubkey":..,"created_at":..,"kind":..,"tags":..,
 * "content":..,"sig":..} holds the pieces of the canonical form
 * [0,pubkey,created_at,kind,tags,content] in the same order and with the
 * same escaping. event_put_json writes the stored form once and notes
 * where those five pieces lie in out, so the id can be hashed from them
 * without a second serialization.
 */
#define EVENT_PIECES	5

static int
event_put_json(const struct event *ev, struct buf *out,
    size_t piece[EVENT_PIECES][2])
{
	if (buf_puts(out, "{\"id\":") == -1 ||
	    event_put_hex(out, ev->id, sizeof(ev->id)) == -1 ||
	    buf_puts(out, ",\"pubkey\":") == -1)
		return -1;
	piece[0][0] = out->len;
	if (event_put_hex(out, ev->pubkey, sizeof(ev->pubkey)) == -1)
		return -1;
	piece[0][1] = out->len;
	if (buf_puts(out, ",\"created_at\"") == -1)
		return -1;
	piece[1][0] = out->len + 1;	/* after the ':' */
	if (event_put_int(out, ':', ev->created_at) == -1)
		return -1;
	piece[1][1] = out->len;
	if (buf_puts(out, ",\"kind\"") == -1)
		return -1;
	piece[2][0] = out->len + 1;
	if (event_put_int(out, ':', ev->kind) == -1)
		return -1;
	piece[2][1] = out->len;
	if (buf_puts(out, ",\"tags\":") == -1)
		return -1;
	piece[3][0] = out->len;
	if (event_put_tags(out, ev->tags) == -1)
		return -1;
	piece[3][1] = out->len;
	if (buf_puts(out, ",\"content\":") == -1)
		return -1;
	piece[4][0] = out->len;
	if (event_json_string(out, ev->content, ev->content_len) == -1)
		return -1;
	piece[4][1] = out->len;
	if (buf_puts(out, ",\"sig\":") == -1 ||
	    event_put_hex(out, ev->sig, sizeof(ev->sig)) == -1)
		return -1;
	return buf_putc(out, '}');
}

/* SHA-256 of "[0," piece "," piece ... "]" over the pieces in base. */
static int
event_hash_pieces(const uint8_t *base, size_t piece[EVENT_PIECES][2],
    uint8_t id[32])
{
	mbedtls_sha256_context	ctx;
	size_t			i;
	int			rc;

	mbedtls_sha256_init(&ctx);
	rc = mbedtls_sha256_starts_ret(&ctx, 0);
	for (i = 0; i < EVENT_PIECES && rc == 0; i++) {
		rc = mbedtls_sha256_update_ret(&ctx,
		    (const unsigned char *)(i == 0 ? "[0," : ","), i == 0 ? 3 : 1);
		if (rc == 0)
			rc = mbedtls_sha256_update_ret(&ctx, base + piece[i][0],
			    piece[i][1] - piece[i][0]);
	}
	if (rc == 0)
		rc = mbedtls_sha256_update_ret(&ctx, (const unsigned char *)"]",
		    1);
	if (rc == 0)
		rc = mbedtls_sha256_finish_ret(&ctx, id);
	mbedtls_sha256_free(&ctx);
	return rc == 0 ? 0 : -1;
}

int
event_to_json(const struct event *ev, struct buf *out)
{
	size_t	piece[EVENT_PIECES][2];

	return event_put_json(ev, out, piece);
}

int
event_to_json_id(const struct event *ev, struct buf *out, uint8_t id[32])
{
	size_t	piece[EVENT_PIECES][2];

	if (event_put_json(ev, out, piece) == -1)
		return -1;
	return event_hash_pieces(out->data, piece, id);
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
