/*
 * nip19.c — bech32 (BIP-173) and the NIP-19 entities built on it.
 *
 * Owns the text <-> bytes conversion of npub, nsec, note, nprofile, nevent
 * and naddr. Decoding checks, in order: overall length (before scanning),
 * characters and case, separator, checksum, then the prefix and payload;
 * so a corrupted string reports "bad checksum" rather than a confusing
 * prefix or TLV error. It must never allocate, never read past
 * NIP19_MAX_CHARS of its input, and never accept bech32m (whose checksum
 * constant differs): NIP-19 is plain bech32.
 */
#include <stdio.h>
#include <string.h>

#include "core/hex.h"
#include "nostr/nip19.h"

#define BECH32_CHECKSUM_WORDS	6
#define BECH32_MAX_HRP		83	/* BIP-173 prefix length, chars */
/* Payload bytes that the longest accepted string can carry. */
#define NIP19_MAX_PAYLOAD	(NIP19_MAX_CHARS * 5 / 8)

enum tlv_type {
	TLV_SPECIAL = 0,
	TLV_RELAY = 1,
	TLV_AUTHOR = 2,
	TLV_KIND = 3,
};

static const char bech32_charset[] = "qpzry9x8gf2tvdw0s3jn54khce6mua7l";

static const struct nip19_type_def {
	enum nip19_type	 type;
	const char	*prefix;
	bool		 tlv;
} nip19_types[] = {
	{ NIP19_NPUB,		"npub",		false },
	{ NIP19_NSEC,		"nsec",		false },
	{ NIP19_NOTE,		"note",		false },
	{ NIP19_NPROFILE,	"nprofile",	true },
	{ NIP19_NEVENT,		"nevent",	true },
	{ NIP19_NADDR,		"naddr",	true },
};
#define NIP19_NTYPES	(sizeof(nip19_types) / sizeof(nip19_types[0]))

static const char *const nip19_errors[] = {
	[NIP19_OK] = "ok",
	[NIP19_ERR_CHECKSUM] = "bad checksum",
	[NIP19_ERR_MIXED_CASE] = "mixed case",
	[NIP19_ERR_PREFIX] = "wrong prefix",
	[NIP19_ERR_LENGTH] = "wrong length",
	[NIP19_ERR_CHAR] = "bad character",
	[NIP19_ERR_TLV] = "bad TLV",
	[NIP19_ERR_TOO_LONG] = "too long",
	[NIP19_ERR_SEPARATOR] = "missing separator",
	[NIP19_ERR_PADDING] = "bad padding",
	[NIP19_ERR_SPACE] = "output buffer too small",
};

/* Stable message for err; "unknown error" for a value outside the enum. */
const char *
nip19_strerror(enum nip19_err err)
{
	if ((size_t)err >= sizeof(nip19_errors) / sizeof(nip19_errors[0]))
		return "unknown error";
	return nip19_errors[err];
}

/* buf, holding the message (and the expected prefix for ERR_PREFIX). */
char *
nip19_format_error(enum nip19_err err, enum nip19_type want, char *buf,
    size_t bufsz)
{
	if (bufsz == 0)
		return buf;
	if (err == NIP19_ERR_PREFIX && want != NIP19_NONE)
		snprintf(buf, bufsz, "%s (expected %s)", nip19_strerror(err),
		    nip19_type_prefix(want));
	else
		snprintf(buf, bufsz, "%s", nip19_strerror(err));
	return buf;
}

static const struct nip19_type_def *
type_by_type(enum nip19_type type)
{
	size_t	i;

	for (i = 0; i < NIP19_NTYPES; i++)
		if (nip19_types[i].type == type)
			return &nip19_types[i];
	return NULL;
}

static const struct nip19_type_def *
type_by_prefix(const char *prefix)
{
	size_t	i;

	for (i = 0; i < NIP19_NTYPES; i++)
		if (strcmp(nip19_types[i].prefix, prefix) == 0)
			return &nip19_types[i];
	return NULL;
}

/* The static prefix string of type, "" if it has none. */
const char *
nip19_type_prefix(enum nip19_type type)
{
	const struct nip19_type_def *d = type_by_type(type);

	return d != NULL ? d->prefix : "";
}

