/*
 * test_ui.c — the surfaces' pure parts with exact values: command paths
 * and word matching, argument checking of API bodies and query strings,
 * the bearer token check, Prometheus text from a fixed status document,
 * the console's line discipline and word splitter, and the human
 * rendering shared by cacheboxctl and the console, and the reading of
 * the kernel's write count.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "core/buf.h"
#include "core/embed.h"
#include "core/limits.h"
#include "core/procio.h"
#include "ui/api.h"
#include "ui/commands.h"
#include "core/secret.h"
#include "ui/lined.h"
#include "ui/render.h"
#include "ui/reply.h"
#include "ui/status.h"

/* ---- command table ----------------------------------------------------- */

static void
test_paths(void **state)
{
	const struct command	*c;

	assert_non_null(c = api_command_for_path("/api/config/set"));
	assert_string_equal(c->name, "config set");
	assert_non_null(c = api_command_for_path("/api/status"));
	assert_string_equal(c->name, "status");
	assert_non_null(c = api_command_for_path("/api/admin-token/set"));
	assert_true(c->flags & CMD_CONSOLE_ONLY);
	assert_non_null(commands_refusal(c, CMD_FROM_WEB));
	assert_non_null(commands_refusal(c, CMD_FROM_CTL));
	assert_null(commands_refusal(c, CMD_FROM_CONSOLE));
	assert_null(api_command_for_path("/api/config"));
	assert_null(api_command_for_path("/api/config/set/"));
	assert_null(api_command_for_path("/api//config/set"));
	assert_null(api_command_for_path("/api/config set"));
	assert_null(api_command_for_path("/api/"));
	assert_null(api_command_for_path("/status"));
	assert_null(api_asset_for_path("/../index.html"));
	assert_null(api_asset_for_path("/www/index.html"));
	assert_non_null(api_asset_for_path("/"));
	assert_string_equal(api_asset_for_path("/")->name, "index.html");
	assert_string_equal(api_content_type("app.js"),
	    "text/javascript; charset=utf-8");
	assert_string_equal(api_content_type("x"), "application/octet-stream");
}

static void
test_match_and_args(void **state)
{
	char			*w1[] = { "config", "set", "log.level", "debug" };
	char			*w2[] = { "relays", "add", "ws://h", "custom", "x" };
	char			*w3[] = { "config" };
	char			 err[256];
	const struct command	*c;
	int			 used = 0;
	cJSON			*a;

	assert_non_null(c = commands_match(4, w1, &used));
	assert_string_equal(c->name, "config set");
	assert_int_equal(used, 2);
	assert_non_null(a = commands_build_args(c, 2, w1 + 2, err, sizeof(err)));
	assert_string_equal(cJSON_GetObjectItem(a, "key")->valuestring,
	    "log.level");
	assert_string_equal(cJSON_GetObjectItem(a, "value")->valuestring,
	    "debug");
	cJSON_Delete(a);
	assert_null(commands_build_args(c, 1, w1 + 2, err, sizeof(err)));
	assert_string_equal(err, "config set: missing value");

	assert_non_null(c = commands_match(5, w2, &used));
	assert_null(commands_build_args(c, 3, w2 + 2, err, sizeof(err)));
	assert_string_equal(err, "relays add: unexpected argument 'x'");
	assert_non_null(a = commands_build_args(c, 1, w2 + 2, err, sizeof(err)));
	assert_null(cJSON_GetObjectItem(a, "role"));	/* optional, absent */
	cJSON_Delete(a);
	assert_null(commands_match(1, w3, &used));
}

/* name=value words bind by name; the rest fill the others in order. */
static void
test_named_args(void **state)
{
	char			*w1[] = { "value=debug", "log.level" };
	char			*w2[] = { "role=custom", "ws://h" };
	char			*w3[] = { "key=a", "key=b", "c" };
	char			*w4[] = { "value=x" };
	char			*w5[] = { "ws://h?role=x" };
	char			 err[256];
	const struct command	*c = commands_find("config set");
	cJSON			*a;

	assert_non_null(a = commands_build_args(c, 2, w1, err, sizeof(err)));
	assert_string_equal(cJSON_GetObjectItem(a, "key")->valuestring,
	    "log.level");
	assert_string_equal(cJSON_GetObjectItem(a, "value")->valuestring,
	    "debug");
	cJSON_Delete(a);
	assert_null(commands_build_args(c, 3, w3, err, sizeof(err)));
	assert_string_equal(err, "config set: key given twice");
	assert_null(commands_build_args(c, 1, w4, err, sizeof(err)));
	assert_string_equal(err, "config set: missing key");

	c = commands_find("relays add");
	assert_non_null(a = commands_build_args(c, 2, w2, err, sizeof(err)));
	assert_string_equal(cJSON_GetObjectItem(a, "url")->valuestring,
	    "ws://h");
	assert_string_equal(cJSON_GetObjectItem(a, "role")->valuestring,
	    "custom");
	cJSON_Delete(a);
	/* '=' inside a value whose prefix names no parameter is a value */
	assert_non_null(a = commands_build_args(c, 1, w5, err, sizeof(err)));
	assert_string_equal(cJSON_GetObjectItem(a, "url")->valuestring,
	    "ws://h?role=x");
	assert_null(cJSON_GetObjectItem(a, "role"));
	cJSON_Delete(a);

	/* a command of many optional parameters takes name=value only */
	c = commands_find("jobs new");
	assert_true(c->flags & CMD_NAMED);
	{
		char	*w6[] = { "kinds=0", "preset=relay-lists",
			    "batch_size=50" };
		char	*w7[] = { "kinds=0", "colour=red" };
		char	*w8[] = { "relay-lists" };
		char	*w9[] = { "kind=3" }, *w10[] = { "autors=ab" };

		assert_non_null(a = commands_build_args(c, 3, w6, err,
		    sizeof(err)));
		assert_string_equal(cJSON_GetObjectItem(a, "preset")->valuestring,
		    "relay-lists");
		assert_string_equal(cJSON_GetObjectItem(a,
		    "batch_size")->valuestring, "50");
		cJSON_Delete(a);
		assert_null(commands_build_args(c, 2, w7, err, sizeof(err)));
		assert_true(strncmp(err, "jobs new: 'colour=red' is not "
		    "name=value with one of: [label] [kinds]", 58) == 0);
		assert_null(commands_build_args(c, 1, w8, err, sizeof(err)));
		assert_true(strncmp(err, "jobs new: 'relay-lists' is not", 30) ==
		    0);
		/* a near miss of a name is answered with the name meant */
		assert_null(commands_build_args(c, 1, w9, err, sizeof(err)));
		assert_true(strncmp(err, "jobs new: no parameter 'kind': did "
		    "you mean kinds=3? (one of: [label] [kinds]", 65) == 0);
		assert_null(commands_build_args(c, 1, w10, err, sizeof(err)));
		assert_true(strncmp(err, "jobs new: no parameter 'autors': did "
		    "you mean authors=ab?", 56) == 0);
	}
	assert_false(commands_takes_body(commands_find("jobs show")));
	assert_true(commands_takes_body(commands_find("jobs dry-run")));
	assert_false(commands_find("jobs dry-run")->flags & CMD_MUTATING);
	assert_true(commands_takes_body(commands_find("jobs cancel")));
}

