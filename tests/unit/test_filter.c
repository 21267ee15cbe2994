/*
 * test_filter.c — NIP-01 filters: parse errors name the key, the JSON form
 * round-trips exactly, and matching follows NIP-01 (AND across keys, OR
 * within a list, exact ids/authors, #x on the first tag value).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/buf.h"
#include "core/limits.h"
#include "nostr/event.h"
#include "nostr/filter.h"

#define PK3	"f9308a019258c31049344f85f89d5229b531c845836f99b08601f113bce036f9"
#define PKB	"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
#define IDA	"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define SIG0	"0000000000000000000000000000000000000000000000000000000000000000" \
		"0000000000000000000000000000000000000000000000000000000000000000"

static int
parse(struct filter *f, const char *text, char *err, size_t errlen)
{
	return filter_parse_text(f, text, strlen(text), err, errlen);
}

/* Parse text, serialize, compare with want. */
static void
roundtrip(const char *text, const char *want)
{
	struct filter	f;
	struct buf	b;
	char		err[256];

	assert_int_equal(parse(&f, text, err, sizeof(err)), 0);
	buf_init(&b, 1 << 20);
	assert_int_equal(filter_to_json(&f, &b), 0);
	assert_string_equal(buf_cstr(&b), want);
	buf_free(&b);
	filter_free(&f);
}

static void
test_roundtrip(void **state)
{
	(void)state;
	roundtrip("{}", "{}");
	roundtrip(" { \"limit\" : 10 } ", "{\"limit\":10}");
	roundtrip("{\"until\":5,\"kinds\":[1,30023],\"since\":-3,"
	    "\"authors\":[\"" PK3 "\"],\"ids\":[\"" IDA "\"],"
	    "\"#t\":[\"a\\\"b\",\"\\u00e9\"],\"#P\":[]}",
	    "{\"ids\":[\"" IDA "\"],\"authors\":[\"" PK3 "\"],"
	    "\"kinds\":[1,30023],\"#t\":[\"a\\\"b\",\"\xc3\xa9\"],\"#P\":[],"
	    "\"since\":-3,\"until\":5}");
}

struct bad {
	const char	*text;
	const char	*err;
};

static const struct bad bads[] = {
	{ "[]", "filter is not a JSON object" },
	{ "{", "filter is not valid JSON" },
	{ "{} {}", "filter has trailing garbage" },
	{ "{\"author\":[]}", "unknown key \"author\"" },
	{ "{\"#tt\":[]}", "unknown key \"#tt\"" },
	{ "{\"#1\":[]}", "unknown key \"#1\"" },
	{ "{\"ids\":\"" IDA "\"}", "ids: not an array" },
	{ "{\"ids\":[\"aaaa\"]}", "ids: entry 0 is not 64 lowercase hex digits" },
	{ "{\"authors\":[\"" PK3 "\",\"" IDA "A\"]}",
	    "authors: entry 1 is not 64 lowercase hex digits" },
	{ "{\"kinds\":[1,65536]}",
	    "kinds: entry 1 is not an integer from 0 to 65535" },
	{ "{\"kinds\":[1.5]}",
	    "kinds: entry 0 is not an integer from 0 to 65535" },
	{ "{\"since\":\"1\"}", "since: not an integer timestamp" },
	{ "{\"until\":1.25}", "until: not an integer timestamp" },
	{ "{\"limit\":-1}", "limit: not a non-negative integer" },
	{ "{\"#e\":[1]}", "#e: entry 0 is not a string" },
	{ "{\"limit\":1,\"limit\":2}", "duplicate key \"limit\"" },
	{ "{\"#e\":[],\"#e\":[]}", "duplicate key \"#e\"" },
	{ "{\"#a\":[],\"#b\":[],\"#c\":[],\"#d\":[],\"#e\":[],\"#f\":[],"
	    "\"#g\":[],\"#h\":[],\"#i\":[]}", "more than 8 #x keys" },
};

static void
test_errors(void **state)
{
	struct filter	f;
	char		err[256];
	size_t		i;

	(void)state;
	for (i = 0; i < sizeof(bads) / sizeof(bads[0]); i++) {
		err[0] = '\0';
		print_message("case %zu: %s\n", i, bads[i].text);
		assert_int_equal(parse(&f, bads[i].text, err, sizeof(err)), -1);
		assert_string_equal(err, bads[i].err);
		assert_null(f.ids);
		assert_int_equal(f.ntags, 0);
	}
}

