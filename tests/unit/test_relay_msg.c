/*
 * test_relay_msg.c — the relay protocol codec: every relay -> client type
 * with exact field values, the raw event span, each named error, the OK /
 * CLOSED prefixes, and the client -> relay frames byte for byte (AUTH is
 * checked by verifying the signed event it carries).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/hex.h"
#include "nostr/event.h"
#include "nostr/filter.h"
#include "nostr/key.h"
#include "relay/msg.h"

#define MAXB	(1024 * 1024)

static enum relay_msg_err
parse(struct relay_msg *m, const char *s)
{
	return relay_msg_parse(m, s, strlen(s), MAXB);
}

static void
test_event(void **state)
{
	struct relay_msg	 m;
	const char		*f =
	    " [ \"EVENT\" , \"sub\\\"1\" ,\n {\"kind\":1,\"content\":\"]}\"} ] ";
	cJSON			*ev;

	(void)state;
	assert_int_equal(parse(&m, f), RELAY_MSG_PARSED);
	assert_int_equal(m.type, RELAY_MSG_EVENT);
	assert_string_equal(m.subid, "sub\"1");
	assert_int_equal(m.subid_len, 5);
	assert_non_null(m.event_raw);
	assert_int_equal(m.event_raw_len, strlen("{\"kind\":1,\"content\":\"]}\"}"));
	assert_memory_equal(m.event_raw, "{\"kind\":1,\"content\":\"]}\"}",
	    m.event_raw_len);
	assert_ptr_equal(m.event_raw, strchr(f, '{'));
	ev = relay_msg_take_event(&m);
	assert_non_null(ev);
	assert_null(relay_msg_take_event(&m));
	assert_int_equal(cJSON_GetObjectItem(ev, "kind")->valueint, 1);
	cJSON_Delete(ev);
	relay_msg_free(&m);

	/* Not taken: relay_msg_free releases it (ASan would tell). */
	assert_int_equal(parse(&m, "[\"EVENT\",\"s\",{}]"), RELAY_MSG_PARSED);
	assert_int_equal(m.event_raw_len, 2);
	relay_msg_free(&m);
}

static void
test_event_ingest(void **state)
{
	struct nostr_key	 key;
	struct event		 ev, parsed;
	struct relay_msg	 m;
	struct buf		 out, scratch;
	uint8_t			 sk[32];

	(void)state;
	memset(sk, 0x11, sizeof(sk));
	assert_int_equal(key_from_secret(&key, sk), 0);
	assert_int_equal(event_create(&ev, &key, 1, 1700000000, NULL, "hi"),
	    EVENT_OK);
	buf_init(&out, MAXB);
	buf_init(&scratch, EVENT_SERIAL_MAX_BYTES);
	assert_int_equal(buf_puts(&out, "[\"EVENT\",\"live-0\","), 0);
	assert_int_equal(event_to_json(&ev, &out), 0);
	assert_int_equal(buf_putc(&out, ']'), 0);
	assert_int_equal(relay_msg_parse(&m, buf_cstr(&out), out.len, MAXB),
	    RELAY_MSG_PARSED);
	/* The raw span is exactly what event_validate wants. */
	assert_int_equal(event_validate(&parsed, m.event_raw, m.event_raw_len,
	    MAXB, 1700000000, &scratch), EVENT_OK);
	assert_memory_equal(parsed.id, ev.id, 32);
	event_free(&parsed);
	/* And the detached object is what event_from_cjson wants. */
	assert_int_equal(event_from_cjson(&parsed, relay_msg_take_event(&m)),
	    EVENT_OK);
	assert_memory_equal(parsed.id, ev.id, 32);
	assert_int_equal(event_check_id(&parsed, &scratch), EVENT_OK);
	event_free(&parsed);
	relay_msg_free(&m);
	event_free(&ev);
	buf_free(&out);
	buf_free(&scratch);
}

