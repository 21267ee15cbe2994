/*
 * test_nip19.c — bech32 and NIP-19 entities: the vectors of the NIP-19
 * text, strings made by an independent encoder (nostr-tools), round trips
 * and every error code with the input that provokes it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "core/hex.h"
#include "nostr/nip19.h"

#define PK_HEX	"3bf0c63fcb93463407af97a5e5ee64fa883d107ef9e558472c4eb9aaaefa459d"
#define PK_NPUB	"npub180cvv07tjdrrgpa0j7j7tmnyl2yr6yr7l8j4s3evf6u64th6gkwsyjh6w6"
#define K2_HEX	"7e7e9c42a91bfef19fa929e5fda1b72e0ebc1a4c1141673e2794234d86addf4e"
#define K2_NPUB	"npub10elfcs4fr0l0r8af98jlmgdh9c8tcxjvz9qkw038js35mp4dma8qzvjptg"
#define K2_NOTE	"note10elfcs4fr0l0r8af98jlmgdh9c8tcxjvz9qkw038js35mp4dma8qnx3ujq"
#define SK_HEX	"67dea2ed018072d675f5415ecfaed7d2597555e202d85b3d65ea4e58d2d92ffa"
#define SK_NSEC	"nsec1vl029mgpspedva04g90vltkh6fvh240zqtv9k0t9af8935ke9laqsnlfe5"
#define PROFILE	"nprofile1qqsrhuxx8l9ex335q7he0f09aej04zpazpl0ne2cgukyawd24mayt8gpp4mhxue69uhhytnc9e3k7mgpz4mhxue69uhkg6nzv9ejuumpv34kytnrdaksjlyr9p"
/* nostr-tools 2.x: TLV items in the order kind, author, relay, special. */
#define EVENT_FULL "nevent1qvzqqqqqqypzqwlsccluhy6xxsr6l9a9uhhxf75g85g8a709tprjcn4e42h053vaqythwumn8ghj7un9d3shjtn90psk6urvv5hxxmmdqqs8ul5ug253hlh3n75jne0a5xmjur4urfxpzst88cnegg6ds6ka7nscf3gj8"
#define EVENT_ID "nevent1qqs8ul5ug253hlh3n75jne0a5xmjur4urfxpzst88cnegg6ds6ka7nspqaj0w"
#define ADDR "naddr1qvzqqqr4gupzqwlsccluhy6xxsr6l9a9uhhxf75g85g8a709tprjcn4e42h053vaqy8hwumn8ghj7cfwv4uxzmtsd3jsqznd0ykkzun5d93kcegjee5up"

static void
hex32(const char *hex, uint8_t out[32])
{
	assert_int_equal(hex_decode(hex, strlen(hex), out, 32), 0);
}

static void
upper(char *s)
{
	for (; *s != '\0'; s++)
		if (*s >= 'a' && *s <= 'z')
			*s -= 'a' - 'A';
}

static void
test_bare_vectors(void **state)
{
	uint8_t	want[32], got[32];
	char	out[NIP19_KEY_CHARS + 1];

	(void)state;
	hex32(K2_HEX, want);
	assert_int_equal(nip19_decode32(K2_NPUB, NIP19_NPUB, got), NIP19_OK);
	assert_memory_equal(got, want, 32);
	assert_int_equal(nip19_encode32(NIP19_NPUB, want, out, sizeof(out)),
	    NIP19_OK);
	assert_string_equal(out, K2_NPUB);
	assert_int_equal(nip19_encode32(NIP19_NOTE, want, out, sizeof(out)),
	    NIP19_OK);
	assert_string_equal(out, K2_NOTE);

	hex32(SK_HEX, want);
	assert_int_equal(nip19_decode32(SK_NSEC, NIP19_NSEC, got), NIP19_OK);
	assert_memory_equal(got, want, 32);
	assert_int_equal(nip19_encode32(NIP19_NSEC, want, out, sizeof(out)),
	    NIP19_OK);
	assert_string_equal(out, SK_NSEC);

	hex32(PK_HEX, want);
	assert_int_equal(nip19_encode32(NIP19_NPUB, want, out, sizeof(out)),
	    NIP19_OK);
	assert_string_equal(out, PK_NPUB);
}