/* ---- bech32 ---- */

static uint32_t
bech32_polymod_step(uint32_t chk, uint8_t v)
{
	static const uint32_t gen[5] = {
		0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3
	};
	uint32_t	top = chk >> 25;
	int		i;

	chk = ((chk & 0x1ffffff) << 5) ^ v;
	for (i = 0; i < 5; i++)
		if ((top >> i) & 1)
			chk ^= gen[i];
	return chk;
}

static uint8_t
ascii_lower(char c)
{
	return (uint8_t)(c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c);
}

/* The checksum state after the expanded prefix (BIP-173 hrp_expand). */
static uint32_t
bech32_hrp_state(const char *hrp, size_t hrplen)
{
	uint32_t	chk = 1;
	size_t		i;

	for (i = 0; i < hrplen; i++)
		chk = bech32_polymod_step(chk, ascii_lower(hrp[i]) >> 5);
	chk = bech32_polymod_step(chk, 0);
	for (i = 0; i < hrplen; i++)
		chk = bech32_polymod_step(chk, ascii_lower(hrp[i]) & 31);
	return chk;
}

static int
bech32_value(char c)
{
	const char	*p;

	c = (char)ascii_lower(c);
	if (c == '\0' || (p = strchr(bech32_charset, c)) == NULL)
		return -1;
	return (int)(p - bech32_charset);
}

/*
 * Scan text: length bound, printable ASCII, no mixed case; *sep is the
 * index of the last '1'.
 */
static enum nip19_err
bech32_scan(const char *text, size_t *textlen, size_t *sep)
{
	size_t	 n, i;
	bool	 lower = false, upper = false;

	n = strnlen(text, NIP19_MAX_CHARS + 1);
	if (n > NIP19_MAX_CHARS)
		return NIP19_ERR_TOO_LONG;
	*sep = n;
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)text[i];

		if (c < 33 || c > 126)
			return NIP19_ERR_CHAR;
		lower |= c >= 'a' && c <= 'z';
		upper |= c >= 'A' && c <= 'Z';
		if (c == '1')
			*sep = i;
	}
	if (lower && upper)
		return NIP19_ERR_MIXED_CASE;
	if (*sep == n)
		return NIP19_ERR_SEPARATOR;
	if (*sep == 0 || *sep > BECH32_MAX_HRP)
		return NIP19_ERR_PREFIX;
	if (n - *sep - 1 < BECH32_CHECKSUM_WORDS)
		return NIP19_ERR_LENGTH;
	*textlen = n;
	return NIP19_OK;
}

/* Regroup 5-bit words into bytes; leftover bits must be < 5 and zero. */
static enum nip19_err
bech32_words_to_bytes(const uint8_t *words, size_t nwords, uint8_t *out,
    size_t outsz, size_t *outlen)
{
	uint32_t	acc = 0;
	unsigned	bits = 0;
	size_t		i, n = 0;

	for (i = 0; i < nwords; i++) {
		acc = ((acc << 5) | words[i]) & 0xfff;
		bits += 5;
		if (bits >= 8) {
			bits -= 8;
			if (n == outsz)
				return NIP19_ERR_LENGTH;
			out[n++] = (uint8_t)(acc >> bits);
		}
	}
	if (bits >= 5 || ((acc << (8 - bits)) & 0xff) != 0)
		return NIP19_ERR_PADDING;
	*outlen = n;
	return NIP19_OK;
}

