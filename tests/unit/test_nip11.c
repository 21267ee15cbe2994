/*
 * test_nip11.c — relay information documents: a full one, missing fields,
 * wrong types ignored field by field, and the inputs that are errors.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "nostr/nip11.h"

static int
parse(const char *doc, struct nip11_info *info, char *err, size_t errlen)
{
	return nip11_parse(doc, strlen(doc), info, err, errlen);
}

static void
test_full(void **state)
{
	struct nip11_info	 info;
	char			 err[128] = "";
	const char		*doc =
	    "{\"name\":\"relay.example\",\"description\":\"test\","
	    "\"pubkey\":\"00\",\"software\":\"git+https://example/strfry.git\","
	    "\"version\":\"1.0.4\",\"supported_nips\":[1,2,4,9,11,22,28,40,70,77],"
	    "\"negentropy\":1,"
	    "\"limitation\":{\"max_message_length\":131072,"
	    "\"max_subscriptions\":20,\"max_limit\":500,\"max_event_tags\":2000,"
	    "\"max_content_length\":65536,\"auth_required\":true,"
	    "\"payment_required\":false,\"min_pow_difficulty\":0}}";

	(void)state;
	assert_int_equal(parse(doc, &info, err, sizeof(err)), 0);
	assert_string_equal(err, "");
	assert_string_equal(info.name, "relay.example");
	assert_string_equal(info.software, "git+https://example/strfry.git");
	assert_string_equal(info.version, "1.0.4");
	assert_int_equal(info.nsupported_nips, 10);
	assert_int_equal(info.supported_nips[0], 1);
	assert_int_equal(info.supported_nips[9], 77);
	assert_true(nip11_supports(&info, 77));
	assert_true(nip11_supports(&info, 11));
	assert_false(nip11_supports(&info, 42));
	assert_int_equal(info.negentropy, 1);
	assert_int_equal(info.max_message_length, 131072);
	assert_int_equal(info.max_subscriptions, 20);
	assert_int_equal(info.max_limit, 500);
	assert_int_equal(info.max_event_tags, 2000);
	assert_int_equal(info.max_content_length, 65536);
	assert_true(info.auth_required);
	assert_false(info.payment_required);
}

static void
test_missing(void **state)
{
	struct nip11_info	info;

	(void)state;
	memset(&info, 0x5a, sizeof(info));	/* parse must clear it */
	assert_int_equal(parse("{}", &info, NULL, 0), 0);
	assert_string_equal(info.name, "");
	assert_string_equal(info.software, "");
	assert_int_equal(info.nsupported_nips, 0);
	assert_int_equal(info.max_limit, 0);
	assert_int_equal(info.max_subscriptions, 0);
	assert_false(info.auth_required);
	assert_int_equal(info.negentropy, 0);
	assert_false(nip11_supports(&info, 77));

	/* Limits outside "limitation" are not NIP-11's; they are ignored. */
	assert_int_equal(parse("{\"max_limit\":10,\"name\":\"x\"}", &info,
	    NULL, 0), 0);
	assert_int_equal(info.max_limit, 0);
	assert_string_equal(info.name, "x");
}

static void
test_wrong_types(void **state)
{
	struct nip11_info	 info;
	const char		*doc =
	    "{\"name\":42,\"software\":[\"a\"],\"version\":\"2\","
	    "\"supported_nips\":[1,\"11\",1.5,-4,null,{},70000,77],"
	    "\"negentropy\":\"yes\","
	    "\"limitation\":{\"max_limit\":\"500\",\"max_subscriptions\":-1,"
	    "\"max_message_length\":1.5,\"max_event_tags\":1e300,"
	    "\"max_content_length\":300,\"auth_required\":1,"
	    "\"payment_required\":true}}";

	(void)state;
	assert_int_equal(parse(doc, &info, NULL, 0), 0);
	assert_string_equal(info.name, "");
	assert_string_equal(info.software, "");
	assert_string_equal(info.version, "2");
	assert_int_equal(info.nsupported_nips, 2);
	assert_int_equal(info.supported_nips[0], 1);
	assert_int_equal(info.supported_nips[1], 77);
	assert_int_equal(info.negentropy, 0);
	assert_int_equal(info.max_limit, 0);
	assert_int_equal(info.max_subscriptions, 0);
	assert_int_equal(info.max_message_length, 0);
	assert_int_equal(info.max_event_tags, 0);
	assert_int_equal(info.max_content_length, 300);
	assert_false(info.auth_required);
	assert_true(info.payment_required);

	/* "limitation" of the wrong type; supported_nips not an array. */
	assert_int_equal(parse("{\"limitation\":[1],\"supported_nips\":77,"
	    "\"negentropy\":true}", &info, NULL, 0), 0);
	assert_int_equal(info.nsupported_nips, 0);
	assert_int_equal(info.negentropy, 1);
	assert_true(nip11_supports(&info, 77));	/* from the field alone */
	assert_false(nip11_supports(&info, 1));
}