static void
test_nprofile_vector(void **state)
{
	struct nip19_entity	e;
	uint8_t			pk[32];
	char			out[256];

	(void)state;
	hex32(PK_HEX, pk);
	assert_int_equal(nip19_decode(PROFILE, &e), NIP19_OK);
	assert_int_equal(e.type, NIP19_NPROFILE);
	assert_memory_equal(e.key, pk, 32);
	assert_int_equal(e.nrelays, 2);
	assert_string_equal(e.relays[0], "wss://r.x.com");
	assert_string_equal(e.relays[1], "wss://djbas.sadkb.com");
	assert_false(e.has_author);
	assert_false(e.has_kind);
	/* Our encoder writes the same item order as the NIP's example. */
	assert_int_equal(nip19_encode(&e, out, sizeof(out)), NIP19_OK);
	assert_string_equal(out, PROFILE);
}

static void
test_nevent_foreign(void **state)
{
	struct nip19_entity	e, back;
	uint8_t			id[32], pk[32];
	char			out[512];

	(void)state;
	hex32(K2_HEX, id);
	hex32(PK_HEX, pk);
	assert_int_equal(nip19_decode(EVENT_FULL, &e), NIP19_OK);
	assert_int_equal(e.type, NIP19_NEVENT);
	assert_memory_equal(e.key, id, 32);
	assert_true(e.has_author);
	assert_memory_equal(e.author, pk, 32);
	assert_true(e.has_kind);
	assert_int_equal(e.kind, 1);
	assert_int_equal(e.nrelays, 1);
	assert_string_equal(e.relays[0], "wss://relay.example.com");
	/* Different item order than nostr-tools, same content back. */
	assert_int_equal(nip19_encode(&e, out, sizeof(out)), NIP19_OK);
	assert_int_equal(nip19_decode(out, &back), NIP19_OK);
	assert_memory_equal(&back, &e, sizeof(e));

	assert_int_equal(nip19_decode(EVENT_ID, &e), NIP19_OK);
	assert_memory_equal(e.key, id, 32);
	assert_false(e.has_author);
	assert_false(e.has_kind);
	assert_int_equal(e.nrelays, 0);
	assert_int_equal(nip19_encode(&e, out, sizeof(out)), NIP19_OK);
	assert_string_equal(out, EVENT_ID);
}

static void
test_naddr_foreign(void **state)
{
	struct nip19_entity	e, back;
	uint8_t			pk[32];
	char			out[512];

	(void)state;
	hex32(PK_HEX, pk);
	assert_int_equal(nip19_decode(ADDR, &e), NIP19_OK);
	assert_int_equal(e.type, NIP19_NADDR);
	assert_string_equal(e.identifier, "my-article");
	assert_memory_equal(e.author, pk, 32);
	assert_int_equal(e.kind, 30023);
	assert_int_equal(e.nrelays, 1);
	assert_string_equal(e.relays[0], "wss://a.example");
	assert_int_equal(nip19_encode(&e, out, sizeof(out)), NIP19_OK);
	assert_int_equal(nip19_decode(out, &back), NIP19_OK);
	assert_memory_equal(&back, &e, sizeof(e));
}

static void
test_round_trips(void **state)
{
	struct nip19_entity	e, back;
	char			out[NIP19_MAX_CHARS + 1];
	size_t			i;

	(void)state;
	memset(&e, 0, sizeof(e));
	e.type = NIP19_NEVENT;
	for (i = 0; i < 32; i++) {
		e.key[i] = (uint8_t)(i * 7 + 1);
		e.author[i] = (uint8_t)(255 - i);
	}
	e.has_author = e.has_kind = true;
	e.kind = 0xfedcba98u;	/* all four bytes, big-endian */
	for (i = 0; i < NIP19_MAX_RELAYS; i++) {
		memset(e.relays[i], 'a' + (int)i, NIP19_MAX_TLV_VALUE);
		e.relays[i][NIP19_MAX_TLV_VALUE] = '\0';
	}
	/* Sixteen 255-byte relays do not fit in NIP19_MAX_CHARS; ten do. */
	e.nrelays = NIP19_MAX_RELAYS;
	assert_int_equal(nip19_encode(&e, out, sizeof(out)),
	    NIP19_ERR_TOO_LONG);
	e.nrelays = 10;
	memset(e.relays[10], 0, sizeof(e.relays) - 10 * sizeof(e.relays[0]));
	assert_int_equal(nip19_encode(&e, out, sizeof(out)), NIP19_OK);
	assert_true(strlen(out) > 90);
	assert_int_equal(nip19_decode_as(out, NIP19_NEVENT, &back), NIP19_OK);
	assert_memory_equal(&back, &e, sizeof(e));
	upper(out);
	assert_int_equal(nip19_decode(out, &back), NIP19_OK);
	assert_memory_equal(&back, &e, sizeof(e));

	/* Empty naddr identifier is legal (a "d" tag of ""). */
	memset(&e, 0, sizeof(e));
	e.type = NIP19_NADDR;
	e.kind = 30000;
	e.has_author = e.has_kind = true;
	assert_int_equal(nip19_encode(&e, out, sizeof(out)), NIP19_OK);
	assert_int_equal(nip19_decode(out, &back), NIP19_OK);
	assert_memory_equal(&back, &e, sizeof(e));
}