/* NIP19_OK, or the first thing wrong with text as bech32. */
enum nip19_err
nip19_bech32_decode(const char *text, char *hrp, size_t hrpsz, uint8_t *data,
    size_t datasz, size_t *len)
{
	uint8_t		words[NIP19_MAX_CHARS];
	size_t		n = 0, sep = 0, nwords, i;
	uint32_t	chk;
	enum nip19_err	err;
	int		v;

	if ((err = bech32_scan(text, &n, &sep)) != NIP19_OK)
		return err;
	chk = bech32_hrp_state(text, sep);
	nwords = n - sep - 1;
	for (i = 0; i < nwords; i++) {
		if ((v = bech32_value(text[sep + 1 + i])) < 0)
			return NIP19_ERR_CHAR;
		words[i] = (uint8_t)v;
		chk = bech32_polymod_step(chk, words[i]);
	}
	if (chk != 1)
		return NIP19_ERR_CHECKSUM;
	if (sep + 1 > hrpsz)
		return NIP19_ERR_PREFIX;
	for (i = 0; i < sep; i++)
		hrp[i] = (char)ascii_lower(text[i]);
	hrp[sep] = '\0';
	return bech32_words_to_bytes(words, nwords - BECH32_CHECKSUM_WORDS,
	    data, datasz, len);
}

/* NIP19_OK, or why hrp and data cannot be encoded into out. */
enum nip19_err
nip19_bech32_encode(const char *hrp, const uint8_t *data, size_t len,
    char *out, size_t outsz)
{
	size_t		hrplen = strlen(hrp), nwords, total, i, o;
	uint32_t	acc = 0, chk;
	unsigned	bits = 0;

	for (i = 0; i < hrplen; i++)
		if (hrp[i] < 33 || hrp[i] > 126 || (hrp[i] >= 'A' && hrp[i] <= 'Z'))
			return NIP19_ERR_PREFIX;
	if (hrplen == 0 || hrplen > BECH32_MAX_HRP)
		return NIP19_ERR_PREFIX;
	if (len > NIP19_MAX_PAYLOAD)
		return NIP19_ERR_TOO_LONG;
	nwords = (len * 8 + 4) / 5;
	total = hrplen + 1 + nwords + BECH32_CHECKSUM_WORDS;
	if (total > NIP19_MAX_CHARS)
		return NIP19_ERR_TOO_LONG;
	if (total + 1 > outsz)
		return NIP19_ERR_SPACE;
	memcpy(out, hrp, hrplen);
	out[hrplen] = '1';
	o = hrplen + 1;
	chk = bech32_hrp_state(hrp, hrplen);
	for (i = 0; i < len || bits > 0; ) {
		uint8_t w;

		if (bits < 5 && i < len) {
			acc = ((acc << 8) | data[i++]) & 0xfff;
			bits += 8;
		}
		if (bits >= 5) {
			bits -= 5;
			w = (acc >> bits) & 31;
		} else {
			w = (acc << (5 - bits)) & 31;
			bits = 0;
		}
		chk = bech32_polymod_step(chk, w);
		out[o++] = bech32_charset[w];
	}
	for (i = 0; i < BECH32_CHECKSUM_WORDS; i++)
		chk = bech32_polymod_step(chk, 0);
	chk ^= 1;
	for (i = 0; i < BECH32_CHECKSUM_WORDS; i++)
		out[o++] = bech32_charset[(chk >> (5 * (5 - i))) & 31];
	out[o] = '\0';
	return NIP19_OK;
}

/* ---- TLV payloads ---- */

/* Copy a TLV value as a C string; a NUL inside is refused. */
static enum nip19_err
tlv_string(const uint8_t *v, size_t l, char *out)
{
	if (memchr(v, '\0', l) != NULL)
		return NIP19_ERR_TLV;
	memcpy(out, v, l);
	out[l] = '\0';
	return NIP19_OK;
}

static enum nip19_err
tlv_item(struct nip19_entity *e, uint8_t t, const uint8_t *v, size_t l,
    unsigned *seen)
{
	if (t <= TLV_KIND && t != TLV_RELAY) {
		if (*seen & (1u << t))
			return NIP19_ERR_TLV;	/* duplicate single item */
		*seen |= 1u << t;
	}
	switch (t) {
	case TLV_SPECIAL:
		if (e->type == NIP19_NADDR)
			return tlv_string(v, l, e->identifier);
		if (l != 32)
			return NIP19_ERR_TLV;
		memcpy(e->key, v, 32);
		return NIP19_OK;
	case TLV_RELAY:
		if (e->nrelays == NIP19_MAX_RELAYS) {
			e->relays_dropped++;
			return NIP19_OK;
		}
		return tlv_string(v, l, e->relays[e->nrelays++]);
	case TLV_AUTHOR:
		if (l != 32 || e->type == NIP19_NPROFILE)
			return NIP19_ERR_TLV;
		memcpy(e->author, v, 32);
		e->has_author = true;
		return NIP19_OK;
	case TLV_KIND:
		if (l != 4 || e->type == NIP19_NPROFILE)
			return NIP19_ERR_TLV;
		e->kind = (uint32_t)v[0] << 24 | (uint32_t)v[1] << 16 |
		    (uint32_t)v[2] << 8 | v[3];
		e->has_kind = true;
		return NIP19_OK;
	default:
		return NIP19_OK;	/* unknown types are skipped (NIP-19) */
	}
}

