/*
 * test_event.c — NIP-01 event parsing, canonical serialization, id and
 * BIP-340 signatures. The BIP-340 rows come from the official test vector
 * file (tests/data/bip340-vectors.csv); expected serializations are
 * written out by hand or rebuilt here from their parts.
 */
#include <ctype.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <secp256k1.h>
#include <secp256k1_extrakeys.h>
#include <secp256k1_schnorrsig.h>

#include "core/buf.h"
#include "core/hex.h"
#include "core/limits.h"
#include "nostr/event.h"
#include "nostr/key.h"
#include "nostr/secp.h"

#define PK3	"f9308a019258c31049344f85f89d5229b531c845836f99b08601f113bce036f9"
#define ID0	"0000000000000000000000000000000000000000000000000000000000000000"
#define SIG0	ID0 ID0
#define NOW	1700000000LL
#define MAXB	(256 * 1024)

/* ---- helpers -------------------------------------------------------- */

/* The secret key 3 (test vector 0), as a nostr_key. */
static void
key3(struct nostr_key *k)
{
	uint8_t	sk[32] = { 0 };

	sk[31] = 3;
	assert_int_equal(key_from_secret(k, sk), 0);
}

/* Parse text that must be well-formed; the caller frees ev. */
static void
parse_ok(struct event *ev, const char *text)
{
	assert_int_equal(event_parse(ev, text, strlen(text), MAXB), EVENT_OK);
}

/* An event JSON with placeholder id/sig and the given tags and content. */
static char *
mk(const char *tags, const char *content)
{
	static char	text[64 * 1024];

	snprintf(text, sizeof(text), "{\"id\":\"" ID0 "\",\"pubkey\":\"" PK3
	    "\",\"created_at\":1700000000,\"kind\":1,\"tags\":%s,"
	    "\"content\":%s,\"sig\":\"" SIG0 "\"}", tags, content);
	return text;
}

/* Serialize text's event and compare with expected (len bytes). */
static void
check_serial(const char *text, const char *expected, size_t len)
{
	struct event	ev;
	struct buf	b;

	parse_ok(&ev, text);
	buf_init(&b, EVENT_SERIAL_MAX_BYTES);
	assert_int_equal(event_serialize(&ev, &b), 0);
	assert_int_equal(b.len, len);
	assert_memory_equal(b.data, expected, len);
	buf_free(&b);
	event_free(&ev);
}

/* Sign an event from fields with key 3 and return its JSON (static). */
static const char *
signed_json(uint32_t kind, int64_t created_at, const char *tags,
    const char *content)
{
	static char		 out[64 * 1024];
	struct nostr_key	 k;
	struct event		 ev;
	struct buf		 b;
	cJSON			*t = tags ? cJSON_Parse(tags) : NULL;

	key3(&k);
	assert_int_equal(event_create(&ev, &k, kind, created_at, t, content),
	    EVENT_OK);
	cJSON_Delete(t);
	buf_init(&b, sizeof(out) - 1);
	assert_int_equal(event_to_json(&ev, &b), 0);
	memcpy(out, b.data, b.len + 1);
	buf_free(&b);
	event_free(&ev);
	return out;
}

static enum event_result
validate(const char *text, int64_t now)
{
	struct event		ev;
	struct buf		scratch;
	enum event_result	r;

	buf_init(&scratch, EVENT_SERIAL_MAX_BYTES);
	r = event_validate(&ev, text, strlen(text), MAXB, now, &scratch);
	if (r == EVENT_OK)
		event_free(&ev);
	assert_null(ev.json);
	buf_free(&scratch);
	return r;
}

/* Replace the first occurrence of from in s (static copy) by to. */
static const char *
subst(const char *s, const char *from, const char *to)
{
	static char	 out[64 * 1024];
	const char	*p = strstr(s, from);

	assert_non_null(p);
	snprintf(out, sizeof(out), "%.*s%s%s", (int)(p - s), s, to,
	    p + strlen(from));
	return out;
}

/* ---- BIP-340 vectors ------------------------------------------------ */

/* Lowercase the hex field f and decode it; its length in bytes. */
static size_t
vec_hex(char *f, uint8_t *out, size_t max)
{
	size_t	i, n = strlen(f);

	for (i = 0; i < n; i++)
		f[i] = (char)tolower((unsigned char)f[i]);
	assert_true(n % 2 == 0 && n / 2 <= max);
	assert_int_equal(hex_decode(f, n, out, n / 2), 0);
	return n / 2;
}

/* Split line at commas into at most n fields (the last takes the rest). */
static int
vec_split(char *line, char **f, int n)
{
	int	i = 0;

	f[i++] = line;
	while (i < n && (line = strchr(line, ',')) != NULL) {
		*line++ = '\0';
		f[i++] = line;
	}
	return i;
}

