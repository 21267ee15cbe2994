/*
 * test_http_screen.c — the front door's look at a request head: complete
 * or not, passed with its length, or refused with the exact status and
 * reason for each rule (one all-digit Content-Length within the limit, no
 * Transfer-Encoding, query arguments, header lines, the head's size).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/limits.h"
#include "net/http_screen.h"

#define HEAD	16384
#define BODY	65536

static enum http_screen_verdict
screen(const char *s, struct http_screen *out)
{
	return http_screen(s, strlen(s), HEAD, BODY, out);
}

static void
refused(const char *s, unsigned status, const char *reason)
{
	struct http_screen	o;

	assert_int_equal(screen(s, &o), HTTP_SCREEN_REFUSE);
	assert_int_equal(o.status, status);
	assert_string_equal(o.reason, reason);
}

static void
test_pass_and_more(void **state)
{
	struct http_screen	o;
	const char		*get = "GET /api/status HTTP/1.1\r\nHost: x\r\n\r\n";
	const char		*post = "POST /api/config/set HTTP/1.1\r\n"
				    "Content-Length: 12\r\n\r\n{\"key\":\"a\"}";
	size_t			 i;

	assert_int_equal(screen(get, &o), HTTP_SCREEN_PASS);
	assert_int_equal(o.head_len, strlen(get));
	assert_int_equal(screen(post, &o), HTTP_SCREEN_PASS);
	assert_int_equal(o.head_len, strlen(post) - 11);
	/* Every proper prefix of a head is "more". */
	for (i = 0; i < strlen(get); i++)
		assert_int_equal(http_screen(get, i, HEAD, BODY, &o),
		    HTTP_SCREEN_MORE);
	assert_int_equal(screen("GET / HTTP/1.0\n\n", &o), HTTP_SCREEN_PASS);
	assert_int_equal(screen("\r\nGET / HTTP/1.1\r\n\r\n", &o),
	    HTTP_SCREEN_PASS);
	/* Empty lines before the request line end no head. */
	assert_int_equal(screen("\n\n\r\n", &o), HTTP_SCREEN_MORE);
	assert_int_equal(screen("\n\n\r\nGET / HTTP/1.1\r\n", &o),
	    HTTP_SCREEN_MORE);
	assert_int_equal(screen("\n\n\r\nGET / HTTP/1.1\r\n\r\n", &o),
	    HTTP_SCREEN_PASS);
	/* Found by fuzz_http_screen: a head that was only empty lines. */
	refused("\n\n\r\nhe_\nhe_P_Cont: 8\rHTTP/1.1\r\n\n", 400,
	    "malformed request line");
	assert_int_equal(screen("GET /?a=1&b=2 HTTP/1.1\r\n"
	    "Content-Length:  0 \r\n\r\n", &o), HTTP_SCREEN_PASS);
}

static void
test_lengths(void **state)
{
	refused("POST / HTTP/1.1\r\nContent-Length: abc\r\n\r\n", 400,
	    "malformed Content-Length");
	refused("POST / HTTP/1.1\r\nContent-Length: 5 5\r\n\r\n", 400,
	    "malformed Content-Length");
	refused("POST / HTTP/1.1\r\nContent-Length:\r\n\r\n", 400,
	    "malformed Content-Length");
	refused("POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n", 400,
	    "malformed Content-Length");
	refused("POST / HTTP/1.1\r\nContent-Length: 5\r\ncontent-length: 5"
	    "\r\n\r\nhello", 400, "more than one Content-Length");
	refused("POST / HTTP/1.1\r\nContent-Length: 65537\r\n\r\n", 413,
	    "body too large");
	refused("POST / HTTP/1.1\r\nContent-Length: 99999999999999999999999"
	    "\r\n\r\n", 413, "body too large");
	refused("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", 400,
	    "Transfer-Encoding is not accepted; send a Content-Length");
}

static void
test_shapes(void **state)
{
	char	buf[HEAD + 64], *p;
	int	i;

	refused("GET\r\n\r\n", 400, "malformed request line");
	refused("GET /x\r\n\r\n", 400, "malformed request line");
	refused("GET x HTTP/1.1\r\n\r\n", 400, "malformed request line");
	refused("GET / FTP/1.1\r\n\r\n", 400, "malformed request line");
	refused("GET /\x01 HTTP/1.1\r\n\r\n", 400, "malformed request line");
	refused("GET / HTTP/1.1\r\nno colon here\r\n\r\n", 400,
	    "malformed header line");
	refused("GET / HTTP/1.1\r\nA: b\r\n folded\r\n\r\n", 400,
	    "malformed header line");
	/* 32 query arguments pass, 33 do not. */
	p = buf + sprintf(buf, "GET /api/status?a0=0");
	for (i = 1; i < 33; i++)
		p += sprintf(p, "&a%d=%d", i, i);
	sprintf(p, " HTTP/1.1\r\n\r\n");
	refused(buf, 414, "too many query arguments");
	p = buf + sprintf(buf, "GET /api/status?a0=0");
	for (i = 1; i < 32; i++)
		p += sprintf(p, "&a%d=%d", i, i);
	sprintf(p, " HTTP/1.1\r\n\r\n");
	struct http_screen o;
	assert_int_equal(screen(buf, &o), HTTP_SCREEN_PASS);
	/* Header lines and the head's size. */
	p = buf + sprintf(buf, "GET / HTTP/1.1\r\n");
	for (i = 0; i < HTTP_API_MAX_HEADER_LINES + 1; i++)
		p += sprintf(p, "X-%d: 1\r\n", i);
	sprintf(p, "\r\n");
	refused(buf, 431, "too many header lines");
	memset(buf, 'a', HEAD);
	memcpy(buf, "GET / HTTP/1.1\r\nX: ", 19);
	assert_int_equal(http_screen(buf, HEAD, HEAD, BODY, &o),
	    HTTP_SCREEN_REFUSE);
	assert_int_equal(o.status, 431);
	assert_int_equal(http_screen(buf, HEAD - 1, HEAD, BODY, &o),
	    HTTP_SCREEN_MORE);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pass_and_more),
		cmocka_unit_test(test_lengths),
		cmocka_unit_test(test_shapes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