static void
test_simple_types(void **state)
{
	struct relay_msg	m;

	(void)state;
	assert_int_equal(parse(&m, "[\"EOSE\",\"abc\"]"), RELAY_MSG_PARSED);
	assert_int_equal(m.type, RELAY_MSG_EOSE);
	assert_string_equal(m.subid, "abc");
	relay_msg_free(&m);

	assert_int_equal(parse(&m, "[\"NOTICE\",\"slow down\"]"),
	    RELAY_MSG_PARSED);
	assert_int_equal(m.type, RELAY_MSG_NOTICE);
	assert_string_equal(m.text, "slow down");
	assert_int_equal(m.text_len, 9);
	relay_msg_free(&m);

	assert_int_equal(parse(&m, "[\"AUTH\",\"chal-42\"]"), RELAY_MSG_PARSED);
	assert_int_equal(m.type, RELAY_MSG_AUTH);
	assert_string_equal(m.text, "chal-42");
	relay_msg_free(&m);

	assert_int_equal(parse(&m, "[\"NEG-MSG\",\"n1\",\"6100\"]"),
	    RELAY_MSG_PARSED);
	assert_int_equal(m.type, RELAY_MSG_NEG_MSG);
	assert_string_equal(m.subid, "n1");
	assert_string_equal(m.text, "6100");
	relay_msg_free(&m);

	assert_int_equal(parse(&m, "[\"NEG-ERR\",\"n1\",\"blocked: too big\"]"),
	    RELAY_MSG_PARSED);
	assert_int_equal(m.type, RELAY_MSG_NEG_ERR);
	assert_string_equal(m.text, "blocked: too big");
	assert_int_equal(m.reason, RELAY_REASON_BLOCKED);
	relay_msg_free(&m);

	assert_int_equal(parse(&m, "[\"NEG-ERR\",\"n1\",\"closed: timeout\"]"),
	    RELAY_MSG_PARSED);
	assert_int_equal(m.reason, RELAY_REASON_NONE);
	relay_msg_free(&m);
}

static void
test_closed(void **state)
{
	struct relay_msg	m;

	(void)state;
	assert_int_equal(parse(&m,
	    "[\"CLOSED\",\"d1\",\"rate-limited: slow down\"]"), RELAY_MSG_PARSED);
	assert_int_equal(m.type, RELAY_MSG_CLOSED);
	assert_string_equal(m.subid, "d1");
	assert_string_equal(m.text, "rate-limited: slow down");
	assert_int_equal(m.reason, RELAY_REASON_RATE_LIMITED);
	relay_msg_free(&m);

	assert_int_equal(parse(&m, "[\"CLOSED\",\"d1\"]"), RELAY_MSG_PARSED);
	assert_string_equal(m.text, "");
	assert_int_equal(m.reason, RELAY_REASON_NONE);
	relay_msg_free(&m);

	assert_int_equal(parse(&m,
	    "[\"CLOSED\",\"d1\",\"auth-required: who are you\"]"),
	    RELAY_MSG_PARSED);
	assert_int_equal(m.reason, RELAY_REASON_AUTH_REQUIRED);
	relay_msg_free(&m);
}

