/*
 * http.c — owns the parsing of HTTP/1.1 response heads (also used for the
 * WebSocket 101) and the small GET client for NIP-11 documents. The client
 * writes one request, reads one response within fixed bounds (head size,
 * body size, chunk line length, total time) and closes. It must never
 * follow redirects, keep connections, block, or allocate a length a peer
 * declared before checking it against max_body.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/buf.h"
#include "core/log.h"
#include "core/loop.h"
#include "net/http.h"
#include "net/stream.h"
#include "net/url.h"

#define HTTP_FAIL(w)	do { if (why != NULL) *why = (w); return -1; } while (0)

static const char *
http_find_crlfcrlf(const char *buf, size_t len)
{
	size_t	 i;

	for (i = 0; i + 3 < len; i++)
		if (buf[i] == '\r' && memcmp(buf + i, "\r\n\r\n", 4) == 0)
			return buf + i;
	return NULL;
}

static int
http_tchar(int c)
{
	return isalnum(c) || (c != 0 && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

/* "HTTP/1.x SSS reason" in line[0..len). */
static int
http_status_line(const char *line, size_t len, struct http_head *h,
    const char **why)
{
	size_t	 i;

	if (len < 12 || memcmp(line, "HTTP/1.", 7) != 0 ||
	    !isdigit((unsigned char)line[7]) || line[8] != ' ')
		HTTP_FAIL("bad status line");
	h->status = 0;
	for (i = 9; i < 12; i++) {
		if (!isdigit((unsigned char)line[i]))
			HTTP_FAIL("bad status code");
		h->status = h->status * 10 + (line[i] - '0');
	}
	if (h->status < 100 || h->status > 599 || (len > 12 && line[12] != ' '))
		HTTP_FAIL("bad status code");
	h->reason = len > 12 ? line + 13 : line + 12;
	h->reason_len = len > 12 ? len - 13 : 0;
	return 0;
}

static int
http_header_line(const char *line, size_t len, struct http_head *h,
    const char **why)
{
	struct http_header	*f;
	const char		*v, *end = line + len;
	size_t			 n = 0;

	while (n < len && http_tchar((unsigned char)line[n]))
		n++;
	if (n == 0 || n == len || line[n] != ':')
		HTTP_FAIL("bad header line");
	if (h->nheaders == HTTP_MAX_HEADERS)
		HTTP_FAIL("too many headers");
	for (v = line + n + 1; v < end && (*v == ' ' || *v == '\t'); v++)
		;
	while (end > v && (end[-1] == ' ' || end[-1] == '\t'))
		end--;
	f = &h->headers[h->nheaders++];
	f->name = line;
	f->name_len = n;
	f->value = v;
	f->value_len = (size_t)(end - v);
	return 0;
}

int
http_head_parse(const char *buf, size_t len, size_t max, struct http_head *h,
    const char **why)
{
	const char	*end, *line, *eol;
	size_t		 i;

	memset(h, 0, sizeof(*h));
	end = http_find_crlfcrlf(buf, len < max ? len : max);
	if (end == NULL) {
		if (len >= max)
			HTTP_FAIL("response head too large");
		return 0;
	}
	/* Every CR ends a line and every LF follows a CR: lines split cleanly. */
	for (i = 0; buf + i < end; i++)
		if (buf[i] == '\0' || (buf[i] == '\n' && (i == 0 ||
		    buf[i - 1] != '\r')) || (buf[i] == '\r' && buf[i + 1] != '\n'))
			HTTP_FAIL("stray NUL, CR or LF in head");
	h->head_len = (size_t)(end - buf) + 4;
	end += 2;			/* keep the last header's CRLF */
	eol = memchr(buf, '\r', (size_t)(end - buf));
	if (http_status_line(buf, (size_t)(eol - buf), h, why) == -1)
		return -1;
	for (line = eol + 2; line < end; line = eol + 2) {
		eol = memchr(line, '\r', (size_t)(end - line));
		if (*line == ' ' || *line == '\t')
			HTTP_FAIL("folded header line");
		if (http_header_line(line, (size_t)(eol - line), h, why) == -1)
			return -1;
	}
	return 1;
}