static enum nip19_err
tlv_parse(struct nip19_entity *e, const uint8_t *p, size_t len)
{
	size_t		off = 0, l;
	unsigned	seen = 0;
	enum nip19_err	err;

	while (off < len) {
		if (len - off < 2)
			return NIP19_ERR_TLV;
		l = p[off + 1];
		if (len - off - 2 < l)
			return NIP19_ERR_TLV;
		err = tlv_item(e, p[off], p + off + 2, l, &seen);
		if (err != NIP19_OK)
			return err;
		off += 2 + l;
	}
	if (!(seen & (1u << TLV_SPECIAL)))
		return NIP19_ERR_TLV;
	if (e->type == NIP19_NADDR && (!e->has_author || !e->has_kind))
		return NIP19_ERR_TLV;
	return NIP19_OK;
}

static enum nip19_err
payload_parse(struct nip19_entity *e, const struct nip19_type_def *d,
    const uint8_t *p, size_t len)
{
	memset(e, 0, sizeof(*e));
	e->type = d->type;
	if (d->tlv)
		return tlv_parse(e, p, len);
	if (len != 32)
		return NIP19_ERR_LENGTH;
	memcpy(e->key, p, 32);
	return NIP19_OK;
}

/* NIP19_OK with out filled, or why text is not the entity wanted. */
enum nip19_err
nip19_decode_as(const char *text, enum nip19_type want,
    struct nip19_entity *out)
{
	uint8_t				 payload[NIP19_MAX_PAYLOAD];
	char				 hrp[16];
	size_t				 len = 0;
	const struct nip19_type_def	*d;
	enum nip19_err			 err;

	err = nip19_bech32_decode(text, hrp, sizeof(hrp), payload,
	    sizeof(payload), &len);
	if (err != NIP19_OK)
		return err;
	if ((d = type_by_prefix(hrp)) == NULL)
		return NIP19_ERR_PREFIX;
	if (want != NIP19_NONE && d->type != want)
		return NIP19_ERR_PREFIX;
	return payload_parse(out, d, payload, len);
}

/* NIP19_OK with out filled, or why text is not a NIP-19 entity. */
enum nip19_err
nip19_decode(const char *text, struct nip19_entity *out)
{
	return nip19_decode_as(text, NIP19_NONE, out);
}

/* NIP19_OK with the 32 bytes of an npub/nsec/note in out. */
enum nip19_err
nip19_decode32(const char *text, enum nip19_type want, uint8_t out[32])
{
	struct nip19_entity	e;
	enum nip19_err		err;
	const struct nip19_type_def *d = type_by_type(want);

	if (d == NULL || d->tlv)
		return NIP19_ERR_PREFIX;
	if ((err = nip19_decode_as(text, want, &e)) != NIP19_OK)
		return err;
	memcpy(out, e.key, 32);
	return NIP19_OK;
}

/* ---- encoding ---- */

static enum nip19_err
tlv_put(uint8_t *buf, size_t bufsz, size_t *off, uint8_t t, const void *v,
    size_t l)
{
	if (l > NIP19_MAX_TLV_VALUE)
		return NIP19_ERR_TLV;
	if (bufsz - *off < 2 + l)
		return NIP19_ERR_TOO_LONG;
	buf[(*off)++] = t;
	buf[(*off)++] = (uint8_t)l;
	memcpy(buf + *off, v, l);
	*off += l;
	return NIP19_OK;
}

