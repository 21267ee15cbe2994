/*
 * test_config.c — the configuration table: defaults of every
 * key, valid and invalid values of every type with the exact messages,
 * every range bound of every INT and SIZE key, unknown keys, precedence
 * of the four sources in every order, --set parsing, and config files
 * with their errors by line number.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "app.h"
#include "core/config.h"
#include "core/secret.h"
#include "core/limits.h"
#include "core/log.h"

/* NIP-19's example key, as npub and as hex. */
#define NPUB	"npub10elfcs4fr0l0r8af98jlmgdh9c8tcxjvz9qkw038js35mp4dma8qzvjptg"
#define HEXPK	"7e7e9c42a91bfef19fa929e5fda1b72e0ebc1a4c1141673e2794234d86addf4e"

#define KIB	((int64_t)1024)
#define MIB	(KIB * 1024)
#define GIB	(MIB * 1024)

static char	err[1024];

static int
setup(void **state)
{
	app_config_lend_checks();	/* as main does, before any value */
	*state = config_new();
	return *state == NULL ? -1 : 0;
}

static int
teardown(void **state)
{
	config_free(*state);
	return 0;
}

/* Set key = value from the command line, expecting success. */
static void
set_ok(struct config *cfg, const char *key, const char *value)
{
	err[0] = '\0';
	if (config_set(cfg, key, value, CFG_SRC_CLI, err, sizeof(err)) != 0)
		fail_msg("%s = '%s' refused: %s", key, value, err);
}

/* Expect key = value to be refused with exactly msg; nothing changes. */
static void
set_bad(struct config *cfg, const char *key, const char *value,
    const char *msg)
{
	char	before[CONFIG_MAX_VALUE + 1];
	const char *cur = config_get(cfg, key);

	snprintf(before, sizeof(before), "%s", cur != NULL ? cur : "");
	err[0] = '\0';
	assert_int_equal(config_set(cfg, key, value, CFG_SRC_CLI, err,
	    sizeof(err)), -1);
	if (msg != NULL)
		assert_string_equal(err, msg);
	else
		assert_true(strncmp(err, key, strlen(key)) == 0);
	assert_int_equal(config_validate(key, value, err, sizeof(err)), -1);
	if (cur != NULL)
		assert_string_equal(config_get(cfg, key), before);
}

static void
test_defaults(void **state)
{
	struct config	*cfg = *state;
	static const struct { const char *key, *value; } want[] = {
		{ "follow.roots", "" },
		{ "uplink.url", "" },
		{ "backfill.enabled", "true" },
		{ "backfill.page_size", "500" },
		{ "live.enabled", "true" },
		{ "http.listen", "127.0.0.1:8080" },
		{ "tls.ca_file", "" },
		{ "limits.max_event_bytes", "256k" },
		{ "store.max_bytes", "4g" },
		{ "admin.token", "" },
		{ "backfill.pace_ms", "1000" },
		{ "console.tty", "" },
		{ "log.level", "info" },
		{ "uplink.pg.create_schema", "false" },
	};
	size_t	i;

	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		assert_non_null(config_lookup(want[i].key));
		assert_string_equal(config_get(cfg, want[i].key), want[i].value);
		assert_int_equal(config_source(cfg, want[i].key),
		    CFG_SRC_DEFAULT);
	}
	assert_non_null(strstr(config_get(cfg, "relays.bootstrap"),
	    "wss://purplepag.es"));
	assert_true(config_get_int(cfg, "relays.bootstrap") >= 3);
	assert_int_equal(config_get_int(cfg, "backfill.page_size"), 500);
	assert_int_equal(config_get_int(cfg, "backfill.pace_ms"), 1000);
	assert_int_equal(config_get_int(cfg, "limits.max_event_bytes"), 256 * KIB);
	assert_int_equal(config_get_int(cfg, "store.max_bytes"), 4 * GIB);
	assert_int_equal(config_get_int(cfg, "log.level"), LOG_LEVEL_INFO);
	assert_int_equal(config_get_int(cfg, "follow.roots"), 0);
	assert_true(config_get_bool(cfg, "backfill.enabled"));
	assert_true(config_get_bool(cfg, "live.enabled"));
	assert_false(config_get_bool(cfg, "uplink.pg.create_schema"));
}

static void
test_table_sane(void **state)
{
	const struct cfg_def	*d;
	size_t			 n = 0;

	for (d = config_table(); d->name != NULL; d++, n++) {
		assert_ptr_equal(config_lookup(d->name), d);
		assert_non_null(d->help);
		assert_true(d->help[0] != '\0');
		assert_int_equal(config_validate(d->name, d->def, err,
		    sizeof(err)), 0);
		assert_string_not_equal(config_type_name(d->type), "?");
		if (d->type == CFG_INT || d->type == CFG_SIZE) {
			assert_true(d->min <= d->max);
			assert_non_null(d->unit);
			assert_true(d->unit[0] != '\0');
		}
	}
	assert_true(n >= 16);
	assert_true(config_lookup("admin.token")->flags & CFG_SECRET);
	assert_false(config_lookup("uplink.url")->flags & CFG_SECRET);
	assert_true(config_lookup("log.level")->flags & CFG_RUNTIME);
	assert_true(config_lookup("backfill.pace_ms")->flags & CFG_RUNTIME);
	assert_false(config_lookup("http.listen")->flags & CFG_RUNTIME);
	assert_false(config_lookup("console.tty")->flags & CFG_RUNTIME);
	/* The keys naming a path or device the daemon opens. */
	assert_true(config_lookup("console.tty")->flags & CFG_LOCAL);
	assert_true(config_lookup("tls.ca_file")->flags & CFG_LOCAL);
	assert_false(config_lookup("uplink.url")->flags & CFG_LOCAL);
	assert_int_equal(config_lookup("limits.max_event_bytes")->max,
	    EVENT_MAX_BYTES_CEILING);
	assert_int_equal(config_lookup("store.max_bytes")->min, 16 * MIB);
}

