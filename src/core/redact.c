/*
 * redact.c — finds the credential spans of a URL or connection string and
 * writes copies with those spans masked (redact.h). It must never return
 * a copy with a credential left in it: when in doubt a span is masked,
 * and a value too long for the buffer is cut, never shown in part past a
 * secret's start.
 */
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "core/limits.h"
#include "core/redact.h"

#define REDACT_MASK		"***"

struct span {
	size_t	off, len;
};

struct spans {
	struct span	s[REDACT_MAX_SPANS];
	int		n;
};

static void
span_add(struct spans *sp, size_t off, size_t len)
{
	if (sp->n < REDACT_MAX_SPANS && len > 0)
		sp->s[sp->n++] = (struct span){ off, len };
}

static int
hexval(int c)
{
	if (isdigit(c))
		return c - '0';
	c = tolower(c);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Percent-decode the n bytes at s into out (cut to outlen - 1). */
static size_t
pct_decode(const char *s, size_t n, char *out, size_t outlen)
{
	size_t	i, o = 0;
	int	hi, lo;

	for (i = 0; i < n && o + 1 < outlen; i++) {
		if (s[i] == '%' && i + 2 < n &&
		    (hi = hexval((unsigned char)s[i + 1])) >= 0 &&
		    (lo = hexval((unsigned char)s[i + 2])) >= 0) {
			out[o++] = (char)(hi * 16 + lo);
			i += 2;
		} else
			out[o++] = s[i];
	}
	out[o] = '\0';
	return o;
}

/* A parameter name libpq reads a secret from. */
static bool
secret_key(const char *k, size_t n)
{
	char	dec[REDACT_MAX_KEY];

	pct_decode(k, n, dec, sizeof(dec));
	return strcasecmp(dec, "password") == 0 ||
	    strcasecmp(dec, "sslpassword") == 0;
}

/* "scheme://user:pw@host/db?k=v&..." */
static void
spans_uri(const char *s, const char *rest, struct spans *sp)
{
	const char	*p = rest, *colon, *q, *amp, *eq;

	while (*p != '\0' && *p != '@' && *p != '/')
		p++;
	if (*p == '@' && (colon = memchr(rest, ':', (size_t)(p - rest))))
		span_add(sp, (size_t)(colon + 1 - s), (size_t)(p - colon - 1));
	if ((q = strchr(p, '?')) == NULL)
		return;
	for (q++; *q != '\0'; q = *amp != '\0' ? amp + 1 : amp) {
		amp = q + strcspn(q, "&");
		eq = memchr(q, '=', (size_t)(amp - q));
		if (eq != NULL && secret_key(q, (size_t)(eq - q)))
			span_add(sp, (size_t)(eq + 1 - s),
			    (size_t)(amp - eq - 1));
	}
}

/* The end of a keyword/value string's value at p (quoted or bare). */
static const char *
kv_value_end(const char *p)
{
	if (*p != '\'')
		return p + strcspn(p, " \t\r\n");
	for (p++; *p != '\0' && *p != '\''; p++)
		if (*p == '\\' && p[1] != '\0')
			p++;
	return *p == '\'' ? p + 1 : p;
}

/* "host=h password='p w' sslpassword=x" */
static void
spans_kv(const char *s, struct spans *sp)
{
	const char	*p = s, *k, *ke, *v;

	while (*(p += strspn(p, " \t\r\n")) != '\0') {
		k = p;
		p += strcspn(p, "= \t\r\n");
		ke = p;
		p += strspn(p, " \t\r\n");
		if (*p != '=') {
			p = ke == k ? p + 1 : ke;
			continue;
		}
		p++;
		p += strspn(p, " \t\r\n");
		v = p;
		p = kv_value_end(p);
		if (secret_key(k, (size_t)(ke - k)))
			span_add(sp, (size_t)(v - s), (size_t)(p - v));
	}
}

static void
find_spans(const char *s, struct spans *sp)
{
	const char	*sep = strstr(s, "://");

	sp->n = 0;
	if (sep != NULL)
		spans_uri(s, sep + 3, sp);
	else
		spans_kv(s, sp);
}

/* Append n bytes of s to out at *o, cut to the buffer. */
static void
put(char *out, size_t outlen, size_t *o, const char *s, size_t n)
{
	if (*o + 1 >= outlen)
		return;
	if (n > outlen - 1 - *o)
		n = outlen - 1 - *o;
	memcpy(out + *o, s, n);
	*o += n;
	out[*o] = '\0';
}

const char *
redact_url(const char *s, char *out, size_t outlen)
{
	struct spans	sp;
	size_t		o = 0, at = 0;
	int		i;

	if (outlen == 0)
		return out;
	out[0] = '\0';
	find_spans(s, &sp);
	for (i = 0; i < sp.n; i++) {	/* spans come in order */
		put(out, outlen, &o, s + at, sp.s[i].off - at);
		put(out, outlen, &o, REDACT_MASK, strlen(REDACT_MASK));
		at = sp.s[i].off + sp.s[i].len;
	}
	put(out, outlen, &o, s + at, strlen(s + at));
	return out;
}

/* Mask every occurrence of the n bytes at secret in text into out. */
static void
mask_all(const char *text, const char *secret, size_t n, char *out,
    size_t outlen)
{
	const char	*p = text, *hit;
	size_t		 o = 0;

	out[0] = '\0';
	while (n > 0 && (hit = strstr(p, secret)) != NULL) {
		put(out, outlen, &o, p, (size_t)(hit - p));
		put(out, outlen, &o, REDACT_MASK, strlen(REDACT_MASK));
		p = hit + n;
	}
	put(out, outlen, &o, p, strlen(p));
}

const char *
redact_text(const char *url, const char *text, char *out, size_t outlen)
{
	struct spans	sp;
	char		tmp[REDACT_TEXT_MAX], secret[512];
	int		i, pass;
	size_t		n;

	if (outlen == 0)
		return out;
	if (outlen > sizeof(tmp))
		outlen = sizeof(tmp);
	snprintf(out, outlen, "%s", text);
	find_spans(url, &sp);
	for (i = 0; i < sp.n; i++) {
		for (pass = 0; pass < 2; pass++) {
			if (pass == 0)
				n = (size_t)snprintf(secret, sizeof(secret),
				    "%.*s", (int)sp.s[i].len, url + sp.s[i].off);
			else
				n = pct_decode(url + sp.s[i].off, sp.s[i].len,
				    secret, sizeof(secret));
			if (n >= sizeof(secret))
				n = sizeof(secret) - 1;
			snprintf(tmp, sizeof(tmp), "%s", out);
			mask_all(tmp, secret, n, out, outlen);
		}
	}
	return out;
}
