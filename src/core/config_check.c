/*
 * config_check.c — the value checks of the configuration table, one small
 * function per type; each also produces the text and number the value is
 * kept as. It must never accept a value the part that reads it cannot use
 * (the checks of relay URLs, public keys and the uplink URL are the
 * parsers' own, lent by their layers) and never repeat a secret.
 */
#include <arpa/inet.h>
#include <netinet/in.h>

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/config_check.h"
#include "core/errf.h"
#include "core/log.h"
#include "core/secret.h"

typedef int (*cfg_check_fn)(const struct cfg_def *, const char *,
    struct cfg_parsed *, char *, size_t);

/* Copy s into out->text; -1 if it does not fit. */
static int
cfg_copy(struct cfg_parsed *out, const char *s)
{
	size_t	n = strlen(s);

	if (n > CONFIG_MAX_VALUE)
		return -1;
	memcpy(out->text, s, n + 1);
	return 0;
}

/* Parse a whole decimal integer with an optional sign. 0 or -1. */
static int
cfg_parse_int(const char *s, int64_t *out)
{
	char		*end;
	long long	 v;

	if (!isdigit((unsigned char)s[0]) && s[0] != '-' && s[0] != '+')
		return -1;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (end == s || *end != '\0' || errno != 0)
		return -1;
	*out = v;
	return 0;
}

/* Write a byte count the short way ("16m") when it is a whole unit. */
static void
cfg_size_fmt(int64_t v, char *out, size_t outlen)
{
	if (v != 0 && v % GIB == 0)
		snprintf(out, outlen, "%lldg", (long long)(v / GIB));
	else if (v != 0 && v % MIB == 0)
		snprintf(out, outlen, "%lldm", (long long)(v / MIB));
	else if (v != 0 && v % KIB == 0)
		snprintf(out, outlen, "%lldk", (long long)(v / KIB));
	else
		snprintf(out, outlen, "%lld", (long long)v);
}

/* Parse bytes with an optional k/m/g suffix (KiB/MiB/GiB). 0 or -1. */
static int
cfg_parse_size(const char *s, int64_t *out)
{
	char		 digits[32];
	size_t		 n = strspn(s, "0123456789");
	int64_t		 v, mul = 1;

	if (n == 0 || n >= sizeof(digits))
		return -1;
	if (s[n] != '\0') {
		if (s[n + 1] != '\0')
			return -1;
		switch (tolower((unsigned char)s[n])) {
		case 'k': mul = KIB; break;
		case 'm': mul = MIB; break;
		case 'g': mul = GIB; break;
		default: return -1;
		}
	}
	memcpy(digits, s, n);
	digits[n] = '\0';
	if (cfg_parse_int(digits, &v) == -1 || v > INT64_MAX / mul)
		return -1;
	*out = v * mul;
	return 0;
}

/* Check num against the bounds of d; sizes are shown with their suffix. */
static int
cfg_check_range(const struct cfg_def *d, int64_t num, char *err, size_t errlen)
{
	char	v[32], b[32];

	if (num >= d->min && num <= d->max)
		return 0;
	if (d->type == CFG_SIZE) {
		cfg_size_fmt(num, v, sizeof(v));
		cfg_size_fmt(num < d->min ? d->min : d->max, b, sizeof(b));
	} else {
		snprintf(v, sizeof(v), "%lld", (long long)num);
		snprintf(b, sizeof(b), "%lld",
		    (long long)(num < d->min ? d->min : d->max));
	}
	return errf(err, errlen, "%s: %s is %s %s", d->name, v,
	    num < d->min ? "below the minimum" : "above the maximum", b);
}

static int
cfg_check_string(const struct cfg_def *d, const char *s, struct cfg_parsed *out,
    char *err, size_t errlen)
{
	out->num = 0;
	return cfg_copy(out, s);
}

static int
cfg_check_int(const struct cfg_def *d, const char *s, struct cfg_parsed *out,
    char *err, size_t errlen)
{
	if (cfg_parse_int(s, &out->num) == -1)
		return errf(err, errlen, "%s: '%s' is not an integer",
		    d->name, s);
	if (cfg_check_range(d, out->num, err, errlen) == -1)
		return -1;
	snprintf(out->text, sizeof(out->text), "%lld", (long long)out->num);
	return 0;
}

static int
cfg_check_size(const struct cfg_def *d, const char *s, struct cfg_parsed *out,
    char *err, size_t errlen)
{
	if (cfg_parse_size(s, &out->num) == -1)
		return errf(err, errlen, "%s: '%s' is not a size (bytes, "
		    "or a number with k, m or g)", d->name, s);
	if (cfg_check_range(d, out->num, err, errlen) == -1)
		return -1;
	return cfg_copy(out, s);
}