const struct http_header *
http_head_find(const struct http_head *h, const char *name)
{
	size_t	 i, n = strlen(name);

	for (i = 0; i < h->nheaders; i++)
		if (h->headers[i].name_len == n &&
		    strncasecmp(h->headers[i].name, name, n) == 0)
			return &h->headers[i];
	return NULL;
}

bool
http_header_has_token(const struct http_header *f, const char *token)
{
	const char	*p = f->value, *end = f->value + f->value_len, *t;
	size_t		 n = strlen(token), tl;

	while (p < end) {
		while (p < end && (*p == ',' || *p == ' ' || *p == '\t'))
			p++;
		for (t = p; p < end && *p != ','; p++)
			;
		tl = (size_t)(p - t);
		while (tl > 0 && (t[tl - 1] == ' ' || t[tl - 1] == '\t'))
			tl--;
		if (tl == n && strncasecmp(t, token, n) == 0)
			return true;
	}
	return false;
}

/* The GET client. */

enum http_body_mode {
	HTTP_BODY_NONE = 0,
	HTTP_BODY_LENGTH,
	HTTP_BODY_CHUNKED,
	HTTP_BODY_CLOSE,
};

enum http_chunk_state {
	HTTP_CH_SIZE = 0,	/* reading a hex size line */
	HTTP_CH_DATA,		/* copying chunk bytes */
	HTTP_CH_DATA_END,	/* the CRLF after a chunk */
	HTTP_CH_TRAILER,	/* trailer lines until an empty one */
	HTTP_CH_DONE,
};

struct http_req {
	struct loop		*loop;
	struct stream		*st;
	http_cb			 cb;
	void			*arg;
	uint64_t		 timer;
	struct buf		 out;		/* request text */
	struct buf		 head;		/* response head, then unused */
	struct buf		 body;
	bool			 have_head;
	int			 status;
	enum http_body_mode	 mode;
	size_t			 remaining;	/* LENGTH and CH_DATA */
	enum http_chunk_state	 ch;
	char			 line[HTTP_MAX_CHUNK_LINE + 1];
	size_t			 line_len;
	size_t			 trailer_bytes;
};

static void
http_req_free(struct http_req *r)
{
	loop_timer_clear(r->loop, &r->timer);
	stream_close(r->st);
	buf_free(&r->out);
	buf_free(&r->head);
	buf_free(&r->body);
	free(r);
}

/* Report and free; the last thing any handler does. */
static void
http_finish(struct http_req *r, const char *err)
{
	http_cb	 cb = r->cb;
	void	*arg = r->arg;

	if (err != NULL)
		cb(0, NULL, 0, err, arg);
	else
		cb(r->status, buf_cstr(&r->body), r->body.len, NULL, arg);
	http_req_free(r);
}

/* One byte into the current chunk-framing line. -1 when it is too long. */
static int
http_chunk_line(struct http_req *r, char c, bool *complete)
{
	*complete = false;
	if (c == '\n') {
		if (r->line_len > 0 && r->line[r->line_len - 1] == '\r')
			r->line_len--;
		r->line[r->line_len] = '\0';
		*complete = true;
		return 0;
	}
	if (r->line_len == HTTP_MAX_CHUNK_LINE)
		return -1;
	r->line[r->line_len++] = c;
	return 0;
}

static const char *
http_chunk_size(struct http_req *r)
{
	char		*end;
	unsigned long long v;

	if (!isxdigit((unsigned char)r->line[0]))
		return "bad chunk size";
	v = strtoull(r->line, &end, 16);
	if (*end != '\0' && *end != ';' && *end != ' ' && *end != '\t')
		return "bad chunk size";
	if (v > r->body.max - r->body.len)
		return "body too large";
	r->remaining = (size_t)v;
	r->ch = v == 0 ? HTTP_CH_TRAILER : HTTP_CH_DATA;
	return NULL;
}

