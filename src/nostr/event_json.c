/*
 * event_json.c — the canonical JSON writer of events (event.h): the NIP-01
 * serialization [0,pubkey,created_at,kind,tags,content] that ids hash, and
 * the stored form {"id",...,"sig"}, written once with the canonical
 * pieces noted so the id can be hashed from them. It owns the escaping
 * rule and must never write anything a parser would read back
 * differently: the same event always gives the same bytes.
 */
#include <stdint.h>
#include <string.h>

#include <mbedtls/sha256.h>

#include "core/buf.h"
#include "core/hex.h"
#include "nostr/event.h"

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