/* One CSV row: verification result, and for signing rows the exact sig. */
static void
vec_row(char **f)
{
	const secp256k1_context			*ctx = nostr_secp();
	secp256k1_xonly_pubkey			 xpk;
	secp256k1_schnorrsig_extraparams	 ep =
	    SECP256K1_SCHNORRSIG_EXTRAPARAMS_INIT;
	struct nostr_key			 k;
	uint8_t					 sk[32], pk[32], aux[32];
	uint8_t					 msg[256], sig[64], out[64];
	size_t					 mlen;
	int					 expect, ok;

	vec_hex(f[2], pk, sizeof(pk));
	mlen = vec_hex(f[4], msg, sizeof(msg));
	vec_hex(f[5], sig, sizeof(sig));
	expect = strcmp(f[6], "TRUE") == 0;
	ok = secp256k1_xonly_pubkey_parse(ctx, &xpk, pk) &&
	    secp256k1_schnorrsig_verify(ctx, sig, msg, mlen, &xpk);
	assert_int_equal(ok, expect);
	if (f[1][0] == '\0')
		return;
	vec_hex(f[1], sk, sizeof(sk));
	vec_hex(f[3], aux, sizeof(aux));
	assert_int_equal(key_from_secret(&k, sk), 0);
	assert_memory_equal(k.pubkey, pk, 32);
	if (mlen == 32)
		assert_true(secp256k1_schnorrsig_sign32(ctx, out, msg,
		    &k.keypair, aux));
	else {
		ep.ndata = aux;
		assert_true(secp256k1_schnorrsig_sign_custom(ctx, out,
		    mlen ? msg : NULL, mlen, &k.keypair, &ep));
	}
	assert_memory_equal(out, sig, 64);
}

static void
test_bip340_vectors(void **state)
{
	char		 path[4096], line[2048], *f[8] = { NULL };
	const char	*dir = getenv("CACHEBOX_TESTS");
	FILE		*fp;
	int		 rows = 0, signing = 0;

	(void)state;
	assert_non_null(dir);
	snprintf(path, sizeof(path), "%s/data/bip340-vectors.csv", dir);
	assert_non_null(fp = fopen(path, "r"));
	assert_non_null(fgets(line, sizeof(line), fp));	/* header */
	while (fgets(line, sizeof(line), fp) != NULL) {
		line[strcspn(line, "\r\n")] = '\0';
		assert_int_equal(vec_split(line, f, 8), 8);
		signing += f[1][0] != '\0';
		vec_row(f);
		rows++;
	}
	fclose(fp);
	assert_int_equal(rows, 19);
	assert_int_equal(signing, 8);
}

/* ---- serialization -------------------------------------------------- */

static void
test_serialize_empty(void **state)
{
	static const char exp[] = "[0,\"" PK3 "\",1700000000,1,[],\"\"]";

	(void)state;
	check_serial(mk("[]", "\"\""), exp, sizeof(exp) - 1);
}

static void
test_serialize_escapes(void **state)
{
	/* JSON input escapes each control char and '/' in its own way. */
	static const char in[] = "\"q\\\"b\\\\n\\nr\\rt\\tb\\bf\\f"
	    "u\\u0001v\\u001fw\\u0000x\\/y\x7f\"";
	static const char exp[] = "[0,\"" PK3 "\",1700000000,1,[],"
	    "\"q\\\"b\\\\n\\nr\\rt\\tb\\bf\\fu\\u0001v\\u001fw\"]";
	static const char in2[] = "\"a\\u000bb\\u001bc/d\x7f\"";
	static const char exp2[] = "[0,\"" PK3 "\",1700000000,1,[],"
	    "\"a\\u000bb\\u001bc/d\x7f\"]";

	(void)state;
	/* cJSON ends a string at \u0000; everything after is lost. */
	check_serial(mk("[]", in), exp, sizeof(exp) - 1);
	check_serial(mk("[]", in2), exp2, sizeof(exp2) - 1);
}

static void
test_serialize_utf8(void **state)
{
	/* é as \u00e9 and raw; 😀 as a surrogate pair and as raw bytes. */
	static const char in[] = "\"\\u00e9\xc3\xa9\\ud83d\\ude00"
	    "\xf0\x9f\x98\x80\xe2\x82\xac\"";
	static const char exp[] = "[0,\"" PK3 "\",1700000000,1,[],"
	    "\"\xc3\xa9\xc3\xa9\xf0\x9f\x98\x80\xf0\x9f\x98\x80\xe2\x82\xac\"]";

	(void)state;
	check_serial(mk("[]", in), exp, sizeof(exp) - 1);
}

static void
test_serialize_tags(void **state)
{
	static const char tags[] = "[[\"e\",\"a\\\"b\"],[\"p\",\"c\\\\d\","
	    "\"\"],[],[\"t\",\"x\\ny\",\"\\u00e9\"]]";
	static const char exp[] = "[0,\"" PK3 "\",1700000000,1,"
	    "[[\"e\",\"a\\\"b\"],[\"p\",\"c\\\\d\",\"\"],[],"
	    "[\"t\",\"x\\ny\",\"\xc3\xa9\"]],\"c\"]";

	(void)state;
	check_serial(mk(tags, "\"c\""), exp, sizeof(exp) - 1);
}