static enum nip19_err
tlv_build(const struct nip19_entity *e, uint8_t *buf, size_t bufsz,
    size_t *len)
{
	uint8_t		kind[4];
	size_t		off = 0, i, nrelays;
	enum nip19_err	err;

	if (e->type == NIP19_NADDR)
		err = tlv_put(buf, bufsz, &off, TLV_SPECIAL, e->identifier,
		    strnlen(e->identifier, sizeof(e->identifier)));
	else
		err = tlv_put(buf, bufsz, &off, TLV_SPECIAL, e->key, 32);
	nrelays = e->nrelays < NIP19_MAX_RELAYS ? e->nrelays : NIP19_MAX_RELAYS;
	for (i = 0; i < nrelays && err == NIP19_OK; i++)
		err = tlv_put(buf, bufsz, &off, TLV_RELAY, e->relays[i],
		    strnlen(e->relays[i], sizeof(e->relays[i])));
	if (err == NIP19_OK && e->type != NIP19_NPROFILE &&
	    (e->has_author || e->type == NIP19_NADDR))
		err = tlv_put(buf, bufsz, &off, TLV_AUTHOR, e->author, 32);
	if (err == NIP19_OK && e->type != NIP19_NPROFILE &&
	    (e->has_kind || e->type == NIP19_NADDR)) {
		kind[0] = e->kind >> 24;
		kind[1] = e->kind >> 16;
		kind[2] = e->kind >> 8;
		kind[3] = e->kind;
		err = tlv_put(buf, bufsz, &off, TLV_KIND, kind, 4);
	}
	*len = off;
	return err;
}

/* NIP19_OK with out holding the lowercase string, or why not. */
enum nip19_err
nip19_encode(const struct nip19_entity *e, char *out, size_t outsz)
{
	uint8_t				 payload[NIP19_MAX_PAYLOAD];
	size_t				 len = 0;
	const struct nip19_type_def	*d = type_by_type(e->type);
	enum nip19_err			 err;

	if (d == NULL)
		return NIP19_ERR_PREFIX;
	if (!d->tlv)
		return nip19_bech32_encode(d->prefix, e->key, 32, out, outsz);
	if ((err = tlv_build(e, payload, sizeof(payload), &len)) != NIP19_OK)
		return err;
	return nip19_bech32_encode(d->prefix, payload, len, out, outsz);
}

/* NIP19_OK with out holding the npub/nsec/note string, or why not. */
enum nip19_err
nip19_encode32(enum nip19_type type, const uint8_t in[32], char *out,
    size_t outsz)
{
	const struct nip19_type_def *d = type_by_type(type);

	if (d == NULL || d->tlv)
		return NIP19_ERR_PREFIX;
	return nip19_bech32_encode(d->prefix, in, 32, out, outsz);
}

/* ---- public keys as users type them ---- */

static bool
all_hex_any_case(const char *s, size_t n)
{
	size_t	i;

	for (i = 0; i < n; i++)
		if (hex_digit((unsigned char)s[i]) < 0 &&
		    !(s[i] >= 'A' && s[i] <= 'F'))
			return false;
	return true;
}

/* NIP19_OK with pk filled from 64 lowercase hex digits or an npub. */
enum nip19_err
nip19_pubkey_decode(const char *text, uint8_t pk[32])
{
	size_t	n = strnlen(text, NIP19_MAX_CHARS + 1);

	if (n > 0 && all_hex_any_case(text, n)) {
		if (n != 64)
			return NIP19_ERR_LENGTH;
		if (hex_decode(text, n, pk, 32) != 0)
			return NIP19_ERR_CHAR;	/* uppercase hex digits */
		return NIP19_OK;
	}
	return nip19_decode32(text, NIP19_NPUB, pk);
}

/* 0 with pk filled, or -1. */
int
nip19_pubkey_parse(const char *text, uint8_t pk[32])
{
	return nip19_pubkey_decode(text, pk) == NIP19_OK ? 0 : -1;
}

int
nip19_pubkey_check(const char *text, const char **why)
{
	uint8_t	pk[32];

	if (nip19_pubkey_parse(text, pk) == 0)
		return 0;
	*why = NULL;
	return -1;
}