static void
test_unknown_key(void **state)
{
	struct config	*cfg = *state;

	assert_int_equal(config_set(cfg, "foo.bar", "1", CFG_SRC_CLI, err,
	    sizeof(err)), -1);
	assert_string_equal(err, "unknown key 'foo.bar'");
	assert_int_equal(config_validate("foo.bar", "1", err, sizeof(err)), -1);
	assert_string_equal(err, "unknown key 'foo.bar'");
	assert_int_equal(config_validate("", "1", err, sizeof(err)), -1);
	assert_string_equal(err, "unknown key ''");
	assert_null(config_lookup("foo.bar"));
	assert_null(config_lookup("Log.Level"));
#ifdef NDEBUG
	/* A getter naming an unknown key is a bug: a release build logs it
	 * and answers empty; a debug build (the sanitizer one) aborts. */
	assert_string_equal(config_get(cfg, "foo.bar"), "");
	assert_int_equal(config_get_int(cfg, "foo.bar"), 0);
	assert_false(config_get_bool(cfg, "foo.bar"));
	assert_int_equal(config_source(cfg, "foo.bar"), CFG_SRC_DEFAULT);
#endif
}

static void
test_int_values(void **state)
{
	struct config	*cfg = *state;

	set_ok(cfg, "backfill.page_size", "1");
	assert_int_equal(config_get_int(cfg, "backfill.page_size"), 1);
	set_ok(cfg, "backfill.page_size", " 5000 ");
	assert_string_equal(config_get(cfg, "backfill.page_size"), "5000");
	set_ok(cfg, "backfill.page_size", "+42");
	assert_string_equal(config_get(cfg, "backfill.page_size"), "42");
	set_bad(cfg, "backfill.page_size", "0",
	    "backfill.page_size: 0 is below the minimum 1");
	set_bad(cfg, "backfill.page_size", "5001",
	    "backfill.page_size: 5001 is above the maximum 5000");
	set_bad(cfg, "backfill.page_size", "-3",
	    "backfill.page_size: -3 is below the minimum 1");
	set_bad(cfg, "backfill.page_size", "abc",
	    "backfill.page_size: 'abc' is not an integer");
	set_bad(cfg, "backfill.page_size", "",
	    "backfill.page_size: '' is not an integer");
	set_bad(cfg, "backfill.page_size", "12x",
	    "backfill.page_size: '12x' is not an integer");
	set_bad(cfg, "backfill.page_size", "1.5",
	    "backfill.page_size: '1.5' is not an integer");
	set_bad(cfg, "backfill.page_size", "1 2",
	    "backfill.page_size: '1 2' is not an integer");
	set_bad(cfg, "backfill.page_size", "99999999999999999999",
	    "backfill.page_size: '99999999999999999999' is not an integer");
	set_ok(cfg, "backfill.pace_ms", "0");
	assert_int_equal(config_get_int(cfg, "backfill.pace_ms"), 0);
	set_bad(cfg, "backfill.pace_ms", "600001",
	    "backfill.pace_ms: 600001 is above the maximum 600000");
	assert_string_equal(config_get(cfg, "backfill.page_size"), "42");
}

static void
test_every_int_bound(void **state)
{
	struct config		*cfg = *state;
	const struct cfg_def	*d;
	char			 v[64], msg[256];

	for (d = config_table(); d->name != NULL; d++) {
		if (d->type != CFG_INT)
			continue;
		snprintf(v, sizeof(v), "%lld", (long long)d->min);
		set_ok(cfg, d->name, v);
		assert_int_equal(config_get_int(cfg, d->name), d->min);
		snprintf(v, sizeof(v), "%lld", (long long)d->max);
		set_ok(cfg, d->name, v);
		assert_int_equal(config_get_int(cfg, d->name), d->max);
		snprintf(v, sizeof(v), "%lld", (long long)d->min - 1);
		snprintf(msg, sizeof(msg), "%s: %s is below the minimum %lld",
		    d->name, v, (long long)d->min);
		set_bad(cfg, d->name, v, msg);
		snprintf(v, sizeof(v), "%lld", (long long)d->max + 1);
		snprintf(msg, sizeof(msg), "%s: %s is above the maximum %lld",
		    d->name, v, (long long)d->max);
		set_bad(cfg, d->name, v, msg);
	}
}

static void
test_every_size_bound(void **state)
{
	struct config		*cfg = *state;
	const struct cfg_def	*d;
	char			 v[64];
	int			 n = 0;

	for (d = config_table(); d->name != NULL; d++) {
		if (d->type != CFG_SIZE)
			continue;
		n++;
		snprintf(v, sizeof(v), "%lld", (long long)d->min);
		set_ok(cfg, d->name, v);
		assert_int_equal(config_get_int(cfg, d->name), d->min);
		snprintf(v, sizeof(v), "%lld", (long long)d->max);
		set_ok(cfg, d->name, v);
		assert_int_equal(config_get_int(cfg, d->name), d->max);
		snprintf(v, sizeof(v), "%lld", (long long)d->min - 1);
		set_bad(cfg, d->name, v, NULL);
		assert_non_null(strstr(err, "is below the minimum"));
		snprintf(v, sizeof(v), "%lld", (long long)d->max + 1);
		set_bad(cfg, d->name, v, NULL);
		assert_non_null(strstr(err, "is above the maximum"));
	}
	assert_int_equal(n, 2);
}