static int
cfg_check_bool(const struct cfg_def *d, const char *s, struct cfg_parsed *out,
    char *err, size_t errlen)
{
	static const char *const yes[] = { "true", "yes", "on", "1" };
	static const char *const no[] = { "false", "no", "off", "0" };
	size_t	i;

	for (i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (strcasecmp(s, yes[i]) == 0 || strcasecmp(s, no[i]) == 0) {
			out->num = strcasecmp(s, yes[i]) == 0;
			return cfg_copy(out, out->num ? "true" : "false");
		}
	}
	return errf(err, errlen, "%s: '%s' is not a boolean (true/false, "
	    "yes/no, on/off, 1/0)", d->name, s);
}

static int
cfg_check_level(const struct cfg_def *d, const char *s, struct cfg_parsed *out,
    char *err, size_t errlen)
{
	enum log_level	level;

	if (log_level_parse(s, &level) == -1)
		return errf(err, errlen, "%s: '%s' is not a log level "
		    "(error, warn, info, debug)", d->name, s);
	out->num = level;
	return cfg_copy(out, s);
}

/* A host name or IPv4 address: letters, digits, '.', '-', '_'. */
static int
cfg_host_ok(const char *s, size_t n)
{
	size_t	i;

	if (n == 0)
		return 0;
	for (i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && strchr(".-_", s[i]) == NULL)
			return 0;
	return 1;
}

/* The inside of "[...]": hex digits, ':' and '.', with at least one ':'. */
static int
cfg_v6_ok(const char *s, size_t n)
{
	size_t	i;

	if (n == 0 || memchr(s, ':', n) == NULL)
		return 0;
	for (i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]) && s[i] != ':' && s[i] != '.')
			return 0;
	return 1;
}

/* 1 to 5 digits with a value in [minport, 65535]. */
static int
cfg_port_ok(const char *s, size_t n, int minport)
{
	size_t	i;
	long	v = 0;

	if (n == 0 || n > 5)
		return 0;
	for (i = 0; i < n; i++) {
		if (!isdigit((unsigned char)s[i]))
			return 0;
		v = v * 10 + (s[i] - '0');
	}
	return v >= minport && v <= 65535;
}

/* "host", "host:port", "[v6]" or "[v6]:port" in the n bytes at s. */
static int
cfg_authority_ok(const char *s, size_t n, int need_port, int minport)
{
	const char	*sep;
	size_t		 hn;

	if (n > 0 && s[0] == '[') {
		if ((sep = memchr(s, ']', n)) == NULL ||
		    !cfg_v6_ok(s + 1, (size_t)(sep - s) - 1))
			return 0;
		sep++;
	} else {
		sep = memchr(s, ':', n);
		hn = sep != NULL ? (size_t)(sep - s) : n;
		if (!cfg_host_ok(s, hn))
			return 0;
		sep = s + hn;
	}
	if (sep == s + n)
		return !need_port;
	if (*sep != ':')
		return 0;
	return cfg_port_ok(sep + 1, n - (size_t)(sep - s) - 1, minport);
}

/*
 * Checks lent by the layers that parse the values (config_lend_check):
 * one per type whose rules live above core/. The built-in defaults are
 * taken as written where no check is lent yet (a test of the table checks
 * them with the lent checks), so config_new() works before anything is
 * lent.
 */
static config_lent_fn	cfg_lent[CFG_NTYPES];

void
config_lend_check(enum cfg_type type, config_lent_fn fn)
{
	if ((unsigned)type < CFG_NTYPES)
		cfg_lent[type] = fn;
}

/*
 * The lent check of type on s. A type nobody lent a check for is a
 * programming error (main.c lends them before reading any setting): a
 * debug build stops, a release build refuses the value.
 */
static int	cfg_trusted;	/* checking a built-in default */

static int
cfg_lent_ok(enum cfg_type type, const char *s, const char **why)
{
	if (cfg_lent[type] == NULL && cfg_trusted)
		return 1;
	if (cfg_lent[type] == NULL) {
		log_warnx("config: BUG: no check lent for %s values",
		    config_type_name(type));
#ifndef NDEBUG
		abort();
#endif
		*why = "cannot be checked";
		return 0;
	}
	return cfg_lent[type](s, why) == 0;
}

/* The n bytes at s without leading and trailing white space. */
void
cfg_trim(const char **s, size_t *n)
{
	while (*n > 0 && isspace((unsigned char)**s)) {
		(*s)++;
		(*n)--;
	}
	while (*n > 0 && isspace((unsigned char)(*s)[*n - 1]))
		(*n)--;
}

/*
 * A comma-separated list; each item, trimmed, must pass item_ok. The
 * stored text is the trimmed items joined by ','. An empty value is an
 * empty list; an empty item is an error.
 */
