/*
 * recovery.c — rows of `recovery_relays` and `missing_ids`, the
 * missing-event recovery index (migration 004).
 *
 * Each function is one prepared statement over a bounded set of rows (a
 * relay row by key; ids by an index range no wider than one attempt, or by
 * their id), except the two whole-relay operator actions the header names.
 * It opens no transaction: the policy (sync/recovery.c) groups these in its
 * own, so an attempt's settlement commits or vanishes whole. It never
 * writes a relay's pending or expired count (the triggers keep them), and
 * never loads a relay's whole queue: an attempt reads one page.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "store/recovery.h"
#include "store/store.h"
#include "store/store_sql.h"

#define RELAY_COLS	"relay, pending, expired, in_flight, attempt_lo, " \
	"attempt_hi, queue_next, next_attempt_ms, attempts_total, " \
	"recovered_total, expired_total, can_restore_health, source_batches, " \
	"updated_at"

/* Room for RECOVERY_MAX_SOURCE_BATCHES decimal uint64 and their commas. */
#define BATCHES_TEXT	(RECOVERY_MAX_SOURCE_BATCHES * 21 + 1)

/* Read "1,2,7" into r->batches; anything past the bound is dropped. */
static void
batches_parse(const char *s, struct store_recovery_relay *r)
{
	char			*end;
	unsigned long long	 v;

	r->nbatches = 0;
	while (s != NULL && *s != '\0' &&
	    r->nbatches < RECOVERY_MAX_SOURCE_BATCHES) {
		errno = 0;
		v = strtoull(s, &end, 10);
		if (end == s || errno != 0)
			break;
		r->batches[r->nbatches++] = (uint64_t)v;
		s = *end == ',' ? end + 1 : end;
	}
}

static void
batches_format(const struct store_recovery_relay *r, char *out, size_t len)
{
	size_t	i, n = 0;
	int	w;

	out[0] = '\0';
	for (i = 0; i < r->nbatches && i < RECOVERY_MAX_SOURCE_BATCHES; i++) {
		w = snprintf(out + n, len - n, "%s%" PRIu64, i ? "," : "",
		    r->batches[i]);
		if (w < 0 || (size_t)w >= len - n)
			break;
		n += (size_t)w;
	}
}

static void
relay_row(sqlite3_stmt *stmt, struct store_recovery_relay *r)
{
	const char	*relay = (const char *)sqlite3_column_text(stmt, 0);

	memset(r, 0, sizeof(*r));
	snprintf(r->relay, sizeof(r->relay), "%s", relay ? relay : "");
	r->pending = sqlite3_column_int64(stmt, 1);
	r->expired = sqlite3_column_int64(stmt, 2);
	r->in_flight = sqlite3_column_int(stmt, 3) != 0;
	r->attempt_lo = sqlite3_column_int64(stmt, 4);
	r->attempt_hi = sqlite3_column_int64(stmt, 5);
	r->queue_next = sqlite3_column_int64(stmt, 6);
	r->next_attempt_ms = sqlite3_column_int64(stmt, 7);
	r->attempts_total = sqlite3_column_int64(stmt, 8);
	r->recovered_total = sqlite3_column_int64(stmt, 9);
	r->expired_total = sqlite3_column_int64(stmt, 10);
	r->can_restore_health = sqlite3_column_int(stmt, 11) != 0;
	batches_parse((const char *)sqlite3_column_text(stmt, 12), r);
	r->updated_at = sqlite3_column_int64(stmt, 13);
}

/* Step stmt, which returns no rows, release it. Rows changed, or -1. */
static int64_t
rec_changes(struct store *st, sqlite3_stmt *stmt, const char *what)
{
	if (store_step_done(st, stmt, what) == -1)
		return -1;
	return sqlite3_changes(store_db(st));
}

/* Prepare sql and bind ?1 relay. NULL (logged, released) on failure. */
static sqlite3_stmt *
rec_stmt_relay(struct store *st, const char *sql, const char *relay,
    const char *what)
{
	sqlite3_stmt	*stmt;

	if ((stmt = store_stmt(st, sql)) == NULL)
		return NULL;
	if (sqlite3_bind_text(stmt, 1, relay, -1, SQLITE_STATIC) != SQLITE_OK) {
		store_bind_fail(st, stmt, what);
		return NULL;
	}
	return stmt;
}

