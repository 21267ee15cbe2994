/*
 * config.c — the configuration table and the values in force. It owns one
 * text copy of every value and the source it came from. It must never
 * store a value that failed validation, never let a lower source replace a
 * higher one, and never echo a secret value in a message. The checks of
 * each type of value live in config_check.c.
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
#include "core/config_check.h"
#include "core/errf.h"
#include "core/limits.h"
#include "core/log.h"
#include "core/pgurl.h"
#include "core/redact.h"

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
	{ .name = "negentropy.enabled", .type = CFG_BOOL, .def = "true",
	  .help = "reconcile authors' histories with NIP-77 where a relay "
	  "speaks it, instead of paging", .flags = CFG_RUNTIME },
	{ .name = "negentropy.resync_s", .type = CFG_INT, .def = "86400",
	  .min = 1, .max = 30 * 86400, .unit = "s",
	  .help = "reconcile a complete author again this long after, on "
	  "relays that speak NIP-77 (gaps opened while the box was off)",
	  .flags = CFG_RUNTIME },
	{ .name = "recovery.backoff_base_ms", .type = CFG_INT, .def = "30000",
	  .min = 10, .max = 3600000, .unit = "ms",
	  .help = "wait before fetching again ids a relay reported and did "
	  "not deliver; doubled for each failed fetch", .flags = CFG_RUNTIME },
	{ .name = "recovery.settle_s", .type = CFG_INT, .def = "300",
	  .min = 0, .max = 86400, .unit = "s",
	  .help = "the box is not idle while recovery has ids to fetch again "
	  "within this long (0: idle does not wait for recovery)",
	  .flags = CFG_RUNTIME },
	{ .name = "recovery.backoff_max_ms", .type = CFG_INT,
	  .def = "900000", .min = 10, .max = 86400000, .unit = "ms",
	  .help = "longest wait between two such fetches from one relay",
	  .flags = CFG_RUNTIME },
	{ .name = "http.listen", .type = CFG_HOSTPORT, .def = "127.0.0.1:8080",
	  .help = "address of the status page and JSON API" },
	{ .name = "box.names", .type = CFG_NAMES, .def = "",
	  .help = "names and addresses the box is reached by besides "
	  "cachebox.local, its host name and its own addresses (the web's "
	  "Host and Origin check, NIP-42 relay URLs), comma-separated",
	  .flags = CFG_RUNTIME },
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
	{ .name = "store.cache_kib", .type = CFG_INT, .def = "1024",
	  .min = 256, .max = 262144, .unit = "KiB",
	  .help = "SQLite page cache" },
	{ .name = "store.checkpoint_mib", .type = CFG_INT, .def = "64",
	  .min = 1, .max = 1024, .unit = "MiB",
	  .help = "WAL size past which its pages are copied into the database "
	  "(a checkpoint): larger, fewer writes to the card; smaller, less "
	  "to read back after a power cut" },
	{ .name = CONFIG_ADMIN_TOKEN, .type = CFG_TOKEN, .def = "",
	  .help = "the admin password: changes from the status page and the "
	  "web API need it (sent as a bearer token; kept only as a salted "
	  "hash); empty = none may change anything there",
	  .flags = CFG_RUNTIME | CFG_SECRET },
	{ .name = "console.tty", .type = CFG_STRING, .def = "",
	  .help = "serial console device, '-' for stdin; empty = no console",
	  .flags = CFG_LOCAL },
	{ .name = "log.level", .type = CFG_LEVEL, .def = "info",
	  .help = "least severe level logged: error, warn, info or debug",
	  .flags = CFG_RUNTIME },
	{ .name = "jobs.max_subs_per_relay", .type = CFG_INT, .def = "2",
	  .min = 1, .max = 64, .unit = "subscriptions",
	  .help = "batches of a custom job paged at once on one relay (the "
	  "author drain keeps the rest)", .flags = CFG_RUNTIME },
	{ .name = "jobs.retry_base_ms", .type = CFG_INT, .def = "30000",
	  .min = 10, .max = 3600000, .unit = "ms",
	  .help = "wait before a failed job batch is asked again; doubled "
	  "for each failure", .flags = CFG_RUNTIME },
	{ .name = "relay.listen", .type = CFG_HOSTPORT, .def = "127.0.0.1:7777",
	  .help = "address of the box's own relay (NIP-01 reads, NIP-11, "
	  "NIP-45, NIP-77); empty = off", .flags = CFG_OPTIONAL },
	{ .name = "relay.accept", .type = CFG_CHOICE, .def = "none",
	  .choices = "none|roots|follows",
	  .help = "EVENTs the relay stores from its clients: none (read-only), "
	  "those signed by a root, or by any followed key",
	  .flags = CFG_RUNTIME },
	{ .name = "relay.auth", .type = CFG_CHOICE, .def = "none",
	  .choices = "none|owners",
	  .help = "who may read from the relay: anyone, or only clients that "
	  "authenticate (NIP-42) as a root or a key of relay.readers",
	  .flags = CFG_RUNTIME },
	{ .name = "relay.readers", .type = CFG_KEYS, .def = "",
	  .help = "keys besides the roots allowed to read when relay.auth = "
	  "owners (npub or hex)", .flags = CFG_RUNTIME },
	{ .name = "relay.name", .type = CFG_STRING, .def = "cachebox",
	  .help = "name in the relay's NIP-11 document", .flags = CFG_RUNTIME },
	{ .name = "relay.description", .type = CFG_STRING,
	  .def = "a home Nostr cache: read-only copies of what its owner "
	  "follows", .help = "description in the relay's NIP-11 document",
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

bool
config_value_local(const char *key, const char *value, char *what,
    size_t whatlen)
{
	int	i = cfg_index(key);

	if (i == -1)
		return false;
	if (cfg_table[i].flags & CFG_LOCAL) {
		snprintf(what, whatlen, "%s", key);
		return true;
	}
	if (cfg_table[i].type != CFG_UPLINK ||
	    (strncasecmp(value, "postgres://", 11) != 0 &&
	    strncasecmp(value, "postgresql://", 13) != 0))
		return false;
	return pgurl_names_file(value, what, whatlen) == 1;
}

/* 0 if value is valid for key, else -1 with a message naming the key. */
int
config_validate(const char *key, const char *value, char *err, size_t errlen)
{
	struct cfg_parsed	p;
	int			i = cfg_index(key);

	if (i == -1)
		return errf(err, errlen, "unknown key '%s'", key);
	return cfg_parse(&cfg_table[i], value, &p, err, errlen);
}