static void
test_size_values(void **state)
{
	struct config	*cfg = *state;
	const char	*k = "limits.max_event_bytes";

	set_ok(cfg, k, "1024");
	assert_int_equal(config_get_int(cfg, k), 1024);
	set_ok(cfg, k, "1k");
	assert_int_equal(config_get_int(cfg, k), 1024);
	set_ok(cfg, k, "512K");
	assert_int_equal(config_get_int(cfg, k), 512 * KIB);
	set_ok(cfg, k, "1m");
	assert_int_equal(config_get_int(cfg, k), EVENT_MAX_BYTES_CEILING);
	assert_string_equal(config_get(cfg, k), "1m");
	set_bad(cfg, k, "1048577",
	    "limits.max_event_bytes: 1048577 is above the maximum 1m");
	set_bad(cfg, k, "2m",
	    "limits.max_event_bytes: 2m is above the maximum 1m");
	set_bad(cfg, k, "1023",
	    "limits.max_event_bytes: 1023 is below the minimum 1k");
	set_bad(cfg, "store.max_bytes", "15m",
	    "store.max_bytes: 15m is below the minimum 16m");
	set_bad(cfg, "store.max_bytes", "16777215",
	    "store.max_bytes: 16777215 is below the minimum 16m");
	set_ok(cfg, "store.max_bytes", "16M");
	assert_int_equal(config_get_int(cfg, "store.max_bytes"), 16 * MIB);
	set_ok(cfg, "store.max_bytes", "2G");
	assert_int_equal(config_get_int(cfg, "store.max_bytes"), 2 * GIB);
	set_bad(cfg, k, "", "limits.max_event_bytes: '' is not a size (bytes, "
	    "or a number with k, m or g)");
	set_bad(cfg, k, "k", NULL);
	set_bad(cfg, k, "1x", NULL);
	set_bad(cfg, k, "1kb", NULL);
	set_bad(cfg, k, "-1k", NULL);
	set_bad(cfg, k, "1.5m", NULL);
	set_bad(cfg, k, "1 k", NULL);
	set_bad(cfg, "store.max_bytes", "9999999999999g", NULL);
	assert_non_null(strstr(err, "is not a size"));
	set_bad(cfg, "store.max_bytes", "99999999999999999999", NULL);
	assert_non_null(strstr(err, "is not a size"));
	assert_int_equal(config_get_int(cfg, k), EVENT_MAX_BYTES_CEILING);
}

static void
test_bool_values(void **state)
{
	struct config	*cfg = *state;
	static const char *const t[] = { "true", "yes", "on", "1", "TRUE", "Yes" };
	static const char *const f[] = { "false", "no", "off", "0", "False", "OFF" };
	size_t		 i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		set_ok(cfg, "live.enabled", f[i]);
		assert_false(config_get_bool(cfg, "live.enabled"));
		assert_string_equal(config_get(cfg, "live.enabled"), "false");
		set_ok(cfg, "live.enabled", t[i]);
		assert_true(config_get_bool(cfg, "live.enabled"));
		assert_string_equal(config_get(cfg, "live.enabled"), "true");
	}
	set_bad(cfg, "live.enabled", "maybe", "live.enabled: 'maybe' is not a "
	    "boolean (true/false, yes/no, on/off, 1/0)");
	set_bad(cfg, "live.enabled", "2", NULL);
	set_bad(cfg, "live.enabled", "", NULL);
	set_bad(cfg, "uplink.pg.create_schema", "y", NULL);
}

static void
test_level_values(void **state)
{
	struct config	*cfg = *state;

	set_ok(cfg, "log.level", "debug");
	assert_int_equal(config_get_int(cfg, "log.level"), LOG_LEVEL_DEBUG);
	set_ok(cfg, "log.level", "error");
	assert_int_equal(config_get_int(cfg, "log.level"), LOG_LEVEL_ERROR);
	set_ok(cfg, "log.level", "warn");
	assert_int_equal(config_get_int(cfg, "log.level"), LOG_LEVEL_WARN);
	set_bad(cfg, "log.level", "loud", "log.level: 'loud' is not a log "
	    "level (error, warn, info, debug)");
	set_bad(cfg, "log.level", "", NULL);
	set_bad(cfg, "log.level", "warning", NULL);
}

static void
test_urls_values(void **state)
{
	struct config	*cfg = *state;
	const char	*k = "relays.bootstrap";

	set_ok(cfg, k, "");
	assert_string_equal(config_get(cfg, k), "");
	assert_int_equal(config_get_int(cfg, k), 0);
	set_ok(cfg, k, "   ");
	assert_string_equal(config_get(cfg, k), "");
	set_ok(cfg, k, "wss://relay.example.com");
	set_ok(cfg, k, "ws://127.0.0.1:7777");
	set_ok(cfg, k, "wss://[::1]:443/path?x=1");
	set_ok(cfg, k, "WSS://Relay.Example");
	set_ok(cfg, k, " wss://a.example/ , ws://b.example:1 ,wss://c.example ");
	assert_string_equal(config_get(cfg, k),
	    "wss://a.example/,ws://b.example:1,wss://c.example");
	assert_int_equal(config_get_int(cfg, k), 3);
	set_bad(cfg, k, "http://a.example", "relays.bootstrap: "
	    "'http://a.example' is not a usable ws:// or wss:// URL (not ws:// "
	    "or wss://)");
	/* The pool's own parser decides: what the table takes, it can dial. */
	set_bad(cfg, k, "wss://a..b", NULL);
	set_bad(cfg, k, "wss://user@a.example", NULL);
	set_bad(cfg, k, "wss://a.example/#frag", NULL);
	set_bad(cfg, k, "wss://a.example,,wss://b.example",
	    "relays.bootstrap: empty item in the list");
	set_bad(cfg, k, "wss://a.example,", NULL);
	set_bad(cfg, k, ",wss://a.example", NULL);
	set_bad(cfg, k, "wss://", NULL);
	set_bad(cfg, k, "wss:///path", NULL);
	set_bad(cfg, k, "wss://:443", NULL);
	set_bad(cfg, k, "wss://a.example:0", NULL);
	set_bad(cfg, k, "wss://a.example:65536", NULL);
	set_bad(cfg, k, "wss://a.example:", NULL);
	set_bad(cfg, k, "wss://a.example:x", NULL);
	set_bad(cfg, k, "wss://a b.example", NULL);
	set_bad(cfg, k, "wss://[::1", NULL);
	set_bad(cfg, k, "wss://[]:80", NULL);
	set_bad(cfg, k, "relay.example", NULL);
	set_bad(cfg, k, "wss://ok.example,ftp://no.example",
	    "relays.bootstrap: 'ftp://no.example' is not a usable ws:// or "
	    "wss:// URL (not ws:// or wss://)");
	assert_int_equal(config_get_int(cfg, k), 3);
}