/*
 * Run sql over ?1 relay, ?2 lo, ?3 hi and, when extra is not NULL, ?4.
 * Rows changed, or -1.
 */
static int64_t
rec_range(struct store *st, const char *sql, const char *relay, int64_t lo,
    int64_t hi, const int64_t *extra, const char *what)
{
	sqlite3_stmt	*stmt;

	if ((stmt = rec_stmt_relay(st, sql, relay, what)) == NULL)
		return -1;
	if (sqlite3_bind_int64(stmt, 2, lo) != SQLITE_OK ||
	    sqlite3_bind_int64(stmt, 3, hi) != SQLITE_OK ||
	    (extra != NULL &&
	    sqlite3_bind_int64(stmt, 4, *extra) != SQLITE_OK)) {
		store_bind_fail(st, stmt, what);
		return -1;
	}
	return rec_changes(st, stmt, what);
}

int
store_recovery_relay_get(struct store *st, const char *relay,
    struct store_recovery_relay *out)
{
	sqlite3_stmt	*stmt;
	int		 rc;

	stmt = rec_stmt_relay(st, "SELECT " RELAY_COLS " FROM recovery_relays "
	    "WHERE relay = ?1", relay, "recovery relay get");
	if (stmt == NULL)
		return -1;
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW)
		relay_row(stmt, out);
	store_stmt_done(stmt);
	if (rc == SQLITE_ROW)
		return 1;
	if (rc == SQLITE_DONE)
		return 0;
	log_warnx("store: recovery relay get: %s", sqlite3_errmsg(store_db(st)));
	return -1;
}

int
store_recovery_relay_put(struct store *st,
    const struct store_recovery_relay *r, int64_t now_ms)
{
	sqlite3_stmt	*stmt;
	char		 batches[BATCHES_TEXT];

	batches_format(r, batches, sizeof(batches));
	stmt = rec_stmt_relay(st, "INSERT INTO recovery_relays (relay, "
	    "in_flight, attempt_lo, attempt_hi, queue_next, next_attempt_ms, "
	    "attempts_total, recovered_total, expired_total, "
	    "can_restore_health, source_batches, updated_at) VALUES (?1, ?2, "
	    "?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12) ON CONFLICT (relay) DO "
	    "UPDATE SET in_flight = excluded.in_flight, attempt_lo = "
	    "excluded.attempt_lo, attempt_hi = excluded.attempt_hi, queue_next "
	    "= excluded.queue_next, next_attempt_ms = excluded.next_attempt_ms, "
	    "attempts_total = excluded.attempts_total, recovered_total = "
	    "excluded.recovered_total, expired_total = excluded.expired_total, "
	    "can_restore_health = excluded.can_restore_health, source_batches "
	    "= excluded.source_batches, updated_at = excluded.updated_at",
	    r->relay, "recovery relay put");
	if (stmt == NULL)
		return -1;
	if (sqlite3_bind_int(stmt, 2, r->in_flight ? 1 : 0) != SQLITE_OK ||
	    sqlite3_bind_int64(stmt, 3, r->attempt_lo) != SQLITE_OK ||
	    sqlite3_bind_int64(stmt, 4, r->attempt_hi) != SQLITE_OK ||
	    sqlite3_bind_int64(stmt, 5, r->queue_next) != SQLITE_OK ||
	    sqlite3_bind_int64(stmt, 6, r->next_attempt_ms) != SQLITE_OK ||
	    sqlite3_bind_int64(stmt, 7, r->attempts_total) != SQLITE_OK ||
	    sqlite3_bind_int64(stmt, 8, r->recovered_total) != SQLITE_OK ||
	    sqlite3_bind_int64(stmt, 9, r->expired_total) != SQLITE_OK ||
	    sqlite3_bind_int(stmt, 10, r->can_restore_health ? 1 : 0) !=
	    SQLITE_OK ||
	    sqlite3_bind_text(stmt, 11, batches, -1, SQLITE_TRANSIENT) !=
	    SQLITE_OK ||
	    sqlite3_bind_int64(stmt, 12, now_ms / 1000) != SQLITE_OK) {
		store_bind_fail(st, stmt, "recovery relay put");
		return -1;
	}
	return store_step_done(st, stmt, "recovery relay put");
}