static void
test_serialize_150_tags(void **state)
{
	char	tags[8192], exp[8192];
	size_t	t = 0, e = 0;
	int	i;

	(void)state;
	t += snprintf(tags + t, sizeof(tags) - t, "[");
	e += snprintf(exp + e, sizeof(exp) - e, "[0,\"%s\",1700000000,1,[",
	    PK3);
	for (i = 0; i < 150; i++) {
		t += snprintf(tags + t, sizeof(tags) - t,
		    "%s [ \"t\" , \"tag%d\" ]", i ? "," : "", i);
		e += snprintf(exp + e, sizeof(exp) - e, "%s[\"t\",\"tag%d\"]",
		    i ? "," : "", i);
	}
	t += snprintf(tags + t, sizeof(tags) - t, "]");
	e += snprintf(exp + e, sizeof(exp) - e, "],\"\"]");
	check_serial(mk(tags, "\"\""), exp, e);
}

static void
test_serialize_30k_content(void **state)
{
	/* 30 KB of a pattern with a quote, a newline and a 3-byte char. */
	static const char unit_in[] = "ab\\\"c\\nd\xe2\x82\xac ";
	static const char unit_out[] = "ab\\\"c\\nd\xe2\x82\xac ";
	char	*in, *exp, *json;
	size_t	 i, n = 30 * 1024 / (sizeof(unit_in) - 1), e;

	(void)state;
	in = malloc(n * sizeof(unit_in) + 3);
	exp = malloc(n * sizeof(unit_out) + 256);
	json = malloc(n * sizeof(unit_in) + 512);
	assert_true(in && exp && json);
	strcpy(in, "\"");
	e = (size_t)sprintf(exp, "[0,\"%s\",1700000000,1,[],\"", PK3);
	for (i = 0; i < n; i++) {
		strcat(in + i * (sizeof(unit_in) - 1), unit_in);
		memcpy(exp + e, unit_out, sizeof(unit_out) - 1);
		e += sizeof(unit_out) - 1;
	}
	strcat(in, "\"");
	memcpy(exp + e, "\"]", 2);
	e += 2;
	strcpy(json, mk("[]", in));
	check_serial(json, exp, e);
	free(in);
	free(exp);
	free(json);
}

static void
test_id_known_answer(void **state)
{
	/* SHA-256 of the serialization below, computed with another tool. */
	static const char want[] =
	    "3e0a3c0f15fe5194ce4074998396605878a3cd7e59c12a1d60c1a9ede6919ac2";
	struct event	ev;
	struct buf	b;
	uint8_t		id[32];
	char		hex[65];

	(void)state;
	parse_ok(&ev, mk("[[\"e\",\"abc\"],[\"p\",\"x\\\"y\\\\z\"]]",
	    "\"hello\\nworld \xc3\xa9 \\ud83d\\ude00\""));
	buf_init(&b, EVENT_SERIAL_MAX_BYTES);
	assert_int_equal(event_compute_id(&ev, &b, id), 0);
	assert_int_equal(hex_encode(id, 32, hex, sizeof(hex)), 0);
	assert_string_equal(hex, want);
	buf_free(&b);
	event_free(&ev);
}

/* NIP-01 escaping one byte at a time: the reference for the fast scan. */
static size_t
ref_escape(const unsigned char *s, size_t len, char *out)
{
	size_t	i, o = 0;

	out[o++] = '"';
	for (i = 0; i < len; i++) {
		unsigned char	c = s[i];

		if (c == '"' || c == '\\') {
			out[o++] = '\\';
			out[o++] = (char)c;
		} else if (c == '\n' || c == '\r' || c == '\t' || c == '\b' ||
		    c == '\f') {
			out[o++] = '\\';
			out[o++] = c == '\n' ? 'n' : c == '\r' ? 'r' :
			    c == '\t' ? 't' : c == '\b' ? 'b' : 'f';
		} else if (c < 0x20)
			o += (size_t)sprintf(out + o, "\\u%04x", c);
		else
			out[o++] = (char)c;
	}
	out[o++] = '"';
	return o;
}

static void
check_escape(const unsigned char *s, size_t len)
{
	char		exp[6 * 300 + 2];
	struct buf	b;
	size_t		n = ref_escape(s, len, exp);

	buf_init(&b, sizeof(exp));
	assert_int_equal(event_json_string(&b, (const char *)s, len), 0);
	assert_int_equal(b.len, n);
	assert_memory_equal(b.data, exp, n);
	buf_free(&b);
}