/* A mistyped command name is answered with the command meant. */
static void
test_near_commands(void **state)
{
	char		*w1[] = { "stauts" }, *w2[] = { "jobs", "lsit", "3" };
	char		*w3[] = { "relay", "list" }, *w4[] = { "jobs", "zzzz" };
	char		*w5[] = { "ky" }, *w6[] = { "kez" }, *w7[] = { "lgo",
			    "level" }, *w8[] = { "frobnicate" };
	char		 msg[320];

	assert_string_equal(commands_near(1, w1)->name, "status");
	assert_string_equal(commands_near(3, w2)->name, "jobs list");
	assert_string_equal(commands_near(2, w3)->name, "relays list");
	assert_null(commands_near(2, w4));
	assert_string_equal(commands_near(1, w5)->name, "key");
	assert_string_equal(commands_near(1, w6)->name, "key");
	assert_string_equal(commands_near(2, w7)->name, "log level");
	assert_null(commands_near(1, w8));
	assert_string_equal(commands_unknown(1, w1, msg, sizeof(msg)),
	    "unknown command 'stauts': did you mean 'status'?");
	assert_string_equal(commands_unknown(3, w2, msg, sizeof(msg)),
	    "unknown command 'jobs lsit': did you mean 'jobs list'?");
	assert_string_equal(commands_unknown(2, w3, msg, sizeof(msg)),
	    "unknown command 'relay list': did you mean 'relays list'?");
	assert_string_equal(commands_unknown(2, w4, msg, sizeof(msg)),
	    "unknown command 'jobs zzzz'");
	assert_string_equal(commands_unknown(1, w8, msg, sizeof(msg)),
	    "unknown command 'frobnicate'");
}

/* A refusal is {"error": text} alone; an "error" beside others is data. */
static void
test_is_error(void **state)
{
	cJSON	*r = commands_error("no %s", "way"), *o;

	assert_true(commands_is_error(r));
	assert_string_equal(cJSON_GetObjectItem(r, "error")->valuestring,
	    "no way");
	cJSON_Delete(r);
	o = cJSON_Parse("{\"job\":3,\"error\":\"2 batches failed\"}");
	assert_false(commands_is_error(o));
	cJSON_Delete(o);
	o = cJSON_Parse("{\"error\":null}");
	assert_false(commands_is_error(o));
	cJSON_Delete(o);
	o = cJSON_Parse("{}");
	assert_false(commands_is_error(o));
	cJSON_Delete(o);
}

/* ---- API arguments ----------------------------------------------------- */

static cJSON *
body(const char *cmd, const char *text, char *err, size_t errlen)
{
	err[0] = '\0';
	return api_body_args(commands_find(cmd), text, strlen(text), err, errlen);
}

static void
test_body_args(void **state)
{
	char	 err[256];
	cJSON	*a;

	assert_non_null(a = body("config set",
	    " {\"key\":\"k\",\"value\":250} \n", err, sizeof(err)));
	assert_string_equal(cJSON_GetObjectItem(a, "value")->valuestring, "250");
	cJSON_Delete(a);
	assert_non_null(a = body("config set", "{\"key\":\"k\",\"value\":true}",
	    err, sizeof(err)));
	assert_string_equal(cJSON_GetObjectItem(a, "value")->valuestring, "true");
	cJSON_Delete(a);
	assert_non_null(a = body("log level", "", err, sizeof(err)));
	assert_null(a->child);
	cJSON_Delete(a);

	assert_null(body("config set", "{\"key\":", err, sizeof(err)));
	assert_string_equal(err, "malformed JSON body");
	assert_null(body("config set", "{\"key\":\"a\",\"value\":\"b\"}x", err,
	    sizeof(err)));
	assert_string_equal(err, "malformed JSON body: text after the object");
	assert_null(body("config set", "[]", err, sizeof(err)));
	assert_string_equal(err, "the body must be a JSON object");
	assert_null(body("config set", "{\"key\":\"a\"}", err, sizeof(err)));
	assert_string_equal(err, "config set: missing \"value\"");
	assert_null(body("config set", "{\"key\":\"a\",\"value\":null}", err,
	    sizeof(err)));
	assert_string_equal(err, "config set: argument 'value' must be a string");
	assert_null(body("config set", "{\"key\":\"a\",\"key\":\"b\","
	    "\"value\":\"c\"}", err, sizeof(err)));
	assert_string_equal(err, "config set: argument 'key' given twice");
	assert_null(body("status", "{\"x\":1}", err, sizeof(err)));
	assert_string_equal(err, "status: unknown argument 'x' (takes: no "
	    "arguments)");
	/* a body that is not NUL-terminated is read to its length only */
	assert_non_null(a = api_body_args(commands_find("log level"),
	    "{}garbage", 2, err, sizeof(err)));
	cJSON_Delete(a);
}

