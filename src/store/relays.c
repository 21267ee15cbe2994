/*
 * relays.c — rows of the `relays` table. Each function is one prepared
 * statement; none opens a transaction of its own, so the pool can flush
 * every relay's counters inside one (store_begin/commit around the batch).
 * It never deletes a relay row: the history of a relay stays visible.
 */
#include <stdio.h>
#include <string.h>

#include "core/log.h"
#include "nostr/nip11.h"
#include "store/relays.h"
#include "store/store.h"
#include "store/store_sql.h"


int
store_relay_upsert(struct store *st, const char *url, const char *role,
    int64_t now_s)
{
	sqlite3_stmt	*stmt;

	stmt = store_stmt(st, "INSERT INTO relays (url, role, first_seen, "
	    "updated_at) VALUES (?1, ?2, ?3, ?3) ON CONFLICT (url) DO UPDATE "
	    "SET role = excluded.role, updated_at = excluded.updated_at");
	if (stmt == NULL)
		return -1;
	if (sqlite3_bind_text(stmt, 1, url, -1, SQLITE_TRANSIENT) != SQLITE_OK ||
	    sqlite3_bind_text(stmt, 2, role, -1, SQLITE_STATIC) != SQLITE_OK ||
	    sqlite3_bind_int64(stmt, 3, now_s) != SQLITE_OK) {
		store_bind_fail(st, stmt, "relays");
		return -1;
	}
	return store_step_done(st, stmt, "upsert");
}

int
store_relay_set_state(struct store *st, const char *url, const char *state,
    const char *last_error, uint32_t failures, uint64_t backoff_until_ms,
    int64_t now_s)
{
	sqlite3_stmt	*stmt;
	int		 rc;

	stmt = store_stmt(st, "UPDATE relays SET state = ?2, "
	    "last_error = coalesce(?3, last_error), failures = ?4, "
	    "backoff_until_ms = ?5, updated_at = ?6 WHERE url = ?1");
	if (stmt == NULL)
		return -1;
	rc = sqlite3_bind_text(stmt, 1, url, -1, SQLITE_TRANSIENT);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_text(stmt, 2, state, -1, SQLITE_STATIC);
	if (rc == SQLITE_OK)
		rc = last_error == NULL ? sqlite3_bind_null(stmt, 3) :
		    sqlite3_bind_text(stmt, 3, last_error, -1, SQLITE_TRANSIENT);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(stmt, 4, failures);
	if (rc == SQLITE_OK)
		rc = backoff_until_ms == 0 ? sqlite3_bind_null(stmt, 5) :
		    sqlite3_bind_int64(stmt, 5, (int64_t)backoff_until_ms);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(stmt, 6, now_s);
	if (rc != SQLITE_OK) {
		store_bind_fail(st, stmt, "relays");
		return -1;
	}
	return store_step_done(st, stmt, "set state");
}

int
store_relay_add_counters(struct store *st, const char *url,
    const struct store_relay_counters *c, int64_t now_s)
{
	sqlite3_stmt	*stmt;
	const uint64_t	 v[9] = { c->events, c->bytes_in, c->reqs, c->eose,
	    c->notices, c->closed, c->auth, c->invalid, c->dropped };
	int		 i, rc;

	stmt = store_stmt(st, "UPDATE relays SET events = events + ?2, "
	    "bytes_in = bytes_in + ?3, reqs = reqs + ?4, eose = eose + ?5, "
	    "notices = notices + ?6, closed = closed + ?7, auth = auth + ?8, "
	    "invalid = invalid + ?9, dropped = dropped + ?10, "
	    "updated_at = ?11 WHERE url = ?1");
	if (stmt == NULL)
		return -1;
	rc = sqlite3_bind_text(stmt, 1, url, -1, SQLITE_TRANSIENT);
	for (i = 0; i < 9 && rc == SQLITE_OK; i++)
		rc = sqlite3_bind_int64(stmt, i + 2, (int64_t)v[i]);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(stmt, 11, now_s);
	if (rc != SQLITE_OK) {
		store_bind_fail(st, stmt, "relays");
		return -1;
	}
	return store_step_done(st, stmt, "add counters");
}

/* "1,11,42" into out; a list that does not fit is cut at an entry. */
static void
relays_nips_text(const struct nip11_info *info, char *out, size_t outlen)
{
	size_t	i, len = 0;
	int	n;

	out[0] = '\0';
	for (i = 0; i < info->nsupported_nips; i++) {
		n = snprintf(out + len, outlen - len, "%s%d", i ? "," : "",
		    info->supported_nips[i]);
		if (n < 0 || (size_t)n >= outlen - len) {
			out[len] = '\0';
			return;
		}
		len += (size_t)n;
	}
}

