/*
 * url.c — owns the parsing of ws/wss/http/https URLs into struct url.
 * It must never resolve, allocate or accept anything it would later have
 * to escape: a URL with userinfo, a fragment, spaces or control bytes is
 * refused here, so the request line and Host header built from it are safe.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "net/url.h"

struct url_scheme_def {
	const char	*prefix;	/* with "://" */
	enum url_scheme	 scheme;
	bool		 tls;
	uint16_t	 port;
};

static const struct url_scheme_def url_schemes[] = {
	{ "ws://",	URL_WS,		false,	80 },
	{ "wss://",	URL_WSS,	true,	443 },
	{ "http://",	URL_HTTP,	false,	80 },
	{ "https://",	URL_HTTPS,	true,	443 },
};

#define URL_FAIL(w)	do { if (why != NULL) *why = (w); return -1; } while (0)

static const struct url_scheme_def *
url_scheme_find(const char *text, size_t *skip)
{
	size_t	 i, n;

	for (i = 0; i < sizeof(url_schemes) / sizeof(url_schemes[0]); i++) {
		n = strlen(url_schemes[i].prefix);
		if (strncasecmp(text, url_schemes[i].prefix, n) == 0) {
			*skip = n;
			return &url_schemes[i];
		}
	}
	return NULL;
}

/* A DNS name: labels of letters, digits, '-' and '_', 1..63 bytes each. */
static int
url_name_ok(const char *h, size_t len)
{
	size_t	 i, label = 0;

	if (len == 0 || len > URL_MAX_HOST || h[0] == '.')
		return -1;
	for (i = 0; i < len; i++) {
		if (h[i] == '.') {
			if (label == 0)
				return -1;
			label = 0;
			continue;
		}
		if (!isalnum((unsigned char)h[i]) && h[i] != '-' && h[i] != '_')
			return -1;
		if (++label > 63)
			return -1;
	}
	return 0;
}

static int
url_all_digits_dots(const char *h, size_t len)
{
	size_t	 i;

	for (i = 0; i < len; i++)
		if (!isdigit((unsigned char)h[i]) && h[i] != '.')
			return 0;
	return 1;
}

static int
url_port(const char *p, size_t len, uint16_t *out)
{
	unsigned long	 v = 0;
	size_t		 i;

	if (len == 0 || len > 5)
		return -1;
	for (i = 0; i < len; i++) {
		if (!isdigit((unsigned char)p[i]))
			return -1;
		v = v * 10 + (unsigned long)(p[i] - '0');
	}
	if (v == 0 || v > 65535)
		return -1;
	*out = (uint16_t)v;
	return 0;
}

/* Host (and port) from the authority a[0..len). */
static int
url_authority(const char *a, size_t len, struct url *u, const char **why)
{
	const char	*end = a + len, *colon = NULL, *h = a;
	size_t		 hlen;
	size_t		 i;

	if (memchr(a, '@', len) != NULL)
		URL_FAIL("userinfo is not allowed");
	if (len > 0 && a[0] == '[') {
		const char *rb = memchr(a, ']', len);

		if (rb == NULL)
			URL_FAIL("unterminated IPv6 literal");
		h = a + 1;
		hlen = (size_t)(rb - h);
		if (rb + 1 < end && rb[1] != ':')
			URL_FAIL("junk after IPv6 literal");
		colon = rb + 1 < end ? rb + 1 : NULL;
		if (hlen == 0 || hlen > 45 || memchr(h, '%', hlen) != NULL)
			URL_FAIL("bad IPv6 literal");
		memcpy(u->host, h, hlen);
		u->host[hlen] = '\0';
		if (inet_pton(AF_INET6, u->host, u->addr) != 1)
			URL_FAIL("bad IPv6 literal");
		u->host_kind = URL_HOST_IPV6;
	} else {
		colon = memchr(a, ':', len);
		hlen = colon != NULL ? (size_t)(colon - a) : len;
		if (hlen == 0)
			URL_FAIL("empty host");
		if (url_name_ok(a, hlen) == -1)
			URL_FAIL("bad host name");
		for (i = 0; i < hlen; i++)
			u->host[i] = (char)tolower((unsigned char)a[i]);
		u->host[hlen] = '\0';
		u->host_kind = URL_HOST_NAME;
		if (url_all_digits_dots(u->host, hlen)) {
			if (inet_pton(AF_INET, u->host, u->addr) != 1)
				URL_FAIL("bad IPv4 address");
			u->host_kind = URL_HOST_IPV4;
		}
	}
	if (colon != NULL) {
		if (url_port(colon + 1, (size_t)(end - colon - 1), &u->port) == -1)
			URL_FAIL("bad port");
		u->port_explicit = true;
	}
	return 0;
}

static int
url_path(const char *p, struct url *u, const char **why)
{
	size_t	 i, len = strlen(p), off = 0;

	for (i = 0; i < len; i++)
		if ((unsigned char)p[i] <= 0x20 || (unsigned char)p[i] >= 0x7f)
			URL_FAIL("space or control byte in path");
	if (len == 0 || p[0] == '?')
		u->path[off++] = '/';
	if (off + len > URL_MAX_BYTES)
		URL_FAIL("URL too long");
	memcpy(u->path + off, p, len);
	u->path[off + len] = '\0';
	return 0;
}

int
url_parse(const char *text, struct url *u, const char **why)
{
	const struct url_scheme_def	*sd;
	const char			*a, *aend;
	size_t				 skip;

	memset(u, 0, sizeof(*u));
	if (text == NULL || strnlen(text, URL_MAX_BYTES + 1) > URL_MAX_BYTES)
		URL_FAIL("URL too long");
	if (strchr(text, '#') != NULL)
		URL_FAIL("fragment is not allowed");
	if ((sd = url_scheme_find(text, &skip)) == NULL)
		URL_FAIL("scheme must be ws, wss, http or https");
	u->scheme = sd->scheme;
	u->tls = sd->tls;
	u->port = sd->port;
	a = text + skip;
	aend = a + strcspn(a, "/?");
	if (url_authority(a, (size_t)(aend - a), u, why) == -1)
		return -1;
	return url_path(aend, u, why);
}

int
url_host_header(const struct url *u, char *out, size_t outlen)
{
	const char	*l = "", *r = "";
	int		 n;

	if (u->host_kind == URL_HOST_IPV6) {
		l = "[";
		r = "]";
	}
	if (u->port_explicit && u->port != (u->tls ? 443 : 80))
		n = snprintf(out, outlen, "%s%s%s:%u", l, u->host, r,
		    (unsigned)u->port);
	else
		n = snprintf(out, outlen, "%s%s%s", l, u->host, r);
	return n < 0 || (size_t)n >= outlen ? -1 : 0;
}

const char *
url_scheme_name(enum url_scheme s)
{
	switch (s) {
	case URL_WS:
		return "ws";
	case URL_WSS:
		return "wss";
	case URL_HTTP:
		return "http";
	case URL_HTTPS:
		return "https";
	}
	return "?";
}

int
url_check_relay(const char *text, const char **why)
{
	struct url	u;

	if (strncasecmp(text, "ws://", 5) != 0 &&
	    strncasecmp(text, "wss://", 6) != 0) {
		*why = "not ws:// or wss://";
		return -1;
	}
	return url_parse(text, &u, why);
}
