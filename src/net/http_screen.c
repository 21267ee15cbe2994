/*
 * http_screen.c — checks a request head against the few rules a server of
 * cachebox's needs (http_screen.h). It parses only what it must to decide:
 * the request line's shape, the query's argument count, header names, and
 * the Content-Length and Transfer-Encoding values. It never reads past n
 * and never decides what a request means.
 */
#include <ctype.h>
#include <stdbool.h>
#include <string.h>
#include <strings.h>

#include "core/limits.h"
#include "net/http_screen.h"

/*
 * A head is done at its first empty line ("\r\n\r\n", or bare "\n\n")
 * after the request line: empty lines before it are skipped (RFC 9112
 * 2.2), so they never end a head that has not begun.
 */
static size_t
head_end(const char *buf, size_t n)
{
	size_t	i = 0;

	while (i < n && (buf[i] == '\r' || buf[i] == '\n'))
		i++;
	for (; i + 1 < n; i++) {
		if (buf[i] != '\n')
			continue;
		if (buf[i + 1] == '\n')
			return i + 2;
		if (buf[i + 1] == '\r' && i + 2 < n && buf[i + 2] == '\n')
			return i + 3;
	}
	return 0;
}

static enum http_screen_verdict
refuse(struct http_screen *out, unsigned status, const char *reason)
{
	out->status = status;
	out->reason = reason;
	return HTTP_SCREEN_REFUSE;
}

/*
 * The length of the line at p (up to its '\n', or end if it has none,
 * without a '\r').
 */
static size_t
line_len(const char *p, const char *end, const char **next)
{
	const char	*nl = memchr(p, '\n', (size_t)(end - p));
	size_t		 len;

	if (nl == NULL)
		nl = end;	/* no newline: the line runs to end */
	len = (size_t)(nl - p);
	*next = nl < end ? nl + 1 : end;
	if (len > 0 && p[len - 1] == '\r')
		len--;
	return len;
}

/* Query arguments in a request target: '&'-separated, empty ones too. */
static size_t
query_args(const char *target, size_t len)
{
	const char	*q = memchr(target, '?', len);
	size_t		 i, n = 1;

	if (q == NULL || q + 1 == target + len)
		return 0;
	for (i = (size_t)(q - target) + 1; i < len; i++)
		n += target[i] == '&';
	return n;
}

/* "METHOD SP /target SP HTTP/1.x" with printable characters only. */
static int
request_line_ok(const char *p, size_t len, size_t *args)
{
	const char	*sp1, *sp2;
	size_t		 i;

	for (i = 0; i < len; i++)
		if (!isprint((unsigned char)p[i]))
			return 0;
	if ((sp1 = memchr(p, ' ', len)) == NULL || sp1 == p)
		return 0;
	if ((sp2 = memchr(sp1 + 1, ' ', (size_t)(p + len - sp1 - 1))) == NULL ||
	    sp1[1] != '/')
		return 0;
	if ((size_t)(p + len - sp2 - 1) != 8 || strncmp(sp2 + 1, "HTTP/1.", 7) != 0)
		return 0;
	*args = query_args(sp1 + 1, (size_t)(sp2 - sp1 - 1));
	return 1;
}

/* Digits only, surrounded by optional blanks; *v gets the value, capped. */
static int
length_ok(const char *v, size_t len, size_t *out)
{
	size_t	i = 0, digits = 0, n = 0;

	while (i < len && (v[i] == ' ' || v[i] == '\t'))
		i++;
	for (; i < len && isdigit((unsigned char)v[i]); i++, digits++)
		n = n > ((size_t)-1 - 9) / 10 ? (size_t)-1 : n * 10 +
		    (size_t)(v[i] - '0');
	while (i < len && (v[i] == ' ' || v[i] == '\t'))
		i++;
	*out = n;
	return digits > 0 && i == len;
}

struct head_facts {
	unsigned	lines;
	unsigned	lengths;	/* Content-Length headers */
	size_t		length;
	bool		bad_length;
	bool		chunked;	/* any Transfer-Encoding */
	bool		malformed;
};

static void
header_line(const char *p, size_t len, struct head_facts *f)
{
	const char	*colon = memchr(p, ':', len);
	size_t		 nlen, i;

	f->lines++;
	if (colon == NULL || colon == p || p[0] == ' ' || p[0] == '\t') {
		f->malformed = true;	/* no name, or an obsolete folded line */
		return;
	}
	nlen = (size_t)(colon - p);
	for (i = 0; i < nlen; i++)
		if (!isgraph((unsigned char)p[i]))
			f->malformed = true;
	if (nlen == 14 && strncasecmp(p, "Content-Length", 14) == 0) {
		f->lengths++;
		if (!length_ok(colon + 1, len - nlen - 1, &f->length))
			f->bad_length = true;
	} else if (nlen == 17 && strncasecmp(p, "Transfer-Encoding", 17) == 0)
		f->chunked = true;
}

enum http_screen_verdict
http_screen(const char *buf, size_t n, size_t max_head, size_t max_body,
    struct http_screen *out)
{
	struct head_facts	 f = { 0 };
	const char		*p = buf, *end, *next;
	size_t			 len, args = 0, hl = head_end(buf, n);

	memset(out, 0, sizeof(*out));
	if (hl == 0 || hl > max_head)
		return n >= max_head ? refuse(out, 431, "request head too "
		    "large") : HTTP_SCREEN_MORE;
	end = buf + hl;
	while (p < end && (*p == '\r' || *p == '\n'))	/* RFC 9112 2.2 */
		p++;
	len = line_len(p, end, &next);
	if (!request_line_ok(p, len, &args))
		return refuse(out, 400, "malformed request line");
	if (args > HTTP_API_MAX_QUERY_ARGS)
		return refuse(out, 414, "too many query arguments");
	for (p = next; p < end && (len = line_len(p, end, &next)) > 0; p = next)
		header_line(p, len, &f);
	if (f.malformed)
		return refuse(out, 400, "malformed header line");
	if (f.lines > HTTP_API_MAX_HEADER_LINES)
		return refuse(out, 431, "too many header lines");
	if (f.chunked)
		return refuse(out, 400, "Transfer-Encoding is not accepted; "
		    "send a Content-Length");
	if (f.lengths > 1)
		return refuse(out, 400, "more than one Content-Length");
	if (f.bad_length)
		return refuse(out, 400, "malformed Content-Length");
	if (f.lengths == 1 && f.length > max_body)
		return refuse(out, 413, "body too large");
	out->head_len = hl;
	return HTTP_SCREEN_PASS;
}

const char *
http_screen_phrase(unsigned status)
{
	switch (status) {
	case 400: return "Bad Request";
	case 413: return "Content Too Large";
	case 414: return "URI Too Long";
	case 429: return "Too Many Requests";
	case 431: return "Request Header Fields Too Large";
	case 503: return "Service Unavailable";
	}
	return "Error";
}