/* Feed chunked framing; returns a reason on error, NULL otherwise. */
static const char *
http_chunked(struct http_req *r, const char *p, size_t n)
{
	bool	 done;
	size_t	 k;

	while (n > 0 && r->ch != HTTP_CH_DONE) {
		if (r->ch == HTTP_CH_DATA) {
			k = n < r->remaining ? n : r->remaining;
			if (buf_append(&r->body, p, k) == -1)
				return "body too large";
			p += k, n -= k, r->remaining -= k;
			if (r->remaining == 0)
				r->ch = HTTP_CH_DATA_END;
			continue;
		}
		if (r->ch == HTTP_CH_TRAILER &&
		    ++r->trailer_bytes > HTTP_MAX_HEAD_BYTES)
			return "trailer too large";
		if (http_chunk_line(r, *p, &done) == -1)
			return "chunk line too long";
		p++, n--;
		if (!done)
			continue;
		if (r->ch == HTTP_CH_SIZE) {
			const char *e = http_chunk_size(r);
			if (e != NULL)
				return e;
		} else if (r->ch == HTTP_CH_DATA_END) {
			if (r->line_len != 0)
				return "missing CRLF after chunk";
			r->ch = HTTP_CH_SIZE;
		} else if (r->line_len == 0)
			r->ch = HTTP_CH_DONE;
		r->line_len = 0;
	}
	return NULL;
}

/* Bytes of body; returns a reason on error, NULL otherwise. */
static const char *
http_body(struct http_req *r, const char *p, size_t n)
{
	if (r->mode == HTTP_BODY_CHUNKED)
		return http_chunked(r, p, n);
	if (r->mode == HTTP_BODY_LENGTH && n > r->remaining)
		n = r->remaining;
	if (buf_append(&r->body, p, n) == -1)
		return "body too large";
	if (r->mode == HTTP_BODY_LENGTH)
		r->remaining -= n;
	return NULL;
}

static bool
http_complete(const struct http_req *r)
{
	return r->have_head && (r->mode == HTTP_BODY_NONE ||
	    (r->mode == HTTP_BODY_LENGTH && r->remaining == 0) ||
	    (r->mode == HTTP_BODY_CHUNKED && r->ch == HTTP_CH_DONE));
}

/* Choose how the body ends, from the parsed head. */
static const char *
http_body_mode(struct http_req *r, const struct http_head *h)
{
	const struct http_header	*te, *cl;
	char				 num[24], *end;
	unsigned long long		 v;

	r->status = h->status;
	te = http_head_find(h, "Transfer-Encoding");
	cl = http_head_find(h, "Content-Length");
	if (h->status < 200 || h->status == 204 || h->status == 304)
		r->mode = HTTP_BODY_NONE;
	else if (te != NULL) {
		if (!http_header_has_token(te, "chunked"))
			return "unsupported transfer encoding";
		r->mode = HTTP_BODY_CHUNKED;
	} else if (cl != NULL) {
		if (cl->value_len == 0 || cl->value_len >= sizeof(num))
			return "bad Content-Length";
		memcpy(num, cl->value, cl->value_len);
		num[cl->value_len] = '\0';
		if (!isdigit((unsigned char)num[0]))
			return "bad Content-Length";
		v = strtoull(num, &end, 10);
		if (*end != '\0')
			return "bad Content-Length";
		if (v > r->body.max)
			return "body too large";
		r->mode = HTTP_BODY_LENGTH;
		r->remaining = (size_t)v;
	} else
		r->mode = HTTP_BODY_CLOSE;
	return NULL;
}

/* Bytes read from the stream: head first, then body. */
static const char *
http_input(struct http_req *r, const char *p, size_t n)
{
	struct http_head	 h;
	const char		*why = NULL, *e;
	int			 rc;

	if (r->have_head)
		return http_body(r, p, n);
	if (buf_append(&r->head, p, n) == -1)
		return "response head too large";
	rc = http_head_parse((const char *)r->head.data, r->head.len,
	    HTTP_MAX_HEAD_BYTES, &h, &why);
	if (rc == -1)
		return why;
	if (rc == 0)
		return NULL;
	if ((e = http_body_mode(r, &h)) != NULL)
		return e;
	r->have_head = true;
	return http_body(r, (const char *)r->head.data + h.head_len,
	    r->head.len - h.head_len);
}