static int
bind_opt(sqlite3_stmt *stmt, int i, int64_t v)
{
	return v > 0 ? sqlite3_bind_int64(stmt, i, v) : sqlite3_bind_null(stmt, i);
}

int
store_relay_set_nip11(struct store *st, const char *url,
    const struct nip11_info *info, int64_t now_s)
{
	sqlite3_stmt	*stmt;
	char		 nips[NIP11_MAX_NIPS * 7 + 1];
	int		 rc;

	relays_nips_text(info, nips, sizeof(nips));
	stmt = store_stmt(st, "UPDATE relays SET max_limit = ?2, "
	    "max_subscriptions = ?3, max_message_length = ?4, "
	    "supported_nips = ?5, auth_required = ?6, nip11_at = ?7, "
	    "updated_at = ?7 WHERE url = ?1");
	if (stmt == NULL)
		return -1;
	rc = sqlite3_bind_text(stmt, 1, url, -1, SQLITE_TRANSIENT);
	if (rc == SQLITE_OK)
		rc = bind_opt(stmt, 2, info->max_limit);
	if (rc == SQLITE_OK)
		rc = bind_opt(stmt, 3, info->max_subscriptions);
	if (rc == SQLITE_OK)
		rc = bind_opt(stmt, 4, info->max_message_length);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_text(stmt, 5, nips, -1, SQLITE_TRANSIENT);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int(stmt, 6, info->auth_required ? 1 : 0);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(stmt, 7, now_s);
	if (rc != SQLITE_OK) {
		store_bind_fail(st, stmt, "relays");
		return -1;
	}
	return store_step_done(st, stmt, "set nip11");
}

int
store_relays_each(struct store *st, store_relay_row_cb cb, void *arg)
{
	struct store_relay_row	 row;
	sqlite3_stmt		*s;
	int			 rc;

	s = store_stmt(st, "SELECT url, role, state, events, last_error "
	    "FROM relays ORDER BY url");
	if (s == NULL)
		return -1;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		row.url = (const char *)sqlite3_column_text(s, 0);
		row.role = (const char *)sqlite3_column_text(s, 1);
		row.state = (const char *)sqlite3_column_text(s, 2);
		row.events = sqlite3_column_int64(s, 3);
		row.last_error = (const char *)sqlite3_column_text(s, 4);
		cb(&row, arg);
	}
	store_stmt_done(s);
	if (rc != SQLITE_DONE) {
		log_warnx("store: relays list: %s",
		    sqlite3_errmsg(store_db(st)));
		return -1;
	}
	return 0;
}

int
store_relay_negentropy_get(struct store *st, const char *url, int *value,
    int64_t *at)
{
	sqlite3_stmt	*stmt;
	int		 rc;

	*value = -1;
	*at = 0;
	stmt = store_stmt(st, "SELECT negentropy, coalesce(negentropy_at, 0) "
	    "FROM relays WHERE url = ?1");
	if (stmt == NULL)
		return -1;
	if (sqlite3_bind_text(stmt, 1, url, -1, SQLITE_STATIC) != SQLITE_OK) {
		store_bind_fail(st, stmt, "relays negentropy");
		return -1;
	}
	if ((rc = sqlite3_step(stmt)) == SQLITE_ROW &&
	    sqlite3_column_type(stmt, 0) != SQLITE_NULL) {
		*value = sqlite3_column_int(stmt, 0) != 0;
		*at = sqlite3_column_int64(stmt, 1);
	}
	store_stmt_done(stmt);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		log_warnx("store: relays negentropy: %s",
		    sqlite3_errmsg(store_db(st)));
		return -1;
	}
	return 0;
}

int
store_relay_negentropy_set(struct store *st, const char *url, int value,
    int64_t now_s)
{
	sqlite3_stmt	*stmt;

	stmt = store_stmt(st, "INSERT INTO relays (url, role, first_seen, "
	    "updated_at, negentropy, negentropy_at) VALUES (?1, 'custom', ?3, "
	    "?3, ?2, ?3) ON CONFLICT (url) DO UPDATE SET negentropy = "
	    "excluded.negentropy, negentropy_at = excluded.negentropy_at, "
	    "updated_at = excluded.updated_at");
	if (stmt == NULL)
		return -1;
	if (sqlite3_bind_text(stmt, 1, url, -1, SQLITE_STATIC) != SQLITE_OK ||
	    sqlite3_bind_int(stmt, 2, value != 0) != SQLITE_OK ||
	    sqlite3_bind_int64(stmt, 3, now_s) != SQLITE_OK) {
		store_bind_fail(st, stmt, "relays negentropy");
		return -1;
	}
	return store_step_done(st, stmt, "relays negentropy");
}