static void
test_auth(void **state)
{
	char		 tok[SECRET_HASH_TEXT_MAX];

	/* What the daemon keeps is the hash; a wrong or malformed one fails. */
	assert_int_equal(secret_hash("s3cret-token-xyz", tok, sizeof(tok)), 0);
	assert_int_equal(api_auth_check("s3cret-token-xyz",
	    "Bearer s3cret-token-xyz"), API_AUTH_WRONG);
	assert_int_equal(api_auth_check("", "Bearer x"), API_AUTH_NO_TOKEN);
	assert_int_equal(api_auth_check(NULL, "Bearer x"), API_AUTH_NO_TOKEN);
	assert_int_equal(api_auth_check(tok, NULL), API_AUTH_MISSING);
	assert_int_equal(api_auth_check(tok, "Basic s3cret-token-xyz"),
	    API_AUTH_MISSING);
	assert_int_equal(api_auth_check(tok, "Bearer "), API_AUTH_MISSING);
	assert_int_equal(api_auth_check(tok, "Bearer s3cret-token-xy"),
	    API_AUTH_WRONG);
	assert_int_equal(api_auth_check(tok, "Bearer s3cret-token-xyzz"),
	    API_AUTH_WRONG);
	assert_int_equal(api_auth_check(tok, "Bearer S3cret-token-xyz"),
	    API_AUTH_WRONG);
	assert_int_equal(api_auth_check(tok, "Bearer s3cret-token-xyz"),
	    API_AUTH_OK);
	assert_int_equal(api_auth_check(tok, "bearer  s3cret-token-xyz "),
	    API_AUTH_OK);
}

static void
test_metrics(void **state)
{
	const char	*st = "{\"version\":\"0.1.0\",\"uptime_s\":7,"
	    "\"idle\":false,\"backfill\":{\"authors_total\":5,"
	    "\"authors_complete\":3,\"authors_incomplete\":1,"
	    "\"authors_draining\":1},\"store\":{\"events\":12},"
	    "\"relays\":[{\"url\":\"ws://a\",\"role\":\"bootstrap\","
	    "\"state\":\"open\",\"events\":5,\"last_error\":null},"
	    "{\"url\":\"ws://b\\\"q\",\"role\":\"outbox\",\"state\":\"backoff\","
	    "\"events\":0,\"last_error\":\"x\"}],\"ingest\":{\"received\":9},"
	    "\"uplink\":{\"state\":\"off\",\"forward_rate\":2.5,"
	    "\"forwarded_session\":4},\"new_part\":{\"things_s\":3}}";
	const char	*want =
	    "# HELP cachebox_info Version of cacheboxd.\n"
	    "# TYPE cachebox_info gauge\n"
	    "cachebox_info{version=\"0.1.0\"} 1\n"
	    "# HELP cachebox_uptime_seconds Seconds since cacheboxd started.\n"
	    "# TYPE cachebox_uptime_seconds gauge\n"
	    "cachebox_uptime_seconds 7\n"
	    "# HELP cachebox_idle 1 when no sync work is left (follow lists "
	    "read, every author complete or recorded incomplete, no job to "
	    "run, no id for recovery to fetch again within recovery.settle_s, "
	    "retention settled, and a configured uplink has taken every "
	    "queued event; events left queued while no uplink is configured, "
	    "in cachebox_inbox_pending, do not count), else 0.\n"
	    "# TYPE cachebox_idle gauge\n"
	    "cachebox_idle 0\n"
	    "# HELP cachebox_backfill_authors Followed authors by backfill "
	    "state: complete on every relay, recorded incomplete on some "
	    "relay, or still draining.\n"
	    "# TYPE cachebox_backfill_authors gauge\n"
	    "cachebox_backfill_authors{state=\"complete\"} 3\n"
	    "cachebox_backfill_authors{state=\"incomplete\"} 1\n"
	    "cachebox_backfill_authors{state=\"draining\"} 1\n"
	    "# HELP cachebox_store_events Events in the local store.\n"
	    "# TYPE cachebox_store_events gauge\n"
	    "cachebox_store_events 12\n"
	    "# HELP cachebox_relay_state 1, labelled with the relay "
	    "connection's state.\n"
	    "# TYPE cachebox_relay_state gauge\n"
	    "cachebox_relay_state{url=\"ws://a\",role=\"bootstrap\","
	    "state=\"open\"} 1\n"
	    "cachebox_relay_state{url=\"ws://b\\\"q\",role=\"outbox\","
	    "state=\"backoff\"} 1\n"
	    "# HELP cachebox_relay_events_total Events received from the "
	    "relay.\n"
	    "# TYPE cachebox_relay_events_total counter\n"
	    "cachebox_relay_events_total{url=\"ws://a\",role=\"bootstrap\"} 5\n"
	    "cachebox_relay_events_total{url=\"ws://b\\\"q\",role=\"outbox\"} 0\n"
	    "# HELP cachebox_ingest_received_total Events handed to ingest "
	    "(relays, jobs, recovery, the box's relay clients, imports); each "
	    "lands in one of stored .. errors.\n"
	    "# TYPE cachebox_ingest_received_total counter\n"
	    "cachebox_ingest_received_total 9\n"
	    "# HELP cachebox_uplink_state 1, labelled with the uplink's "
	    "state.\n"
	    "# TYPE cachebox_uplink_state gauge\n"
	    "cachebox_uplink_state{state=\"off\"} 1\n"
	    "# HELP cachebox_uplink_forwarded_total Events the uplink accepted "
	    "since the daemon started.\n"
	    "# TYPE cachebox_uplink_forwarded_total counter\n"
	    "cachebox_uplink_forwarded_total 4\n"
	    "# HELP cachebox_new_part_things_s Status field "
	    "new_part.things_s, not described yet.\n"
	    "# TYPE cachebox_new_part_things_s gauge\n"
	    "cachebox_new_part_things_s 3\n";
	cJSON		*doc = cJSON_Parse(st);
	struct buf	 out;

	assert_non_null(doc);
	buf_init(&out, 1 << 16);
	assert_int_equal(api_metrics(doc, &out), 0);
	assert_string_equal(buf_cstr(&out), want);
	buf_free(&out);
	buf_init(&out, 40);	/* too small: refused, never overrun */
	assert_int_equal(api_metrics(doc, &out), -1);
	assert_true(out.len <= 40);
	buf_free(&out);
	cJSON_Delete(doc);
}