static void
test_keys_values(void **state)
{
	struct config	*cfg = *state;
	const char	*k = "follow.roots";

	set_ok(cfg, k, "");
	set_ok(cfg, k, NPUB);
	assert_string_equal(config_get(cfg, k), NPUB);
	set_ok(cfg, k, HEXPK);
	set_ok(cfg, k, NPUB " , " HEXPK);
	assert_string_equal(config_get(cfg, k), NPUB "," HEXPK);
	assert_int_equal(config_get_int(cfg, k), 2);
	set_bad(cfg, k, "npub1xyz",
	    "follow.roots: 'npub1xyz' is not an npub or a 64-hex public key");
	set_bad(cfg, k, HEXPK "0", NULL);
	set_bad(cfg, k, &HEXPK[1], NULL);
	set_bad(cfg, k, NPUB ",," HEXPK,
	    "follow.roots: empty item in the list");
	/* One bad character in the npub breaks its checksum. */
	set_bad(cfg, k, "npub10elfcs4fr0l0r8af98jlmgdh9c8tcxjvz9qkw038js35mp4dma8qzvjptq",
	    NULL);
	assert_int_equal(config_get_int(cfg, k), 2);
}

static void
test_uplink_values(void **state)
{
	struct config	*cfg = *state;
	const char	*k = "uplink.url";

	set_ok(cfg, k, "ws://127.0.0.1:7000");
	set_ok(cfg, k, "wss://relay.example/");
	set_ok(cfg, k, "postgres://u:pw@127.0.0.1:5432/relay");
	set_ok(cfg, k, "postgresql://127.0.0.1/relay?sslmode=disable");
	set_ok(cfg, k, "postgres://");
	set_ok(cfg, k, "");
	assert_string_equal(config_get(cfg, k), "");
	set_bad(cfg, k, "http://relay.example", "uplink.url: not empty or a "
	    "ws://, wss://, postgres:// or postgresql:// URL (a libpq "
	    "keyword/value string is not accepted)");
	set_bad(cfg, k, "mysql://127.0.0.1/x", NULL);
	set_bad(cfg, k, "wss://", NULL);
	set_bad(cfg, k, "postgres://a b", NULL);
	set_bad(cfg, k, "wss://a.example,wss://b.example", NULL);
}

static void
test_hostport_values(void **state)
{
	struct config	*cfg = *state;
	const char	*k = "http.listen";

	set_ok(cfg, k, "0.0.0.0:80");
	set_ok(cfg, k, "127.0.0.1:0");
	set_ok(cfg, k, "localhost:65535");
	set_ok(cfg, k, "[::1]:8080");
	set_ok(cfg, k, "[::]:80");
	set_ok(cfg, k, "[::ffff:127.0.0.1]:80");
	set_bad(cfg, k, "127.0.0.1",
	    "http.listen: '127.0.0.1' is not host:port or [v6]:port");
	set_bad(cfg, k, "127.0.0.1:", NULL);
	set_bad(cfg, k, ":8080", NULL);
	set_bad(cfg, k, "127.0.0.1:65536", NULL);
	set_bad(cfg, k, "127.0.0.1:123456", NULL);
	set_bad(cfg, k, "127.0.0.1:-1", NULL);
	set_bad(cfg, k, "[::1]", NULL);
	set_bad(cfg, k, "[::1]8080", NULL);
	set_bad(cfg, k, "::1:8080", NULL);
	set_bad(cfg, k, "a:b:c", NULL);
	set_bad(cfg, k, "host:port", NULL);
	set_bad(cfg, k, "[zz]:80", NULL);
	set_bad(cfg, k, "", NULL);
	assert_string_equal(config_get(cfg, k), "[::ffff:127.0.0.1]:80");
}

static void
test_string_values(void **state)
{
	struct config	*cfg = *state;
	char		*big;

	set_ok(cfg, "tls.ca_file", "  /etc/ssl/my ca.pem  ");
	assert_string_equal(config_get(cfg, "tls.ca_file"), "/etc/ssl/my ca.pem");
	set_ok(cfg, "console.tty", "-");
	big = malloc(CONFIG_MAX_VALUE + 2);
	assert_non_null(big);
	memset(big, 'a', CONFIG_MAX_VALUE);
	big[CONFIG_MAX_VALUE] = '\0';
	set_ok(cfg, "tls.ca_file", big);
	assert_int_equal(strlen(config_get(cfg, "tls.ca_file")), CONFIG_MAX_VALUE);
	big[CONFIG_MAX_VALUE] = 'a';
	big[CONFIG_MAX_VALUE + 1] = '\0';
	set_bad(cfg, "tls.ca_file", big,
	    "tls.ca_file: value is longer than 4096 bytes");
	free(big);
	set_bad(cfg, "tls.ca_file", "a\tb",
	    "tls.ca_file: value contains a control character");
	set_bad(cfg, "console.tty", "/dev/tty\x1b", NULL);
	set_ok(cfg, "tls.ca_file", "");
	assert_string_equal(config_get(cfg, "tls.ca_file"), "");
}