static void
test_bech32_generic(void **state)
{
	uint8_t	data[8];
	char	hrp[8], out[64];
	size_t	len = 99;

	(void)state;
	/* BIP-173 valid vectors (bech32, not bech32m). */
	assert_int_equal(nip19_bech32_decode("A12UEL5L", hrp, sizeof(hrp),
	    data, sizeof(data), &len), NIP19_OK);
	assert_string_equal(hrp, "a");
	assert_int_equal(len, 0);
	assert_int_equal(nip19_bech32_encode("a", data, 0, out, sizeof(out)),
	    NIP19_OK);
	assert_string_equal(out, "a12uel5l");
	/* The same data with the bech32m checksum must be refused. */
	assert_int_equal(nip19_bech32_decode("a1lqfn3a", hrp, sizeof(hrp),
	    data, sizeof(data), &len), NIP19_ERR_CHECKSUM);
	/* Too small an output buffer: one short of the NUL. */
	assert_int_equal(nip19_bech32_encode("a", data, 0, out, 8),
	    NIP19_ERR_SPACE);
	assert_int_equal(nip19_bech32_encode("A", data, 0, out, sizeof(out)),
	    NIP19_ERR_PREFIX);
}

static void
test_uppercase_and_mixed(void **state)
{
	char	s[sizeof(K2_NPUB)];
	uint8_t	want[32], got[32];

	(void)state;
	hex32(K2_HEX, want);
	memcpy(s, K2_NPUB, sizeof(s));
	upper(s);
	assert_int_equal(nip19_decode32(s, NIP19_NPUB, got), NIP19_OK);
	assert_memory_equal(got, want, 32);
	assert_int_equal(nip19_pubkey_parse(s, got), 0);

	memcpy(s, K2_NPUB, sizeof(s));
	s[10] = (char)(s[10] - 'a' + 'A');	/* one capital among lowercase */
	assert_int_equal(nip19_decode32(s, NIP19_NPUB, got),
	    NIP19_ERR_MIXED_CASE);
}

static void
test_errors(void **state)
{
	struct nip19_entity	e;
	char			s[sizeof(K2_NPUB)], msg[64];
	uint8_t			got[32];

	(void)state;
	memcpy(s, K2_NPUB, sizeof(s));
	s[20] = s[20] == 'q' ? 'p' : 'q';
	assert_int_equal(nip19_decode(s, &e), NIP19_ERR_CHECKSUM);

	/* 'b' is not in the bech32 alphabet; a space is not printable. */
	memcpy(s, K2_NPUB, sizeof(s));
	s[20] = 'b';
	assert_int_equal(nip19_decode(s, &e), NIP19_ERR_CHAR);
	assert_int_equal(nip19_decode("npub1 qqqqqq", &e), NIP19_ERR_CHAR);

	/* Truncated: the checksum no longer matches. */
	memcpy(s, K2_NPUB, sizeof(s));
	s[50] = '\0';
	assert_int_equal(nip19_decode(s, &e), NIP19_ERR_CHECKSUM);
	assert_int_equal(nip19_decode("npub1qqqqq", &e), NIP19_ERR_LENGTH);
	assert_int_equal(nip19_decode("npubqqqqqqqq", &e), NIP19_ERR_SEPARATOR);
	assert_int_equal(nip19_decode("", &e), NIP19_ERR_SEPARATOR);

	/* A valid note where an npub is wanted, and vice versa. */
	assert_int_equal(nip19_decode32(K2_NOTE, NIP19_NPUB, got),
	    NIP19_ERR_PREFIX);
	assert_int_equal(nip19_decode32(K2_NPUB, NIP19_NOTE, got),
	    NIP19_ERR_PREFIX);
	assert_string_equal(nip19_format_error(NIP19_ERR_PREFIX, NIP19_NPUB,
	    msg, sizeof(msg)), "wrong prefix (expected npub)");
	/* Valid bech32 of an unknown prefix. */
	assert_int_equal(nip19_decode("a12uel5l", &e), NIP19_ERR_PREFIX);
}