/* ---- the console's line discipline ------------------------------------- */

/* Feed s; the events in order into evs (as letters), the echo into echo. */
static void
feed(struct lined *ld, const char *s, size_t n, char *evs, struct buf *echo)
{
	static const char	 letter[] = { '.', 'L', 'C', 'T' };
	size_t			 i, k = 0;

	for (i = 0; i < n; i++) {
		enum lined_event ev = lined_feed(ld, (unsigned char)s[i], echo);

		if (ev != LINED_NONE)
			evs[k++] = letter[ev];
	}
	evs[k] = '\0';
}

static void
test_lined(void **state)
{
	struct lined	ld;
	struct buf	echo;
	char		evs[64], big[CONSOLE_MAX_LINE + 2];

	lined_init(&ld);
	buf_init(&echo, 1 << 16);
	feed(&ld, "log.levxx\b\x7f" "el\r", 14, evs, &echo);
	assert_string_equal(evs, "L");
	assert_string_equal(ld.line, "log.level");
	assert_string_equal(buf_cstr(&echo), "log.levxx\b \b\b \bel\r\n");

	buf_reset(&echo);
	feed(&ld, "\nab\x03" "cd\r\n", 8, evs, &echo);	/* LF after CR is swallowed */
	assert_string_equal(evs, "CL");
	assert_string_equal(ld.line, "cd");
	assert_string_equal(buf_cstr(&echo), "ab^C\r\ncd\r\n");

	buf_reset(&echo);
	feed(&ld, "\xc3\xa9\b" "x\x1b[1;5Dy\x1bOA\n", 15, evs, &echo);
	assert_string_equal(evs, "L");
	assert_string_equal(ld.line, "xy");	/* é erased whole, keys skipped */

	memset(big, 'a', sizeof(big));
	big[sizeof(big) - 1] = '\r';
	feed(&ld, big, sizeof(big), evs, NULL);
	assert_string_equal(evs, "T");
	assert_string_equal(ld.line, "");
	feed(&ld, "ok\r", 3, evs, NULL);	/* the next line is fine again */
	assert_string_equal(evs, "L");
	assert_string_equal(ld.line, "ok");
	buf_free(&echo);
}

static void
test_split(void **state)
{
	char		 line[128], *argv[4];
	const char	*err = NULL;

	strcpy(line, "  config  set\tk \"a b\\\"c\" ");
	assert_int_equal(lined_split(line, argv, 4, &err), 4);
	assert_string_equal(argv[0], "config");
	assert_string_equal(argv[1], "set");
	assert_string_equal(argv[2], "k");
	assert_string_equal(argv[3], "a b\"c");
	strcpy(line, "set x '' y'z w'");
	assert_int_equal(lined_split(line, argv, 4, &err), 4);
	assert_string_equal(argv[2], "");
	assert_string_equal(argv[3], "yz w");
	strcpy(line, "a \"b");
	assert_int_equal(lined_split(line, argv, 4, &err), -1);
	assert_string_equal(err, "unclosed quote");
	strcpy(line, "a b c d e");
	assert_int_equal(lined_split(line, argv, 4, &err), -1);
	assert_string_equal(err, "too many words");
	strcpy(line, " \t ");
	assert_int_equal(lined_split(line, argv, 4, &err), 0);
}