static void
test_secret_not_echoed(void **state)
{
	/* A string never fails on content, so no message can hold it; the
	 * display form hides it. */
	struct config	*cfg = *state;
	char		 out[128];

	assert_string_equal(config_display(cfg, "admin.token", out,
	    sizeof(out)), "");
	set_ok(cfg, "admin.token", "s3cret-token-1");
	assert_string_equal(config_display(cfg, "admin.token", out,
	    sizeof(out)), "(set)");
	set_ok(cfg, "uplink.url", "postgres://u:pw@127.0.0.1/db");
	assert_string_equal(config_display(cfg, "uplink.url", out,
	    sizeof(out)), "postgres://u:***@127.0.0.1/db");
	set_ok(cfg, "uplink.url", "postgres://u@127.0.0.1/db?x=a:b@c");
	assert_string_equal(config_display(cfg, "uplink.url", out,
	    sizeof(out)), "postgres://u@127.0.0.1/db?x=a:b@c");
	assert_string_equal(config_display(cfg, "backfill.page_size", out,
	    sizeof(out)), "500");
	assert_string_equal(config_display(cfg, "nope", out, sizeof(out)), "");
}

/*
 * The admin token: one rule wherever it comes from (--set, the file, the
 * database), kept only as a salted hash, never repeated in a message.
 */
static void
test_token_rule_and_hash(void **state)
{
	struct config	*cfg = *state;
	char		 norm[CONFIG_MAX_VALUE + 1], again[CONFIG_MAX_VALUE + 1];
	const char	*v;

	assert_int_equal(config_set_arg(cfg, "admin.token=short-1", err,
	    sizeof(err)), -1);
	assert_string_equal(err, "admin.token: the admin password needs 12 to 256 "
	    "characters");
	assert_null(strstr(err, "short-1"));
	assert_int_equal(config_set_arg(cfg, "admin.token=bad token with "
	    "spaces", err, sizeof(err)), -1);
	assert_null(strstr(err, "spaces"));
	assert_int_equal(config_set_arg(cfg, "admin.token=abcdefghijkl$", err,
	    sizeof(err)), -1);
	assert_int_equal(config_set_arg(cfg, "admin.token=correct-horse-1",
	    err, sizeof(err)), 0);
	v = config_get(cfg, "admin.token");
	assert_null(strstr(v, "correct-horse-1"));
	assert_true(secret_is_hash(v));
	assert_true(secret_verify(v, "correct-horse-1", 15));
	assert_false(secret_verify(v, "correct-horse-2", 15));
	assert_false(secret_verify(v, "correct-horse-1", 14));
	/* A stored hash is taken as it is; the same token hashes anew. */
	assert_int_equal(config_normalize("admin.token", v, norm, sizeof(norm),
	    err, sizeof(err)), 0);
	assert_string_equal(norm, v);
	assert_int_equal(config_normalize("admin.token", "correct-horse-1",
	    again, sizeof(again), err, sizeof(err)), 0);
	assert_string_not_equal(again, v);	/* a fresh salt */
	assert_true(secret_verify(again, "correct-horse-1", 15));
	/* Other keys normalize to what config_set keeps. */
	assert_int_equal(config_normalize("relays.bootstrap", " ws://a:1 , "
	    "wss://b ", norm, sizeof(norm), err, sizeof(err)), 0);
	assert_string_equal(norm, "ws://a:1,wss://b");
}

/* A refused uplink URL is never echoed: it may carry a password. */
static void
test_uplink_error_not_echoed(void **state)
{
	struct config	*cfg = *state;

	assert_int_equal(config_set_arg(cfg, "uplink.url=host=db "
	    "password=hunter2hunter2", err, sizeof(err)), -1);
	assert_null(strstr(err, "hunter2"));
	assert_non_null(strstr(err, "uplink.url"));
	assert_int_equal(config_set_arg(cfg, "uplink.url=ftp://u:hunter2@h",
	    err, sizeof(err)), -1);
	assert_null(strstr(err, "hunter2"));
}

/* Every order of the four sources: the highest one always wins. */
static void
test_precedence_all_orders(void **state)
{
	static const enum cfg_source srcs[4] = {
		CFG_SRC_DEFAULT, CFG_SRC_DB, CFG_SRC_FILE, CFG_SRC_CLI
	};
	int		 perm[4], used, a, b, c, d, i, orders = 0;
	struct config	*cfg;
	char		 v[16];
	enum cfg_source	 best;

	for (a = 0; a < 4; a++) for (b = 0; b < 4; b++)
	for (c = 0; c < 4; c++) for (d = 0; d < 4; d++) {
		used = (1 << a) | (1 << b) | (1 << c) | (1 << d);
		if (used != 0xf)
			continue;
		perm[0] = a; perm[1] = b; perm[2] = c; perm[3] = d;
		orders++;
		cfg = config_new();
		assert_non_null(cfg);
		best = CFG_SRC_DEFAULT;
		for (i = 0; i < 4; i++) {
			snprintf(v, sizeof(v), "%d", 10 + perm[i]);
			assert_int_equal(config_set(cfg, "backfill.page_size",
			    v, srcs[perm[i]], err, sizeof(err)), 0);
			if (srcs[perm[i]] >= best)
				best = srcs[perm[i]];
			assert_int_equal(config_source(cfg,
			    "backfill.page_size"), best);
			/* A default set first keeps the built-in 500 source. */
			if (best == CFG_SRC_DEFAULT)
				continue;
			assert_int_equal(config_get_int(cfg,
			    "backfill.page_size"), 10 + (int)best);
		}
		assert_int_equal(config_source(cfg, "backfill.page_size"),
		    CFG_SRC_CLI);
		assert_int_equal(config_get_int(cfg, "backfill.page_size"),
		    10 + CFG_SRC_CLI);
		config_free(cfg);
	}
	assert_int_equal(orders, 24);
}

