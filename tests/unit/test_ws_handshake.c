/*
 * test_ws_handshake.c — the WebSocket opening-handshake response parser
 * (ws_handshake_parse) and the accept-key derivation: a good 101, a wrong
 * accept, a refused redirect, other statuses, missing headers, oversized
 * heads, and a response arriving one byte at a time; plus the shared HTTP
 * head parser's token matching.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "core/limits.h"
#include "net/http.h"
#include "net/ws.h"
#include "net/ws_handshake.h"

/* RFC 6455 section 1.3. */
#define KEY	"dGhlIHNhbXBsZSBub25jZQ=="
#define ACCEPT	"s3pPLMBiTxaQ9kYGzzhZRbK+xOo="

static const char good[] =
    "HTTP/1.1 101 Switching Protocols\r\n"
    "Upgrade: websocket\r\n"
    "Connection: Upgrade\r\n"
    "Sec-WebSocket-Accept: " ACCEPT "\r\n"
    "\r\n";

static int
parse(const char *buf, size_t len, size_t *used, char *why, size_t whylen)
{
	return ws_handshake_parse(buf, len, ACCEPT, used, why, whylen);
}

static void
test_accept_key(void **state)
{
	char	 out[WS_ACCEPT_LEN + 1];

	assert_int_equal(ws_accept_for_key(KEY, out), 0);
	assert_string_equal(out, ACCEPT);
}

static void
test_good(void **state)
{
	char	 why[128] = "";
	char	 withframe[sizeof(good) + 8];
	size_t	 used = 0;

	assert_int_equal(parse(good, strlen(good), &used, why, sizeof(why)), 1);
	assert_int_equal(used, strlen(good));
	/* A frame right behind the head is not part of it. */
	memcpy(withframe, good, strlen(good));
	memcpy(withframe + strlen(good), "\x81\x02hi", 4);
	assert_int_equal(parse(withframe, strlen(good) + 4, &used, why,
	    sizeof(why)), 1);
	assert_int_equal(used, strlen(good));
}

static void
test_tokens_any_case(void **state)
{
	static const char r[] =
	    "HTTP/1.1 101 OK\r\n"
	    "upgrade:   WebSocket  \r\n"
	    "connection: keep-alive, UPGRADE\r\n"
	    "sec-websocket-accept: " ACCEPT "\r\n"
	    "X-Other: y\r\n"
	    "\r\n";
	char	 why[128];
	size_t	 used;

	assert_int_equal(parse(r, strlen(r), &used, why, sizeof(why)), 1);
	assert_int_equal(used, strlen(r));
}

static void
expect_fail(const char *resp, const char *reason)
{
	char	 why[256] = "";
	size_t	 used = 0;

	assert_int_equal(parse(resp, strlen(resp), &used, why, sizeof(why)), -1);
	assert_string_equal(why, reason);
}

static void
test_wrong_accept(void **state)
{
	expect_fail("HTTP/1.1 101 Switching Protocols\r\n"
	    "Upgrade: websocket\r\nConnection: Upgrade\r\n"
	    "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOp=\r\n\r\n",
	    "wrong Sec-WebSocket-Accept");
	expect_fail("HTTP/1.1 101 Switching Protocols\r\n"
	    "Upgrade: websocket\r\nConnection: Upgrade\r\n\r\n",
	    "handshake without Sec-WebSocket-Accept");
	expect_fail("HTTP/1.1 101 Switching Protocols\r\n"
	    "Connection: Upgrade\r\nSec-WebSocket-Accept: " ACCEPT "\r\n\r\n",
	    "handshake without Upgrade: websocket");
	expect_fail("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
	    "Connection: close\r\nSec-WebSocket-Accept: " ACCEPT "\r\n\r\n",
	    "handshake without Connection: upgrade");
	expect_fail("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
	    "Connection: upgrade\r\nSec-WebSocket-Accept: " ACCEPT "\r\n"
	    "Sec-WebSocket-Extensions: permessage-deflate\r\n\r\n",
	    "server chose an extension that was not offered");
}

