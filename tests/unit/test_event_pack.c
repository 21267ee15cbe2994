/*
 * test_event_pack.c — the compact stored form of event JSON
 * (nostr/event_pack.h): every text packs and unpacks to the same bytes.
 * Proven on every file of the fuzz corpora (every file under tests/fuzz/corpus: events
 * alone and inside relay messages), on events signed here with random
 * contents, and on crafted texts: escapes, unicode, other key orders,
 * spacing, a tag holding the id's hex, hex in upper case. Damaged blobs
 * are refused, never read past their end.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/buf.h"
#include "core/hex.h"
#include "core/limits.h"
#include "nostr/event.h"
#include "nostr/event_pack.h"
#include "nostr/key.h"

#define ID_HEX	"2a9fb9a53ce42439ea5a4ac81edea3032b64cfa142ce8cd0a387cd1c1c94cbb8"
#define PK_HEX	"7e7e9c42a91bfef19fa929e5fda1b72e0ebc1a4c1141673e2794234d86addf4e"
#define SIG_HEX	"6b3798f68874ca19f35f5f3486d6cb579b54f089b28fa388da491616b4e0b590" \
		"58d1723165ac42e1f74a6b0e93929eaa6528bc29a8c1eb6506f96467cb84ae6c"
#define MAXB	(4 * EVENT_MAX_BYTES_CEILING)

static uint8_t	id_bin[32], pk_bin[32];

/*
 * Pack text with id and pubkey, unpack, and require the same bytes, the
 * form expected (-1: any) and the size the form's formula gives. The
 * form is returned.
 */
static int
round_trip(const char *text, size_t len, const uint8_t id[32],
    const uint8_t pk[32], int form)
{
	struct buf	packed, back;
	int		got;

	buf_init(&packed, MAXB);
	buf_init(&back, MAXB);
	assert_int_equal(event_pack_encode(text, len, id, pk, &packed), 0);
	got = event_pack_form(packed.data, packed.len);
	if (form >= 0)
		assert_int_equal(got, form);
	assert_int_equal(event_pack_json_len(got, packed.len), (int64_t)len);
	assert_int_equal(event_pack_decode(packed.data, packed.len, id, pk,
	    &back), 0);
	assert_int_equal(back.len, len);
	assert_memory_equal(back.data, text, len);
	if (got != EVENT_PACK_VERBATIM)
		assert_true(packed.len + 150 < len);
	buf_free(&packed);
	buf_free(&back);
	return got;
}

static int
round_trip_str(const char *text, int form)
{
	return round_trip(text, strlen(text), id_bin, pk_bin, form);
}

/* The first two 64-digit lowercase hex runs of text into id and pk. */
static void
hex_runs(const char *text, size_t len, uint8_t id[32], uint8_t pk[32])
{
	size_t		i = 0, run = 0;
	int		found = 0;

	memset(id, 0x11, 32);
	memset(pk, 0x22, 32);
	for (i = 0; i < len && found < 2; i++) {
		run = hex_digit((unsigned char)text[i]) >= 0 ? run + 1 : 0;
		if (run == 64 && (i + 1 == len ||
		    hex_digit((unsigned char)text[i + 1]) < 0))
			assert_int_equal(hex_decode(text + i - 63, 64,
			    found++ == 0 ? id : pk, 32), 0);
	}
}

/* One corpus file: as an event when it parses, as text otherwise. */
static int
corpus_file(const char *path, int *events)
{
	static char	 text[1024 * 1024];
	struct event	 ev;
	struct buf	 canon;
	uint8_t		 id[32], pk[32];
	FILE		*fp;
	size_t		 len;

	assert_non_null(fp = fopen(path, "rb"));
	len = fread(text, 1, sizeof(text), fp);
	fclose(fp);
	event_init(&ev);
	if (event_parse(&ev, text, len, EVENT_MAX_BYTES_CEILING) == EVENT_OK) {
		(*events)++;
		round_trip(text, len, ev.id, ev.pubkey, -1);
		buf_init(&canon, EVENT_SERIAL_MAX_BYTES);
		assert_int_equal(event_to_json(&ev, &canon), 0);
		round_trip((const char *)canon.data, canon.len, ev.id,
		    ev.pubkey, EVENT_PACK_CANONICAL);
		buf_free(&canon);
		event_free(&ev);
	}
	hex_runs(text, len, id, pk);
	round_trip(text, len, id, pk, -1);
	return 1;
}