static void
test_precedence_rules(void **state)
{
	struct config	*cfg = *state;

	assert_int_equal(config_set(cfg, "log.level", "warn", CFG_SRC_FILE,
	    err, sizeof(err)), 0);
	/* Lower source: 0, nothing changes. */
	assert_int_equal(config_set(cfg, "log.level", "debug", CFG_SRC_DB,
	    err, sizeof(err)), 0);
	assert_string_equal(config_get(cfg, "log.level"), "warn");
	assert_int_equal(config_source(cfg, "log.level"), CFG_SRC_FILE);
	/* Still validated: a bad value is an error even when it would lose. */
	assert_int_equal(config_set(cfg, "log.level", "loud", CFG_SRC_DB,
	    err, sizeof(err)), -1);
	/* The same source replaces. */
	assert_int_equal(config_set(cfg, "log.level", "error", CFG_SRC_FILE,
	    err, sizeof(err)), 0);
	assert_string_equal(config_get(cfg, "log.level"), "error");
	/* A bad value from a higher source changes nothing either. */
	assert_int_equal(config_set(cfg, "log.level", "x", CFG_SRC_CLI,
	    err, sizeof(err)), -1);
	assert_int_equal(config_source(cfg, "log.level"), CFG_SRC_FILE);
	/* Other keys are independent. */
	assert_int_equal(config_source(cfg, "live.enabled"), CFG_SRC_DEFAULT);
}

static void
test_source_names(void **state)
{
	assert_string_equal(config_source_name(CFG_SRC_DEFAULT), "default");
	assert_string_equal(config_source_name(CFG_SRC_DB), "database");
	assert_string_equal(config_source_name(CFG_SRC_FILE), "file");
	assert_string_equal(config_source_name(CFG_SRC_CLI), "command line");
	assert_string_equal(config_source_name((enum cfg_source)42), "?");
	assert_string_equal(config_type_name(CFG_SIZE), "size");
	assert_string_equal(config_type_name((enum cfg_type)42), "?");
}

static void
test_set_arg(void **state)
{
	struct config	*cfg = *state;

	assert_int_equal(config_set_arg(cfg, "backfill.page_size=42", err,
	    sizeof(err)), 0);
	assert_int_equal(config_get_int(cfg, "backfill.page_size"), 42);
	assert_int_equal(config_source(cfg, "backfill.page_size"), CFG_SRC_CLI);
	assert_int_equal(config_set_arg(cfg, " log.level = debug ", err,
	    sizeof(err)), 0);
	assert_string_equal(config_get(cfg, "log.level"), "debug");
	assert_int_equal(config_set_arg(cfg, "tls.ca_file=a=b", err,
	    sizeof(err)), 0);
	assert_string_equal(config_get(cfg, "tls.ca_file"), "a=b");
	assert_int_equal(config_set_arg(cfg, "uplink.url=", err, sizeof(err)), 0);
	assert_string_equal(config_get(cfg, "uplink.url"), "");
	assert_int_equal(config_set_arg(cfg, "noequals", err, sizeof(err)), -1);
	assert_string_equal(err, "--set 'noequals': expected KEY=VALUE");
	assert_int_equal(config_set_arg(cfg, "=5", err, sizeof(err)), -1);
	assert_string_equal(err, "missing key before '='");
	assert_int_equal(config_set_arg(cfg, "foo.bar=1", err, sizeof(err)), -1);
	assert_string_equal(err, "unknown key 'foo.bar'");
	assert_int_equal(config_set_arg(cfg, "backfill.page_size=0", err,
	    sizeof(err)), -1);
	assert_string_equal(err, "backfill.page_size: 0 is below the minimum 1");
	assert_int_equal(config_get_int(cfg, "backfill.page_size"), 42);
}

static void
test_file_buf_ok(void **state)
{
	struct config	*cfg = *state;
	const char	 text[] =
	    "# cachebox test configuration\n"
	    "\n"
	    "   # indented comment\n"
	    "backfill.page_size = 250\n"
	    "log.level=debug\r\n"
	    "\t live.enabled \t=\t off \n"
	    "relays.bootstrap = ws://127.0.0.1:7001, ws://127.0.0.1:7002\n"
	    "tls.ca_file = has # inside\n"
	    "uplink.url =\n"
	    "store.max_bytes = 64m";	/* no final newline */

	assert_int_equal(config_load_buf(cfg, "t.conf", text, strlen(text),
	    err, sizeof(err)), 0);
	assert_int_equal(config_get_int(cfg, "backfill.page_size"), 250);
	assert_int_equal(config_source(cfg, "backfill.page_size"), CFG_SRC_FILE);
	assert_string_equal(config_get(cfg, "log.level"), "debug");
	assert_false(config_get_bool(cfg, "live.enabled"));
	assert_string_equal(config_get(cfg, "relays.bootstrap"),
	    "ws://127.0.0.1:7001,ws://127.0.0.1:7002");
	assert_string_equal(config_get(cfg, "tls.ca_file"), "has # inside");
	assert_string_equal(config_get(cfg, "uplink.url"), "");
	assert_int_equal(config_source(cfg, "uplink.url"), CFG_SRC_FILE);
	assert_int_equal(config_get_int(cfg, "store.max_bytes"), 64 * MIB);
	assert_int_equal(config_source(cfg, "http.listen"), CFG_SRC_DEFAULT);
	assert_int_equal(config_load_buf(cfg, "empty", "", 0, err,
	    sizeof(err)), 0);
}

/* Load text, expect failure with exactly msg. */
static void
load_bad(const char *text, const char *msg)
{
	struct config	*cfg = config_new();

	assert_non_null(cfg);
	err[0] = '\0';
	assert_int_equal(config_load_buf(cfg, "t.conf", text, strlen(text),
	    err, sizeof(err)), -1);
	assert_string_equal(err, msg);
	config_free(cfg);
}

