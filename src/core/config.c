/*
 * config.c — the configuration table and the values in force. It owns one
 * text copy of every value and the source it came from. It must never
 * store a value that failed validation, never let a lower source replace a
 * higher one, and never echo a secret value in a message. Parsing is a
 * table of types, each with one small check function that also produces
 * the value's stored (normalised) text and number.
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

#include "core/config.h"
#include "core/limits.h"
#include "core/log.h"
#include "core/redact.h"
#include "core/secret.h"
#include "nostr/nip19.h"

#define KIB	((int64_t)1024)
#define MIB	(KIB * 1024)
#define GIB	(MIB * 1024)

static const struct cfg_def cfg_table[] = {
	{ .name = "relays.bootstrap", .type = CFG_URLS,
	  .def = "wss://relay.damus.io,wss://nos.lol,wss://relay.nostr.band,"
	  "wss://purplepag.es",
	  .help = "upstream relays asked for follow lists, relay lists and "
	  "history", .flags = CFG_RUNTIME },
	{ .name = "follow.roots", .type = CFG_KEYS, .def = "",
	  .help = "people whose follow lists define what is cached (npub or "
	  "hex)", .flags = CFG_RUNTIME },
	{ .name = "uplink.url", .type = CFG_UPLINK, .def = "",
	  .help = "owner's relay to forward to: ws(s):// or postgres://; "
	  "empty = none", .flags = CFG_RUNTIME },
	{ .name = "uplink.pg.create_schema", .type = CFG_BOOL, .def = "false",
	  .help = "create caching_event_inbox on the Postgres uplink if "
	  "missing", .flags = CFG_RUNTIME },
	{ .name = "backfill.enabled", .type = CFG_BOOL, .def = "true",
	  .help = "page through the history of every followed author",
	  .flags = CFG_RUNTIME },
	{ .name = "backfill.page_size", .type = CFG_INT, .def = "500",
	  .min = 1, .max = 5000, .unit = "events",
	  .help = "limit asked for in one backfill request",
	  .flags = CFG_RUNTIME },
	{ .name = "backfill.pace_ms", .type = CFG_INT, .def = "1000",
	  .min = 0, .max = 600000, .unit = "ms",
	  .help = "least gap between two backfill requests to one relay",
	  .flags = CFG_RUNTIME },
	{ .name = "backfill.max_subs_per_relay", .type = CFG_INT, .def = "4",
	  .min = 1, .max = 64, .unit = "subscriptions",
	  .help = "open backfill subscriptions per relay when NIP-11 gives no "
	  "limit", .flags = CFG_RUNTIME },
	{ .name = "live.enabled", .type = CFG_BOOL, .def = "true",
	  .help = "subscribe to new events of followed authors",
	  .flags = CFG_RUNTIME },
	{ .name = "live.overlap_s", .type = CFG_INT, .def = "600",
	  .min = 0, .max = 86400, .unit = "s",
	  .help = "how far before the last event seen a live reconnect asks "
	  "from", .flags = CFG_RUNTIME },
	{ .name = "relay.backoff_max_ms", .type = CFG_INT, .def = "300000",
	  .min = 1000, .max = 3600000, .unit = "ms",
	  .help = "longest wait before reconnecting to a failing relay",
	  .flags = CFG_RUNTIME },
	{ .name = "recovery.backoff_base_ms", .type = CFG_INT, .def = "30000",
	  .min = 10, .max = 3600000, .unit = "ms",
	  .help = "wait before fetching again ids a relay reported and did "
	  "not deliver; doubled for each failed fetch", .flags = CFG_RUNTIME },
	{ .name = "recovery.backoff_max_ms", .type = CFG_INT,
	  .def = "900000", .min = 10, .max = 86400000, .unit = "ms",
	  .help = "longest wait between two such fetches from one relay",
	  .flags = CFG_RUNTIME },
	{ .name = "http.listen", .type = CFG_HOSTPORT, .def = "127.0.0.1:8080",
	  .help = "address of the status page and JSON API" },
	{ .name = "dns.servers", .type = CFG_ADDRS, .def = "",
	  .help = "DNS servers: IP, IP:port or [v6]:port, comma-separated; "
	  "empty = /etc/resolv.conf" },
	{ .name = "tls.ca_file", .type = CFG_STRING, .def = "",
	  .help = "CA bundle for wss://; empty = "
	  "/etc/ssl/certs/ca-certificates.crt", .flags = CFG_LOCAL },
	{ .name = "limits.max_event_bytes", .type = CFG_SIZE, .def = "256k",
	  .min = 1 * KIB, .max = EVENT_MAX_BYTES_CEILING, .unit = "bytes",
	  .help = "largest event JSON accepted from a relay",
	  .flags = CFG_RUNTIME },
	{ .name = "store.max_bytes", .type = CFG_SIZE, .def = "4g",
	  .min = 16 * MIB, .max = 1024 * GIB, .unit = "bytes",
	  .help = "budget for stored events; forwarded ones are evicted past "
	  "it", .flags = CFG_RUNTIME },
	{ .name = "store.cache_kib", .type = CFG_INT, .def = "2048",
	  .min = 256, .max = 262144, .unit = "KiB",
	  .help = "SQLite page cache" },
	{ .name = "admin.token", .type = CFG_TOKEN, .def = "",
	  .help = "bearer token for mutating API calls (kept only as a salted "
	  "hash); empty = mutations refused",
	  .flags = CFG_RUNTIME | CFG_SECRET },
	{ .name = "console.tty", .type = CFG_STRING, .def = "",
	  .help = "serial console device, '-' for stdin; empty = no console",
	  .flags = CFG_LOCAL },
	{ .name = "log.level", .type = CFG_LEVEL, .def = "info",
	  .help = "least severe level logged: error, warn, info or debug",
	  .flags = CFG_RUNTIME },
	{ .name = NULL },
};

#define CFG_NKEYS	(sizeof(cfg_table) / sizeof(cfg_table[0]) - 1)

struct cfg_value {
	char		*text;
	int64_t		 num;
	enum cfg_source	 src;
};

struct config {
	struct cfg_value v[CFG_NKEYS];
};

/* A value after its check: the text to store and its number, if any. */
struct cfg_parsed {
	char	text[CONFIG_MAX_VALUE + 1];
	int64_t	num;
};

