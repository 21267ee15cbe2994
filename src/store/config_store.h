/*
 * config_store.h — configuration keys set at run time (console, web,
 * cacheboxctl), persisted in the `config` table and loaded at start-up as
 * CFG_SRC_DB: below --set and -c, above the built-in defaults.
 */
#ifndef CACHEBOX_STORE_CONFIG_STORE_H
#define CACHEBOX_STORE_CONFIG_STORE_H

#include <stdbool.h>
#include <stddef.h>

struct store;
struct config;

/*
 * Set every stored key in cfg from CFG_SRC_DB (a key already set from a
 * higher source keeps its value). A stored key this binary does not know,
 * or whose value no longer validates, is logged and skipped, never deleted.
 * A CFG_LOCAL key (a path the daemon opens) counts only if the console
 * stored it; a token an older version stored in clear is rewritten as its
 * salted hash. 0, or -1 with a one-line message in err on a database error.
 */
int	store_config_load(struct store *, struct config *, char *err,
	    size_t errlen);

/*
 * Store value for key (insert or replace), noting whether the console
 * stored it. The key must exist and the value must validate; it should be
 * what config_normalize() made of the caller's text, and a token must be
 * its hash (a token in clear is refused). The caller applies the value to
 * the running configuration itself. 0, or -1 (logged).
 */
int	store_config_put(struct store *, const char *key, const char *value,
	    bool by_console);

/*
 * Forget the stored value of key, so the next start uses the file, the
 * command line or the default. Deleting an absent key is not an error.
 * 0, or -1 (logged).
 */
int	store_config_del(struct store *, const char *key);

/*
 * Copy the stored value of key into buf. 0 when found, 1 when the key is
 * not stored, -1 (logged) on a database error or when buf is too small.
 */
int	store_config_get(struct store *, const char *key, char *buf,
	    size_t buflen);

#endif