static void
test_corpora(void **state)
{
	const char	*dir = getenv("CACHEBOX_TESTS");
	char		 path[1024], sub[2048];
	DIR		*top, *d;
	struct dirent	*e, *f;
	int		 files = 0, events = 0;

	(void)state;
	assert_non_null(dir);
	snprintf(path, sizeof(path), "%s/fuzz/corpus", dir);
	assert_non_null(top = opendir(path));
	while ((e = readdir(top)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name);
		if ((d = opendir(sub)) == NULL)
			continue;
		while ((f = readdir(d)) != NULL) {
			char	file[8192];

			if (f->d_name[0] == '.')
				continue;
			snprintf(file, sizeof(file), "%s/%s", sub, f->d_name);
			files += corpus_file(file, &events);
		}
		closedir(d);
	}
	closedir(top);
	/* The corpora hold nearly a hundred files, a few of them events. */
	assert_true(files >= 90);
	assert_true(events >= 4);
}

/* Events signed here, random contents and tags, in the store's form. */
static void
test_signed_random(void **state)
{
	struct nostr_key	 k;
	struct event		 ev;
	struct buf		 json;
	uint8_t			 sk[32] = { 0 };
	char			 content[512];
	cJSON			*tags;
	int			 i, j, n;

	(void)state;
	sk[31] = 7;
	assert_int_equal(key_from_secret(&k, sk), 0);
	srand(27);
	buf_init(&json, EVENT_SERIAL_MAX_BYTES);
	for (i = 0; i < 200; i++) {
		n = rand() % (int)(sizeof(content) - 1);
		for (j = 0; j < n; j++)
			content[j] = (char)(1 + rand() % 255);
		content[n] = '\0';
		tags = cJSON_Parse(i % 2 ? "[[\"p\",\"" PK_HEX "\"]]" : "[]");
		assert_int_equal(event_create(&ev, &k, (uint32_t)(i % 5),
		    1700000000 + i, tags, content), EVENT_OK);
		buf_reset(&json);
		assert_int_equal(event_to_json(&ev, &json), 0);
		round_trip((const char *)json.data, json.len, ev.id, ev.pubkey,
		    EVENT_PACK_CANONICAL);
		event_free(&ev);
		cJSON_Delete(tags);
	}
	buf_free(&json);
	key_clear(&k);
}

static void
test_key_orders_and_space(void **state)
{
	(void)state;
	round_trip_str("{\"id\":\"" ID_HEX "\",\"pubkey\":\"" PK_HEX "\","
	    "\"created_at\":1,\"kind\":1,\"tags\":[],\"content\":\"\","
	    "\"sig\":\"" SIG_HEX "\"}", EVENT_PACK_CANONICAL);
	round_trip_str("{\"sig\":\"" SIG_HEX "\",\"kind\":1,\"pubkey\":\""
	    PK_HEX "\",\"content\":\"x\",\"tags\":[],\"created_at\":1,"
	    "\"id\":\"" ID_HEX "\"}", EVENT_PACK_PLACED);
	round_trip_str("{ \"pubkey\" : \"" PK_HEX "\" ,\n\t\"id\":\r\n\""
	    ID_HEX "\", \"sig\"  :\n  \"" SIG_HEX "\" , \"kind\" : 1 ,"
	    "\"created_at\" : 1 , \"tags\" : [ ] , \"content\" : \"\" }\n",
	    EVENT_PACK_PLACED);
}