int
store_recovery_relay_delete(struct store *st, const char *relay)
{
	sqlite3_stmt	*stmt;
	int64_t		 n;

	stmt = rec_stmt_relay(st, "DELETE FROM recovery_relays WHERE "
	    "relay = ?1", relay, "recovery relay delete");
	if (stmt == NULL)
		return -1;
	n = rec_changes(st, stmt, "recovery relay delete");
	return n < 0 ? -1 : n > 0;
}

int
store_recovery_relays_each(struct store *st, store_recovery_relay_cb cb,
    void *arg)
{
	struct store_recovery_relay	r;
	sqlite3_stmt			*stmt;
	int				 rc;

	stmt = store_stmt(st, "SELECT " RELAY_COLS " FROM recovery_relays "
	    "ORDER BY relay");
	if (stmt == NULL)
		return -1;
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		relay_row(stmt, &r);
		if (cb(&r, arg) != 0) {
			rc = SQLITE_DONE;
			break;
		}
	}
	store_stmt_done(stmt);
	if (rc != SQLITE_DONE) {
		log_warnx("store: recovery relays: %s",
		    sqlite3_errmsg(store_db(st)));
		return -1;
	}
	return 0;
}

int64_t
store_recovery_release(struct store *st)
{
	sqlite3_stmt	*stmt;

	stmt = store_stmt(st, "UPDATE recovery_relays SET in_flight = 0 WHERE "
	    "in_flight = 1");
	if (stmt == NULL)
		return -1;
	return rec_changes(st, stmt, "recovery release");
}

int
store_recovery_any(struct store *st)
{
	sqlite3_stmt	*stmt;
	int		 rc, any = 0;

	stmt = store_stmt(st, "SELECT EXISTS (SELECT 1 FROM missing_ids)");
	if (stmt == NULL)
		return -1;
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW)
		any = sqlite3_column_int(stmt, 0) != 0;
	store_stmt_done(stmt);
	if (rc != SQLITE_ROW) {
		log_warnx("store: recovery any: %s",
		    sqlite3_errmsg(store_db(st)));
		return -1;
	}
	return any;
}

/* Bind ?1 relay, ?2 id. NULL (logged, released) on failure. */
static sqlite3_stmt *
rec_stmt_id(struct store *st, const char *sql, const char *relay,
    const uint8_t id[32], const char *what)
{
	sqlite3_stmt	*stmt;

	if ((stmt = rec_stmt_relay(st, sql, relay, what)) == NULL)
		return NULL;
	if (sqlite3_bind_blob(stmt, 2, id, 32, SQLITE_STATIC) != SQLITE_OK) {
		store_bind_fail(st, stmt, what);
		return NULL;
	}
	return stmt;
}

/*
 * What is known of (relay, id) before adding it: *state 0 no row, 1
 * pending, 2 expired; *stored whether its event is in `events`. 0 or -1.
 */
static int
id_lookup(struct store *st, const char *relay, const uint8_t id[32],
    int *state, int *stored)
{
	sqlite3_stmt	*stmt;
	const char	*s;
	int		 rc;

	stmt = rec_stmt_id(st, "SELECT (SELECT state FROM missing_ids WHERE "
	    "relay = ?1 AND id = ?2), EXISTS (SELECT 1 FROM events WHERE "
	    "id = ?2)", relay, id, "recovery id lookup");
	if (stmt == NULL)
		return -1;
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW) {
		s = (const char *)sqlite3_column_text(stmt, 0);
		*state = s == NULL ? 0 : strcmp(s, "pending") == 0 ? 1 : 2;
		*stored = sqlite3_column_int(stmt, 1) != 0;
	}
	store_stmt_done(stmt);
	if (rc != SQLITE_ROW) {
		log_warnx("store: recovery id lookup: %s",
		    sqlite3_errmsg(store_db(st)));
		return -1;
	}
	return 0;
}