static void
test_render(void **state)
{
	cJSON		*v = cJSON_Parse("{\"a\":1,\"b\":true,\"c\":null,"
	    "\"d\":[{\"x\":\"y\"}],\"e\":[],\"f\":[\"s\"],\"g\":1.5}");
	struct buf	 out;

	buf_init(&out, 1024);
	assert_int_equal(render_human(&out, v, "\r\n"), 0);
	assert_string_equal(buf_cstr(&out), "a: 1\r\nb: yes\r\nc: -\r\nd:\r\n"
	    "  [0]\r\n    x: y\r\ne:\r\n  (none)\r\nf:\r\n  s\r\ng: 1.5\r\n");
	buf_free(&out);
	cJSON_Delete(v);

	/* help: a command of name=value words lists its names apart */
	v = cJSON_Parse("{\"commands\":[{\"name\":\"jobs show\",\"params\":"
	    "\"job\",\"help\":\"one\",\"named\":false},{\"name\":\"jobs new\","
	    "\"params\":\"[label] [kinds]\",\"help\":\"plan\",\"named\":true}]}");
	buf_init(&out, 4096);
	assert_int_equal(render_answer(&out, "help", v, 0, "\n"), 0);
	assert_string_equal(buf_cstr(&out),
	    "  jobs show job                one\n"
	    "  jobs new name=value...       plan\n"
	    "                               names: [label] [kinds]\n");
	buf_free(&out);
	cJSON_Delete(v);
}

/* Times as UTC dates, byte counts and durations with units, by name. */
static void
test_render_units(void **state)
{
	cJSON		*v = cJSON_Parse("{\"created_at\":1704067200,"
	    "\"until\":0,\"since\":1700000000,\"bytes\":512,"
	    "\"rss_bytes\":11010048,\"max_bytes\":4294967296,"
	    "\"bytes_out\":2048,\"uptime_s\":3725,\"idle_s\":45,"
	    "\"pace_ms\":1000,\"events\":1704067200,\"times\":[]}");
	struct buf	 out;

	buf_init(&out, 1024);
	assert_int_equal(render_human(&out, v, "\n"), 0);
	assert_string_equal(buf_cstr(&out),
	    "created_at: 2024-01-01 00:00:00 UTC\nuntil: -\n"
	    "since: 2023-11-14 22:13:20 UTC\nbytes: 512 B\n"
	    "rss_bytes: 10.5 MiB\nmax_bytes: 4 GiB\nbytes_out: 2 KiB\n"
	    "uptime_s: 1h 2m\nidle_s: 45s\npace_ms: 1000 ms\n"
	    "events: 1704067200\ntimes:\n  (none)\n");
	buf_free(&out);
	cJSON_Delete(v);
}

/* config list and relays list: a line per key and per relay, not a dump. */
static void
test_render_lists(void **state)
{
	cJSON		*c = cJSON_Parse("{\"config\":[{\"key\":\"a.b\","
	    "\"value\":\"5\",\"source\":\"default\",\"unit\":\"ms\"},"
	    "{\"key\":\"follow.roots\",\"value\":\"\",\"source\":"
	    "\"database\",\"unit\":\"\"},{\"key\":\"http.listen\","
	    "\"value\":\"x:1\",\"source\":\"command line\",\"pinned_by\":"
	    "\"--set on the command line\",\"unit\":\"\"}]}");
	cJSON		*r = cJSON_Parse("{\"relays\":[{\"url\":\"ws://a\","
	    "\"role\":\"bootstrap\",\"state\":\"backoff\",\"health\":"
	    "\"never opened\",\"events\":0,\"last_error\":\"refused\"},"
	    "{\"url\":\"wss://bb\",\"role\":\"outbox\",\"state\":"
	    "\"open\",\"events\":205,\"last_error\":null}]}");
	struct buf	 out;

	buf_init(&out, 4096);
	assert_int_equal(render_answer(&out, "config list", c, 0, "\n"), 0);
	assert_string_equal(buf_cstr(&out),
	    "a.b           5 ms\n"
	    "follow.roots  (empty)  (database)\n"
	    "http.listen   x:1  (pinned by --set on the command line)\n");
	buf_reset(&out);
	assert_int_equal(render_answer(&out, "relays list", r, 0, "\n"), 0);
	assert_string_equal(buf_cstr(&out), "2 relays\n"
	    "ws://a    bootstrap  backoff     never opened  events 0  last "
	    "error: refused\n"
	    "wss://bb  outbox     open        events 205\n");
	buf_reset(&out);
	assert_int_equal(render_answer(&out, "relays list", r, RENDER_JSON,
	    "\n"), 0);
	assert_non_null(strstr(buf_cstr(&out), "\"events\":\t205"));
	buf_free(&out);
	cJSON_Delete(c);
	cJSON_Delete(r);
}

/*
 * follows: one line per author unless --relays; the flags words; events
 * is what the store holds of the author, not what its drain received.
 */