static void
test_escape_every_byte_every_offset(void **state)
{
	unsigned char	s[300];
	size_t		len, off;
	unsigned	c;

	(void)state;
	/*
	 * The scan reads eight bytes at a time: every byte value at every
	 * position in a word, in short (one append) and long strings, next
	 * to bytes with the high bit set (a borrow must not hide a match).
	 */
	for (c = 1; c < 256; c++)
		for (len = 1; len <= 290; len += len < 24 ? 1 : 133)
			for (off = 0; off < len; off++) {
				memset(s, off % 2 ? 0xff : 'a', len);
				s[off] = (unsigned char)c;
				check_escape(s, len);
			}
	/* Several specials in one word, at both ends, and nothing else. */
	memcpy(s, "\"\\\x01\x1f\x7f\x80 \"", 8);
	check_escape(s, 8);
	memset(s, '"', 200);
	check_escape(s, 200);
	memset(s, 0x20, 200);
	check_escape(s, 200);
	check_escape(s, 0);
}

static void
test_to_json_id(void **state)
{
	static const char *const contents[] = { "", "plain",
	    "q\"b\\n\nr\rt\tu\x01v\x1f\x7f\xc3\xa9 \xf0\x9f\x98\x80",
	    "a longer note that runs over a hundred and twenty-eight bytes so "
	    "that the string takes the long path through the serializer \n!" };
	struct event	 ev, back;
	struct buf	 a, b, scratch;
	uint8_t		 id[32], want[32];
	const char	*j;
	size_t		 i;

	(void)state;
	buf_init(&a, EVENT_SERIAL_MAX_BYTES);
	buf_init(&b, EVENT_SERIAL_MAX_BYTES);
	buf_init(&scratch, EVENT_SERIAL_MAX_BYTES);
	for (i = 0; i < sizeof(contents) / sizeof(contents[0]); i++) {
		j = signed_json(i == 0 ? 0 : 30023, -(int64_t)i * 1000003,
		    "[[\"d\",\"x\\\"y\"],[],[\"p\",\"" PK3 "\",\"\"]]",
		    contents[i]);
		parse_ok(&ev, j);
		buf_reset(&a);
		buf_reset(&b);
		assert_int_equal(event_to_json_id(&ev, &a, id), 0);
		assert_memory_equal(id, ev.id, 32);
		/* Same bytes as event_to_json, which the signer wrote. */
		assert_int_equal(event_to_json(&ev, &b), 0);
		assert_int_equal(a.len, b.len);
		assert_memory_equal(a.data, b.data, a.len);
		assert_string_equal((const char *)a.data, j);
		/* A changed field hashes to what event_compute_id says. */
		ev.kind = 7;
		buf_reset(&a);
		assert_int_equal(event_to_json_id(&ev, &a, id), 0);
		assert_int_equal(event_compute_id(&ev, &scratch, want), 0);
		assert_memory_equal(id, want, 32);
		assert_memory_not_equal(id, ev.id, 32);
		/* What it wrote parses back to the same event. */
		parse_ok(&back, (const char *)a.data);
		assert_int_equal(back.kind, 7);
		assert_int_equal(back.created_at, ev.created_at);
		assert_string_equal(back.content, ev.content);
		event_free(&back);
		event_free(&ev);
	}
	buf_free(&a);
	buf_free(&b);
	buf_free(&scratch);
}

/*
 * Keys that land in one set of the parsed-key cache (more of them than it
 * has ways) verify right however their events interleave, and a cached
 * key never stands in for another: the same event under a different,
 * cached pubkey fails.
 */
static void
test_pubkey_cache_collisions(void **state)
{
	enum { NKEYS = EVENT_PUBKEY_CACHE_WAYS + 2 };
	const unsigned	 sets = EVENT_PUBKEY_CACHE_SLOTS /
			    EVENT_PUBKEY_CACHE_WAYS;
	struct nostr_key k[NKEYS];
	struct event	 ev[NKEYS];
	uint8_t		 sk[32] = { 0 };
	unsigned	 want = 0, i, n = 0, round, s;

	(void)state;
	for (s = 1; n < NKEYS; s++) {
		sk[30] = (uint8_t)(s >> 8);
		sk[31] = (uint8_t)s;
		assert_int_equal(key_from_secret(&k[n], sk), 0);
		i = ((unsigned)k[n].pubkey[0] << 8 | k[n].pubkey[1]) % sets;
		if (n == 0)
			want = i;
		if (i != want)
			continue;
		assert_int_equal(event_create(&ev[n], &k[n], 1, NOW, NULL,
		    "same set"), EVENT_OK);
		n++;
	}
	for (round = 0; round < 3; round++)
		for (i = 0; i < NKEYS; i++)
			assert_int_equal(event_check_sig(&ev[i]), EVENT_OK);
	/* Event 0's id and signature under key 1's (cached) pubkey. */
	memcpy(ev[0].pubkey, k[1].pubkey, 32);
	assert_int_equal(event_check_sig(&ev[0]), EVENT_BAD_SIG);
	memcpy(ev[0].pubkey, k[0].pubkey, 32);
	assert_int_equal(event_check_sig(&ev[0]), EVENT_OK);
	for (i = 0; i < NKEYS; i++)
		event_free(&ev[i]);
}

