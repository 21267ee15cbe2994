/*
 * config_store.c — the `config` table: run-time configuration that must
 * survive a restart. It reads and writes rows and hands values to
 * config_set() with CFG_SRC_DB; it never decides precedence (config.c
 * does) and never deletes a row it does not understand, so a downgrade
 * followed by an upgrade loses nothing.
 */
#include <stdio.h>
#include <string.h>

#include "core/clock.h"
#include "core/config.h"
#include "core/limits.h"
#include "core/log.h"
#include "core/secret.h"
#include "store/config_store.h"
#include "store/store.h"
#include "store/store_sql.h"

/*
 * A token an older version kept in clear: store its salted hash in its
 * place (the row keeps its origin).
 */
static void
config_store_rehash(struct store *st, const char *key, const char *value)
{
	char	norm[CONFIG_MAX_VALUE + 1], msg[256];

	if (config_normalize(key, value, norm, sizeof(norm), msg,
	    sizeof(msg)) == -1 || store_config_put(st, key, norm, false) == -1)
		return;
	log_info("store: %s was stored in clear by an older version; now "
	    "only its salted hash is kept", key);
}

/*
 * Apply one stored row to cfg; a key or value no longer valid is skipped,
 * and so is a console-only key that the console did not store (an older
 * version let the web set one).
 */
static void
config_store_apply(struct store *st, struct config *cfg, const char *key,
    const char *value, const char *origin)
{
	const struct cfg_def	*d;
	char			 msg[256], what[64];

	if ((d = config_lookup(key)) == NULL) {
		log_warnx("store: stored configuration key \"%s\" is not known "
		    "to this version; ignored", key);
		return;
	}
	if ((origin == NULL || strcmp(origin, "console") != 0) &&
	    config_value_local(key, value, what, sizeof(what))) {
		log_warnx("store: stored %s was not set from the console; "
		    "ignored (%s names a file the daemon opens: set it on the "
		    "console, in the -c file or with --set)", key, what);
		return;
	}
	if (config_set(cfg, key, value, CFG_SRC_DB, msg, sizeof(msg)) == -1) {
		log_warnx("store: stored configuration ignored: %s", msg);
		return;
	}
	if (d->type == CFG_TOKEN && *value != '\0' && !secret_is_hash(value))
		config_store_rehash(st, key, value);
}

int
store_config_load(struct store *st, struct config *cfg, char *err,
    size_t errlen)
{
	sqlite3_stmt	*stmt;
	const char	*key, *value, *origin;
	int		 rc;

	stmt = store_stmt(st, "SELECT key, value, origin FROM config "
	    "ORDER BY key");
	if (stmt == NULL) {
		snprintf(err, errlen, "cannot read stored configuration: %s",
		    sqlite3_errmsg(store_db(st)));
		return -1;
	}
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		key = (const char *)sqlite3_column_text(stmt, 0);
		value = (const char *)sqlite3_column_text(stmt, 1);
		origin = (const char *)sqlite3_column_text(stmt, 2);
		if (key == NULL || value == NULL)
			continue;
		config_store_apply(st, cfg, key, value, origin);
	}
	if (rc != SQLITE_DONE) {
		snprintf(err, errlen, "cannot read stored configuration: %s",
		    sqlite3_errmsg(store_db(st)));
		store_stmt_done(stmt);
		return -1;
	}
	store_stmt_done(stmt);
	return 0;
}

int
store_config_put(struct store *st, const char *key, const char *value,
    bool by_console)
{
	const struct cfg_def	*d = config_lookup(key);
	sqlite3_stmt		*stmt;
	char			 msg[256];

	if (config_validate(key, value, msg, sizeof(msg)) == -1) {
		log_warnx("store: not storing configuration: %s", msg);
		return -1;
	}
	if (d->type == CFG_TOKEN && *value != '\0' && !secret_is_hash(value)) {
		log_warnx("store: BUG: %s offered in clear; not stored", key);
		return -1;
	}
	stmt = store_stmt(st, "INSERT INTO config (key, value, updated_at, "
	    "origin) VALUES (?1, ?2, ?3, ?4) ON CONFLICT (key) DO UPDATE SET "
	    "value = excluded.value, updated_at = excluded.updated_at, "
	    "origin = excluded.origin");
	if (stmt == NULL)
		return -1;
	if (sqlite3_bind_text(stmt, 1, key, -1, SQLITE_STATIC) != SQLITE_OK ||
	    sqlite3_bind_text(stmt, 2, value, -1, SQLITE_STATIC) != SQLITE_OK ||
	    sqlite3_bind_int64(stmt, 3, clock_wall_s()) != SQLITE_OK ||
	    sqlite3_bind_text(stmt, 4, by_console ? "console" : "remote", -1,
	    SQLITE_STATIC) != SQLITE_OK) {
		store_bind_fail(st, stmt, "storing configuration");
		return -1;
	}
	return store_step_done(st, stmt, "storing configuration");
}

int
store_config_del(struct store *st, const char *key)
{
	sqlite3_stmt	*stmt;

	stmt = store_stmt(st, "DELETE FROM config WHERE key = ?1");
	if (stmt == NULL)
		return -1;
	if (sqlite3_bind_text(stmt, 1, key, -1, SQLITE_STATIC) != SQLITE_OK) {
		store_bind_fail(st, stmt, "deleting configuration");
		return -1;
	}
	return store_step_done(st, stmt, "deleting configuration");
}

int
store_config_get(struct store *st, const char *key, char *buf, size_t buflen)
{
	sqlite3_stmt	*stmt;
	const char	*v;
	int		 rc, ret = -1;

	stmt = store_stmt(st, "SELECT value FROM config WHERE key = ?1");
	if (stmt == NULL)
		return -1;
	if (sqlite3_bind_text(stmt, 1, key, -1, SQLITE_STATIC) != SQLITE_OK) {
		store_bind_fail(st, stmt, "reading configuration");
		return -1;
	}
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_DONE) {
		ret = 1;
		goto out;
	}
	if (rc != SQLITE_ROW) {
		log_warnx("store: reading %s: %s", key,
		    sqlite3_errmsg(store_db(st)));
		goto out;
	}
	v = (const char *)sqlite3_column_text(stmt, 0);
	if (v == NULL || strlen(v) >= buflen) {
		log_warnx("store: stored value of %s does not fit", key);
		goto out;
	}
	memcpy(buf, v, strlen(v) + 1);
	ret = 0;
out:
	store_stmt_done(stmt);
	return ret;
}
