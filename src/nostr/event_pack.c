/*
 * event_pack.c — the compact stored form of event JSON (event_pack.h).
 * Encoding cuts three hex runs out of the text and notes where they were;
 * decoding splices them back. Exactness never rests on reading the JSON:
 * whatever 64 or 128 characters are cut are the ones put back, because
 * the id and public key runs are cut only where the text holds exactly
 * the lowercase hex of the row's binary columns, and the signature run
 * only where it is 128 lowercase hex digits (decoded to bytes, encoded
 * again to the same digits). Text that offers no such runs is kept
 * verbatim. Decoding checks every offset against the blob's own length
 * before copying a byte: a damaged row fails, it never reads out of
 * bounds.
 */
#define _GNU_SOURCE	/* memmem */

#include <stdbool.h>
#include <string.h>

#include "core/hex.h"
#include "nostr/event_pack.h"

#define PACK_KEY_HEX		64	/* hex digits of an id or public key */
#define PACK_SIG_HEX		128	/* hex digits of a signature */
#define PACK_SIG_BYTES		64
#define PACK_CUT_HEX		(2 * PACK_KEY_HEX + PACK_SIG_HEX)
#define PACK_CUTS		3	/* id, public key, signature */
#define PACK_OFFSET_BYTES	4	/* one offset of EVENT_PACK_PLACED */

/*
 * The store's own serialization (nostr/event_json.c): {"id":" is 7 bytes,
 * the id's 64 digits and "," "pubkey":" (12) put the public key at 83,
 * and the text ends with the signature's digits and "}.
 */
#define PACK_CANON_ID_AT	7
#define PACK_CANON_PUBKEY_AT	83
#define PACK_CANON_SIG_FROM_END	(PACK_SIG_HEX + 2)
#define PACK_CANON_MIN_LEN	(PACK_CANON_PUBKEY_AT + PACK_KEY_HEX + \
				    PACK_CANON_SIG_FROM_END)

#define PACK_HEAD_CANONICAL	(1 + PACK_SIG_BYTES)
#define PACK_HEAD_PLACED	(1 + PACK_CUTS * PACK_OFFSET_BYTES + \
				    PACK_SIG_BYTES)

/* One hex run: where it starts in the JSON, its length, its digits. */
struct pack_cut {
	size_t		 at;
	size_t		 len;
	const char	*hex;
};

/* The runs of one event, in the order id, public key, signature. */
struct pack_cuts {
	struct pack_cut	 cut[PACK_CUTS];
	char		 id[PACK_KEY_HEX + 1];
	char		 pubkey[PACK_KEY_HEX + 1];
	char		 sig[PACK_SIG_HEX + 1];
	uint8_t		 sigbin[PACK_SIG_BYTES];
};

/*
 * One more than the value of each lowercase hex digit, 0 for any other
 * byte: the ingest path packs every event it stores, so its hex is read
 * by table rather than one call per digit.
 */
#define PACK_D(c, v)	[c] = (v) + 1
static const uint8_t pack_hexval[256] = {
	PACK_D('0', 0), PACK_D('1', 1), PACK_D('2', 2), PACK_D('3', 3),
	PACK_D('4', 4), PACK_D('5', 5), PACK_D('6', 6), PACK_D('7', 7),
	PACK_D('8', 8), PACK_D('9', 9), PACK_D('a', 10), PACK_D('b', 11),
	PACK_D('c', 12), PACK_D('d', 13), PACK_D('e', 14), PACK_D('f', 15),
};

/* Decode 2 * n lowercase hex digits of text into out. 0, or -1. */
static int
pack_unhex(const char *text, size_t n, uint8_t *out)
{
	const unsigned char	*t = (const unsigned char *)text;
	size_t			 i;
	uint8_t			 hi, lo;

	for (i = 0; i < n; i++) {
		hi = pack_hexval[t[2 * i]];
		lo = pack_hexval[t[2 * i + 1]];
		if (hi == 0 || lo == 0)
			return -1;
		out[i] = (uint8_t)((hi - 1) << 4 | (lo - 1));
	}
	return 0;
}