/* ---- signing and tampering ------------------------------------------ */

static void
test_sign_roundtrip(void **state)
{
	const char	*j;

	(void)state;
	j = signed_json(1, NOW, "[[\"t\",\"a\\\"b\"]]", "hi\n\x01 / \xc3\xa9");
	assert_non_null(strstr(j, "\"pubkey\":\"" PK3 "\""));
	assert_non_null(strstr(j, "\"content\":\"hi\\n\\u0001 / \xc3\xa9\""));
	assert_int_equal(validate(j, NOW), EVENT_OK);
}

static void
test_tampered_fields(void **state)
{
	char		 j[4096], field[130], bad[130];
	const char	*p;
	static const char *const names[] = { "\"id\":\"", "\"sig\":\"",
	    "\"pubkey\":\"" };
	static const enum event_result want[] = { EVENT_ID_MISMATCH,
	    EVENT_BAD_SIG, EVENT_ID_MISMATCH };
	size_t		 i, n;

	(void)state;
	strcpy(j, signed_json(1, NOW, "[[\"p\",\"" PK3 "\"]]", "original"));
	assert_int_equal(validate(j, NOW), EVENT_OK);
	assert_int_equal(validate(subst(j, "original", "0riginal"), NOW),
	    EVENT_ID_MISMATCH);
	for (i = 0; i < 3; i++) {
		p = strstr(j, names[i]) + strlen(names[i]);
		n = strcspn(p, "\"");
		memcpy(field, p, n);
		field[n] = '\0';
		strcpy(bad, field);
		bad[n - 1] = bad[n - 1] == '1' ? '2' : '1';
		assert_int_equal(validate(subst(j, field, bad), NOW), want[i]);
	}
}

/* A tampered pubkey with a recomputed id fails on the signature. */
static void
test_tampered_pubkey_rehashed(void **state)
{
	struct nostr_key	k;
	struct event		ev;
	struct buf		b, s;
	uint8_t			sk[32] = { 0 };

	(void)state;
	parse_ok(&ev, signed_json(1, NOW, "[]", "x"));
	sk[31] = 7;
	assert_int_equal(key_from_secret(&k, sk), 0);
	memcpy(ev.pubkey, k.pubkey, 32);
	buf_init(&s, EVENT_SERIAL_MAX_BYTES);
	assert_int_equal(event_compute_id(&ev, &s, ev.id), 0);
	buf_init(&b, EVENT_SERIAL_MAX_BYTES);
	assert_int_equal(event_to_json(&ev, &b), 0);
	assert_int_equal(validate(buf_cstr(&b), NOW), EVENT_BAD_SIG);
	buf_free(&b);
	buf_free(&s);
	event_free(&ev);
}

static void
test_future(void **state)
{
	(void)state;
	assert_int_equal(validate(signed_json(1, NOW + EVENT_MAX_FUTURE_S,
	    NULL, ""), NOW), EVENT_OK);
	assert_int_equal(validate(signed_json(1, NOW + EVENT_MAX_FUTURE_S + 1,
	    NULL, ""), NOW), EVENT_TOO_FUTURE);
	assert_string_equal(event_result_str(EVENT_TOO_FUTURE),
	    "invalid: created_at too far in the future");
	/* Old events are fine, however old. */
	assert_int_equal(validate(signed_json(1, 0, NULL, ""), NOW), EVENT_OK);
}

/* ---- malformed input ------------------------------------------------ */

struct bad_case {
	const char		*text;
	enum event_result	 want;
	const char		*reason;
};

#define F_ID	"\"id\":\"" ID0 "\""
#define F_PK	"\"pubkey\":\"" PK3 "\""
#define F_CA	"\"created_at\":1"
#define F_K	"\"kind\":1"
#define F_T	"\"tags\":[]"
#define F_C	"\"content\":\"\""
#define F_S	"\"sig\":\"" SIG0 "\""