typedef int (*cfg_check_fn)(const struct cfg_def *, const char *,
    struct cfg_parsed *, char *, size_t);

/* Format "KEY: message" (or any message) into err when there is room. */
static int
cfg_fail(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int
cfg_fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list	ap;

	if (err != NULL && errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -1;
}

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
	return cfg_fail(err, errlen, "%s: %s is %s %s", d->name, v,
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
		return cfg_fail(err, errlen, "%s: '%s' is not an integer",
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
		return cfg_fail(err, errlen, "%s: '%s' is not a size (bytes, "
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
	return cfg_fail(err, errlen, "%s: '%s' is not a boolean (true/false, "
	    "yes/no, on/off, 1/0)", d->name, s);
}

static int
cfg_check_level(const struct cfg_def *d, const char *s, struct cfg_parsed *out,
    char *err, size_t errlen)
{
	enum log_level	level;

	if (log_level_parse(s, &level) == -1)
		return cfg_fail(err, errlen, "%s: '%s' is not a log level "
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

/* A ws:// or wss:// URL with a host, an optional port and no spaces. */
static int
cfg_ws_url_ok(const char *s)
{
	const char	*p;

	if (strncasecmp(s, "ws://", 5) == 0)
		p = s + 5;
	else if (strncasecmp(s, "wss://", 6) == 0)
		p = s + 6;
	else
		return 0;
	if (strpbrk(s, " \t") != NULL)
		return 0;
	return cfg_authority_ok(p, strcspn(p, "/?#"), 0, 1);
}

/* A public key as nip19_pubkey_parse() takes it (npub or 64 hex). */
static int
cfg_key_ok(const char *s)
{
	uint8_t	pk[32];

	return nip19_pubkey_parse(s, pk) == 0;
}

/* The n bytes at s without leading and trailing white space. */
static void
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
    int (*item_ok)(const char *), const char *what, char *err, size_t errlen)
{
	char		 item[CONFIG_MAX_VALUE + 1];
	const char	*p = s, *start;
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
			return cfg_fail(err, errlen, "%s: empty item in the list",
			    d->name);
		memcpy(item, start, n);
		item[n] = '\0';
		if (!item_ok(item))
			return cfg_fail(err, errlen, "%s: '%s' is %s", d->name,
			    item, what);
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
cfg_ipport_ok(const char *s)
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
		return cfg_fail(err, errlen, "%s: more than %d servers", d->name,
		    DNS_MAX_SERVERS);
	return 0;
}

static int
cfg_check_urls(const struct cfg_def *d, const char *s, struct cfg_parsed *out,
    char *err, size_t errlen)
{
	return cfg_check_list(d, s, out, cfg_ws_url_ok,
	    "not a ws:// or wss:// URL with a host", err, errlen);
}

static int
cfg_check_keys(const struct cfg_def *d, const char *s, struct cfg_parsed *out,
    char *err, size_t errlen)
{
	return cfg_check_list(d, s, out, cfg_key_ok,
	    "not an npub or a 64-hex public key", err, errlen);
}

static int
cfg_check_uplink(const struct cfg_def *d, const char *s, struct cfg_parsed *out,
    char *err, size_t errlen)
{
	out->num = 0;
	if (*s == '\0' || cfg_ws_url_ok(s))
		return cfg_copy(out, s);
	if ((strncasecmp(s, "postgres://", 11) == 0 ||
	    strncasecmp(s, "postgresql://", 13) == 0) &&
	    strpbrk(s, " \t") == NULL)
		return cfg_copy(out, s);
	/* Never echoed: a refused value may still carry a password. */
	return cfg_fail(err, errlen, "%s: not empty or a ws://, wss://, "
	    "postgres:// or postgresql:// URL (a libpq keyword/value string "
	    "is not accepted)", d->name);
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
		return cfg_fail(err, errlen, "%s: %s", d->name, msg);
	if (secret_hash(s, out->text, sizeof(out->text)) == -1)
		return cfg_fail(err, errlen, "%s: cannot hash the token",
		    d->name);
	return 0;
}

static int
cfg_check_hostport(const struct cfg_def *d, const char *s,
    struct cfg_parsed *out, char *err, size_t errlen)
{
	out->num = 0;
	if (!cfg_authority_ok(s, strlen(s), 1, 0))
		return cfg_fail(err, errlen, "%s: '%s' is not host:port or "
		    "[v6]:port", d->name, s);
	return cfg_copy(out, s);
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
};

/* Trim value, refuse what no type accepts, then run the type's check. */
static int
cfg_parse(const struct cfg_def *d, const char *value, struct cfg_parsed *out,
    char *err, size_t errlen)
{
	char		 tmp[CONFIG_MAX_VALUE + 1];
	const char	*s = value;
	size_t		 n = strlen(value), i;

	cfg_trim(&s, &n);
	if (n > CONFIG_MAX_VALUE)
		return cfg_fail(err, errlen, "%s: value is longer than %d bytes",
		    d->name, CONFIG_MAX_VALUE);
	for (i = 0; i < n; i++)
		if (iscntrl((unsigned char)s[i]))
			return cfg_fail(err, errlen, "%s: value contains a "
			    "control character", d->name);
	memcpy(tmp, s, n);
	tmp[n] = '\0';
	return cfg_types[d->type].check(d, tmp, out, err, errlen);
}

/* Index of key in the table, or -1. */
static int
cfg_index(const char *key)
{
	size_t	i;

	for (i = 0; i < CFG_NKEYS; i++)
		if (strcmp(cfg_table[i].name, key) == 0)
			return (int)i;
	return -1;
}

/* The definition of key (static), or NULL for an unknown key. */
const struct cfg_def *
config_lookup(const char *key)
{
	int	i = cfg_index(key);

	return i == -1 ? NULL : &cfg_table[i];
}

/* The static table, ended by an entry whose name is NULL. */
const struct cfg_def *
config_table(void)
{
	return cfg_table;
}

/* The name of a value type ("integer", "size", ...), static. */
const char *
config_type_name(enum cfg_type type)
{
	if ((unsigned)type >= sizeof(cfg_types) / sizeof(cfg_types[0]))
		return "?";
	return cfg_types[type].name;
}

/* 0 if value is valid for key, else -1 with a message naming the key. */
int
config_validate(const char *key, const char *value, char *err, size_t errlen)
{
	struct cfg_parsed	p;
	int			i = cfg_index(key);

	if (i == -1)
		return cfg_fail(err, errlen, "unknown key '%s'", key);
	return cfg_parse(&cfg_table[i], value, &p, err, errlen);
}

int
config_normalize(const char *key, const char *value, char *out,
    size_t outlen, char *err, size_t errlen)
{
	struct cfg_parsed	p;
	int			i = cfg_index(key);

	if (i == -1)
		return cfg_fail(err, errlen, "unknown key '%s'", key);
	if (cfg_parse(&cfg_table[i], value, &p, err, errlen) == -1)
		return -1;
	if (strlen(p.text) >= outlen)
		return cfg_fail(err, errlen, "%s: value too long", key);
	memcpy(out, p.text, strlen(p.text) + 1);
	return 0;
}

/*
 * Validate and store value for key from src, unless the value in force
 * came from a higher source (0, nothing changed). -1 with err otherwise.
 */
int
config_set(struct config *cfg, const char *key, const char *value,
    enum cfg_source src, char *err, size_t errlen)
{
	struct cfg_parsed	 p;
	struct cfg_value	*v;
	char			*text;
	int			 i = cfg_index(key);

	if (i == -1)
		return cfg_fail(err, errlen, "unknown key '%s'", key);
	if (cfg_parse(&cfg_table[i], value, &p, err, errlen) == -1)
		return -1;
	v = &cfg->v[i];
	if (src < v->src)
		return 0;
	if ((text = strdup(p.text)) == NULL)
		return cfg_fail(err, errlen, "%s: out of memory", key);
	free(v->text);
	v->text = text;
	v->num = p.num;
	v->src = src;
	return 0;
}

/* A configuration holding every default; NULL when out of memory. */
struct config *
config_new(void)
{
	struct config	*cfg;
	char		 err[256];
	size_t		 i;

	if ((cfg = calloc(1, sizeof(*cfg))) == NULL)
		return NULL;
	for (i = 0; i < CFG_NKEYS; i++) {
		if (config_set(cfg, cfg_table[i].name, cfg_table[i].def,
		    CFG_SRC_DEFAULT, err, sizeof(err)) == -1) {
			log_warnx("config default: %s", err);
			config_free(cfg);
			return NULL;
		}
	}
	return cfg;
}

/* Free cfg and every value text. */
void
config_free(struct config *cfg)
{
	size_t	i;

	if (cfg == NULL)
		return;
	for (i = 0; i < CFG_NKEYS; i++)
		free(cfg->v[i].text);
	free(cfg);
}

/* Set the n bytes of key (untrimmed) to value from src. */
static int
cfg_set_kv(struct config *cfg, const char *key, size_t n, const char *value,
    enum cfg_source src, char *err, size_t errlen)
{
	char	name[CONFIG_MAX_KEY + 1];

	cfg_trim(&key, &n);
	if (n == 0)
		return cfg_fail(err, errlen, "missing key before '='");
	if (n > CONFIG_MAX_KEY)
		n = CONFIG_MAX_KEY;
	memcpy(name, key, n);
	name[n] = '\0';
	return config_set(cfg, name, value, src, err, errlen);
}

/* "KEY=VALUE" from --set, stored from CFG_SRC_CLI. 0 or -1 with err. */
int
config_set_arg(struct config *cfg, const char *arg, char *err, size_t errlen)
{
	const char	*eq = strchr(arg, '=');

	if (eq == NULL)
		return cfg_fail(err, errlen, "--set '%s': expected KEY=VALUE",
		    arg);
	return cfg_set_kv(cfg, arg, (size_t)(eq - arg), eq + 1, CFG_SRC_CLI,
	    err, errlen);
}

/* One NUL-terminated line of a file: blank, "# comment" or "key = value". */
static int
cfg_file_line(struct config *cfg, const char *line, char *err, size_t errlen)
{
	const char	*p = line, *eq;
	size_t		 n = strlen(line);

	cfg_trim(&p, &n);
	if (n == 0 || *p == '#')
		return 0;
	if ((eq = strchr(p, '=')) == NULL)
		return cfg_fail(err, errlen, "expected 'key = value'");
	return cfg_set_kv(cfg, p, (size_t)(eq - p), eq + 1, CFG_SRC_FILE,
	    err, errlen);
}

/* Check and copy one raw line of a file (CR LF allowed). 0 or -1. */
static int
cfg_buf_line(struct config *cfg, const char *s, size_t n, char *err,
    size_t errlen)
{
	char	line[CONFIG_MAX_LINE + 1];

	if (n > 0 && s[n - 1] == '\r')
		n--;
	if (n > CONFIG_MAX_LINE)
		return cfg_fail(err, errlen, "line longer than %d bytes",
		    CONFIG_MAX_LINE);
	if (memchr(s, '\0', n) != NULL)
		return cfg_fail(err, errlen, "NUL byte in line");
	memcpy(line, s, n);
	line[n] = '\0';
	return cfg_file_line(cfg, line, err, errlen);
}

/*
 * Set every "key = value" line of the len bytes at data from CFG_SRC_FILE;
 * name is used in messages. -1 with "NAME:LINE: message" on the first
 * error (the lines before it stay applied).
 */
int
config_load_buf(struct config *cfg, const char *name, const char *data,
    size_t len, char *err, size_t errlen)
{
	char		 msg[512];
	const char	*p = data, *end = data + len, *nl;
	size_t		 n;
	unsigned	 lineno;

	for (lineno = 1; p < end; lineno++) {
		nl = memchr(p, '\n', (size_t)(end - p));
		n = nl != NULL ? (size_t)(nl - p) : (size_t)(end - p);
		if (cfg_buf_line(cfg, p, n, msg, sizeof(msg)) == -1)
			return cfg_fail(err, errlen, "%s:%u: %s", name, lineno,
			    msg);
		p += n + 1;
	}
	return 0;
}

/* Read a whole file of at most CONFIG_MAX_FILE_BYTES into a new buffer. */
static char *
cfg_read_file(const char *path, size_t *len, char *err, size_t errlen)
{
	FILE	*fp;
	char	*data;

	if ((fp = fopen(path, "r")) == NULL) {
		cfg_fail(err, errlen, "%s: %s", path, strerror(errno));
		return NULL;
	}
	if ((data = malloc(CONFIG_MAX_FILE_BYTES + 1)) == NULL) {
		cfg_fail(err, errlen, "%s: out of memory", path);
		fclose(fp);
		return NULL;
	}
	*len = fread(data, 1, CONFIG_MAX_FILE_BYTES + 1, fp);
	if (ferror(fp) || *len > CONFIG_MAX_FILE_BYTES) {
		if (ferror(fp))
			cfg_fail(err, errlen, "%s: read error", path);
		else
			cfg_fail(err, errlen, "%s: larger than %d bytes", path,
			    CONFIG_MAX_FILE_BYTES);
		free(data);
		data = NULL;
	}
	fclose(fp);
	return data;
}

/* The -c file: see config_load_buf(); "FILE: reason" when it cannot be read. */
int
config_load_file(struct config *cfg, const char *path, char *err, size_t errlen)
{
	char	*data;
	size_t	 len;
	int	 rv;

	if ((data = cfg_read_file(path, &len, err, errlen)) == NULL)
		return -1;
	rv = config_load_buf(cfg, path, data, len, err, errlen);
	free(data);
	return rv;
}

/*
 * The index of a key a caller names in code. An unknown one is a
 * programming error: a debug build stops at once, a release build logs it
 * and the getter answers empty or zero.
 */
static int
cfg_index_known(const char *key)
{
	int	i = cfg_index(key);

	if (i == -1) {
		log_warnx("config: BUG: no key '%s' in the table", key);
#ifndef NDEBUG
		abort();
#endif
	}
	return i;
}

/* The value in force as text, owned by cfg. */
const char *
config_get(const struct config *cfg, const char *key)
{
	int	i = cfg_index_known(key);

	return i == -1 ? "" : cfg->v[i].text;
}

/*
 * The number behind a value: INT as is, SIZE in bytes, BOOL 0/1, LEVEL the
 * enum log_level, lists their item count; 0 for an unknown key.
 */
int64_t
config_get_int(const struct config *cfg, const char *key)
{
	int	i = cfg_index_known(key);

	return i == -1 ? 0 : cfg->v[i].num;
}

/* A BOOL value; false for an unknown key. */
bool
config_get_bool(const struct config *cfg, const char *key)
{
	return config_get_int(cfg, key) != 0;
}

/* Where the value in force came from; CFG_SRC_DEFAULT for an unknown key. */
enum cfg_source
config_source(const struct config *cfg, const char *key)
{
	int	i = cfg_index_known(key);

	return i == -1 ? CFG_SRC_DEFAULT : cfg->v[i].src;
}

/* "default", "database", "file" or "command line" (static). */
const char *
config_source_name(enum cfg_source src)
{
	static const char *const names[] = {
		[CFG_SRC_DEFAULT] = "default",
		[CFG_SRC_DB] = "database",
		[CFG_SRC_FILE] = "file",
		[CFG_SRC_CLI] = "command line",
	};

	if ((unsigned)src >= sizeof(names) / sizeof(names[0]))
		return "?";
	return names[src];
}

/*
 * The value of key as it may be shown to a person, written into out: a
 * secret is "(set)" or "", and every credential a URL or connection
 * string carries is "***". Returns out; "" for an unknown key.
 */
const char *
config_display(const struct config *cfg, const char *key, char *out,
    size_t outlen)
{
	const struct cfg_def	*d = config_lookup(key);
	const char		*v;

	if (outlen == 0)
		return out;
	out[0] = '\0';
	if (d == NULL)
		return out;
	v = config_get(cfg, key);
	if (d->flags & CFG_SECRET)
		snprintf(out, outlen, "%s", v[0] != '\0' ? "(set)" : "");
	else
		redact_url(v, out, outlen);
	return out;
}

/*
 * Take over the values of fresh (a configuration read again on SIGHUP).
 * Keys that may change at run time get fresh's value and source; a change
 * to any other key is logged as waiting for a restart. Returns the number
 * of keys that changed.
 */
int
config_adopt(struct config *cfg, const struct config *fresh)
{
	size_t	i;
	int	changed = 0;
	char	*text;

	for (i = 0; i < CFG_NKEYS; i++) {
		const struct cfg_value *f = &fresh->v[i];

		if (strcmp(cfg->v[i].text, f->text) == 0) {
			cfg->v[i].src = f->src;
			continue;
		}
		if (!(cfg_table[i].flags & CFG_RUNTIME)) {
			log_warnx("config: %s changed; takes effect after a "
			    "restart", cfg_table[i].name);
			continue;
		}
		if ((text = strdup(f->text)) == NULL) {
			log_warnx("config: %s: out of memory", cfg_table[i].name);
			continue;
		}
		free(cfg->v[i].text);
		cfg->v[i] = (struct cfg_value){ text, f->num, f->src };
		changed++;
	}
	return changed;
}