static void
test_ok(void **state)
{
	struct relay_msg	 m;
	char			 f[256];
	uint8_t			 id[32];
	const char		*hex =
	    "b1a649ebe8b435ec71d3784793f3bbf4b93e64e17568a741aecd4c7ddeafce30";

	(void)state;
	assert_int_equal(hex_decode(hex, 64, id, 32), 0);
	snprintf(f, sizeof(f), "[\"OK\",\"%s\",true,\"\"]", hex);
	assert_int_equal(parse(&m, f), RELAY_MSG_PARSED);
	assert_int_equal(m.type, RELAY_MSG_OK);
	assert_true(m.accepted);
	assert_memory_equal(m.event_id, id, 32);
	assert_int_equal(m.reason, RELAY_REASON_NONE);
	relay_msg_free(&m);

	snprintf(f, sizeof(f), "[\"OK\",\"%s\",false,\"duplicate: have it\"]",
	    hex);
	assert_int_equal(parse(&m, f), RELAY_MSG_PARSED);
	assert_false(m.accepted);
	assert_int_equal(m.reason, RELAY_REASON_DUPLICATE);
	assert_string_equal(m.text, "duplicate: have it");
	relay_msg_free(&m);

	snprintf(f, sizeof(f), "[\"OK\",\"%s\",true]", hex);
	assert_int_equal(parse(&m, f), RELAY_MSG_PARSED);
	assert_string_equal(m.text, "");
	relay_msg_free(&m);

	assert_int_equal(parse(&m, "[\"OK\",\"abcd\",true,\"\"]"),
	    RELAY_MSG_ERR_EVENT_ID);
	snprintf(f, sizeof(f), "[\"OK\",\"%s\",\"true\",\"\"]", hex);
	assert_int_equal(parse(&m, f), RELAY_MSG_ERR_FIELD);
	snprintf(f, sizeof(f), "[\"OK\",\"%s\",true,7]", hex);
	assert_int_equal(parse(&m, f), RELAY_MSG_ERR_FIELD);
}

static void
test_count(void **state)
{
	struct relay_msg	m;

	(void)state;
	assert_int_equal(parse(&m, "[\"COUNT\",\"c\",{\"count\":238}]"),
	    RELAY_MSG_PARSED);
	assert_int_equal(m.type, RELAY_MSG_COUNT);
	assert_int_equal(m.count, 238);
	assert_false(m.approximate);
	relay_msg_free(&m);
	assert_int_equal(parse(&m,
	    "[\"COUNT\",\"c\",{\"count\":93412452,\"approximate\":true}]"),
	    RELAY_MSG_PARSED);
	assert_int_equal(m.count, 93412452);
	assert_true(m.approximate);
	relay_msg_free(&m);
	assert_int_equal(parse(&m, "[\"COUNT\",\"c\",{\"count\":-1}]"),
	    RELAY_MSG_ERR_FIELD);
	assert_int_equal(parse(&m, "[\"COUNT\",\"c\",{\"count\":1.5}]"),
	    RELAY_MSG_ERR_FIELD);
	assert_int_equal(parse(&m, "[\"COUNT\",\"c\",{}]"), RELAY_MSG_ERR_FIELD);
}