static void
test_garbage(void **state)
{
	struct nip11_info	info;
	char			err[128];

	(void)state;
	assert_int_equal(parse("<html>502 Bad Gateway</html>", &info, err,
	    sizeof(err)), -1);
	assert_string_equal(err, "relay information document is not JSON");
	assert_int_equal(parse("", &info, err, sizeof(err)), -1);
	assert_int_equal(parse("{\"name\":\"x\"", &info, err, sizeof(err)),
	    -1);
	assert_int_equal(parse("[1,2]", &info, err, sizeof(err)), -1);
	assert_string_equal(err,
	    "relay information document is not a JSON object");
	assert_int_equal(parse("\"name\"", &info, err, sizeof(err)), -1);
	assert_int_equal(parse("null", &info, err, sizeof(err)), -1);
	/* Not NUL-terminated: only len bytes are read. */
	assert_int_equal(nip11_parse("{}garbage", 2, &info, err, sizeof(err)),
	    0);
}

static void
test_bounds(void **state)
{
	struct nip11_info	 info;
	char			*doc, err[128];
	size_t			 i, off;

	(void)state;
	doc = malloc(NIP11_MAX_DOC_BYTES + 2);
	assert_non_null(doc);
	/* One byte over the limit is refused before parsing. */
	memset(doc, ' ', NIP11_MAX_DOC_BYTES + 1);
	doc[0] = '{';
	doc[NIP11_MAX_DOC_BYTES] = '}';
	assert_int_equal(nip11_parse(doc, NIP11_MAX_DOC_BYTES + 1, &info, err,
	    sizeof(err)), -1);
	assert_string_equal(err, "relay information document too large");
	/* Exactly at the limit is parsed. */
	doc[NIP11_MAX_DOC_BYTES - 1] = '}';
	assert_int_equal(nip11_parse(doc, NIP11_MAX_DOC_BYTES, &info, err,
	    sizeof(err)), 0);

	/* More NIPs than kept: the first NIP11_MAX_NIPS survive. */
	off = (size_t)sprintf(doc, "{\"supported_nips\":[");
	for (i = 0; i < NIP11_MAX_NIPS + 10; i++)
		off += (size_t)sprintf(doc + off, "%s%zu", i ? "," : "", i + 1);
	off += (size_t)sprintf(doc + off, "]}");
	assert_int_equal(nip11_parse(doc, off, &info, NULL, 0), 0);
	assert_int_equal(info.nsupported_nips, NIP11_MAX_NIPS);
	assert_int_equal(info.supported_nips[NIP11_MAX_NIPS - 1],
	    NIP11_MAX_NIPS);
	free(doc);
}

static void
test_long_name_utf8(void **state)
{
	struct nip11_info	info;
	char			doc[NIP11_MAX_STRING * 2 + 32];
	size_t			off, i;

	(void)state;
	/* 'a' then two-byte characters: the cut must not split one. */
	off = (size_t)sprintf(doc, "{\"name\":\"a");
	for (i = 0; i < NIP11_MAX_STRING / 2 + 4; i++) {
		doc[off++] = (char)0xc3;
		doc[off++] = (char)0xa9;	/* U+00E9 */
	}
	off += (size_t)sprintf(doc + off, "\"}");
	assert_int_equal(nip11_parse(doc, off, &info, NULL, 0), 0);
	assert_int_equal(strlen(info.name), NIP11_MAX_STRING - 1);
	assert_int_equal((unsigned char)info.name[NIP11_MAX_STRING - 2], 0xa9);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_full),
		cmocka_unit_test(test_missing),
		cmocka_unit_test(test_wrong_types),
		cmocka_unit_test(test_garbage),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_long_name_utf8),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