/* Encode raw payload bytes under a prefix and decode as an entity. */
static enum nip19_err
decode_raw(const char *hrp, const uint8_t *p, size_t len)
{
	struct nip19_entity	e;
	char			s[512];

	assert_int_equal(nip19_bech32_encode(hrp, p, len, s, sizeof(s)),
	    NIP19_OK);
	return nip19_decode(s, &e);
}

static void
test_payload_errors(void **state)
{
	uint8_t	p[80];

	(void)state;
	memset(p, 0x11, sizeof(p));
	assert_int_equal(decode_raw("npub", p, 31), NIP19_ERR_LENGTH);
	assert_int_equal(decode_raw("note", p, 33), NIP19_ERR_LENGTH);
	assert_int_equal(decode_raw("npub", p, 32), NIP19_OK);

	/* nprofile: special of 31 bytes; length running past the end. */
	p[0] = 0; p[1] = 31;
	assert_int_equal(decode_raw("nprofile", p, 33), NIP19_ERR_TLV);
	p[1] = 40;
	assert_int_equal(decode_raw("nprofile", p, 34), NIP19_ERR_TLV);
	/* A relay item that claims 5 bytes and has 1. */
	p[1] = 32;
	p[34] = 1; p[35] = 5;
	assert_int_equal(decode_raw("nprofile", p, 37), NIP19_ERR_TLV);
}

static void
test_tlv_rules(void **state)
{
	uint8_t	p[80];

	(void)state;
	memset(p, 0x22, sizeof(p));
	p[0] = 0; p[1] = 32;
	assert_int_equal(decode_raw("nprofile", p, 34), NIP19_OK);
	assert_int_equal(decode_raw("nprofile", p, 35), NIP19_ERR_TLV);
	/* Unknown type 9 is skipped. */
	p[34] = 9; p[35] = 2;
	assert_int_equal(decode_raw("nprofile", p, 38), NIP19_OK);
	/* Missing special. */
	assert_int_equal(decode_raw("nprofile", p + 34, 4), NIP19_ERR_TLV);
	/* Duplicate special. */
	p[34] = 0; p[35] = 32;
	assert_int_equal(decode_raw("nevent", p, 68), NIP19_ERR_TLV);
	/* nevent kind must be 4 bytes. */
	p[34] = 3; p[35] = 2;
	assert_int_equal(decode_raw("nevent", p, 38), NIP19_ERR_TLV);
	p[35] = 4;
	assert_int_equal(decode_raw("nevent", p, 40), NIP19_OK);
	/* naddr needs author and kind. */
	p[0] = 0; p[1] = 1;
	p[2] = 3; p[3] = 4;
	assert_int_equal(decode_raw("naddr", p, 8), NIP19_ERR_TLV);
	/* A NUL inside a relay URL is refused. */
	p[0] = 0; p[1] = 32;
	p[34] = 1; p[35] = 3; p[36] = 'w'; p[37] = '\0'; p[38] = 's';
	assert_int_equal(decode_raw("nprofile", p, 39), NIP19_ERR_TLV);
}

static void
test_relays_dropped(void **state)
{
	struct nip19_entity	e;
	uint8_t			p[34 + 3 * (NIP19_MAX_RELAYS + 1)];
	char			str[512];
	size_t			i, off = 34;

	(void)state;
	memset(p, 0x33, 34);
	p[0] = 0; p[1] = 32;
	for (i = 0; i <= NIP19_MAX_RELAYS; i++) {
		p[off++] = 1; p[off++] = 1; p[off++] = (uint8_t)('A' + i);
	}
	assert_int_equal(nip19_bech32_encode("nprofile", p, off, str,
	    sizeof(str)), NIP19_OK);
	assert_int_equal(nip19_decode(str, &e), NIP19_OK);
	assert_int_equal(e.nrelays, NIP19_MAX_RELAYS);
	assert_int_equal(e.relays_dropped, 1);
	assert_string_equal(e.relays[NIP19_MAX_RELAYS - 1], "P");
}