static void
http_on_io(void *arg, short revents)
{
	struct http_req	*r = arg;
	char		 tmp[4096];
	const char	*e;
	ssize_t		 n;

	while (r->out.pos < r->out.len) {
		n = stream_write(r->st, buf_rptr(&r->out), buf_avail(&r->out));
		if (n == STREAM_AGAIN)
			return;
		if (n < 0) {
			http_finish(r, stream_reason(r->st));
			return;
		}
		buf_skip(&r->out, (size_t)n);
		if (r->out.pos == r->out.len)
			stream_want(r->st, true, false);
	}
	for (;;) {
		n = stream_read(r->st, tmp, sizeof(tmp));
		if (n == STREAM_AGAIN)
			return;
		if (n < 0) {
			http_finish(r, stream_reason(r->st));
			return;
		}
		if (n == 0) {
			http_finish(r, r->have_head && r->mode == HTTP_BODY_CLOSE ?
			    NULL : "connection closed before the response ended");
			return;
		}
		if ((e = http_input(r, tmp, (size_t)n)) != NULL) {
			http_finish(r, e);
			return;
		}
		if (http_complete(r)) {
			http_finish(r, NULL);
			return;
		}
	}
}

static void
http_on_ready(void *arg)
{
	struct http_req	*r = arg;

	stream_want(r->st, false, true);
	http_on_io(r, POLLOUT);
}

static void
http_on_error(void *arg, const char *reason)
{
	http_finish(arg, reason);
}

static void
http_on_timeout(struct loop *l, void *arg)
{
	struct http_req	*r = arg;

	r->timer = 0;
	http_finish(r, "HTTP request timed out");
}

static int
http_request_text(struct http_req *r, const struct url *u,
    const struct http_opts *o)
{
	char	 host[URL_MAX_HOST + 16];

	if (url_host_header(u, host, sizeof(host)) == -1)
		return -1;
	if (buf_printf(&r->out, "GET %s HTTP/1.1\r\nHost: %s\r\n"
	    "User-Agent: cachebox/%s\r\nConnection: close\r\n", u->path, host,
	    CACHEBOX_VERSION) == -1)
		return -1;
	if (o->accept != NULL && buf_printf(&r->out, "Accept: %s\r\n",
	    o->accept) == -1)
		return -1;
	return buf_puts(&r->out, "\r\n");
}

struct http_req *
http_get(struct loop *l, const char *text, const struct http_opts *o,
    http_cb cb, void *arg, char *err, size_t errlen)
{
	static const struct stream_cbs	 scbs = {
		http_on_ready, http_on_error, http_on_io, NULL
	};
	struct stream_opts		 so;
	struct http_req			*r;
	struct url			 u;
	const char			*why;

	if (url_parse(text, &u, &why) == -1) {
		snprintf(err, errlen, "bad URL: %s", why);
		return NULL;
	}
	if (o->accept != NULL && strpbrk(o->accept, "\r\n") != NULL) {
		snprintf(err, errlen, "bad Accept value");
		return NULL;
	}
	if ((r = calloc(1, sizeof(*r))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	r->loop = l;
	r->cb = cb;
	r->arg = arg;
	buf_init(&r->out, URL_MAX_BYTES + URL_MAX_HOST + 512);
	buf_init(&r->head, HTTP_MAX_HEAD_BYTES);
	buf_init(&r->body, o->max_body != 0 ? o->max_body : HTTP_MAX_BODY_BYTES);
	if (http_request_text(r, &u, o) == -1) {
		snprintf(err, errlen, "request too long");
		goto fail;
	}
	r->timer = loop_timer_add(l, o->timeout_ms != 0 ? o->timeout_ms :
	    HTTP_TIMEOUT_MS, http_on_timeout, r);
	memset(&so, 0, sizeof(so));
	so.dns = o->dns;
	so.ca_file = o->ca_file;
	if (r->timer == 0 ||
	    (r->st = stream_open(l, &u, &so, &scbs, r, err, errlen)) == NULL)
		goto fail;
	return r;
fail:
	http_req_free(r);
	return NULL;
}

void
http_cancel(struct http_req *r)
{
	if (r != NULL)
		http_req_free(r);
}
