/*
 * http.h — the HTTP/1.1 response-head parser shared by the WebSocket
 * handshake, and a minimal GET client (NIP-11 relay information documents)
 * on the same stream transport as WebSockets.
 */
#ifndef CACHEBOX_NET_HTTP_H
#define CACHEBOX_NET_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/limits.h"

struct loop;
struct dns;
struct http_req;

struct http_header {
	const char	*name;		/* points into the parsed buffer */
	size_t		 name_len;
	const char	*value;		/* without surrounding blanks */
	size_t		 value_len;
};

struct http_head {
	int			 status;	/* 100..599 */
	const char		*reason;	/* into the buffer; may be empty */
	size_t			 reason_len;
	size_t			 head_len;	/* bytes up to and including CRLFCRLF */
	size_t			 nheaders;
	struct http_header	 headers[HTTP_MAX_HEADERS];
};

/*
 * Parse the response head at the start of buf[0..len), allowing at most max
 * bytes of head. Returns 1 when a whole head was parsed into h (the body,
 * if any, starts at buf + h->head_len), 0 when more bytes are needed, -1
 * when the head is malformed or larger than max (a static reason in *why).
 * h points into buf: keep buf alive while using it.
 */
int		 http_head_parse(const char *buf, size_t len, size_t max,
		    struct http_head *h, const char **why);
/* The first header named name (any case), or NULL. */
const struct http_header *http_head_find(const struct http_head *,
		    const char *name);
/* Does a comma-separated header value hold token (any case)? */
bool		 http_header_has_token(const struct http_header *,
		    const char *token);

struct http_opts {
	struct dns	*dns;		/* needed for host names */
	const char	*ca_file;	/* NULL or "": system bundle */
	const char	*accept;	/* Accept header, NULL for none */
	size_t		 max_body;	/* 0: HTTP_MAX_BODY_BYTES */
	uint32_t	 timeout_ms;	/* whole request, 0: HTTP_TIMEOUT_MS */
};

/*
 * Outcome of a GET: status (100..599) and the body (NUL-terminated, len
 * bytes, owned by the client and valid during the call) with err NULL; or
 * status 0, body NULL and err a reason. Runs once; the handle is gone after.
 */
typedef void	(*http_cb)(int status, const char *body, size_t len,
		    const char *err, void *arg);

/*
 * GET url (http:// or https://; ws:// and wss:// are fetched as http and
 * https, which is how NIP-11 documents are found). cb runs exactly once from
 * the loop unless http_cancel() runs first. Bodies may be sized by
 * Content-Length, chunked, or end at connection close; a body over max_body
 * fails. Returns the request, or NULL with a reason in err.
 */
struct http_req	*http_get(struct loop *, const char *url, const struct http_opts *,
		    http_cb cb, void *arg, char *err, size_t errlen);
/* Abandon a request before its cb ran (safe from any callback). */
void		 http_cancel(struct http_req *);

#endif