/* Whether text holds exactly the 2 * n lowercase hex digits of bin. */
static bool
pack_hex_is(const char *text, const uint8_t *bin, size_t n)
{
	const unsigned char	*t = (const unsigned char *)text;
	size_t			 i;

	for (i = 0; i < n; i++)
		if (pack_hexval[t[2 * i]] != (bin[i] >> 4) + 1 ||
		    pack_hexval[t[2 * i + 1]] != (bin[i] & 0x0f) + 1)
			return false;
	return true;
}

int
event_pack_form(const uint8_t *blob, size_t len)
{
	return len == 0 ? -1 : blob[0];
}

int64_t
event_pack_json_len(int form, size_t len)
{
	switch (form) {
	case EVENT_PACK_VERBATIM:
		return len < 1 ? -1 : (int64_t)len - 1;
	case EVENT_PACK_CANONICAL:
		return len < PACK_HEAD_CANONICAL ? -1 :
		    (int64_t)(len - PACK_HEAD_CANONICAL + PACK_CUT_HEX);
	case EVENT_PACK_PLACED:
		return len < PACK_HEAD_PLACED ? -1 :
		    (int64_t)(len - PACK_HEAD_PLACED + PACK_CUT_HEX);
	default:
		return -1;
	}
}

/* Fill the three runs at the offsets given (hex filled by the caller). */
static void
cuts_place(struct pack_cuts *c, size_t id_at, size_t pk_at, size_t sig_at)
{
	c->cut[0] = (struct pack_cut){ id_at, PACK_KEY_HEX, c->id };
	c->cut[1] = (struct pack_cut){ pk_at, PACK_KEY_HEX, c->pubkey };
	c->cut[2] = (struct pack_cut){ sig_at, PACK_SIG_HEX, c->sig };
}

/* The runs sorted by offset into order[]. */
static void
cuts_order(const struct pack_cuts *c, const struct pack_cut *order[PACK_CUTS])
{
	const struct pack_cut	*t;
	int			 i, j;

	for (i = 0; i < PACK_CUTS; i++)
		order[i] = &c->cut[i];
	for (i = 1; i < PACK_CUTS; i++)
		for (j = i; j > 0 && order[j - 1]->at > order[j]->at; j--) {
			t = order[j];
			order[j] = order[j - 1];
			order[j - 1] = t;
		}
}

/* Whether the runs lie inside a text of len bytes without overlapping. */
static bool
cuts_fit(const struct pack_cuts *c, size_t len)
{
	const struct pack_cut	*order[PACK_CUTS];
	size_t			 end = 0;
	int			 i;

	cuts_order(c, order);
	for (i = 0; i < PACK_CUTS; i++) {
		if (order[i]->at < end || order[i]->at > len ||
		    order[i]->len > len - order[i]->at)
			return false;
		end = order[i]->at + order[i]->len;
	}
	return true;
}

/* Whether [at, at + n) overlaps a run already placed in c->cut[0..k). */
static bool
cuts_overlap(const struct pack_cuts *c, int k, size_t at, size_t n)
{
	int	i;

	for (i = 0; i < k; i++)
		if (at < c->cut[i].at + c->cut[i].len && c->cut[i].at < at + n)
			return true;
	return false;
}

/* The first occurrence of needle clear of c->cut[0..k), or -1. */
static int64_t
find_clear(const char *text, size_t len, const char *needle, size_t n,
    const struct pack_cuts *c, int k)
{
	const char	*p = text, *hit;

	while ((size_t)(p - text) < len && (hit = memmem(p, len - (size_t)(p -
	    text), needle, n)) != NULL) {
		if (!cuts_overlap(c, k, (size_t)(hit - text), n))
			return hit - text;
		p = hit + 1;
	}
	return -1;
}

static size_t
skip_space(const char *t, size_t len, size_t i)
{
	while (i < len && (t[i] == ' ' || t[i] == '\t' || t[i] == '\n' ||
	    t[i] == '\r'))
		i++;
	return i;
}