int
store_recovery_id_add(struct store *st, const char *relay,
    const uint8_t id[32], int64_t seq, int64_t now_s)
{
	sqlite3_stmt	*stmt;
	int		 state, stored;

	if (id_lookup(st, relay, id, &state, &stored) == -1)
		return -1;
	if (state == 1)
		return STORE_RECOVERY_PENDING;
	if (stored)
		return STORE_RECOVERY_STORED;
	if (state == 2)
		stmt = rec_stmt_id(st, "UPDATE missing_ids SET state = "
		    "'pending', failures = 0, queue_seq = ?3, registered_at = "
		    "?4 WHERE relay = ?1 AND id = ?2", relay, id,
		    "recovery id revive");
	else
		stmt = rec_stmt_id(st, "INSERT INTO missing_ids (relay, id, "
		    "queue_seq, registered_at) VALUES (?1, ?2, ?3, ?4)", relay,
		    id, "recovery id add");
	if (stmt == NULL)
		return -1;
	if (sqlite3_bind_int64(stmt, 3, seq) != SQLITE_OK ||
	    sqlite3_bind_int64(stmt, 4, now_s) != SQLITE_OK) {
		store_bind_fail(st, stmt, "recovery id add");
		return -1;
	}
	if (store_step_done(st, stmt, "recovery id add") == -1)
		return -1;
	return state == 2 ? STORE_RECOVERY_REVIVED : STORE_RECOVERY_ADDED;
}

int64_t
store_recovery_page(struct store *st, const char *relay, size_t max,
    uint8_t (*ids)[32], int64_t *first, int64_t *last)
{
	sqlite3_stmt	*stmt;
	int64_t		 n = 0;
	int		 rc;

	*first = *last = 0;
	stmt = rec_stmt_relay(st, "SELECT id, queue_seq FROM missing_ids WHERE "
	    "relay = ?1 AND state = 'pending' ORDER BY queue_seq LIMIT ?2",
	    relay, "recovery page");
	if (stmt == NULL)
		return -1;
	if (sqlite3_bind_int64(stmt, 2, (int64_t)max) != SQLITE_OK) {
		store_bind_fail(st, stmt, "recovery page");
		return -1;
	}
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW && (size_t)n < max) {
		if (sqlite3_column_bytes(stmt, 0) != 32)
			continue;
		memcpy(ids[n], sqlite3_column_blob(stmt, 0), 32);
		*last = sqlite3_column_int64(stmt, 1);
		if (n++ == 0)
			*first = *last;
	}
	store_stmt_done(stmt);
	if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
		log_warnx("store: recovery page: %s",
		    sqlite3_errmsg(store_db(st)));
		return -1;
	}
	return n;
}

int64_t
store_recovery_requeue(struct store *st, const char *relay, int64_t first,
    int64_t last, int64_t to)
{
	return rec_range(st, "UPDATE missing_ids SET queue_seq = queue_seq - "
	    "?2 + ?4 WHERE relay = ?1 AND state = 'pending' AND queue_seq "
	    "BETWEEN ?2 AND ?3", relay, first, last, &to, "recovery requeue");
}

int
store_recovery_drop(struct store *st, const char *relay,
    const uint8_t id[32])
{
	sqlite3_stmt	*stmt;
	int64_t		 n;

	stmt = rec_stmt_id(st, "DELETE FROM missing_ids WHERE relay = ?1 AND "
	    "id = ?2 AND state = 'pending'", relay, id, "recovery drop");
	if (stmt == NULL)
		return -1;
	n = rec_changes(st, stmt, "recovery drop");
	return n < 0 ? -1 : n > 0;
}

int64_t
store_recovery_drop_stored(struct store *st, const char *relay, int64_t lo,
    int64_t hi)
{
	return rec_range(st, "DELETE FROM missing_ids WHERE relay = ?1 AND "
	    "state = 'pending' AND queue_seq BETWEEN ?2 AND ?3 AND EXISTS "
	    "(SELECT 1 FROM events e WHERE e.id = missing_ids.id)", relay, lo,
	    hi, NULL, "recovery drop stored");
}

int64_t
store_recovery_fail(struct store *st, const char *relay, int64_t lo,
    int64_t hi)
{
	return rec_range(st, "UPDATE missing_ids SET failures = failures + 1 "
	    "WHERE relay = ?1 AND state = 'pending' AND queue_seq BETWEEN ?2 "
	    "AND ?3", relay, lo, hi, NULL, "recovery fail");
}

int64_t
store_recovery_expire(struct store *st, const char *relay, int64_t lo,
    int64_t hi, int64_t min_failures)
{
	return rec_range(st, "UPDATE missing_ids SET state = 'expired' WHERE "
	    "relay = ?1 AND state = 'pending' AND queue_seq BETWEEN ?2 AND ?3 "
	    "AND failures >= ?4", relay, lo, hi, &min_failures,
	    "recovery expire");
}

