/*
 * config.h — the typed configuration table (tmux's options-table is the
 * model): every key has a type, a default, bounds, a unit, a help line and
 * whether it may change while the daemon runs.
 *
 * Precedence (ARCHITECTURE.md §11): --set > -c file > value stored in
 * the database > built-in default. Each value remembers its source; a
 * set from a lower source never replaces a value from a higher one.
 * Values are validated on every set; a bad value is refused with a
 * message naming the key.
 */
#ifndef CACHEBOX_CORE_CONFIG_H
#define CACHEBOX_CORE_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The key of the admin token, the one key more than one file reads by
 * name (the web's bearer check, the first run, the token command).
 */
#define CONFIG_ADMIN_TOKEN	"admin.token"

enum cfg_type {
	CFG_STRING,	/* free text, at most CONFIG_MAX_VALUE bytes */
	CFG_INT,	/* decimal integer within [min, max] */
	CFG_BOOL,	/* true/false, yes/no, on/off, 1/0 */
	CFG_SIZE,	/* bytes; accepts suffixes k, m, g (KiB, MiB, GiB) */
	CFG_LEVEL,	/* log level name */
	CFG_URLS,	/* comma-separated ws:// or wss:// URLs (may be empty) */
	CFG_UPLINK,	/* empty, ws://, wss:// or postgres:// URL */
	CFG_HOSTPORT,	/* host:port or [v6]:port */
	CFG_KEYS,	/* comma-separated npub or 64-hex public keys (may be empty) */
	CFG_ADDRS,	/* comma-separated IP, IP:port or [v6]:port (may be empty) */
	CFG_TOKEN,	/* a secret kept only as its salted hash (core/secret.h) */
	CFG_CHOICE,	/* one word of cfg_def.choices */
	CFG_NAMES,	/* comma-separated host names or IP literals (may be empty) */
	CFG_NTYPES
};

enum cfg_source {
	CFG_SRC_DEFAULT = 0,
	CFG_SRC_DB,
	CFG_SRC_FILE,
	CFG_SRC_CLI,
};

/* What a key allows, in cfg_def.flags. */
enum cfg_flag {
	CFG_RUNTIME = 1 << 0,	/* may change while the daemon runs */
	CFG_SECRET = 1 << 1,	/* never shown, only "(set)" (admin.token) */
	/*
	 * Names a path or a device the daemon opens: set only from the
	 * console, the -c file or the command line, never over the web or
	 * the control socket, and a stored value counts only if the console
	 * stored it (ARCHITECTURE.md §9: a remote command never names a path).
	 */
	CFG_LOCAL = 1 << 2,
	/* May be empty, meaning "off" (relay.listen), whatever its type. */
	CFG_OPTIONAL = 1 << 3,
};

struct cfg_def {
	const char	*name;
	enum cfg_type	 type;
	const char	*def;		/* default, as text */
	int64_t		 min, max;	/* for CFG_INT and CFG_SIZE */
	const char	*unit;		/* "ms", "bytes", ... or NULL */
	const char	*help;
	unsigned	 flags;		/* enum cfg_flag */
	const char	*choices;	/* CFG_CHOICE: the words allowed, "a|b|c" */
};

struct config;

/*
 * A check lent to the table by the layer that parses a type's values, so
 * a value the configuration accepts is one that layer can use: for the
 * list types it checks one item. 0 when s is acceptable, else -1 with a
 * short reason in *why (static, may stay NULL).
 */
typedef int	(*config_lent_fn)(const char *s, const char **why);

/*
 * Lend fn as the check of type (CFG_URLS: one relay URL; CFG_KEYS: one
 * public key; CFG_UPLINK: a non-empty uplink URL). Called at start-up
 * before any value is set; setting a value of a type with no check lent is
 * a programming error (debug builds abort).
 */
void		 config_lend_check(enum cfg_type, config_lent_fn fn);

/* A configuration holding every default. NULL on allocation failure. */
struct config	*config_new(void);
void		 config_free(struct config *);

/* The definition of key, or NULL if there is no such key. */
const struct cfg_def *config_lookup(const char *key);
/*
 * Whether value for key makes the daemon open a file or a device, so that
 * it may be set only from the console, the -c file or --set: every value
 * of a CFG_LOCAL key, and an uplink URL whose libpq parameters name a file
 * or a socket path (core/pgurl.h). true with the parameter's name in what
 * (the key's own name for a CFG_LOCAL key).
 */
bool		 config_value_local(const char *key, const char *value,
		    char *what, size_t whatlen);
/* The table, terminated by an entry with name == NULL. */
const struct cfg_def *config_table(void);

/*
 * Validate value for key and store it from source src unless the current
 * value came from a higher source (then 0 is returned and nothing changes).
 * -1 on an unknown key or a bad value, with a one-line message naming the
 * key in err.
 */
int		 config_set(struct config *, const char *key, const char *value,
		    enum cfg_source src, char *err, size_t errlen);
/* Validate without storing. 0 or -1 with err. */
int		 config_validate(const char *key, const char *value, char *err,
		    size_t errlen);
/*
 * Validate value for key and write the text config_set() would keep into
 * out: trimmed, lists joined, a CFG_TOKEN hashed (so the database never
 * sees a token). 0, or -1 with err. Messages never repeat a secret.
 */
int		 config_normalize(const char *key, const char *value, char *out,
		    size_t outlen, char *err, size_t errlen);
/* Parse "KEY=VALUE" (for --set) and set it from CFG_SRC_CLI. */
int		 config_set_arg(struct config *, const char *arg, char *err, size_t errlen);
/*
 * Read a "key = value" file ('#' comments, blank lines) and set each key
 * from CFG_SRC_FILE. -1 with "FILE:LINE: message" in err on the first error.
 */
int		 config_load_file(struct config *, const char *path, char *err,
		    size_t errlen);
/*
 * The parser behind config_load_file() on len bytes in memory (also the
 * fuzzing entry); name stands for FILE in messages.
 */
int		 config_load_buf(struct config *, const char *name,
		    const char *data, size_t len, char *err, size_t errlen);

/*
 * Every key passed to the getters below must be in the table: an unknown
 * one is a programming error, which aborts a debug build and is logged
 * (with an empty or zero answer) in a release build.
 */
/* Current value as text (never NULL for a known key, "" otherwise). */
const char	*config_get(const struct config *, const char *key);
/* INT; SIZE in bytes; BOOL 0/1; LEVEL as enum log_level; list item counts. */
int64_t		 config_get_int(const struct config *, const char *key);
bool		 config_get_bool(const struct config *, const char *key);
enum cfg_source	 config_source(const struct config *, const char *key);
const char	*config_source_name(enum cfg_source);
/* The name of a type ("string", "integer", "size", ...), static. */
const char	*config_type_name(enum cfg_type);
/*
 * The value of key fit to show a person, written into out (returned): a
 * secret key shows "(set)" or "", every credential of a URL or connection
 * string shows as "***" (core/redact.h).
 */
const char	*config_display(const struct config *, const char *key,
		    char *out, size_t outlen);

/*
 * Take over the values of fresh (the configuration read again on SIGHUP):
 * run-time keys change, others are logged as needing a restart. Returns
 * how many keys changed.
 */
int		 config_adopt(struct config *, const struct config *fresh);

#endif