static const struct bad_case bad_cases[] = {
	{ "", EVENT_BAD_JSON, "invalid: bad json" },
	{ "{", EVENT_BAD_JSON, "invalid: bad json" },
	{ "[1,2]", EVENT_BAD_JSON, "invalid: bad json" },
	{ "{" F_ID "," F_PK "," F_CA "," F_K "," F_T "," F_C "," F_S "} x",
	    EVENT_BAD_JSON, "invalid: bad json" },
	{ "{" F_PK "," F_CA "," F_K "," F_T "," F_C "," F_S "}",
	    EVENT_MISSING_ID, "invalid: missing id" },
	{ "{" F_ID "," F_CA "," F_K "," F_T "," F_C "," F_S "}",
	    EVENT_MISSING_PUBKEY, "invalid: missing pubkey" },
	{ "{" F_ID "," F_PK "," F_K "," F_T "," F_C "," F_S "}",
	    EVENT_MISSING_CREATED_AT, "invalid: missing created_at" },
	{ "{" F_ID "," F_PK "," F_CA "," F_T "," F_C "," F_S "}",
	    EVENT_MISSING_KIND, "invalid: missing kind" },
	{ "{" F_ID "," F_PK "," F_CA "," F_K "," F_C "," F_S "}",
	    EVENT_MISSING_TAGS, "invalid: missing tags" },
	{ "{" F_ID "," F_PK "," F_CA "," F_K "," F_T "," F_S "}",
	    EVENT_MISSING_CONTENT, "invalid: missing content" },
	{ "{" F_ID "," F_PK "," F_CA "," F_K "," F_T "," F_C "}",
	    EVENT_MISSING_SIG, "invalid: missing sig" },
	{ "{\"id\":\"" ID0 "0\"," F_PK "," F_CA "," F_K "," F_T "," F_C ","
	    F_S "}", EVENT_MALFORMED_ID, "invalid: malformed id" },
	{ "{\"id\":\"A" ID0 "\"}", EVENT_MALFORMED_ID,
	    "invalid: malformed id" },
	{ "{\"id\":1}", EVENT_MALFORMED_ID, "invalid: malformed id" },
	{ "{" F_ID ",\"pubkey\":\"F9308A019258C31049344F85F89D5229B531C8458"
	    "36F99B08601F113BCE036F9\"}", EVENT_MALFORMED_PUBKEY,
	    "invalid: malformed pubkey" },
	{ "{\"sig\":\"" ID0 "\"}", EVENT_MALFORMED_SIG,
	    "invalid: malformed sig" },
	{ "{\"kind\":65536}", EVENT_MALFORMED_KIND, "invalid: malformed kind" },
	{ "{\"kind\":-1}", EVENT_MALFORMED_KIND, "invalid: malformed kind" },
	{ "{\"kind\":1.5}", EVENT_MALFORMED_KIND, "invalid: malformed kind" },
	{ "{\"kind\":\"1\"}", EVENT_MALFORMED_KIND,
	    "invalid: malformed kind" },
	{ "{\"created_at\":1.5}", EVENT_MALFORMED_CREATED_AT,
	    "invalid: malformed created_at" },
	{ "{\"created_at\":1e400}", EVENT_MALFORMED_CREATED_AT,
	    "invalid: malformed created_at" },
	{ "{\"created_at\":9223372036854775808}", EVENT_MALFORMED_CREATED_AT,
	    "invalid: malformed created_at" },
	{ "{\"created_at\":null}", EVENT_MALFORMED_CREATED_AT,
	    "invalid: malformed created_at" },
	{ "{\"tags\":{}}", EVENT_MALFORMED_TAGS, "invalid: malformed tags" },
	{ "{\"tags\":[\"e\"]}", EVENT_MALFORMED_TAGS,
	    "invalid: malformed tags" },
	{ "{\"tags\":[[\"e\",1]]}", EVENT_MALFORMED_TAGS,
	    "invalid: malformed tags" },
	{ "{\"tags\":[[[\"e\"]]]}", EVENT_MALFORMED_TAGS,
	    "invalid: malformed tags" },
	{ "{\"content\":1}", EVENT_MALFORMED_CONTENT,
	    "invalid: malformed content" },
	{ "{\"content\":null}", EVENT_MALFORMED_CONTENT,
	    "invalid: malformed content" },
	{ "{" F_ID "," F_ID "}", EVENT_MALFORMED_ID, "invalid: malformed id" },
};

static void
test_malformed(void **state)
{
	struct event	ev;
	size_t		i;

	(void)state;
	for (i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		print_message("case %zu: %s\n", i, bad_cases[i].text);
		assert_int_equal(event_parse(&ev, bad_cases[i].text,
		    strlen(bad_cases[i].text), MAXB), bad_cases[i].want);
		assert_null(ev.json);
		assert_string_equal(event_result_str(bad_cases[i].want),
		    bad_cases[i].reason);
	}
}

static void
test_tag_bounds(void **state)
{
	size_t		 cap = (EVENT_MAX_TAGS + 2) * 8 + 64, i, n;
	char		*tags = malloc(cap);
	struct event	 ev;

	(void)state;
	assert_non_null(tags);
	/* EVENT_MAX_TAGS tags pass, one more fails. */
	for (int extra = 0; extra <= 1; extra++) {
		n = (size_t)sprintf(tags, "[");
		for (i = 0; i < EVENT_MAX_TAGS + (size_t)extra; i++)
			n += (size_t)sprintf(tags + n, "%s[\"t\"]",
			    i ? "," : "");
		strcpy(tags + n, "]");
		assert_int_equal(event_parse(&ev, mk(tags, "\"\""),
		    strlen(mk(tags, "\"\"")), MAXB),
		    extra ? EVENT_MALFORMED_TAGS : EVENT_OK);
		if (!extra)
			assert_int_equal(ev.ntags, EVENT_MAX_TAGS);
		event_free(&ev);
	}
	/* EVENT_MAX_TAG_ITEMS strings in one tag pass, one more fails. */
	for (int extra = 0; extra <= 1; extra++) {
		n = (size_t)sprintf(tags, "[[");
		for (i = 0; i < EVENT_MAX_TAG_ITEMS + (size_t)extra; i++)
			n += (size_t)sprintf(tags + n, "%s\"x\"", i ? "," : "");
		strcpy(tags + n, "]]");
		assert_int_equal(event_parse(&ev, mk(tags, "\"\""),
		    strlen(mk(tags, "\"\"")), MAXB),
		    extra ? EVENT_MALFORMED_TAGS : EVENT_OK);
		event_free(&ev);
	}
	free(tags);
}