static void
test_escapes_unicode(void **state)
{
	(void)state;
	round_trip_str("{\"id\":\"" ID_HEX "\",\"pubkey\":\"" PK_HEX "\","
	    "\"created_at\":1,\"kind\":1,\"tags\":[[\"t\",\"\\u0000\"]],"
	    "\"content\":\"a\\u0000b\\/c\\\"d\\\\e\\u00e9 \xc3\xa9 "
	    "\xf0\x9f\x98\x80 \\ud83d\\ude00 \\n\",\"sig\":\"" SIG_HEX "\"}",
	    EVENT_PACK_CANONICAL);
	round_trip_str("{\"content\":\"\\\"sig\\\":\\\"" SIG_HEX "\\\"\","
	    "\"id\":\"" ID_HEX "\",\"pubkey\":\"" PK_HEX "\",\"sig\":\""
	    SIG_HEX "\"}", EVENT_PACK_PLACED);
	/* An escaped member name: no "sig" to find, kept as it came. */
	round_trip_str("{\"id\":\"" ID_HEX "\",\"pubkey\":\"" PK_HEX "\","
	    "\"\\u0073ig\":\"" SIG_HEX "\",\"kind\":1}", EVENT_PACK_VERBATIM);
}

static void
test_duplicates(void **state)
{
	(void)state;
	/* The id's hex in a tag before the id, the key's in the content. */
	round_trip_str("{\"tags\":[[\"e\",\"" ID_HEX "\"],[\"p\",\"" PK_HEX
	    "\"]],\"content\":\"" PK_HEX ID_HEX "\",\"id\":\"" ID_HEX "\","
	    "\"pubkey\":\"" PK_HEX "\",\"sig\":\"" SIG_HEX "\"}",
	    EVENT_PACK_PLACED);
	/* The id only inside the signature: nothing clear to cut. */
	round_trip_str("{\"pubkey\":\"" PK_HEX "\",\"sig\":\"" ID_HEX PK_HEX
	    "\"}", EVENT_PACK_VERBATIM);
	/* The id once inside the signature and once clear of it. */
	round_trip_str("{\"pubkey\":\"" PK_HEX "\",\"sig\":\"" ID_HEX ID_HEX
	    "\",\"id\":\"" ID_HEX "\"}", EVENT_PACK_PLACED);
	/* The same key as id and pubkey: two separate runs are needed. */
	memcpy(pk_bin, id_bin, 32);
	round_trip_str("{\"kind\":1,\"id\":\"" ID_HEX "\",\"pubkey\":\""
	    ID_HEX "\",\"sig\":\"" SIG_HEX "\"}", EVENT_PACK_PLACED);
	round_trip_str("{\"id\":\"" ID_HEX "\",\"pubkey\":\"" ID_HEX "\","
	    "\"kind\":1,\"sig\":\"" SIG_HEX "\"}", EVENT_PACK_CANONICAL);
	round_trip_str("{\"id\":\"" ID_HEX "\",\"sig\":\"" SIG_HEX "\"}",
	    EVENT_PACK_VERBATIM);
	assert_int_equal(hex_decode(PK_HEX, 64, pk_bin, 32), 0);
}

static void
test_not_representable(void **state)
{
	char	up[] = "{\"id\":\"" ID_HEX "\",\"pubkey\":\"" PK_HEX "\","
	    "\"created_at\":1,\"kind\":1,\"tags\":[],\"content\":\"\","
	    "\"sig\":\"" SIG_HEX "\"}";

	(void)state;
	assert_int_equal(up[8], 'a');
	up[8] = 'A';		/* "2a9f..." -> "2A9f...": not the id's hex */
	round_trip_str(up, EVENT_PACK_VERBATIM);
	memcpy(up, "{\"id\":\"" ID_HEX, 71);
	up[strlen(up) - 3] = 'C';	/* the signature in upper case */
	round_trip_str(up, EVENT_PACK_VERBATIM);
	round_trip_str("", EVENT_PACK_VERBATIM);
	round_trip_str("not json at all", EVENT_PACK_VERBATIM);
	round_trip_str("{\"sig\":\"" SIG_HEX "\"}", EVENT_PACK_VERBATIM);
	round_trip_str("{\"sig\":\"" SIG_HEX "\"", EVENT_PACK_VERBATIM);
}

