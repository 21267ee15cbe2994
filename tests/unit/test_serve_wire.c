/*
 * test_serve_wire.c — the relay endpoint's messages (serve/wire.c): every
 * client message parsed into its fields (filters parsed and sorted, the
 * event's exact bytes in the frame, NIP-77 hex), every refusal with the
 * exact sentence to answer and, when they could be read, the type and
 * subscription id it is answered under; and every relay message built
 * byte for byte, with subscription ids and texts escaped.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "nostr/filter.h"
#include "serve/wire.h"

#define EV	"{\"id\":\"00\",\"kind\":1}"

static int
parse(struct wire_msg *m, const char *text, char *why, size_t whylen)
{
	return wire_parse(m, text, strlen(text), 10, why, whylen);
}

static void
test_req(void **state)
{
	struct wire_msg	m;
	char		why[256];

	assert_int_equal(parse(&m, "[\"REQ\",\"sub 1\",{\"kinds\":[7,1,7]},"
	    "{\"#e\":[\"b\",\"a\"],\"limit\":5}]", why, sizeof(why)), 0);
	assert_int_equal(m.type, WIRE_REQ);
	assert_string_equal(m.subid, "sub 1");
	assert_int_equal(m.nfilters, 2);
	assert_true(m.filters[0].sorted);
	assert_int_equal(m.filters[0].nkinds, 2);	/* 1, 7: repeats dropped */
	assert_int_equal(m.filters[0].kinds[0], 1);
	assert_int_equal(m.filters[0].kinds[1], 7);
	assert_string_equal(m.filters[1].tags[0].values[0], "a");
	assert_int_equal(m.filters[1].limit, 5);
	wire_free(&m);

	assert_int_equal(parse(&m, "[\"COUNT\",\"c\",{}]", why, sizeof(why)),
	    0);
	assert_int_equal(m.type, WIRE_COUNT);
	wire_free(&m);
	assert_int_equal(parse(&m, "[\"CLOSE\",\"c\"]", why, sizeof(why)), 0);
	assert_int_equal(m.type, WIRE_CLOSE);
	assert_string_equal(m.subid, "c");
	wire_free(&m);
}

static void
test_event_span(void **state)
{
	struct wire_msg	 m;
	char		 why[256];
	const char	*f = " [ \"EVENT\" ,\t" EV " ] \n";

	assert_int_equal(parse(&m, f, why, sizeof(why)), 0);
	assert_int_equal(m.type, WIRE_EVENT);
	assert_int_equal(m.event_len, strlen(EV));
	assert_memory_equal(m.event, EV, strlen(EV));
	assert_string_equal(m.subid, "");
	wire_free(&m);
	assert_int_equal(parse(&m, "[\"AUTH\"," EV "]", why, sizeof(why)), 0);
	assert_int_equal(m.type, WIRE_AUTH);
	assert_int_equal(m.event_len, strlen(EV));
	wire_free(&m);
}

static void
test_neg(void **state)
{
	struct wire_msg	m;
	char		why[256];

	assert_int_equal(parse(&m, "[\"NEG-OPEN\",\"n\",{\"kinds\":[1]},"
	    "\"6100\"]", why, sizeof(why)), 0);
	assert_int_equal(m.type, WIRE_NEG_OPEN);
	assert_int_equal(m.nfilters, 1);
	assert_int_equal(m.hex_len, 4);
	assert_memory_equal(m.hex, "6100", 4);
	wire_free(&m);
	assert_int_equal(parse(&m, "[\"NEG-MSG\",\"n\",\"61ab\"]", why,
	    sizeof(why)), 0);
	assert_int_equal(m.type, WIRE_NEG_MSG);
	wire_free(&m);
	assert_int_equal(parse(&m, "[\"NEG-CLOSE\",\"n\"]", why, sizeof(why)),
	    0);
	wire_free(&m);
}

/* A refusal: its sentence, and the type and subid it is answered under. */
static void
refused(const char *text, const char *want, enum wire_type type,
    const char *subid)
{
	struct wire_msg	m;
	char		why[256];

	assert_int_equal(parse(&m, text, why, sizeof(why)), -1);
	assert_string_equal(why, want);
	assert_int_equal(m.type, type);
	assert_string_equal(m.subid, subid);
	assert_null(m.filters);
	assert_null(m.root);
}

/*
 * A type string with a NUL in it compares equal to AUTH in C; the raw
 * bytes must be the name itself (a fuzzer found an event span taken from
 * inside such a type string).
 */
static void
test_type_with_nul(void **state)
{
	static const char	 frame[] = "[\"AUTH\0\\\",{\0\",{}]";
	struct wire_msg		 m;
	char			 why[256];

	assert_int_equal(wire_parse(&m, frame, sizeof(frame) - 1, 10, why,
	    sizeof(why)), -1);
	assert_string_equal(why, "invalid: unknown message type \"AUTH\"");
	assert_null(m.root);
	(void)state;
}