int
config_normalize(const char *key, const char *value, char *out,
    size_t outlen, char *err, size_t errlen)
{
	struct cfg_parsed	p;
	int			i = cfg_index(key);

	if (i == -1)
		return errf(err, errlen, "unknown key '%s'", key);
	if (cfg_parse(&cfg_table[i], value, &p, err, errlen) == -1)
		return -1;
	if (strlen(p.text) >= outlen)
		return errf(err, errlen, "%s: value too long", key);
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
		return errf(err, errlen, "unknown key '%s'", key);
	if (cfg_parse(&cfg_table[i], value, &p, err, errlen) == -1)
		return -1;
	v = &cfg->v[i];
	if (src < v->src)
		return 0;
	if ((text = strdup(p.text)) == NULL)
		return errf(err, errlen, "%s: out of memory", key);
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
	struct config		*cfg;
	struct cfg_parsed	 p;
	char			 err[256];
	size_t			 i;

	if ((cfg = calloc(1, sizeof(*cfg))) == NULL)
		return NULL;
	for (i = 0; i < CFG_NKEYS; i++) {
		if (cfg_parse_default(&cfg_table[i], &p, err,
		    sizeof(err)) == -1) {
			log_warnx("config default: %s", err);
			config_free(cfg);
			return NULL;
		}
		if ((cfg->v[i].text = strdup(p.text)) == NULL) {
			config_free(cfg);
			return NULL;
		}
		cfg->v[i].num = p.num;
		cfg->v[i].src = CFG_SRC_DEFAULT;
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
		return errf(err, errlen, "missing key before '='");
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
		return errf(err, errlen, "--set '%s': expected KEY=VALUE",
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
		return errf(err, errlen, "expected 'key = value'");
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
		return errf(err, errlen, "line longer than %d bytes",
		    CONFIG_MAX_LINE);
	if (memchr(s, '\0', n) != NULL)
		return errf(err, errlen, "NUL byte in line");
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
			return errf(err, errlen, "%s:%u: %s", name, lineno,
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
		errf(err, errlen, "%s: %s", path, strerror(errno));
		return NULL;
	}
	if ((data = malloc(CONFIG_MAX_FILE_BYTES + 1)) == NULL) {
		errf(err, errlen, "%s: out of memory", path);
		fclose(fp);
		return NULL;
	}
	*len = fread(data, 1, CONFIG_MAX_FILE_BYTES + 1, fp);
	if (ferror(fp) || *len > CONFIG_MAX_FILE_BYTES) {
		if (ferror(fp))
			errf(err, errlen, "%s: read error", path);
		else
			errf(err, errlen, "%s: larger than %d bytes", path,
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