static void
test_render_follows(void **state)
{
	cJSON		*v = cJSON_Parse("{\"follows\":[{\"npub\":\"npub1a\","
	    "\"is_root\":true,\"stale\":false,\"events_fetched\":0,"
	    "\"events_stored\":205,"
	    "\"state\":\"draining\",\"relays_complete\":1,"
	    "\"relays_incomplete\":0,\"relays\":[{\"url\":\"ws://a\"},"
	    "{\"url\":\"ws://b\"}]},{\"npub\":\"npub1b\",\"is_root\":false,"
	    "\"stale\":true,\"events_fetched\":0,\"state\":\"incomplete\","
	    "\"reason\":\"no relay known\",\"relays\":[]}],"
	    "\"truncated\":false}");
	char		 a[][16] = { "follows", "--relays", "x", "--json" };
	char		*argv[] = { a[0], a[1], a[2], a[3] };
	cJSON		*args = cJSON_Parse("{\"author\":\"npub1a\"}");
	unsigned	 flags = 0;
	int		 argc = 4;
	struct buf	 out;

	buf_init(&out, 4096);
	assert_int_equal(render_answer(&out, "follows", v, 0, "\n"), 0);
	assert_string_equal(buf_cstr(&out), "2 authors: 0 complete, 1 "
	    "draining, 1 incomplete (follows --relays: each relay)\n"
	    "npub1a  draining    relays 1/2  events 205  root\n"
	    "npub1b  incomplete  relays 0/0  events 0  stale  no relay known\n");
	buf_reset(&out);
	/* a page of a longer list says how many of how many it shows */
	cJSON_AddNumberToObject(v, "total", 30);
	cJSON_AddNumberToObject(v, "offset", 3);
	assert_int_equal(render_answer(&out, "follows", v, 0, "\n"), 0);
	assert_true(strncmp(buf_cstr(&out), "2 of 30 followed authors shown "
	    "(4-5), of them 0 complete, 1 draining, 1 incomplete", 79) == 0);
	buf_reset(&out);
	cJSON_AddStringToObject(v, "q", "auth");
	assert_int_equal(render_answer(&out, "follows", v, 0, "\n"), 0);
	assert_true(strncmp(buf_cstr(&out), "2 of 30 matching authors shown "
	    "(4-5)", 36) == 0);
	cJSON_DeleteItemFromObject(v, "total");
	cJSON_DeleteItemFromObject(v, "offset");
	cJSON_DeleteItemFromObject(v, "q");
	buf_reset(&out);
	assert_int_equal(render_answer(&out, "follows", v, RENDER_RELAYS,
	    "\n"), 0);
	assert_non_null(strstr(buf_cstr(&out), "      url: ws://b\n"));
	buf_free(&out);

	assert_int_equal(render_take_flags(&argc, argv),
	    RENDER_JSON | RENDER_RELAYS);
	assert_int_equal(argc, 2);
	assert_string_equal(argv[0], "follows");
	assert_string_equal(argv[1], "x");
	assert_null(render_flags_check("follows", NULL, &flags));
	assert_int_equal(flags, 0);
	assert_null(render_flags_check("follows", args, &flags));
	assert_int_equal(flags, RENDER_RELAYS);
	assert_non_null(render_flags_check("status", NULL, &flags));
	cJSON_Delete(args);
	cJSON_Delete(v);
}

/*
 * status for a person: a line per part, what the box waits for at the
 * top, the relays not open named, not a dump of ~180 member lines.
 */
static void
test_render_status(void **state)
{
	cJSON		*v = cJSON_Parse("{\"version\":\"0.1.0\",\"uptime_s\":"
	    "3725,\"rss_bytes\":11010048,\"idle\":false,\"npub\":\"npub1x\","
	    "\"backfill\":{\"authors_total\":30,\"authors_complete\":25,"
	    "\"authors_incomplete\":2,\"authors_draining\":3},\"store\":{"
	    "\"events\":20090,\"bytes\":8912896,\"state\":\"ok\","
	    "\"retention\":\"within\",\"evicted\":0,\"max_bytes\":"
	    "4294967296},\"relays\":[{\"url\":\"ws://a\",\"role\":"
	    "\"bootstrap\",\"state\":\"open\",\"health\":\"connected\"},"
	    "{\"url\":\"ws://b\",\"role\":\"outbox\",\"state\":\"open\","
	    "\"health\":\"connected\"},{\"url\":\"ws://c\",\"role\":"
	    "\"bootstrap\",\"state\":\"backoff\",\"health\":\"never opened"
	    "\",\"last_error\":\"refused\"}],\"ingest\":{\"rate_per_s\":"
	    "12.5,\"stored_24h\":20090,\"stored_7d\":31000},"
	    "\"rss_budget_bytes\":16777216,\"recovery\":{\"pending\":17,"
	    "\"expired\":3,\"relays\":1,\"recovered\":5,\"waiting\":{"
	    "\"relay\":\"ws://b\",\"ids\":17,\"until\":1704067200}},"
	    "\"waiting\":\"waiting for 17 ids from relay ws://b until 00:00 "
	    "UTC\",\"jobs\":{\"pending\":1,\"running\":1,\"complete\":4,"
	    "\"incomplete\":0,\"failed\":1,\"cancelled\":0,\"scheduled\":0,"
	    "\"current\":{\"job\":7,\"label\":\"reacts\",\"batches_total\":"
	    "10,\"batches_done\":4,\"events_fetched\":1234}},"
	    "\"relay_endpoint\":{\"listen\":\"0.0.0.0:7777\",\"clients\":2,"
	    "\"max_clients\":64,\"accept\":\"none\"},\"uplink\":{\"url\":"
	    "\"ws://up\",\"state\":\"open\",\"last_error\":null},\"inbox\":"
	    "{\"pending\":1500,\"forwarded\":20,\"rejected\":1}}");
	struct buf	 out;

	buf_init(&out, 8192);
	assert_int_equal(render_answer(&out, "status", v, 0, "\n"), 0);
	assert_string_equal(buf_cstr(&out),
	    "cachebox 0.1.0, up 1h 2m: working (backfill: 3 authors draining; "
	    "job 7 running; uplink: 1,500 to forward; waiting for 17 ids from "
	    "relay ws://b until 00:00 UTC)\n"
	    "backfill  25 of 30 authors complete, 2 incomplete, 3 draining\n"
	    "store     20,090 events, 8.5 MiB of 4 GiB\n"
	    "stored    20,090 events in 24 h, 31,000 in 7 days; 12.5 events/s "
	    "now\n"
	    "relays    3: 2 connected, 1 never opened\n"
	    "          ws://c  bootstrap  never opened  last error: refused\n"
	    "uplink    ws://up  open; 1,500 pending, 20 forwarded, 1 dead "
	    "letter\n"
	    "jobs      job 7 \"reacts\" running: 4 of 10 batches, 1,234 events; "
	    "1 pending, 4 complete, 1 failed\n"
	    "recovery  17 ids pending on 1 relay, 3 given up; 5 recovered since "
	    "start\n"
	    "relay     0.0.0.0:7777: 2 of 64 clients, read-only\n"
	    "memory    10.5 MiB of 16 MiB\n"
	    "key       npub1x\n"
	    "(status --json: every field)\n");
	buf_reset(&out);
	/* nothing but recovery's wait: that is what the first line says */
	cJSON_ReplaceItemInObject(cJSON_GetObjectItem(v, "backfill"),
	    "authors_draining", cJSON_CreateNumber(0));
	cJSON_ReplaceItemInObject(cJSON_GetObjectItem(v, "jobs"), "current",
	    cJSON_CreateNull());
	cJSON_ReplaceItemInObject(cJSON_GetObjectItem(v, "uplink"), "url",
	    cJSON_CreateString(""));
	assert_int_equal(render_answer(&out, "status", v, 0, "\n"), 0);
	assert_true(strncmp(buf_cstr(&out), "cachebox 0.1.0, up 1h 2m: waiting "
	    "for 17 ids from relay ws://b until 00:00 UTC\nbackfill  25 of 30 "
	    "authors complete, 2 incomplete\n", 99) == 0);
	buf_reset(&out);
	/* idle, nobody followed, nothing else configured */
	cJSON_Delete(v);
	v = cJSON_Parse("{\"version\":\"0.1.0\",\"uptime_s\":5,\"idle\":true,"
	    "\"backfill\":{\"authors_total\":0},\"relays\":[],\"jobs\":{"
	    "\"current\":null},\"uplink\":{\"url\":\"\"}}");
	assert_int_equal(render_answer(&out, "status", v, 0, "\n"), 0);
	assert_non_null(strstr(buf_cstr(&out), "cachebox 0.1.0, up 5s: idle\n"
	    "backfill  nobody followed yet (roots add KEY)\n"));
	assert_non_null(strstr(buf_cstr(&out), "relays    none yet\n"
	    "uplink    none configured: events stay in this box\n"
	    "jobs      none\n"));
	buf_free(&out);
	cJSON_Delete(v);
}