int
store_recovery_max_failures(struct store *st, const char *relay,
    int64_t *out)
{
	sqlite3_stmt	*stmt;
	int		 rc, found = 0;

	*out = 0;
	stmt = rec_stmt_relay(st, "SELECT max(failures) FROM missing_ids WHERE "
	    "relay = ?1 AND state = 'pending'", relay, "recovery max failures");
	if (stmt == NULL)
		return -1;
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW && sqlite3_column_type(stmt, 0) != SQLITE_NULL) {
		*out = sqlite3_column_int64(stmt, 0);
		found = 1;
	}
	store_stmt_done(stmt);
	if (rc != SQLITE_ROW) {
		log_warnx("store: recovery max failures: %s",
		    sqlite3_errmsg(store_db(st)));
		return -1;
	}
	return found;
}

int64_t
store_recovery_satisfy(struct store *st, const uint8_t id[32],
    store_recovery_gone_cb cb, void *arg)
{
	sqlite3_stmt	*stmt;
	const char	*relay, *state;
	int64_t		 n = 0;
	int		 rc;

	stmt = store_stmt(st, "DELETE FROM missing_ids AS m WHERE m.id = ?1 "
	    "AND NOT EXISTS (SELECT 1 FROM recovery_relays r WHERE r.relay = "
	    "m.relay AND r.in_flight = 1 AND m.state = 'pending' AND "
	    "m.queue_seq BETWEEN r.attempt_lo AND r.attempt_hi) "
	    "RETURNING relay, state");
	if (stmt == NULL)
		return -1;
	if (sqlite3_bind_blob(stmt, 1, id, 32, SQLITE_STATIC) != SQLITE_OK) {
		store_bind_fail(st, stmt, "recovery satisfy");
		return -1;
	}
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		relay = (const char *)sqlite3_column_text(stmt, 0);
		state = (const char *)sqlite3_column_text(stmt, 1);
		n++;
		if (relay != NULL && cb != NULL)
			cb(relay, state != NULL && strcmp(state, "pending") == 0,
			    arg);
	}
	store_stmt_done(stmt);
	if (rc != SQLITE_DONE) {
		log_warnx("store: recovery satisfy: %s",
		    sqlite3_errmsg(store_db(st)));
		return -1;
	}
	return n;
}

int64_t
store_recovery_ids_each(struct store *st, const char *relay, bool expired,
    int64_t after, size_t max, store_recovery_id_cb cb, void *arg)
{
	struct store_recovery_id	 r;
	sqlite3_stmt			*stmt;
	int64_t				 n = 0;
	int				 rc;

	stmt = rec_stmt_relay(st, "SELECT id, failures, queue_seq, state, "
	    "registered_at FROM missing_ids WHERE relay = ?1 AND state = ?2 "
	    "AND queue_seq > ?3 ORDER BY queue_seq LIMIT ?4", relay,
	    "recovery ids");
	if (stmt == NULL)
		return -1;
	if (sqlite3_bind_text(stmt, 2, expired ? "expired" : "pending", -1,
	    SQLITE_STATIC) != SQLITE_OK ||
	    sqlite3_bind_int64(stmt, 3, after) != SQLITE_OK ||
	    sqlite3_bind_int64(stmt, 4, (int64_t)max) != SQLITE_OK) {
		store_bind_fail(st, stmt, "recovery ids");
		return -1;
	}
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		if (sqlite3_column_bytes(stmt, 0) != 32)
			continue;
		memcpy(r.id, sqlite3_column_blob(stmt, 0), 32);
		r.failures = sqlite3_column_int64(stmt, 1);
		r.queue_seq = sqlite3_column_int64(stmt, 2);
		r.expired = expired;
		r.registered_at = sqlite3_column_int64(stmt, 4);
		n++;
		if (cb(&r, arg) != 0) {
			rc = SQLITE_DONE;
			break;
		}
	}
	store_stmt_done(stmt);
	if (rc != SQLITE_DONE) {
		log_warnx("store: recovery ids: %s",
		    sqlite3_errmsg(store_db(st)));
		return -1;
	}
	return n;
}