static void
test_too_long(void **state)
{
	static char		s[NIP19_MAX_CHARS + 2];
	struct nip19_entity	e;

	(void)state;
	memset(s, 'q', sizeof(s) - 1);
	memcpy(s, "nevent1", 7);
	assert_int_equal(nip19_decode(s, &e), NIP19_ERR_TOO_LONG);
	/* At exactly the limit the string is read (and fails its checksum). */
	s[NIP19_MAX_CHARS] = '\0';
	assert_int_equal(nip19_decode(s, &e), NIP19_ERR_CHECKSUM);
}

static void
test_padding(void **state)
{
	struct nip19_entity	e;

	(void)state;
	/* Valid checksums (made by @scure/base), bad 5-to-8 bit padding. */
	assert_int_equal(nip19_decode(
	    "npub1zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3yry2v9",
	    &e), NIP19_ERR_PADDING);	/* the 4 pad bits are not zero */
	assert_int_equal(nip19_decode(
	    "npub1zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zygsqqa59kj7",
	    &e), NIP19_ERR_PADDING);	/* 6 pad bits: a whole word too many */
}

static void
test_pubkey_parse(void **state)
{
	uint8_t	want[32], got[32];

	(void)state;
	hex32(PK_HEX, want);
	assert_int_equal(nip19_pubkey_parse(PK_HEX, got), 0);
	assert_memory_equal(got, want, 32);
	memset(got, 0, sizeof(got));
	assert_int_equal(nip19_pubkey_parse(PK_NPUB, got), 0);
	assert_memory_equal(got, want, 32);

	assert_int_equal(nip19_pubkey_decode(PK_HEX "0", got),
	    NIP19_ERR_LENGTH);
	assert_int_equal(nip19_pubkey_decode("3bf0", got), NIP19_ERR_LENGTH);
	assert_int_equal(nip19_pubkey_decode(
	    "3BF0C63FCB93463407AF97A5E5EE64FA883D107EF9E558472C4EB9AAAEFA459D",
	    got), NIP19_ERR_CHAR);
	assert_int_equal(nip19_pubkey_decode(K2_NOTE, got), NIP19_ERR_PREFIX);
	assert_int_equal(nip19_pubkey_decode(SK_NSEC, got), NIP19_ERR_PREFIX);
	assert_int_equal(nip19_pubkey_parse("", got), -1);
	assert_int_equal(nip19_pubkey_parse(K2_NOTE, got), -1);
}

static void
test_strerror(void **state)
{
	(void)state;
	assert_string_equal(nip19_strerror(NIP19_ERR_CHECKSUM), "bad checksum");
	assert_string_equal(nip19_strerror(NIP19_ERR_MIXED_CASE), "mixed case");
	assert_string_equal(nip19_strerror(NIP19_ERR_PREFIX), "wrong prefix");
	assert_string_equal(nip19_strerror(NIP19_ERR_LENGTH), "wrong length");
	assert_string_equal(nip19_strerror(NIP19_ERR_CHAR), "bad character");
	assert_string_equal(nip19_strerror(NIP19_ERR_TLV), "bad TLV");
	assert_string_equal(nip19_strerror(NIP19_ERR_TOO_LONG), "too long");
	assert_string_equal(nip19_strerror(NIP19_ERR_PADDING), "bad padding");
	assert_string_equal(nip19_strerror((enum nip19_err)99),
	    "unknown error");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bare_vectors),
		cmocka_unit_test(test_nprofile_vector),
		cmocka_unit_test(test_nevent_foreign),
		cmocka_unit_test(test_naddr_foreign),
		cmocka_unit_test(test_round_trips),
		cmocka_unit_test(test_bech32_generic),
		cmocka_unit_test(test_uppercase_and_mixed),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_payload_errors),
		cmocka_unit_test(test_tlv_rules),
		cmocka_unit_test(test_relays_dropped),
		cmocka_unit_test(test_too_long),
		cmocka_unit_test(test_padding),
		cmocka_unit_test(test_pubkey_parse),
		cmocka_unit_test(test_strerror),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