static void
test_redirect_refused(void **state)
{
	expect_fail("HTTP/1.1 301 Moved Permanently\r\n"
	    "Location: wss://elsewhere.example/\r\nContent-Length: 0\r\n\r\n",
	    "redirect refused (HTTP 301 to wss://elsewhere.example/)");
	expect_fail("HTTP/1.1 302 Found\r\n\r\n",
	    "redirect refused (HTTP 302 to nowhere)");
	expect_fail("HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\n\r\nnot found",
	    "upgrade refused: HTTP 404 Not Found");
	expect_fail("HTTP/1.1 200 OK\r\n\r\n", "upgrade refused: HTTP 200 OK");
}

static void
test_malformed(void **state)
{
	expect_fail("HTTP/2 101 x\r\n\r\n", "bad handshake response: bad status line");
	expect_fail("HTTP/1.1 1O1 x\r\n\r\n", "bad handshake response: bad status code");
	expect_fail("HTTP/1.1 101 x\r\nNo colon here\r\n\r\n",
	    "bad handshake response: bad header line");
	expect_fail("HTTP/1.1 101 x\r\nA: b\r\n folded\r\n\r\n",
	    "bad handshake response: folded header line");
	expect_fail("HTTP/1.1 101 x\nA: b\r\n\r\n",
	    "bad handshake response: stray NUL, CR or LF in head");
	expect_fail("HTTP/1.1 101 x\r\nA: b\r\r\n\r\n",
	    "bad handshake response: stray NUL, CR or LF in head");
}

static void
test_oversized(void **state)
{
	static char	 big[WS_HANDSHAKE_MAX_BYTES + 64];
	char		 why[128] = "";
	size_t		 used, off;

	off = (size_t)snprintf(big, sizeof(big), "HTTP/1.1 101 OK\r\n");
	while (off + 12 < WS_HANDSHAKE_MAX_BYTES + 10)
		off += (size_t)snprintf(big + off, sizeof(big) - off,
		    "X-Pad: abc\r\n");
	/* No end of head within the limit: refused, not "need more". */
	assert_int_equal(parse(big, off, &used, why, sizeof(why)), -1);
	assert_string_equal(why,
	    "bad handshake response: response head too large");
	/* Just below the limit without an end yet: need more. */
	assert_int_equal(parse(big, WS_HANDSHAKE_MAX_BYTES - 1, &used, why,
	    sizeof(why)), 0);

	/* Too many header lines, within the byte limit. */
	off = (size_t)snprintf(big, sizeof(big), "HTTP/1.1 101 OK\r\n");
	for (int i = 0; i <= HTTP_MAX_HEADERS; i++)
		off += (size_t)snprintf(big + off, sizeof(big) - off, "A: b\r\n");
	off += (size_t)snprintf(big + off, sizeof(big) - off, "\r\n");
	assert_int_equal(parse(big, off, &used, why, sizeof(why)), -1);
	assert_string_equal(why, "bad handshake response: too many headers");
}

static void
test_split_reads(void **state)
{
	char	 why[128];
	size_t	 used = 0, i, n = strlen(good);

	for (i = 0; i < n; i++)
		assert_int_equal(parse(good, i, &used, why, sizeof(why)), 0);
	assert_int_equal(parse(good, n, &used, why, sizeof(why)), 1);
	assert_int_equal(used, n);
}

static void
test_head_parser(void **state)
{
	static const char r[] = "HTTP/1.0 200 OK\r\nContent-Length: 12\r\n"
	    "Transfer-Encoding: gzip , Chunked\r\n\r\nbody";
	struct http_head		 h;
	const struct http_header	*f;
	const char			*why = NULL;

	assert_int_equal(http_head_parse(r, strlen(r), 1024, &h, &why), 1);
	assert_int_equal(h.status, 200);
	assert_int_equal(h.nheaders, 2);
	assert_int_equal(h.head_len, strlen(r) - 4);
	assert_non_null(f = http_head_find(&h, "content-length"));
	assert_int_equal(f->value_len, 2);
	assert_memory_equal(f->value, "12", 2);
	assert_non_null(f = http_head_find(&h, "transfer-encoding"));
	assert_true(http_header_has_token(f, "chunked"));
	assert_true(http_header_has_token(f, "gzip"));
	assert_false(http_header_has_token(f, "chunk"));
	assert_null(http_head_find(&h, "Location"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_accept_key),
		cmocka_unit_test(test_good),
		cmocka_unit_test(test_tokens_any_case),
		cmocka_unit_test(test_wrong_accept),
		cmocka_unit_test(test_redirect_refused),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_oversized),
		cmocka_unit_test(test_split_reads),
		cmocka_unit_test(test_head_parser),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