static void
test_file_buf_errors(void **state)
{
	load_bad("# ok\nbackfill.page_size = 10\njust words\n",
	    "t.conf:3: expected 'key = value'");
	load_bad("\nnope.key = 1\n", "t.conf:2: unknown key 'nope.key'");
	load_bad("a\n", "t.conf:1: expected 'key = value'");
	load_bad("\n\n\n backfill.page_size = 0\n",
	    "t.conf:4: backfill.page_size: 0 is below the minimum 1");
	load_bad("= 5\n", "t.conf:1: missing key before '='");
	load_bad("log.level = debug\r\nlog.level = loud\r\n",
	    "t.conf:2: log.level: 'loud' is not a log level (error, warn, "
	    "info, debug)");
	load_bad("http.listen = 1.2.3.4\n",
	    "t.conf:1: http.listen: '1.2.3.4' is not host:port or [v6]:port");
}

static void
test_file_buf_nul_and_long(void **state)
{
	struct config	*cfg = *state;
	char		*big;
	size_t		 n;
	const char	 nul[] = "log.level = debug\nlog.level = in\0fo\n";

	assert_int_equal(config_load_buf(cfg, "t.conf", nul, sizeof(nul) - 1,
	    err, sizeof(err)), -1);
	assert_string_equal(err, "t.conf:2: NUL byte in line");
	/* Lines before the error stay applied. */
	assert_string_equal(config_get(cfg, "log.level"), "debug");

	n = CONFIG_MAX_LINE + 20;
	big = malloc(n);
	assert_non_null(big);
	memcpy(big, "# ok\ntls.ca_file = ", 19);
	memset(big + 19, 'x', n - 19);
	/* Line 2 is exactly CONFIG_MAX_LINE bytes: accepted by the reader,
	 * refused by the value limit. */
	big[5 + CONFIG_MAX_LINE] = '\n';
	assert_int_equal(config_load_buf(cfg, "t.conf", big, 5 +
	    CONFIG_MAX_LINE + 1, err, sizeof(err)), -1);
	assert_string_equal(err, "t.conf:2: tls.ca_file: value is longer "
	    "than 4096 bytes");
	assert_int_equal(config_load_buf(cfg, "t.conf", big, n, err,
	    sizeof(err)), -1);
	assert_string_equal(err, "t.conf:2: tls.ca_file: value is longer "
	    "than 4096 bytes");
	big[5 + CONFIG_MAX_LINE] = 'x';
	assert_int_equal(config_load_buf(cfg, "t.conf", big, 5 +
	    CONFIG_MAX_LINE + 1, err, sizeof(err)), -1);
	assert_string_equal(err, "t.conf:2: line longer than 8192 bytes");
	free(big);
}

/* Write text to a new temporary file; its path goes into path. */
static void
write_tmp(char *path, size_t pathlen, const char *text, size_t len)
{
	int	fd;

	snprintf(path, pathlen, "/tmp/cachebox-test-config-XXXXXX");
	fd = mkstemp(path);
	assert_true(fd != -1);
	assert_int_equal(write(fd, text, len), (ssize_t)len);
	close(fd);
}