/* cJSON allocations are counted to prove nothing is parsed past the limit. */
static size_t allocs;

static void *
count_malloc(size_t n)
{
	allocs++;
	return malloc(n);
}

static void
test_too_large_before_parse(void **state)
{
	cJSON_Hooks	 hooks = { count_malloc, free };
	const char	*j = signed_json(1, NOW, NULL, "some content");
	struct event	 ev;
	struct buf	 s;
	size_t		 len = strlen(j);

	(void)state;
	cJSON_InitHooks(&hooks);
	allocs = 0;
	assert_int_equal(event_parse(&ev, j, len, len - 1), EVENT_TOO_LARGE);
	assert_int_equal(allocs, 0);
	/* Garbage over the limit is "too large", not "bad json". */
	assert_int_equal(event_parse(&ev, "{{{{", 4, 3), EVENT_TOO_LARGE);
	assert_int_equal(allocs, 0);
	assert_int_equal(event_parse(&ev, j, len, len), EVENT_OK);
	assert_true(allocs > 0);
	event_free(&ev);
	buf_init(&s, EVENT_SERIAL_MAX_BYTES);
	assert_int_equal(event_validate(&ev, j, len, len - 1, NOW, &s),
	    EVENT_TOO_LARGE);
	buf_free(&s);
	cJSON_InitHooks(NULL);
	assert_string_equal(event_result_str(EVENT_TOO_LARGE),
	    "invalid: too large");
}

/*
 * An event whose unknown member "x" holds zeros zeros after arrays nested
 * depth deep: 15 values for the object, its seven fields and their names,
 * 2 for "x" and its array, then the zeros and the nested arrays.
 */
static char *
mk_values(size_t zeros, size_t depth)
{
	size_t	 cap = 2 * zeros + 2 * depth + 1024, n, i;
	char	*t = malloc(cap);

	assert_non_null(t);
	n = (size_t)snprintf(t, cap, "{\"id\":\"" ID0 "\",\"pubkey\":\"" PK3
	    "\",\"created_at\":1,\"kind\":1,\"tags\":[],\"content\":\"\","
	    "\"sig\":\"" SIG0 "\",\"x\":[");
	for (i = 0; i < depth; i++)
		t[n++] = '[';
	for (i = 0; i < depth; i++)
		t[n++] = ']';
	for (i = 0; i < zeros; i++)
		n += (size_t)sprintf(t + n, "%s0", i || depth ? "," : "");
	strcpy(t + n, "]}");
	return t;
}

static void
test_values_before_parse(void **state)
{
	cJSON_Hooks	 hooks = { count_malloc, free };
	struct event	 ev;
	char		*t;

	(void)state;
	cJSON_InitHooks(&hooks);
	/* EVENT_MAX_JSON_VALUES values parse, one more is refused unparsed. */
	t = mk_values(EVENT_MAX_JSON_VALUES - 17, 0);
	allocs = 0;
	assert_int_equal(event_parse(&ev, t, strlen(t), 1024 * 1024), EVENT_OK);
	assert_true(allocs > EVENT_MAX_JSON_VALUES - 17);
	event_free(&ev);
	free(t);
	t = mk_values(EVENT_MAX_JSON_VALUES - 16, 0);
	allocs = 0;
	assert_int_equal(event_parse(&ev, t, strlen(t), 1024 * 1024),
	    EVENT_TOO_LARGE);
	assert_int_equal(allocs, 0);
	free(t);
	/* Nesting: the event object is level 1, "x" level 2. */
	t = mk_values(0, EVENT_MAX_JSON_DEPTH - 2);
	assert_int_equal(event_parse(&ev, t, strlen(t), MAXB), EVENT_OK);
	event_free(&ev);
	free(t);
	t = mk_values(0, EVENT_MAX_JSON_DEPTH - 1);
	allocs = 0;
	assert_int_equal(event_parse(&ev, t, strlen(t), MAXB), EVENT_TOO_LARGE);
	assert_int_equal(allocs, 0);
	free(t);
	cJSON_InitHooks(NULL);
}

static void
test_reason_strings(void **state)
{
	(void)state;
	assert_string_equal(event_result_str(EVENT_ID_MISMATCH),
	    "invalid: id mismatch");
	assert_string_equal(event_result_str(EVENT_BAD_SIG),
	    "invalid: bad signature");
	assert_string_equal(event_result_str(EVENT_BAD_JSON),
	    "invalid: bad json");
	assert_string_equal(event_result_str(EVENT_OK), "");
	assert_string_equal(event_result_str((enum event_result)999),
	    "error: unknown result");
}