/*
 * Where the digits of a "sig" member's value start: "sig", space, ':',
 * space, '"', 128 lowercase digits, '"'. -1 when there is none.
 */
static int64_t
find_sig(const char *text, size_t len, uint8_t sigbin[PACK_SIG_BYTES])
{
	const char	*p = text, *hit;
	size_t		 i;

	while ((size_t)(p - text) < len && (hit = memmem(p, len - (size_t)(p -
	    text), "\"sig\"", 5)) != NULL) {
		p = hit + 1;
		i = skip_space(text, len, (size_t)(hit - text) + 5);
		if (i >= len || text[i] != ':')
			continue;
		i = skip_space(text, len, i + 1);
		if (i >= len || text[i] != '"' || len - i - 1 < PACK_SIG_HEX + 1 ||
		    text[i + 1 + PACK_SIG_HEX] != '"' ||
		    pack_unhex(text + i + 1, PACK_SIG_BYTES, sigbin) == -1)
			continue;
		return (int64_t)(i + 1);
	}
	return -1;
}

/*
 * Whether text is in the store's own layout for the id and pubkey given;
 * the signature into c if so (the runs' text is not needed to cut them).
 */
static bool
cuts_canonical(const char *text, size_t len, const uint8_t id[32],
    const uint8_t pubkey[32], struct pack_cuts *c)
{
	size_t	sig_at;

	if (len < PACK_CANON_MIN_LEN ||
	    !pack_hex_is(text + PACK_CANON_ID_AT, id, 32) ||
	    !pack_hex_is(text + PACK_CANON_PUBKEY_AT, pubkey, 32))
		return false;
	sig_at = len - PACK_CANON_SIG_FROM_END;
	if (pack_unhex(text + sig_at, PACK_SIG_BYTES, c->sigbin) == -1)
		return false;
	cuts_place(c, PACK_CANON_ID_AT, PACK_CANON_PUBKEY_AT, sig_at);
	return true;
}

/* The three runs anywhere in text, clear of each other, into c. */
static bool
cuts_search(const char *text, size_t len, struct pack_cuts *c)
{
	int64_t	sig_at, id_at, pk_at;

	if ((sig_at = find_sig(text, len, c->sigbin)) == -1)
		return false;
	memcpy(c->sig, text + sig_at, PACK_SIG_HEX);
	cuts_place(c, 0, 0, (size_t)sig_at);
	/* Only the signature is placed: search with k = 1 from cut[2]. */
	c->cut[0] = c->cut[2];
	if ((id_at = find_clear(text, len, c->id, PACK_KEY_HEX, c, 1)) == -1)
		return false;
	c->cut[1] = (struct pack_cut){ (size_t)id_at, PACK_KEY_HEX, c->id };
	if ((pk_at = find_clear(text, len, c->pubkey, PACK_KEY_HEX, c, 2)) ==
	    -1)
		return false;
	cuts_place(c, (size_t)id_at, (size_t)pk_at, (size_t)sig_at);
	return cuts_fit(c, len);
}

/* Append text[0..len) without the runs of c (they fit). */
static void
put_rest(struct buf *out, const char *text, size_t len,
    const struct pack_cuts *c)
{
	const struct pack_cut	*order[PACK_CUTS];
	size_t			 from = 0;
	int			 i;

	cuts_order(c, order);
	for (i = 0; i < PACK_CUTS; i++) {
		(void)buf_append(out, text + from, order[i]->at - from);
		from = order[i]->at + order[i]->len;
	}
	(void)buf_append(out, text + from, len - from);
}

static void
put_u32(struct buf *out, size_t v)
{
	uint8_t	b[PACK_OFFSET_BYTES] = { (uint8_t)v, (uint8_t)(v >> 8),
	    (uint8_t)(v >> 16), (uint8_t)(v >> 24) };

	(void)buf_append(out, b, sizeof(b));
}