/* Damaged blobs: refused, out untouched. */
static void
test_damaged(void **state)
{
	static const char text[] = "{\"kind\":1,\"id\":\"" ID_HEX "\","
	    "\"pubkey\":\"" PK_HEX "\",\"sig\":\"" SIG_HEX "\"}";
	struct buf	packed, out;
	uint8_t		blob[1024];
	size_t		i;

	(void)state;
	buf_init(&packed, MAXB);
	buf_init(&out, MAXB);
	assert_int_equal(event_pack_encode(text, sizeof(text) - 1, id_bin,
	    pk_bin, &packed), 0);
	assert_int_equal(packed.data[0], EVENT_PACK_PLACED);
	assert_true(packed.len <= sizeof(blob));
	/*
	 * Every truncation into the signature (the form holds no checksum:
	 * cutting the closing "} alone is not seen; SQLite guards the page),
	 * and every offset pushed far or onto another run.
	 */
	for (i = 0; i + 2 < packed.len; i++)
		assert_int_equal(event_pack_decode(packed.data, i, id_bin,
		    pk_bin, &out), -1);
	for (i = 1; i < 13; i++) {
		memcpy(blob, packed.data, packed.len);
		blob[i] = 0xff;
		assert_int_equal(event_pack_decode(blob, packed.len, id_bin,
		    pk_bin, &out), -1);
	}
	memcpy(blob, packed.data, packed.len);
	memcpy(blob + 5, blob + 1, 4);	/* the key where the id is */
	assert_int_equal(event_pack_decode(blob, packed.len, id_bin, pk_bin,
	    &out), -1);
	blob[0] = 9;			/* an unknown form */
	assert_int_equal(event_pack_decode(blob, packed.len, id_bin, pk_bin,
	    &out), -1);
	blob[0] = EVENT_PACK_CANONICAL;	/* too short for its form */
	assert_int_equal(event_pack_decode(blob, 64, id_bin, pk_bin, &out),
	    -1);
	assert_int_equal(out.len, 0);
	buf_free(&packed);
	buf_free(&out);
}

/* A buffer too small: -1 and nothing appended, either way. */
static void
test_room(void **state)
{
	static const char text[] = "{\"id\":\"" ID_HEX "\",\"pubkey\":\""
	    PK_HEX "\",\"kind\":1,\"sig\":\"" SIG_HEX "\"}";
	struct buf	small, packed;

	(void)state;
	buf_init(&small, 16);
	buf_init(&packed, MAXB);
	assert_int_equal(event_pack_encode(text, sizeof(text) - 1, id_bin,
	    pk_bin, &small), -1);
	assert_int_equal(small.len, 0);
	assert_int_equal(event_pack_encode(text, sizeof(text) - 1, id_bin,
	    pk_bin, &packed), 0);
	assert_int_equal(event_pack_decode(packed.data, packed.len, id_bin,
	    pk_bin, &small), -1);
	assert_int_equal(small.len, 0);
	buf_free(&small);
	buf_free(&packed);
}

static int
setup(void **state)
{
	(void)state;
	if (hex_decode(ID_HEX, 64, id_bin, 32) == -1 ||
	    hex_decode(PK_HEX, 64, pk_bin, 32) == -1)
		return -1;
	return 0;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_corpora, setup),
		cmocka_unit_test_setup(test_signed_random, setup),
		cmocka_unit_test_setup(test_key_orders_and_space, setup),
		cmocka_unit_test_setup(test_escapes_unicode, setup),
		cmocka_unit_test_setup(test_duplicates, setup),
		cmocka_unit_test_setup(test_not_representable, setup),
		cmocka_unit_test_setup(test_damaged, setup),
		cmocka_unit_test_setup(test_room, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
