/*
 * http_screen.h — the first look at an HTTP request head, before any HTTP
 * library sees it. A server's front door (http_door.c) peeks at what a
 * client sent and asks here whether the head is complete, and whether it
 * is one the server will parse: one request line, at most
 * HTTP_API_MAX_HEADER_LINES header lines, at most HTTP_API_MAX_QUERY_ARGS
 * query arguments, no Transfer-Encoding, and at most one Content-Length,
 * all digits, within the body limit. Anything else gets a status and a
 * reason to answer with, and the connection is closed.
 *
 * Pure: no I/O, no allocation, no state; the caller owns the bytes.
 */
#ifndef CACHEBOX_NET_HTTP_SCREEN_H
#define CACHEBOX_NET_HTTP_SCREEN_H

#include <stddef.h>

enum http_screen_verdict {
	HTTP_SCREEN_MORE,	/* the head is not complete yet */
	HTTP_SCREEN_PASS,	/* a complete head worth parsing */
	HTTP_SCREEN_REFUSE,	/* answer status/reason and close */
};

struct http_screen {
	unsigned	 status;	/* for HTTP_SCREEN_REFUSE: 400, 413, 414, 431 */
	const char	*reason;	/* static text */
	size_t		 head_len;	/* for HTTP_SCREEN_PASS: bytes of the head */
};

/*
 * Look at the first n bytes a client sent. max_head bounds the head in
 * bytes (a head that has not ended by then is refused with 431), max_body
 * the declared Content-Length (413 above it).
 */
enum http_screen_verdict http_screen(const char *buf, size_t n,
		    size_t max_head, size_t max_body, struct http_screen *out);

/* The reason phrase of a status http_screen() may give ("Bad Request"). */
const char	*http_screen_phrase(unsigned status);

#endif
