/*
 * test_boxnames.c — which names, addresses and relay URLs are the box's:
 * exact names in any case, never a prefix or suffix of one, loopback and
 * an interface's address, ports and brackets, and the relay URL's path.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "app.h"
#include "core/config.h"
#include "core/log.h"
#include "net/boxnames.h"

static int
setup(void **state)
{
	struct config	*cfg;
	char		 err[256];

	app_config_lend_checks();
	if ((cfg = config_new()) == NULL || config_set(cfg, "box.names",
	    "mybox.lan, 192.0.2.9", CFG_SRC_CLI, err, sizeof(err)) == -1)
		return -1;
	*state = cfg;
	return 0;
}

static int
teardown(void **state)
{
	config_free(*state);
	return 0;
}

static bool
hp(const struct config *cfg, const char *s)
{
	return boxnames_hostport_ok(cfg, s, strlen(s));
}

static void
test_hosts(void **state)
{
	const struct config	*cfg = *state;
	char			 self[256], buf[300];

	assert_true(hp(cfg, "cachebox.local"));
	assert_true(hp(cfg, "CacheBox.Local.:8080"));
	assert_true(hp(cfg, "localhost:7777"));
	assert_true(hp(cfg, "mybox.lan"));
	assert_true(hp(cfg, "MYBOX.LAN:1"));
	assert_true(hp(cfg, "127.0.0.1:8080"));
	assert_true(hp(cfg, "127.3.4.5"));
	assert_true(hp(cfg, "[::1]:8080"));
	assert_true(hp(cfg, "[::1]"));
	assert_true(hp(cfg, "192.0.2.9"));
	assert_false(hp(cfg, "evil.example"));
	assert_false(hp(cfg, "evil.example:8080"));
	assert_false(hp(cfg, "evil-cachebox.local"));
	assert_false(hp(cfg, "cachebox.local.evil.example"));
	assert_false(hp(cfg, "cachebox.loca"));
	assert_false(hp(cfg, "box.lan"));
	assert_false(hp(cfg, "mybox.lan.evil"));
	assert_false(hp(cfg, "198.51.100.7"));
	assert_false(hp(cfg, "[::2]:80"));
	assert_false(hp(cfg, "cachebox.local:80x"));
	assert_false(hp(cfg, "cachebox.local:123456"));
	assert_false(hp(cfg, "cachebox.local:"));
	assert_false(hp(cfg, "[::1"));
	assert_false(hp(cfg, "[::1]x"));
	assert_false(hp(cfg, ""));
	assert_false(hp(cfg, "."));
	assert_false(boxnames_hostport_ok(cfg, "cachebox.local\0x", 16));
	if (gethostname(self, sizeof(self)) == 0 && self[0] != '\0') {
		assert_true(hp(cfg, self));
		snprintf(buf, sizeof(buf), "%s.local:80", self);
		assert_true(hp(cfg, buf));
		snprintf(buf, sizeof(buf), "x%s", self);
		assert_false(hp(cfg, buf));
	}
}

static void
test_relay_urls(void **state)
{
	const struct config	*cfg = *state;

	assert_true(boxnames_relay_url_ok(cfg, "ws://127.0.0.1:7777"));
	assert_true(boxnames_relay_url_ok(cfg, "ws://127.0.0.1:7777/"));
	assert_true(boxnames_relay_url_ok(cfg, "WSS://cachebox.local/"));
	assert_true(boxnames_relay_url_ok(cfg, "wss://mybox.lan"));
	assert_true(boxnames_relay_url_ok(cfg, "ws://[::1]:7777/"));
	assert_false(boxnames_relay_url_ok(cfg, "wss://evil.example/"));
	assert_false(boxnames_relay_url_ok(cfg, "http://127.0.0.1:7777"));
	assert_false(boxnames_relay_url_ok(cfg, "ws://127.0.0.1:7777/x"));
	assert_false(boxnames_relay_url_ok(cfg, "ws://127.0.0.1:7777//"));
	assert_false(boxnames_relay_url_ok(cfg, "ws://u@127.0.0.1:7777"));
	assert_false(boxnames_relay_url_ok(cfg, "ws://"));
	assert_false(boxnames_relay_url_ok(cfg, "ws:/cachebox.local"));
	assert_false(boxnames_relay_url_ok(cfg, "cachebox.local"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_hosts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_relay_urls, setup,
		    teardown),
	};

	log_init(NULL, LOG_LEVEL_ERROR);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