static int
encode_verbatim(const char *json, size_t len, struct buf *out)
{
	if (len == SIZE_MAX || buf_reserve(out, len + 1) == -1)
		return -1;
	(void)buf_putc(out, EVENT_PACK_VERBATIM);
	(void)buf_append(out, json, len);
	return 0;
}

int
event_pack_encode(const char *json, size_t len, const uint8_t id[32],
    const uint8_t pubkey[32], struct buf *out)
{
	struct pack_cuts	c;
	int			form, i;

	if (cuts_canonical(json, len, id, pubkey, &c))
		form = EVENT_PACK_CANONICAL;
	else if (len <= UINT32_MAX &&
	    hex_encode(id, 32, c.id, sizeof(c.id)) == 0 &&
	    hex_encode(pubkey, 32, c.pubkey, sizeof(c.pubkey)) == 0 &&
	    cuts_search(json, len, &c))
		form = EVENT_PACK_PLACED;
	else
		return encode_verbatim(json, len, out);
	if (buf_reserve(out, len - PACK_CUT_HEX + PACK_HEAD_PLACED) == -1)
		return -1;
	(void)buf_putc(out, form);
	for (i = 0; form == EVENT_PACK_PLACED && i < PACK_CUTS; i++)
		put_u32(out, c.cut[i].at);
	(void)buf_append(out, c.sigbin, PACK_SIG_BYTES);
	put_rest(out, json, len, &c);
	return 0;
}

static size_t
get_u32(const uint8_t *b)
{
	return (size_t)b[0] | (size_t)b[1] << 8 | (size_t)b[2] << 16 |
	    (size_t)b[3] << 24;
}

/* Splice the runs of c (they fit) back into rest[0..rest_len). */
static void
splice(struct buf *out, const uint8_t *rest, size_t rest_len,
    const struct pack_cuts *c)
{
	const struct pack_cut	*order[PACK_CUTS];
	size_t			 pos = 0, r = 0, seg;
	int			 i;

	cuts_order(c, order);
	for (i = 0; i < PACK_CUTS; i++) {
		seg = order[i]->at - pos;
		(void)buf_append(out, rest + r, seg);
		(void)buf_append(out, order[i]->hex, order[i]->len);
		r += seg;
		pos = order[i]->at + order[i]->len;
	}
	(void)buf_append(out, rest + r, rest_len - r);
}

int
event_pack_decode(const uint8_t *blob, size_t len, const uint8_t id[32],
    const uint8_t pubkey[32], struct buf *out)
{
	struct pack_cuts	 c;
	const uint8_t		*sig;
	int64_t			 jl;
	int			 form = event_pack_form(blob, len);
	size_t			 head, rest_len;

	if ((jl = event_pack_json_len(form, len)) < 0 ||
	    buf_reserve(out, (size_t)jl) == -1)
		return -1;
	if (form == EVENT_PACK_VERBATIM)
		return buf_append(out, blob + 1, len - 1);
	head = form == EVENT_PACK_CANONICAL ? PACK_HEAD_CANONICAL :
	    PACK_HEAD_PLACED;
	sig = blob + head - PACK_SIG_BYTES;
	if (hex_encode(id, 32, c.id, sizeof(c.id)) == -1 ||
	    hex_encode(pubkey, 32, c.pubkey, sizeof(c.pubkey)) == -1 ||
	    hex_encode(sig, PACK_SIG_BYTES, c.sig, sizeof(c.sig)) == -1)
		return -1;
	if (form == EVENT_PACK_CANONICAL) {
		if ((size_t)jl < PACK_CANON_MIN_LEN)
			return -1;
		cuts_place(&c, PACK_CANON_ID_AT, PACK_CANON_PUBKEY_AT,
		    (size_t)jl - PACK_CANON_SIG_FROM_END);
	} else
		cuts_place(&c, get_u32(blob + 1), get_u32(blob + 5),
		    get_u32(blob + 9));
	if (!cuts_fit(&c, (size_t)jl))
		return -1;
	rest_len = len - head;
	splice(out, blob + head, rest_len, &c);
	return 0;
}