/*
 * jobs list a line per job; jobs show a few lines and its unfinished
 * batches grouped (80 cancelled batches of one relay are one line); the
 * groups past RENDER_JOB_GROUPS only counted.
 */
static void
test_render_jobs(void **state)
{
	cJSON		*l = cJSON_Parse("{\"jobs\":[{\"job\":2,\"label\":"
	    "\"reacts\",\"status\":\"cancelled\",\"summary\":\"kinds:7 "
	    "authors:30\",\"batches_done\":0,\"batches_total\":80,"
	    "\"events_fetched\":0,\"every\":null,\"error\":null},{\"job\":1,"
	    "\"label\":\"notes\",\"status\":\"complete\",\"summary\":"
	    "\"kinds:1\",\"batches_done\":6,\"batches_total\":6,"
	    "\"events_fetched\":19753,\"every\":\"1d\",\"error\":null}]}");
	cJSON		*j, *b;
	struct buf	 out;
	char		 text[4096];
	int		 i;

	buf_init(&out, 65536);
	assert_int_equal(render_answer(&out, "jobs list", l, 0, "\n"), 0);
	assert_string_equal(buf_cstr(&out),
	    "2 jobs: 1 cancelled, 1 complete\n"
	    "   2  cancelled      0/80 batches          0 events  reacts: "
	    "kinds:7 authors:30\n"
	    "   1  complete        6/6 batches     19,753 events  notes: kinds:1"
	    "  every 1d\n");
	buf_reset(&out);
	cJSON_Delete(l);
	l = cJSON_Parse("{\"jobs\":[]}");
	assert_int_equal(render_answer(&out, "jobs list", l, 0, "\n"), 0);
	assert_string_equal(buf_cstr(&out), "no jobs yet (jobs new)\n");
	buf_reset(&out);

	j = cJSON_Parse("{\"job\":2,\"label\":\"reacts\",\"status\":"
	    "\"cancelled\",\"summary\":\"kinds:7 authors:30\",\"preset\":"
	    "\"\",\"authors_source\":\"followed\",\"only_missing_kind0\":"
	    "false,\"batch_mode\":\"authors\",\"batch_size\":3,\"authors\":"
	    "240,\"relay_mode\":\"bootstrap\",\"relay_list\":\"\","
	    "\"batches_total\":80,\"batches_done\":0,\"events_fetched\":0,"
	    "\"events_new\":0,\"requests\":1,\"error\":null,\"created_at\":"
	    "1704067200,\"started_at\":1704067201,\"completed_at\":null,"
	    "\"created_by\":\"web\",\"since\":null,\"until\":1704067201,"
	    "\"every\":null,\"batch_counts\":{\"pending\":0,\"complete\":0,"
	    "\"cancelled\":80},\"batches\":[],\"batches_truncated\":false}");
	b = cJSON_GetObjectItem(j, "batches");
	for (i = 0; i < 80; i++) {
		snprintf(text, sizeof(text), "{\"index\":%d,\"relay\":"
		    "\"ws://a\",\"status\":\"cancelled\",\"reason\":null}", i);
		cJSON_AddItemToArray(b, cJSON_Parse(text));
	}
	assert_int_equal(render_answer(&out, "jobs show", j, 0, "\n"), 0);
	assert_string_equal(buf_cstr(&out),
	    "job 2 \"reacts\": cancelled\n"
	    "filter    kinds:7 authors:30\n"
	    "authors   240 (the followed set), batches of 3, bootstrap relays\n"
	    "window    since -, until 2024-01-01 00:00:01 UTC\n"
	    "progress  0 of 80 batches done: 80 cancelled; 0 events fetched "
	    "(0 new), 1 request\n"
	    "created   2024-01-01 00:00:00 UTC by web; started 2024-01-01 "
	    "00:00:01 UTC; completed -\n"
	    "unfinished batches: 80\n"
	    "  80 cancelled  ws://a  batches 0-79\n");
	buf_reset(&out);
	/* twelve groups: ten shown, two counted */
	cJSON_DeleteItemFromObject(j, "batches");
	b = cJSON_AddArrayToObject(j, "batches");
	for (i = 0; i < 24; i++) {
		snprintf(text, sizeof(text), "{\"index\":%d,\"relay\":"
		    "\"ws://r%d\",\"status\":\"incomplete\",\"reason\":null,"
		    "\"why\":\"burst\"}", i, i % 12);
		cJSON_AddItemToArray(b, cJSON_Parse(text));
	}
	assert_int_equal(render_answer(&out, "jobs show", j, 0, "\n"), 0);
	assert_non_null(strstr(buf_cstr(&out), "unfinished batches: 24\n"
	    "  2 incomplete  ws://r0  batches 0...12  burst\n"));
	assert_non_null(strstr(buf_cstr(&out), "  2 incomplete  ws://r9  "
	    "batches 9...21  burst\n  and 2 more groups (--json lists every "
	    "batch)\n"));
	buf_free(&out);
	cJSON_Delete(l);
	cJSON_Delete(j);
}