/* ---- kind classes --------------------------------------------------- */

static void
test_kind_classes(void **state)
{
	static const struct {
		uint32_t		kind;
		enum event_class	cls;
	} rows[] = {
		{ 0, EVENT_CLASS_REPLACEABLE }, { 1, EVENT_CLASS_REGULAR },
		{ 2, EVENT_CLASS_REGULAR }, { 3, EVENT_CLASS_REPLACEABLE },
		{ 4, EVENT_CLASS_REGULAR }, { 7, EVENT_CLASS_REGULAR },
		{ 9999, EVENT_CLASS_REGULAR },
		{ 10000, EVENT_CLASS_REPLACEABLE },
		{ 10002, EVENT_CLASS_REPLACEABLE },
		{ 19999, EVENT_CLASS_REPLACEABLE },
		{ 20000, EVENT_CLASS_EPHEMERAL },
		{ 22242, EVENT_CLASS_EPHEMERAL },
		{ 29999, EVENT_CLASS_EPHEMERAL },
		{ 30000, EVENT_CLASS_ADDRESSABLE },
		{ 30023, EVENT_CLASS_ADDRESSABLE },
		{ 39999, EVENT_CLASS_ADDRESSABLE },
		{ 40000, EVENT_CLASS_REGULAR }, { 65535, EVENT_CLASS_REGULAR },
	};
	size_t	i;

	(void)state;
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		assert_int_equal(event_kind_class(rows[i].kind), rows[i].cls);
}

static void
test_replace_key(void **state)
{
	struct event		ev;
	struct event_rkey	rk;

	(void)state;
	parse_ok(&ev, signed_json(30023, NOW,
	    "[[\"e\",\"x\"],[\"d\",\"my-article\"],[\"d\",\"second\"]]", ""));
	assert_int_equal(event_replace_key(&ev, &rk), 0);
	assert_int_equal(rk.kind, 30023);
	assert_memory_equal(rk.pubkey, ev.pubkey, 32);
	assert_string_equal(rk.d, "my-article");
	assert_int_equal(rk.dlen, 10);
	event_free(&ev);

	parse_ok(&ev, signed_json(30000, NOW, "[[\"d\"]]", ""));
	assert_int_equal(event_replace_key(&ev, &rk), 0);
	assert_string_equal(rk.d, "");
	event_free(&ev);

	/* Replaceable kinds ignore d tags. */
	parse_ok(&ev, signed_json(10002, NOW, "[[\"d\",\"x\"]]", ""));
	assert_int_equal(event_replace_key(&ev, &rk), 0);
	assert_string_equal(rk.d, "");
	assert_int_equal(rk.dlen, 0);
	event_free(&ev);

	parse_ok(&ev, signed_json(1, NOW, "[[\"d\",\"x\"]]", ""));
	assert_int_equal(event_replace_key(&ev, &rk), -1);
	event_free(&ev);
	parse_ok(&ev, signed_json(20001, NOW, NULL, ""));
	assert_int_equal(event_replace_key(&ev, &rk), -1);
	event_free(&ev);
}

static void
test_create_refuses(void **state)
{
	struct nostr_key	 k;
	struct event		 ev;
	cJSON			*t = cJSON_Parse("[[\"e\",1]]");

	(void)state;
	key3(&k);
	assert_int_equal(event_create(&ev, &k, 1, NOW, t, ""),
	    EVENT_MALFORMED_TAGS);
	assert_null(ev.json);
	assert_int_equal(event_create(&ev, &k, 65536, NOW, NULL, ""),
	    EVENT_MALFORMED_KIND);
	cJSON_Delete(t);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bip340_vectors),
		cmocka_unit_test(test_serialize_empty),
		cmocka_unit_test(test_serialize_escapes),
		cmocka_unit_test(test_serialize_utf8),
		cmocka_unit_test(test_serialize_tags),
		cmocka_unit_test(test_serialize_150_tags),
		cmocka_unit_test(test_serialize_30k_content),
		cmocka_unit_test(test_id_known_answer),
		cmocka_unit_test(test_escape_every_byte_every_offset),
		cmocka_unit_test(test_to_json_id),
		cmocka_unit_test(test_pubkey_cache_collisions),
		cmocka_unit_test(test_sign_roundtrip),
		cmocka_unit_test(test_tampered_fields),
		cmocka_unit_test(test_tampered_pubkey_rehashed),
		cmocka_unit_test(test_future),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_tag_bounds),
		cmocka_unit_test(test_too_large_before_parse),
		cmocka_unit_test(test_values_before_parse),
		cmocka_unit_test(test_reason_strings),
		cmocka_unit_test(test_kind_classes),
		cmocka_unit_test(test_replace_key),
		cmocka_unit_test(test_create_refuses),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