static void
test_refusals(void **state)
{
	char	big[64 * 1024];
	size_t	i, n = 0;

	refused("[\"REQ\",", "invalid: malformed JSON", WIRE_UNKNOWN, "");
	refused("[\"REQ\",\"a\",{}] x", "invalid: malformed JSON",
	    WIRE_UNKNOWN, "");
	refused("{\"REQ\":1}", "invalid: a message is an array whose first "
	    "element is its type", WIRE_UNKNOWN, "");
	refused("[1,2]", "invalid: a message is an array whose first element "
	    "is its type", WIRE_UNKNOWN, "");
	refused("[\"PING\"]", "invalid: unknown message type \"PING\"",
	    WIRE_UNKNOWN, "");
	refused("[\"AUTH\\\",{\",{}]", "invalid: unknown message type "
	    "\"AUTH\",{\"", WIRE_UNKNOWN, "");
	refused("[\"REQ\",\"a\"]", "invalid: REQ takes 3 to 1048576 elements, "
	    "not 2", WIRE_REQ, "a");
	refused("[\"REQ\",5,{}]", "invalid: the subscription id is not a "
	    "string", WIRE_REQ, "");
	refused("[\"REQ\",\"\",{}]", "invalid: a subscription id has 1 to 64 "
	    "characters", WIRE_REQ, "");
	refused("[\"REQ\",\"a\",{\"authors\":[\"AB\"]}]", "invalid: filter 1: "
	    "authors: entry 0 is not 64 lowercase hex digits", WIRE_REQ, "a");
	refused("[\"COUNT\",\"c\",{},{\"x\":1}]", "invalid: filter 2: unknown "
	    "key \"x\"", WIRE_COUNT, "c");
	refused("[\"REQ\",\"a\",{},{},{},{},{},{},{},{},{},{},{}]", "blocked: at "
	    "most 10 filters in one REQ", WIRE_REQ, "a");
	refused("[\"EVENT\",\"x\"]", "invalid: EVENT needs an event object",
	    WIRE_EVENT, "");
	refused("[\"NEG-OPEN\",\"n\",{},\"61G0\"]", "invalid: the negentropy "
	    "message is not lowercase hex", WIRE_NEG_OPEN, "n");
	refused("[\"NEG-MSG\",\"n\",\"6\"]", "invalid: the negentropy message "
	    "is not lowercase hex", WIRE_NEG_MSG, "n");
	refused("[\"CLOSE\",\"a\",\"b\"]", "invalid: CLOSE takes 2 to 2 "
	    "elements, not 3", WIRE_CLOSE, "a");
	/* Values are counted before cJSON builds anything. */
	n += (size_t)snprintf(big + n, sizeof(big) - n, "[\"REQ\",\"a\",{\"kinds\":[");
	for (i = 0; i < 30000; i++)
		n += (size_t)snprintf(big + n, sizeof(big) - n, i ? ",1" : "1");
	snprintf(big + n, sizeof(big) - n, "]}]");
	refused(big, "blocked: more than 24592 JSON values in one message",
	    WIRE_UNKNOWN, "");
	memset(big, '[', 40);
	big[40] = '\0';
	refused(big, "invalid: JSON nested deeper than 17", WIRE_UNKNOWN, "");
}

static void
built(int (*fn)(struct buf *), const char *want)
{
	struct buf	b;

	buf_init(&b, 4096);
	assert_int_equal(fn(&b), 0);
	assert_string_equal(buf_cstr(&b), want);
	buf_free(&b);
}

static int b_event(struct buf *b) { return wire_event(b, "s\"1", EV, strlen(EV)); }
static int b_eose(struct buf *b) { return wire_eose(b, "s"); }
static int b_closed(struct buf *b) { return wire_closed(b, "s", "blocked: x\n"); }
static int b_notice(struct buf *b) { return wire_notice(b, "error: \"q\""); }
static int b_count(struct buf *b) { return wire_count(b, "c", 42); }
static int b_auth(struct buf *b) { return wire_auth(b, "abcd"); }
static int b_negerr(struct buf *b) { return wire_neg_err(b, "n", "blocked: y"); }

static int
b_ok(struct buf *b)
{
	uint8_t	id[32];

	memset(id, 0xab, sizeof(id));
	return wire_ok(b, id, false, "blocked: read-only cache");
}

static int
b_negmsg(struct buf *b)
{
	static const uint8_t	msg[] = { 0x61, 0x00, 0xff };

	return wire_neg_msg(b, "n", msg, sizeof(msg));
}

static void
test_builders(void **state)
{
	struct buf	b;

	built(b_event, "[\"EVENT\",\"s\\\"1\"," EV "]");
	built(b_eose, "[\"EOSE\",\"s\"]");
	built(b_closed, "[\"CLOSED\",\"s\",\"blocked: x\\n\"]");
	built(b_notice, "[\"NOTICE\",\"error: \\\"q\\\"\"]");
	built(b_count, "[\"COUNT\",\"c\",{\"count\":42}]");
	built(b_auth, "[\"AUTH\",\"abcd\"]");
	built(b_negerr, "[\"NEG-ERR\",\"n\",\"blocked: y\"]");
	built(b_negmsg, "[\"NEG-MSG\",\"n\",\"6100ff\"]");
	built(b_ok, "[\"OK\",\"abababababababababababababababababababababab"
	    "abababababababababab\",false,\"blocked: read-only cache\"]");
	/* A full buffer is left as it was. */
	buf_init(&b, 16);
	assert_int_equal(buf_puts(&b, "keep"), 0);
	assert_int_equal(wire_event(&b, "s", EV, strlen(EV)), -1);
	assert_string_equal(buf_cstr(&b), "keep");
	buf_free(&b);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_req),
		cmocka_unit_test(test_event_span),
		cmocka_unit_test(test_neg),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_type_with_nul),
		cmocka_unit_test(test_builders),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