static void
test_file_on_disk(void **state)
{
	struct config	*cfg = *state;
	char		 path[64], want[256];
	const char	 text[] = "backfill.pace_ms = 0\n# c\nbackfill.page_size = 9999\n";

	write_tmp(path, sizeof(path), text, strlen(text));
	assert_int_equal(config_set_arg(cfg, "backfill.pace_ms=5", err,
	    sizeof(err)), 0);
	assert_int_equal(config_load_file(cfg, path, err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "%s:3: backfill.page_size: 9999 is above "
	    "the maximum 5000", path);
	assert_string_equal(err, want);
	/* --set outranks the file. */
	assert_int_equal(config_get_int(cfg, "backfill.pace_ms"), 5);
	assert_int_equal(config_source(cfg, "backfill.pace_ms"), CFG_SRC_CLI);
	unlink(path);

	assert_int_equal(config_load_file(cfg, path, err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "%s: %s", path, strerror(ENOENT));
	assert_string_equal(err, want);
}

static void
test_file_too_big(void **state)
{
	struct config	*cfg = *state;
	char		 path[64], want[256], *text;
	size_t		 n = CONFIG_MAX_FILE_BYTES + 1;

	text = malloc(n);
	assert_non_null(text);
	memset(text, '\n', n);
	write_tmp(path, sizeof(path), text, n);
	assert_int_equal(config_load_file(cfg, path, err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "%s: larger than %d bytes", path,
	    CONFIG_MAX_FILE_BYTES);
	assert_string_equal(err, want);
	unlink(path);
	/* Exactly the limit is fine. */
	write_tmp(path, sizeof(path), text, n - 1);
	assert_int_equal(config_load_file(cfg, path, err, sizeof(err)), 0);
	unlink(path);
	free(text);
}

static void
test_err_truncated_safely(void **state)
{
	char	small[8];

	assert_int_equal(config_validate("foo.bar", "1", small, sizeof(small)),
	    -1);
	assert_string_equal(small, "unknown");
	assert_int_equal(config_validate("foo.bar", "1", NULL, 0), -1);
}

static void
test_dns_servers_values(void **state)
{
	struct config	*cfg = *state;
	const char	*k = "dns.servers";

	assert_string_equal(config_get(cfg, k), "");
	assert_int_equal(config_get_int(cfg, k), 0);
	assert_false(config_lookup(k)->flags & CFG_RUNTIME);
	assert_string_equal(config_type_name(config_lookup(k)->type),
	    "addresses");
	set_ok(cfg, k, "127.0.0.1");
	set_ok(cfg, k, "192.168.1.1:5353");
	set_ok(cfg, k, "[::1]:53");
	set_ok(cfg, k, "[fe80::1]");
	set_ok(cfg, k, "::1");
	set_ok(cfg, k, "[::ffff:127.0.0.1]:65535");
	set_ok(cfg, k, " 10.0.0.1 , [2001:db8::53]:1053,9.9.9.9:53 ");
	assert_string_equal(config_get(cfg, k),
	    "10.0.0.1,[2001:db8::53]:1053,9.9.9.9:53");
	assert_int_equal(config_get_int(cfg, k), 3);
	set_bad(cfg, k, "localhost", "dns.servers: 'localhost' is not an IP "
	    "address, IP:port or [v6]:port");
	set_bad(cfg, k, "1.1.1.1,dns.example:53", "dns.servers: "
	    "'dns.example:53' is not an IP address, IP:port or [v6]:port");
	set_bad(cfg, k, "127.0.0.1:0", NULL);
	set_bad(cfg, k, "127.0.0.1:65536", NULL);
	set_bad(cfg, k, "127.0.0.1:", NULL);
	set_bad(cfg, k, "127.0.0.1:5x", NULL);
	set_bad(cfg, k, "127.0.0.1:-53", NULL);
	set_bad(cfg, k, "256.0.0.1", NULL);
	set_bad(cfg, k, "127.1", NULL);
	set_bad(cfg, k, ":53", NULL);
	set_bad(cfg, k, "[::1", NULL);
	set_bad(cfg, k, "[::1]53", NULL);
	set_bad(cfg, k, "[::1]:", NULL);
	set_bad(cfg, k, "[127.0.0.1]:53", NULL);
	set_bad(cfg, k, "[]:53", NULL);
	set_bad(cfg, k, "::1:53:zz", NULL);
	set_bad(cfg, k, "1.1.1.1,,8.8.8.8", "dns.servers: empty item in the "
	    "list");
	set_bad(cfg, k, "1.1.1.1,2.2.2.2,3.3.3.3,4.4.4.4,5.5.5.5,6.6.6.6,"
	    "7.7.7.7,8.8.8.8,9.9.9.9", "dns.servers: more than 8 servers");
	set_ok(cfg, k, "1.1.1.1,2.2.2.2,3.3.3.3,4.4.4.4,5.5.5.5,6.6.6.6,"
	    "7.7.7.7,8.8.8.8");
	assert_int_equal(config_get_int(cfg, k), DNS_MAX_SERVERS);
	set_ok(cfg, k, "");
	assert_string_equal(config_get(cfg, k), "");
}

/* Whether value is console-only for key, and what it names. */
static void
local_is(const char *key, const char *value, const char *what)
{
	char	got[64];

	got[0] = '\0';
	if (what == NULL) {
		assert_false(config_value_local(key, value, got, sizeof(got)));
		return;
	}
	assert_true(config_value_local(key, value, got, sizeof(got)));
	assert_string_equal(got, what);
}

/*
 * The values that make the daemon open a file: every value of a CFG_LOCAL
 * key, and uplink URLs naming one of libpq's file parameters in any case
 * of the scheme, percent-encoded or not, or a host that is a socket path.
 */
static void
test_value_local(void **state)
{
	const char	*k = "uplink.url";

	(void)state;
	local_is("tls.ca_file", "/etc/ssl/x.pem", "tls.ca_file");
	local_is("console.tty", "", "console.tty");
	local_is("log.level", "debug", NULL);
	local_is(k, "", NULL);
	local_is(k, "wss://relay.example/?sslrootcert=/etc/shadow", NULL);
	local_is(k, "postgres://u:p@db.example:5432/cache", NULL);
	local_is(k, "postgres://u@db.example/cache?sslmode=verify-full&"
	    "connect_timeout=5&application_name=box", NULL);
	local_is(k, "postgres://[::1]:5432,db2.example/c?host=db3", NULL);
	local_is(k, "postgres://db.example/c?sslrootcert=/etc/shadow",
	    "sslrootcert");
	local_is(k, "POSTGRESQL://db.example/c?sslmode=require&sslcert=/a",
	    "sslcert");
	local_is(k, "postgresql://db.example?sslkey=/k", "sslkey");
	local_is(k, "postgres://db.example/c?sslcrl=/c", "sslcrl");
	local_is(k, "postgres://db.example/c?sslcrldir=/c", "sslcrldir");
	local_is(k, "postgres://db.example/c?passfile=/root/.pgpass",
	    "passfile");
	local_is(k, "postgres://db.example/c?service=prod", "service");
	local_is(k, "postgres://db.example/c?ssl%72ootcert=%2Fetc%2Fshadow",
	    "sslrootcert");
	local_is(k, "postgres://db.example/c?sslkeylogfile=/tmp/k",
	    "sslkeylogfile");
	local_is(k, "postgres://db.example/c?x%zz=1",
	    "an undecodable parameter");
	local_is(k, "postgres://db.example/c?%00=1",
	    "an undecodable parameter");
	local_is(k, "postgres://db.example/c?%C3%A9=1",
	    "a parameter of unusual characters");
	local_is(k, "postgres://%2Fvar%2Frun%2Fpostgresql/c", "host");
	local_is(k, "postgres://u@db.example,%2Ftmp/c", "host");
	local_is(k, "postgres://db.example/c?host=%2Ftmp", "host");
	local_is(k, "postgres://db.example/c?host=db2,/tmp", "host");
}

int
main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(test_defaults),
		T(test_table_sane),
		T(test_unknown_key),
		T(test_int_values),
		T(test_every_int_bound),
		T(test_every_size_bound),
		T(test_size_values),
		T(test_bool_values),
		T(test_level_values),
		T(test_urls_values),
		T(test_keys_values),
		T(test_uplink_values),
		T(test_hostport_values),
		T(test_string_values),
		T(test_secret_not_echoed),
		T(test_token_rule_and_hash),
		T(test_uplink_error_not_echoed),
		T(test_precedence_all_orders),
		T(test_precedence_rules),
		T(test_source_names),
		T(test_set_arg),
		T(test_file_buf_ok),
		T(test_file_buf_errors),
		T(test_file_buf_nul_and_long),
		T(test_file_on_disk),
		T(test_file_too_big),
		T(test_err_truncated_safely),
		T(test_dns_servers_values),
		T(test_value_local),
	};
#undef T

	log_init(NULL, LOG_LEVEL_ERROR);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