/* recovery: a count, then a line per relay; nothing pending says so. */
static void
test_render_recovery(void **state)
{
	cJSON		*v = cJSON_Parse("{\"recovery\":[{\"relay\":\"ws://a\","
	    "\"pending\":12,\"in_flight\":false,\"next_attempt\":1704067200,"
	    "\"expired\":0,\"attempts\":2,\"recovered\":5,\"health\":"
	    "\"connected\",\"negentropy\":\"yes\"},{\"relay\":\"wss://bb\","
	    "\"pending\":1,\"in_flight\":true,\"next_attempt\":0,"
	    "\"expired\":3,\"attempts\":1,\"recovered\":0,\"health\":"
	    "\"connected\",\"negentropy\":\"yes\"}],\"pending\":13,"
	    "\"expired\":3}");
	cJSON		*e = cJSON_Parse("{\"recovery\":[],\"pending\":0,"
	    "\"expired\":0}");
	struct buf	 out;

	buf_init(&out, 4096);
	assert_int_equal(render_answer(&out, "recovery", v, 0, "\n"), 0);
	assert_string_equal(buf_cstr(&out),
	    "13 ids pending on 2 relays, 3 given up\n"
	    "ws://a    12 pending, next attempt 2024-01-01 00:00:00 UTC; "
	    "2 attempts, 5 recovered; connected; NIP-77 yes\n"
	    "wss://bb  1 pending, fetching now, 3 given up; 1 attempt, "
	    "0 recovered; connected; NIP-77 yes\n");
	buf_reset(&out);
	assert_int_equal(render_answer(&out, "recovery", e, 0, "\n"), 0);
	assert_string_equal(buf_cstr(&out), "nothing to recover: every id a "
	    "relay reported has arrived\n");
	buf_free(&out);
	cJSON_Delete(v);
	cJSON_Delete(e);
}

/* ---- write budget ------------------------------------------------------ */

static void
io_file(const char *path, const char *text)
{
	FILE	*f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

static void
test_io_write_bytes(void **state)
{
	char	 dir[] = "/tmp/test_ui.XXXXXX", path[64];

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/io", dir);
	io_file(path, "rchar: 6976\nwchar: 512\nsyscr: 10\nsyscw: 1\n"
	    "read_bytes: 0\nwrite_bytes: 1234567890123\n"
	    "cancelled_write_bytes: 123\n");
	assert_int_equal(procio_write_bytes(path), 1234567890000LL);
	/* more cancelled than written (a file truncated before writeback) */
	io_file(path, "write_bytes: 4096\ncancelled_write_bytes: 8192\n");
	assert_int_equal(procio_write_bytes(path), 0);
	/* wchar is no disk write: without write_bytes the count is unknown */
	io_file(path, "rchar: 1\nwchar: 4096\n");
	assert_int_equal(procio_write_bytes(path), -1);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(procio_write_bytes(path), -1);
	assert_int_equal(rmdir(dir), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_paths),
		cmocka_unit_test(test_render_units),
		cmocka_unit_test(test_render_follows),
		cmocka_unit_test(test_render_lists),
		cmocka_unit_test(test_render_status),
		cmocka_unit_test(test_render_jobs),
		cmocka_unit_test(test_render_recovery),
		cmocka_unit_test(test_match_and_args),
		cmocka_unit_test(test_named_args),
		cmocka_unit_test(test_near_commands),
		cmocka_unit_test(test_is_error),
		cmocka_unit_test(test_body_args),
		cmocka_unit_test(test_auth),
		cmocka_unit_test(test_metrics),
		cmocka_unit_test(test_lined),
		cmocka_unit_test(test_split),
		cmocka_unit_test(test_render),
		cmocka_unit_test(test_io_write_bytes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