static int
cfg_check_list(const struct cfg_def *d, const char *s, struct cfg_parsed *out,
    int (*item_ok)(enum cfg_type, const char *, const char **),
    const char *what, char *err, size_t errlen)
{
	char		 item[CONFIG_MAX_VALUE + 1];
	const char	*p = s, *start, *why = NULL;
	size_t		 n, len = 0;

	out->text[0] = '\0';
	out->num = 0;
	if (*s == '\0')
		return 0;
	for (;;) {
		n = strcspn(p, ",");
		start = p;
		p += n;
		cfg_trim(&start, &n);
		if (n == 0)
			return errf(err, errlen, "%s: empty item in the list",
			    d->name);
		memcpy(item, start, n);
		item[n] = '\0';
		if (!item_ok(d->type, item, &why))
			return errf(err, errlen, "%s: '%s' is %s%s%s%s",
			    d->name, item, what, why ? " (" : "", why ? why : "",
			    why ? ")" : "");
		len += (size_t)snprintf(out->text + len, sizeof(out->text) - len,
		    "%s%s", out->num > 0 ? "," : "", item);
		out->num++;
		if (*p++ == '\0')
			break;
	}
	return 0;
}

/*
 * A numeric address with an optional port (1..65535): "v4", "v4:port",
 * "[v6]", "[v6]:port", or a bare v6 (more than one ':', so no port).
 */
static int
cfg_ipport_ok(enum cfg_type type, const char *s, const char **why)
{
	char		 host[INET6_ADDRSTRLEN];
	struct in6_addr	 a;
	const char	*end, *port;
	size_t		 n;
	int		 af = AF_INET;

	if (s[0] == '[') {
		if ((end = strchr(s, ']')) == NULL)
			return 0;
		s++;
		n = (size_t)(end - s);
		port = end + 1;
		af = AF_INET6;
	} else if (strchr(s, ':') != strrchr(s, ':')) {
		n = strlen(s);
		port = s + n;
		af = AF_INET6;
	} else {
		n = strcspn(s, ":");
		port = s + n;
	}
	if (*port != '\0' && (*port != ':' ||
	    !cfg_port_ok(port + 1, strlen(port + 1), 1)))
		return 0;
	if (n == 0 || n >= sizeof(host))
		return 0;
	memcpy(host, s, n);
	host[n] = '\0';
	return inet_pton(af, host, &a) == 1;
}

static int
cfg_check_addrs(const struct cfg_def *d, const char *s,
    struct cfg_parsed *out, char *err, size_t errlen)
{
	if (cfg_check_list(d, s, out, cfg_ipport_ok,
	    "not an IP address, IP:port or [v6]:port", err, errlen) == -1)
		return -1;
	if (out->num > DNS_MAX_SERVERS)
		return errf(err, errlen, "%s: more than %d servers", d->name,
		    DNS_MAX_SERVERS);
	return 0;
}

/* A host name (letters, digits, '-', '.') or an IP literal, no port. */
static int
cfg_name_ok(enum cfg_type type, const char *s, const char **why)
{
	struct in6_addr	a;
	size_t		i, n = strlen(s);

	(void)type;
	if (inet_pton(AF_INET, s, &a) == 1 || inet_pton(AF_INET6, s, &a) == 1)
		return 1;
	if (n > 253) {
		*why = "longer than 253 characters";
		return 0;
	}
	for (i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '-' &&
		    s[i] != '.')
			return 0;
	return 1;
}

static int
cfg_check_names(const struct cfg_def *d, const char *s,
    struct cfg_parsed *out, char *err, size_t errlen)
{
	return cfg_check_list(d, s, out, cfg_name_ok,
	    "not a host name or an IP address", err, errlen);
}

static int
cfg_check_urls(const struct cfg_def *d, const char *s, struct cfg_parsed *out,
    char *err, size_t errlen)
{
	return cfg_check_list(d, s, out, cfg_lent_ok,
	    "not a usable ws:// or wss:// URL", err, errlen);
}

static int
cfg_check_keys(const struct cfg_def *d, const char *s, struct cfg_parsed *out,
    char *err, size_t errlen)
{
	return cfg_check_list(d, s, out, cfg_lent_ok,
	    "not an npub or a 64-hex public key", err, errlen);
}

static int
cfg_check_uplink(const struct cfg_def *d, const char *s, struct cfg_parsed *out,
    char *err, size_t errlen)
{
	const char	*why = NULL;

	out->num = 0;
	if (*s == '\0' || cfg_lent_ok(CFG_UPLINK, s, &why))
		return cfg_copy(out, s);
	/* Never echoed: a refused value may still carry a password. */
	return errf(err, errlen, "%s: not empty or a ws://, wss://, "
	    "postgres:// or postgresql:// URL (a libpq keyword/value string "
	    "is not accepted)%s%s%s", d->name, why ? ": " : "",
	    why ? why : "", "");
}