/* A list of n entries of kind k: 0 hex ids, 1 kinds, 2 #t values. */
static char *
list_filter(int what, size_t n)
{
	size_t	 cap = n * 70 + 64, len, i;
	char	*s = malloc(cap);

	assert_non_null(s);
	len = (size_t)snprintf(s, cap, "{\"%s\":[",
	    what == 0 ? "ids" : what == 1 ? "kinds" : "#t");
	for (i = 0; i < n; i++) {
		if (what == 0)
			len += (size_t)snprintf(s + len, cap - len, "%s\"%064zx\"",
			    i ? "," : "", i);
		else if (what == 1)
			len += (size_t)snprintf(s + len, cap - len, "%s%zu",
			    i ? "," : "", i);
		else
			len += (size_t)snprintf(s + len, cap - len, "%s\"v%zu\"",
			    i ? "," : "", i);
	}
	snprintf(s + len, cap - len, "]}");
	return s;
}

static void
test_bounds(void **state)
{
	static const struct {
		int	 what;
		size_t	 max;
		char	 err[64];
	} rows[] = {
		{ 0, FILTER_MAX_IDS, "ids: more than 1000 entries" },
		{ 1, FILTER_MAX_KINDS, "kinds: more than 100 entries" },
		{ 2, FILTER_MAX_TAG_VALUES, "#t: more than 1000 entries" },
	};
	struct filter	 f;
	char		 err[256], *s;
	size_t		 i;

	(void)state;
	for (i = 0; i < 3; i++) {
		s = list_filter(rows[i].what, rows[i].max);
		assert_int_equal(parse(&f, s, err, sizeof(err)), 0);
		filter_free(&f);
		free(s);
		s = list_filter(rows[i].what, rows[i].max + 1);
		assert_int_equal(parse(&f, s, err, sizeof(err)), -1);
		assert_string_equal(err, rows[i].err);
		free(s);
	}
}

/* Parse an event from fields (id and sig are not checked by matching). */
static void
event_of(struct event *ev, const char *id, const char *pk, int64_t at,
    unsigned kind, const char *tags)
{
	char	text[2048];

	snprintf(text, sizeof(text), "{\"id\":\"%s\",\"pubkey\":\"%s\","
	    "\"created_at\":%lld,\"kind\":%u,\"tags\":%s,\"content\":\"\","
	    "\"sig\":\"" SIG0 "\"}", id, pk, (long long)at, kind, tags);
	assert_int_equal(event_parse(ev, text, strlen(text), 1 << 20),
	    EVENT_OK);
}

static int
match(const char *ftext, const struct event *ev)
{
	struct filter	f;
	char		err[256];
	int		m;

	assert_int_equal(parse(&f, ftext, err, sizeof(err)), 0);
	m = filter_match(&f, ev);
	filter_free(&f);
	return m;
}

static void
test_match(void **state)
{
	struct event	ev;

	(void)state;
	event_of(&ev, IDA, PK3, 1000, 1,
	    "[[\"e\",\"x\"],[\"t\"],[\"p\",\"" PKB "\",\"relay\"],[\"tt\",\"y\"]]");
	assert_true(match("{}", &ev));
	assert_true(match("{\"limit\":0}", &ev));
	assert_true(match("{\"ids\":[\"" PKB "\",\"" IDA "\"]}", &ev));
	assert_false(match("{\"ids\":[\"" PKB "\"]}", &ev));
	assert_false(match("{\"ids\":[]}", &ev));
	assert_true(match("{\"authors\":[\"" PK3 "\"]}", &ev));
	assert_false(match("{\"authors\":[\"" PKB "\"]}", &ev));
	assert_true(match("{\"kinds\":[0,1]}", &ev));
	assert_false(match("{\"kinds\":[0,7]}", &ev));
	assert_true(match("{\"since\":1000,\"until\":1000}", &ev));
	assert_false(match("{\"since\":1001}", &ev));
	assert_false(match("{\"until\":999}", &ev));
	assert_true(match("{\"#e\":[\"z\",\"x\"]}", &ev));
	assert_false(match("{\"#e\":[\"X\"]}", &ev));
	assert_true(match("{\"#p\":[\"" PKB "\"]}", &ev));
	/* Only the first value counts; a tag without a value never matches. */
	assert_false(match("{\"#p\":[\"relay\"]}", &ev));
	assert_false(match("{\"#t\":[\"\"]}", &ev));
	/* A multi-letter tag name is not "#t". */
	assert_false(match("{\"#t\":[\"y\"]}", &ev));
	/* Case matters for the letter. */
	assert_false(match("{\"#E\":[\"x\"]}", &ev));
	/* All conditions must hold. */
	assert_true(match("{\"kinds\":[1],\"#e\":[\"x\"],\"#p\":[\"" PKB
	    "\"],\"authors\":[\"" PK3 "\"]}", &ev));
	assert_false(match("{\"kinds\":[1],\"#e\":[\"x\"],\"#p\":[\"nope\"]}",
	    &ev));
	event_free(&ev);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_match),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