static void
test_errors(void **state)
{
	struct relay_msg	m;
	char			sub[80];

	(void)state;
	assert_int_equal(relay_msg_parse(&m, "[\"EOSE\",\"a\"]", 12, 11),
	    RELAY_MSG_ERR_TOO_LARGE);
	assert_int_equal(relay_msg_parse(&m, "[\"EOSE\",\"a\"]", 12, 12),
	    RELAY_MSG_PARSED);
	relay_msg_free(&m);
	assert_int_equal(parse(&m, "[\"EOSE\",\"a\""), RELAY_MSG_ERR_JSON);
	assert_int_equal(parse(&m, "[\"EOSE\",\"a\"] x"), RELAY_MSG_ERR_JSON);
	assert_int_equal(parse(&m, ""), RELAY_MSG_ERR_JSON);
	assert_int_equal(parse(&m, "{\"EOSE\":1}"), RELAY_MSG_ERR_NOT_ARRAY);
	assert_int_equal(parse(&m, "[]"), RELAY_MSG_ERR_NOT_ARRAY);
	assert_int_equal(parse(&m, "[1,\"a\"]"), RELAY_MSG_ERR_TYPE);
	assert_int_equal(parse(&m, "[\"HELLO\",\"a\"]"), RELAY_MSG_ERR_UNKNOWN);
	assert_int_equal(parse(&m, "[\"eose\",\"a\"]"), RELAY_MSG_ERR_UNKNOWN);
	assert_int_equal(parse(&m, "[\"EOSE\"]"), RELAY_MSG_ERR_ARITY);
	assert_int_equal(parse(&m, "[\"EOSE\",\"a\",\"b\"]"),
	    RELAY_MSG_ERR_ARITY);
	assert_int_equal(parse(&m, "[\"EVENT\",\"a\"]"), RELAY_MSG_ERR_ARITY);
	assert_int_equal(parse(&m, "[\"EVENT\",\"a\",[]]"), RELAY_MSG_ERR_FIELD);
	assert_int_equal(parse(&m, "[\"EVENT\",5,{}]"), RELAY_MSG_ERR_SUBID);
	assert_int_equal(parse(&m, "[\"EOSE\",\"\"]"), RELAY_MSG_ERR_SUBID);
	assert_int_equal(parse(&m, "[\"NOTICE\",null]"), RELAY_MSG_ERR_FIELD);
	memset(sub, 'x', sizeof(sub));
	snprintf(sub, sizeof(sub), "[\"EOSE\",\"%.*s\"]", 64,
	    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
	assert_int_equal(parse(&m, sub), RELAY_MSG_PARSED);
	relay_msg_free(&m);
	snprintf(sub, sizeof(sub), "[\"EOSE\",\"%.*s\"]", 65,
	    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
	assert_int_equal(parse(&m, sub), RELAY_MSG_ERR_SUBID);
	assert_null(m.root);
	assert_string_equal(relay_msg_err_str(RELAY_MSG_ERR_UNKNOWN),
	    "unknown type");
	assert_string_equal(relay_msg_type_str(RELAY_MSG_NEG_ERR), "NEG-ERR");
}

/* ["EVENT","s",{"x":[0,...]}] with n values in all. */
static char *
frame_of_values(size_t n)
{
	char	*f = malloc(2 * n + 64);
	size_t	 len, i;

	assert_non_null(f);
	len = (size_t)sprintf(f, "[\"EVENT\",\"s\",{\"x\":[");
	for (i = 0; i + 6 < n; i++)
		len += (size_t)sprintf(f + len, "%s0", i ? "," : "");
	strcpy(f + len, "]}]");
	return f;
}

static void
test_values_limit(void **state)
{
	struct relay_msg	 m;
	char			*f, deep[2 * RELAY_MSG_MAX_DEPTH + 64];
	size_t			 n;

	(void)state;
	f = frame_of_values(RELAY_MSG_MAX_VALUES);
	assert_int_equal(relay_msg_parse(&m, f, strlen(f), strlen(f)),
	    RELAY_MSG_PARSED);
	relay_msg_free(&m);
	free(f);
	f = frame_of_values(RELAY_MSG_MAX_VALUES + 1);
	assert_int_equal(relay_msg_parse(&m, f, strlen(f), strlen(f)),
	    RELAY_MSG_ERR_VALUES);
	assert_null(m.root);
	free(f);
	/* The frame is level 1, the event 2, "x" 3. */
	for (int extra = 0; extra <= 1; extra++) {
		n = (size_t)sprintf(deep, "[\"EVENT\",\"s\",{\"x\":");
		memset(deep + n, '[', RELAY_MSG_MAX_DEPTH - 2 + extra);
		n += RELAY_MSG_MAX_DEPTH - 2 + extra;
		memset(deep + n, ']', RELAY_MSG_MAX_DEPTH - 2 + extra);
		n += RELAY_MSG_MAX_DEPTH - 2 + extra;
		strcpy(deep + n, "}]");
		assert_int_equal(parse(&m, deep), extra ?
		    RELAY_MSG_ERR_VALUES : RELAY_MSG_PARSED);
		relay_msg_free(&m);
	}
	assert_string_equal(relay_msg_err_str(RELAY_MSG_ERR_VALUES),
	    "too many values");
}

static void
test_reasons(void **state)
{
	static const struct {
		const char		*text;
		enum relay_reason	 r;
	} cases[] = {
		{ "duplicate: already have this event", RELAY_REASON_DUPLICATE },
		{ "pow: difficulty 25>=24", RELAY_REASON_POW },
		{ "blocked: you are banned", RELAY_REASON_BLOCKED },
		{ "rate-limited: slow down", RELAY_REASON_RATE_LIMITED },
		{ "invalid: bad sig", RELAY_REASON_INVALID },
		{ "restricted: not allowed", RELAY_REASON_RESTRICTED },
		{ "auth-required: please auth", RELAY_REASON_AUTH_REQUIRED },
		{ "error: could not connect", RELAY_REASON_ERROR },
		{ "mute: no one listens", RELAY_REASON_MUTE },
		{ "error:", RELAY_REASON_ERROR },
		{ "Error: capitalised", RELAY_REASON_NONE },
		{ " error: leading space", RELAY_REASON_NONE },
		{ "no prefix here", RELAY_REASON_NONE },
		{ "", RELAY_REASON_NONE },
	};
	size_t	i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_int_equal(relay_reason_parse(cases[i].text,
		    strlen(cases[i].text)), cases[i].r);
	assert_int_equal(relay_reason_parse(NULL, 0), RELAY_REASON_NONE);
	assert_string_equal(relay_reason_str(RELAY_REASON_RATE_LIMITED),
	    "rate-limited");
}

static void
test_build(void **state)
{
	struct filter	f[2];
	struct buf	out;
	char		err[128];
	const char	*a =
	    "{\"authors\":[\"79be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798\"],\"kinds\":[1],\"limit\":500}";

	(void)state;
	assert_int_equal(filter_parse_text(&f[0], a, strlen(a), err,
	    sizeof(err)), 0);
	assert_int_equal(filter_parse_text(&f[1], "{\"since\":5}", 11, err,
	    sizeof(err)), 0);
	buf_init(&out, 4096);
	assert_int_equal(relay_msg_build_req(&out, "d-1", f, 2), 0);
	assert_string_equal(buf_cstr(&out), "[\"REQ\",\"d-1\",{\"authors\":[\"79be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798\"],\"kinds\":[1],\"limit\":500},{\"since\":5}]");
	buf_reset(&out);
	assert_int_equal(relay_msg_build_count(&out, "c", &f[1], 1), 0);
	assert_string_equal(buf_cstr(&out), "[\"COUNT\",\"c\",{\"since\":5}]");
	buf_reset(&out);
	assert_int_equal(relay_msg_build_close(&out, "a\"b"), 0);
	assert_string_equal(buf_cstr(&out), "[\"CLOSE\",\"a\\\"b\"]");
	buf_reset(&out);
	assert_int_equal(relay_msg_build_event(&out, "{\"x\":1}", 7), 0);
	assert_string_equal(buf_cstr(&out), "[\"EVENT\",{\"x\":1}]");
	assert_int_equal(relay_msg_build_event(&out, "[1]", 3), -1);
	buf_reset(&out);
	assert_int_equal(relay_msg_build_neg_open(&out, "n", &f[1],
	    (const uint8_t *)"\x61\x00", 2), 0);
	assert_string_equal(buf_cstr(&out),
	    "[\"NEG-OPEN\",\"n\",{\"since\":5},\"6100\"]");
	buf_reset(&out);
	assert_int_equal(relay_msg_build_neg_msg(&out, "n",
	    (const uint8_t *)"\x61\xab\xff\x0f", 4), 0);
	assert_string_equal(buf_cstr(&out),
	    "[\"NEG-MSG\",\"n\",\"61abff0f\"]");
	buf_reset(&out);
	assert_int_equal(relay_msg_build_neg_close(&out, "n"), 0);
	assert_string_equal(buf_cstr(&out), "[\"NEG-CLOSE\",\"n\"]");

	/* Refusals leave out exactly as it was. */
	assert_int_equal(relay_msg_build_req(&out, "", f, 1), -1);
	assert_int_equal(relay_msg_build_req(&out, "s", f, 0), -1);
	assert_int_equal(relay_msg_build_neg_msg(&out, "n",
	    (const uint8_t *)"a", 0), -1);
	assert_int_equal(relay_msg_build_neg_msg(&out, "n", NULL, 1), -1);
	assert_int_equal(relay_msg_build_neg_open(&out, "n", NULL,
	    (const uint8_t *)"a", 1), -1);
	assert_int_equal(relay_msg_build_neg_msg(&out, "",
	    (const uint8_t *)"a", 1), -1);
	assert_int_equal(relay_msg_build_req(&out,
	    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
	    f, 1), -1);
	assert_string_equal(buf_cstr(&out), "[\"NEG-CLOSE\",\"n\"]");
	buf_free(&out);
	/* A buffer too small: nothing appended. */
	buf_init(&out, 20);
	assert_int_equal(relay_msg_build_req(&out, "d-1", f, 1), -1);
	assert_int_equal(out.len, 0);
	buf_free(&out);
	filter_free(&f[0]);
	filter_free(&f[1]);
}

/*
 * NEG-MSG hex both ways: a binary message built into a frame, parsed and
 * decoded comes back byte for byte; each refusal of the decoder, with the
 * length limit exact at its edge and checked before allocation.
 */
static void
test_neg_hex(void **state)
{
	struct relay_msg	 m;
	struct buf		 out, bin;
	const char		*why;
	uint8_t			*msg;
	size_t			 i, n = 100000;

	(void)state;
	msg = malloc(n);
	assert_non_null(msg);
	for (i = 0; i < n; i++)
		msg[i] = (uint8_t)(i * 7 + 3);
	buf_init(&out, 2 * n + 64);
	assert_int_equal(relay_msg_build_neg_msg(&out, "n9", msg, n), 0);
	assert_int_equal(out.len, strlen("[\"NEG-MSG\",\"n9\",\"\"]") + 2 * n);
	assert_memory_equal(buf_cstr(&out), "[\"NEG-MSG\",\"n9\",\"030a11", 23);
	assert_int_equal(relay_msg_parse(&m, buf_cstr(&out), out.len, out.len),
	    RELAY_MSG_PARSED);
	assert_int_equal(m.type, RELAY_MSG_NEG_MSG);
	assert_int_equal(m.text_len, 2 * n);
	buf_init(&bin, n);
	assert_int_equal(relay_msg_neg_decode(m.text, m.text_len, n, &bin,
	    &why), 0);
	assert_string_equal(why, "");
	assert_int_equal(bin.len, n);
	assert_memory_equal(bin.data, msg, n);
	/* One byte under the message: refused before allocating. */
	buf_free(&bin);
	buf_init(&bin, n);
	assert_int_equal(relay_msg_neg_decode(m.text, m.text_len, n - 1, &bin,
	    &why), -1);
	assert_string_equal(why, "too long");
	assert_null(bin.data);
	assert_int_equal(bin.len, 0);
	relay_msg_free(&m);

	/* A frame too small for the message: nothing appended. */
	buf_reset(&out);
	out.max = 2 * n;
	assert_int_equal(relay_msg_build_neg_msg(&out, "n9", msg, n), -1);
	assert_int_equal(out.len, 0);
	assert_int_equal(relay_msg_build_neg_msg(&out, "n9", msg,
	    NEG_MAX_MSG_BYTES + 1), -1);

	assert_int_equal(relay_msg_neg_decode("61", 2, 1, &bin, &why), 0);
	assert_int_equal(bin.len, 1);
	assert_int_equal(bin.data[0], 0x61);
	assert_int_equal(relay_msg_neg_decode("", 0, 10, &bin, &why), -1);
	assert_string_equal(why, "not hex");
	assert_int_equal(bin.len, 0);
	assert_int_equal(relay_msg_neg_decode("610", 3, 10, &bin, &why), -1);
	assert_string_equal(why, "not hex");
	assert_int_equal(relay_msg_neg_decode("61AB", 4, 10, &bin, &why), -1);
	assert_string_equal(why, "not hex");
	assert_int_equal(bin.len, 0);
	assert_string_equal(buf_cstr(&bin), "");
	assert_int_equal(relay_msg_neg_decode("61zz", 4, 10, &bin, &why), -1);
	assert_string_equal(why, "not hex");
	assert_int_equal(relay_msg_neg_decode("6100", 4, 1, &bin, &why), -1);
	assert_string_equal(why, "too long");
	/* The output buffer's own max refuses too. */
	buf_free(&bin);
	buf_init(&bin, 1);
	assert_int_equal(relay_msg_neg_decode("6100", 4, 10, &bin, &why), -1);
	assert_string_equal(why, "out of memory");
	buf_free(&bin);
	buf_free(&out);
	free(msg);
}

static void
test_build_auth(void **state)
{
	struct nostr_key	 key;
	struct event		 ev;
	struct buf		 out, scratch;
	uint8_t			 sk[32], id[32];
	cJSON			*root, *obj, *tags;
	char			*text;

	(void)state;
	memset(sk, 0x22, sizeof(sk));
	assert_int_equal(key_from_secret(&key, sk), 0);
	buf_init(&out, 8192);
	buf_init(&scratch, EVENT_SERIAL_MAX_BYTES);
	assert_int_equal(relay_msg_build_auth(&out, &key, "ws://127.0.0.1:7000/",
	    "chal\"1", 1700000123, id), 0);
	root = cJSON_Parse(buf_cstr(&out));
	assert_non_null(root);
	assert_int_equal(cJSON_GetArraySize(root), 2);
	assert_string_equal(cJSON_GetArrayItem(root, 0)->valuestring, "AUTH");
	obj = cJSON_DetachItemFromArray(root, 1);
	text = cJSON_PrintUnformatted(obj);
	assert_int_equal(event_validate(&ev, text, strlen(text), 65536,
	    1700000123, &scratch), EVENT_OK);
	assert_int_equal(ev.kind, 22242);
	assert_int_equal(ev.created_at, 1700000123);
	assert_memory_equal(ev.id, id, 32);
	assert_memory_equal(ev.pubkey, key.pubkey, 32);
	assert_string_equal(ev.content, "");
	tags = (cJSON *)ev.tags;
	assert_int_equal(cJSON_GetArraySize(tags), 2);
	assert_string_equal(cJSON_GetArrayItem(cJSON_GetArrayItem(tags, 0),
	    0)->valuestring, "relay");
	assert_string_equal(cJSON_GetArrayItem(cJSON_GetArrayItem(tags, 0),
	    1)->valuestring, "ws://127.0.0.1:7000/");
	assert_string_equal(cJSON_GetArrayItem(cJSON_GetArrayItem(tags, 1),
	    0)->valuestring, "challenge");
	assert_string_equal(cJSON_GetArrayItem(cJSON_GetArrayItem(tags, 1),
	    1)->valuestring, "chal\"1");
	event_free(&ev);
	cJSON_free(text);
	cJSON_Delete(obj);
	cJSON_Delete(root);
	buf_free(&out);
	buf_free(&scratch);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_event),
		cmocka_unit_test(test_event_ingest),
		cmocka_unit_test(test_simple_types),
		cmocka_unit_test(test_closed),
		cmocka_unit_test(test_ok),
		cmocka_unit_test(test_count),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_values_limit),
		cmocka_unit_test(test_reasons),
		cmocka_unit_test(test_build),
		cmocka_unit_test(test_build_auth),
		cmocka_unit_test(test_neg_hex),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