/*
 * An admin token: empty (none), a stored hash (from the database), or the
 * token itself, which is checked against the one rule and kept only as a
 * fresh salted hash. Messages never repeat it.
 */
static int
cfg_check_token(const struct cfg_def *d, const char *s, struct cfg_parsed *out,
    char *err, size_t errlen)
{
	char	msg[256];

	out->num = 0;
	if (*s == '\0' || secret_is_hash(s))
		return cfg_copy(out, s);
	if (secret_token_check(s, msg, sizeof(msg)) == -1)
		return errf(err, errlen, "%s: %s", d->name, msg);
	if (secret_hash(s, out->text, sizeof(out->text)) == -1)
		return errf(err, errlen, "%s: cannot hash the token",
		    d->name);
	return 0;
}

static int
cfg_check_hostport(const struct cfg_def *d, const char *s,
    struct cfg_parsed *out, char *err, size_t errlen)
{
	out->num = 0;
	if (!cfg_authority_ok(s, strlen(s), 1, 0))
		return errf(err, errlen, "%s: '%s' is not host:port or "
		    "[v6]:port", d->name, s);
	return cfg_copy(out, s);
}

/* One of the words of d->choices ("a|b|c"), exactly. */
static int
cfg_check_choice(const struct cfg_def *d, const char *s,
    struct cfg_parsed *out, char *err, size_t errlen)
{
	const char	*p = d->choices != NULL ? d->choices : "";
	size_t		 n = strlen(s), w;

	out->num = 0;
	for (; *p != '\0'; p += w + (p[w] == '|'), out->num++) {
		w = strcspn(p, "|");
		if (w == n && strncmp(p, s, n) == 0)
			return cfg_copy(out, s);
	}
	return errf(err, errlen, "%s: '%s' is not one of %s", d->name, s,
	    d->choices != NULL ? d->choices : "(none)");
}

static const struct {
	const char	*name;
	cfg_check_fn	 check;
} cfg_types[] = {
	[CFG_STRING] = { "string", cfg_check_string },
	[CFG_INT] = { "integer", cfg_check_int },
	[CFG_BOOL] = { "boolean", cfg_check_bool },
	[CFG_SIZE] = { "size", cfg_check_size },
	[CFG_LEVEL] = { "level", cfg_check_level },
	[CFG_URLS] = { "urls", cfg_check_urls },
	[CFG_UPLINK] = { "uplink", cfg_check_uplink },
	[CFG_HOSTPORT] = { "hostport", cfg_check_hostport },
	[CFG_KEYS] = { "keys", cfg_check_keys },
	[CFG_ADDRS] = { "addresses", cfg_check_addrs },
	[CFG_TOKEN] = { "token", cfg_check_token },
	[CFG_CHOICE] = { "choice", cfg_check_choice },
	[CFG_NAMES] = { "names", cfg_check_names },
};

/* Trim value, refuse what no type accepts, then run the type's check. */
int
cfg_parse(const struct cfg_def *d, const char *value, struct cfg_parsed *out,
    char *err, size_t errlen)
{
	char		 tmp[CONFIG_MAX_VALUE + 1];
	const char	*s = value;
	size_t		 n = strlen(value), i;

	cfg_trim(&s, &n);
	if (n > CONFIG_MAX_VALUE)
		return errf(err, errlen, "%s: value is longer than %d bytes",
		    d->name, CONFIG_MAX_VALUE);
	for (i = 0; i < n; i++)
		if (iscntrl((unsigned char)s[i]))
			return errf(err, errlen, "%s: value contains a "
			    "control character", d->name);
	memcpy(tmp, s, n);
	tmp[n] = '\0';
	if (n == 0 && (d->flags & CFG_OPTIONAL)) {
		out->text[0] = '\0';
		out->num = 0;
		return 0;
	}
	return cfg_types[d->type].check(d, tmp, out, err, errlen);
}

int
cfg_parse_default(const struct cfg_def *d, struct cfg_parsed *out,
    char *err, size_t errlen)
{
	int	rc;

	cfg_trusted = 1;
	rc = cfg_parse(d, d->def, out, err, errlen);
	cfg_trusted = 0;
	return rc;
}

/* The name of a value type ("integer", "size", ...), static. */
const char *
config_type_name(enum cfg_type type)
{
	if ((unsigned)type >= sizeof(cfg_types) / sizeof(cfg_types[0]))
		return "?";
	return cfg_types[type].name;
}

