/*
 * test_url.c — url_parse: exact fields for every accepted form (names,
 * IPv4, IPv6, ports, paths, queries, defaults) and the reason for every
 * refused one; url_host_header for each host kind.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "net/url.h"

static void
test_defaults(void **state)
{
	struct url	 u;

	assert_int_equal(url_parse("wss://Relay.Damus.IO", &u, NULL), 0);
	assert_int_equal(u.scheme, URL_WSS);
	assert_true(u.tls);
	assert_int_equal(u.host_kind, URL_HOST_NAME);
	assert_string_equal(u.host, "relay.damus.io");
	assert_int_equal(u.port, 443);
	assert_false(u.port_explicit);
	assert_string_equal(u.path, "/");

	assert_int_equal(url_parse("WS://example.com/", &u, NULL), 0);
	assert_int_equal(u.scheme, URL_WS);
	assert_false(u.tls);
	assert_int_equal(u.port, 80);
	assert_string_equal(u.path, "/");

	assert_int_equal(url_parse("https://nos.lol", &u, NULL), 0);
	assert_int_equal(u.scheme, URL_HTTPS);
	assert_int_equal(u.port, 443);
	assert_int_equal(url_parse("http://nos.lol", &u, NULL), 0);
	assert_int_equal(u.scheme, URL_HTTP);
	assert_int_equal(u.port, 80);
}

static void
test_ports_paths(void **state)
{
	struct url	 u;

	assert_int_equal(url_parse("ws://localhost:7777/a/b?x=1&y=%20", &u,
	    NULL), 0);
	assert_string_equal(u.host, "localhost");
	assert_int_equal(u.port, 7777);
	assert_true(u.port_explicit);
	assert_string_equal(u.path, "/a/b?x=1&y=%20");

	assert_int_equal(url_parse("wss://h.example:65535?q", &u, NULL), 0);
	assert_int_equal(u.port, 65535);
	assert_string_equal(u.path, "/?q");

	assert_int_equal(url_parse("ws://h:1", &u, NULL), 0);
	assert_int_equal(u.port, 1);
	assert_string_equal(u.path, "/");
}

static void
test_ipv4(void **state)
{
	static const uint8_t	 a[4] = { 127, 0, 0, 1 };
	struct url		 u;

	assert_int_equal(url_parse("ws://127.0.0.1:8080/x", &u, NULL), 0);
	assert_int_equal(u.host_kind, URL_HOST_IPV4);
	assert_string_equal(u.host, "127.0.0.1");
	assert_memory_equal(u.addr, a, 4);
	assert_int_equal(u.port, 8080);
	assert_string_equal(u.path, "/x");
}

static void
test_ipv6(void **state)
{
	static const uint8_t	 lo[16] = { [15] = 1 };
	static const uint8_t	 db[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 0x42 };
	struct url		 u;
	char			 h[64];

	assert_int_equal(url_parse("wss://[::1]:4443/r", &u, NULL), 0);
	assert_int_equal(u.host_kind, URL_HOST_IPV6);
	assert_string_equal(u.host, "::1");
	assert_memory_equal(u.addr, lo, 16);
	assert_int_equal(u.port, 4443);
	assert_string_equal(u.path, "/r");
	assert_int_equal(url_host_header(&u, h, sizeof(h)), 0);
	assert_string_equal(h, "[::1]:4443");

	assert_int_equal(url_parse("ws://[2001:db8::42]", &u, NULL), 0);
	assert_memory_equal(u.addr, db, 16);
	assert_int_equal(u.port, 80);
	assert_string_equal(u.path, "/");
	assert_int_equal(url_host_header(&u, h, sizeof(h)), 0);
	assert_string_equal(h, "[2001:db8::42]");
}

static void
test_host_header(void **state)
{
	struct url	 u;
	char		 h[64];

	assert_int_equal(url_parse("wss://a.b:443/", &u, NULL), 0);
	assert_int_equal(url_host_header(&u, h, sizeof(h)), 0);
	assert_string_equal(h, "a.b");
	assert_int_equal(url_parse("ws://a.b:443/", &u, NULL), 0);
	assert_int_equal(url_host_header(&u, h, sizeof(h)), 0);
	assert_string_equal(h, "a.b:443");
	assert_int_equal(url_host_header(&u, h, 4), -1);
}

static void
expect_refused(const char *text, const char *reason)
{
	struct url	 u;
	const char	*why = NULL;

	assert_int_equal(url_parse(text, &u, &why), -1);
	assert_non_null(why);
	assert_string_equal(why, reason);
}

static void
test_refused(void **state)
{
	expect_refused("ftp://x", "scheme must be ws, wss, http or https");
	expect_refused("wss:/x", "scheme must be ws, wss, http or https");
	expect_refused("relay.damus.io", "scheme must be ws, wss, http or https");
	expect_refused("wss://user:pw@host/", "userinfo is not allowed");
	expect_refused("wss://host/#frag", "fragment is not allowed");
	expect_refused("wss://host:0/", "bad port");
	expect_refused("wss://host:65536/", "bad port");
	expect_refused("wss://host:/", "bad port");
	expect_refused("wss://host:12a/", "bad port");
	expect_refused("wss://host:000443/", "bad port");
	expect_refused("wss:///path", "empty host");
	expect_refused("wss://:443/", "empty host");
	expect_refused("wss://ho st/", "bad host name");
	expect_refused("wss://a..b/", "bad host name");
	expect_refused("wss://[::1/", "unterminated IPv6 literal");
	expect_refused("wss://[::1]x/", "junk after IPv6 literal");
	expect_refused("wss://[fe80::1%25eth0]/", "bad IPv6 literal");
	expect_refused("wss://[::g]/", "bad IPv6 literal");
	expect_refused("wss://[]/", "bad IPv6 literal");
	expect_refused("wss://256.1.1.1/", "bad IPv4 address");
	expect_refused("wss://1.2.3/", "bad IPv4 address");
	expect_refused("wss://host/a b", "space or control byte in path");
	expect_refused("wss://host/a\r\nX: y", "space or control byte in path");
}

static void
test_length(void **state)
{
	char		 big[URL_MAX_BYTES + 2];
	struct url	 u;
	size_t		 pre = strlen("ws://h/");

	memcpy(big, "ws://h/", pre);
	memset(big + pre, 'a', URL_MAX_BYTES - pre);
	big[URL_MAX_BYTES] = '\0';
	assert_int_equal(url_parse(big, &u, NULL), 0);
	assert_int_equal(strlen(u.path), URL_MAX_BYTES - pre + 1);
	big[URL_MAX_BYTES] = 'a';
	big[URL_MAX_BYTES + 1] = '\0';
	expect_refused(big, "URL too long");

	memcpy(big, "ws://", 5);
	memset(big + 5, 'a', 63);
	big[5 + 63] = '\0';
	assert_int_equal(url_parse(big, &u, NULL), 0);
	big[5 + 63] = 'a';
	big[5 + 64] = '\0';
	expect_refused(big, "bad host name");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_ports_paths),
		cmocka_unit_test(test_ipv4),
		cmocka_unit_test(test_ipv6),
		cmocka_unit_test(test_host_header),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_length),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
