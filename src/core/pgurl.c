/*
 * pgurl.c — reads a postgres:// URL the way libpq does, only far enough to
 * tell whether it names a file or a socket path the daemon would open. It
 * must never say "nothing" of a URL libpq would read differently: what it
 * cannot decode counts as naming a file. Parameters are judged against a
 * list of those that only shape the network connection (an allowlist:
 * libpq gains file parameters from version to version).
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "core/limits.h"
#include "core/pgurl.h"

/* Parameters that open nothing on the box. */
static const char *const pgurl_net_params[] = {
	"host", "hostaddr", "port", "dbname", "user", "password",
	"connect_timeout", "client_encoding", "options", "application_name",
	"fallback_application_name", "keepalives", "keepalives_idle",
	"keepalives_interval", "keepalives_count", "tcp_user_timeout",
	"sslmode", "sslnegotiation", "sslcompression", "sslsni",
	"ssl_min_protocol_version", "ssl_max_protocol_version",
	"channel_binding", "require_auth", "gssencmode",
	"target_session_attrs", "load_balance_hosts", NULL,
};

static int
hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower(c);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Percent-decode s[0..n) into out; -1 on a bad escape, a NUL or no room. */
static int
pgurl_decode(const char *s, size_t n, char *out, size_t outlen)
{
	size_t	i, o = 0;
	int	hi, lo;

	for (i = 0; i < n; i++) {
		int	c = (unsigned char)s[i];

		if (c == '%') {
			if (i + 2 >= n)
				return -1;
			if ((hi = hexval((unsigned char)s[i + 1])) == -1 ||
			    (lo = hexval((unsigned char)s[i + 2])) == -1)
				return -1;
			c = hi << 4 | lo;
			i += 2;
		}
		if (c == '\0' || o + 1 >= outlen)
			return -1;
		out[o++] = (char)c;
	}
	out[o] = '\0';
	return 0;
}

static int
pgurl_net_param(const char *name)
{
	size_t	i;

	for (i = 0; pgurl_net_params[i] != NULL; i++)
		if (strcmp(pgurl_net_params[i], name) == 0)
			return 1;
	return 0;
}

/* Name what was found; a name of other bytes than [a-z0-9_] is not echoed. */
static int
pgurl_says(char *what, size_t whatlen, const char *name)
{
	const char	*c;

	for (c = name; *c != '\0'; c++)
		if (!islower((unsigned char)*c) && !isdigit((unsigned char)*c) &&
		    *c != '_' && *c != ' ')
			break;
	snprintf(what, whatlen, "%s", *c == '\0' ? name :
	    "a parameter of unusual characters");
	return 1;
}

/*
 * One host of a comma-separated list, [s, s + n): a path (after decoding)
 * is a Unix socket's directory.
 */
static int
pgurl_host_is_path(const char *s, size_t n)
{
	char	host[CONFIG_MAX_VALUE + 1];

	if (pgurl_decode(s, n, host, sizeof(host)) == -1)
		return 1;
	return host[0] == '/' || host[0] == '@';
}

/* The hosts of the authority [s, s + n), after any user info. */
static int
pgurl_hosts_name_path(const char *s, size_t n)
{
	const char	*at, *end = s + n, *comma;

	for (at = s; at < end; at++)
		if (*at == '@')
			s = at + 1;
	while (s < end) {
		comma = memchr(s, ',', (size_t)(end - s));
		if (comma == NULL)
			comma = end;
		if (pgurl_host_is_path(s, (size_t)(comma - s)))
			return 1;
		s = comma + 1;
	}
	return 0;
}

/* One name=value of the query string, [s, s + n). */
static int
pgurl_param_names_file(const char *s, size_t n, char *what, size_t whatlen)
{
	const char	*eq = memchr(s, '=', n);
	char		 name[64];

	if (n == 0)
		return 0;
	if (eq == NULL ||
	    pgurl_decode(s, (size_t)(eq - s), name, sizeof(name)) == -1)
		return pgurl_says(what, whatlen, "an undecodable parameter");
	if (!pgurl_net_param(name))
		return pgurl_says(what, whatlen, name);
	if (strcmp(name, "host") == 0 && pgurl_hosts_name_path(eq + 1,
	    n - (size_t)(eq + 1 - s)))
		return pgurl_says(what, whatlen, "host");
	return 0;
}

int
pgurl_names_file(const char *url, char *what, size_t whatlen)
{
	const char	*p, *auth, *q, *amp;

	if ((p = strstr(url, "://")) == NULL)
		return 0;
	auth = p + 3;
	p = auth + strcspn(auth, "/?");
	if (pgurl_hosts_name_path(auth, (size_t)(p - auth)))
		return pgurl_says(what, whatlen, "host");
	if ((q = strchr(p, '?')) == NULL)
		return 0;
	for (q++; *q != '\0'; q = *amp == '\0' ? amp : amp + 1) {
		amp = q + strcspn(q, "&");
		if (pgurl_param_names_file(q, (size_t)(amp - q), what,
		    whatlen))
			return 1;
	}
	return 0;
}
