/*
 * pg.c — the Postgres uplink driver: batches of inbox rows go into
 * caching_event_inbox (sql/postgres/) as one multi-row INSERT ... ON
 * CONFLICT (event_id) DO NOTHING between BEGIN and COMMIT; the rows leave
 * the local inbox only once the COMMIT was answered. A batch whose answer
 * never came is sent again after a reconnect, which the unique event_id
 * makes harmless.
 *
 * Everything goes through libpq's asynchronous API, driven by the loop:
 * PQconnectStartParams/PQconnectPoll with PQsocket watched in the
 * direction PQconnectPoll asks for, PQsendQuery, PQflush until 0 while
 * POLLOUT, PQconsumeInput and PQgetResult only while PQisBusy is false. A
 * host name is resolved with c-ares first and handed to libpq as
 * hostaddr (libpq's own lookup would block). It must never call PQexec,
 * PQconnectdb, PQgetResult on a busy connection, or anything else that
 * waits for the server.
 *
 * A batch Postgres refuses because of a row's content (a data exception
 * or a constraint) is halved until the row is alone; that row becomes a
 * dead letter with Postgres's message. Any other failure (password,
 * unreachable host, missing table, server gone mid-batch) keeps every row
 * pending, shows the reason as last_error and reconnects with backoff.
 */
#include <sys/socket.h>

#include <arpa/inet.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "core/buf.h"
#include "core/clock.h"
#include "core/config.h"
#include "core/embed.h"
#include "core/hex.h"
#include "core/limits.h"
#include "core/log.h"
#include "core/loop.h"
#include "net/dns.h"
#include "nostr/key.h"
#include "store/inbox.h"
#include "uplink/driver.h"

#define PG_DEFAULT_PORT		5432
#define PG_MAX_OPTIONS		64	/* connection keywords passed to libpq */

enum pg_state {
	PG_RESOLVING = 0,
	PG_CONNECTING,
	PG_SCHEMA,		/* applying sql/postgres/ */
	PG_READY,		/* connected, no query in flight */
	PG_SENDING,		/* a batch in flight */
	PG_ROLLBACK,		/* ending a transaction a refused batch left */
	PG_BACKOFF,
	PG_FAILED,		/* the URL can never work */
};

static const char *const pg_state_names[] = {
	[PG_RESOLVING] = "resolving",
	[PG_CONNECTING] = "connecting",
	[PG_SCHEMA] = "creating schema",
	[PG_READY] = "ready",
	[PG_SENDING] = "sending",
	[PG_ROLLBACK] = "rolling back",
	[PG_BACKOFF] = "backoff",
	[PG_FAILED] = "failed",
};

/* A batch: its rows and the statement that carries them. */
struct pg_batch {
	struct inbox_batch	 rows;
	struct buf		 q;
};

struct pg {
	struct uplink		*up;
	struct loop		*loop;
	struct store		*store;
	PQconninfoOption	*opts;		/* uplink.url, parsed once */
	PGconn			*conn;
	int			 fd;		/* watched, or -1 */
	short			 events;
	enum pg_state		 state;
	struct dns_req		*dreq;
	uint64_t		 timer;		/* timeout or backoff */
	unsigned		 failures;	/* consecutive, sizes backoff */
	bool			 schema_done;
	size_t			 batch_max;	/* rows per batch; halved to isolate a bad row */
	/*
	 * Two batches: cur is in flight; next, when ready, holds the rows
	 * after cur's, built while Postgres works on cur, so the box's own
	 * work (read, build, delete) overlaps the server's.
	 */
	struct pg_batch		 slot[2];
	struct pg_batch		*cur, *next;
	bool			 next_ready;
	char			 box_hex[65];
	/* The answer to the query in flight. */
	bool			 q_failed;
	bool			 q_committed;
	char			 q_error[UPLINK_ERROR_MAX + 1];
	char			 q_sqlstate[6];
};

static void	pg_connect(struct pg *);
static void	pg_pump(struct pg *);

static void
pg_set_state(struct pg *pg, enum pg_state s)
{
	pg->state = s;
	uplink_set_state(pg->up, pg_state_names[s]);
}

/* Copy a libpq message into out without its trailing newline(s). */
static void
pg_msg(char *out, size_t outlen, const char *msg)
{
	size_t	n;

	snprintf(out, outlen, "%s", msg != NULL && msg[0] != '\0' ? msg :
	    "unknown error");
	n = strlen(out);
	while (n > 0 && (out[n - 1] == '\n' || out[n - 1] == ' '))
		out[--n] = '\0';
	for (; n > 0; n--)
		if (out[n - 1] == '\n' || out[n - 1] == '\t')
			out[n - 1] = ' ';
}

static const char *
pg_opt(const struct pg *pg, const char *keyword)
{
	const PQconninfoOption	*o;

	for (o = pg->opts; o != NULL && o->keyword != NULL; o++)
		if (strcmp(o->keyword, keyword) == 0)
			return o->val != NULL && o->val[0] != '\0' ? o->val : NULL;
	return NULL;
}

static void
pg_timer_cancel(struct pg *pg)
{
	loop_timer_cancel(pg->loop, pg->timer);
	pg->timer = 0;
}

/* Drop the connection and anything in flight; rows stay pending. */
static void
pg_close(struct pg *pg)
{
	pg_timer_cancel(pg);
	if (pg->dreq != NULL)
		dns_cancel(pg->dreq);
	pg->dreq = NULL;
	if (pg->fd >= 0)
		loop_fd_del(pg->loop, pg->fd);
	pg->fd = -1;
	pg->events = 0;
	if (pg->conn != NULL)
		PQfinish(pg->conn);
	pg->conn = NULL;
	store_inbox_batch_clear(&pg->cur->rows);
	store_inbox_batch_clear(&pg->next->rows);
	pg->next_ready = false;
}

static void
pg_retry(struct loop *l, void *arg)
{
	struct pg	*pg = arg;

	pg->timer = 0;
	pg_connect(pg);
}

/*
 * A failure that ends the connection: report why, close, and connect
 * again after the backoff delay.
 */
static void
pg_fail(struct pg *pg, const char *what, const char *msg)
{
	char		text[UPLINK_ERROR_MAX + 1];
	uint64_t	delay;

	pg_msg(text, sizeof(text), msg);
	uplink_set_error(pg->up, "%s: %s", what, text);
	if (pg->cur->rows.n > 0)
		(void)store_inbox_attempted(pg->store, pg->cur->rows.rows[0].seq,
		    pg->cur->rows.rows[pg->cur->rows.n - 1].seq, clock_wall_s());
	pg_close(pg);
	pg->failures++;
	delay = uplink_backoff_ms(pg->failures);
	pg_set_state(pg, PG_BACKOFF);
	pg->timer = loop_timer_add(pg->loop, delay, pg_retry, pg);
}

static void
pg_timeout(struct loop *l, void *arg)
{
	struct pg	*pg = arg;
	char		 msg[96];

	pg->timer = 0;
	if (pg->state == PG_RESOLVING || pg->state == PG_CONNECTING) {
		snprintf(msg, sizeof(msg), "no session within %d s",
		    UPLINK_PG_CONNECT_TIMEOUT_MS / 1000);
		pg_fail(pg, "connecting", msg);
	} else {
		snprintf(msg, sizeof(msg), "no answer within %d s",
		    UPLINK_PG_QUERY_TIMEOUT_MS / 1000);
		pg_fail(pg, "query", msg);
	}
}

static void
pg_timer_set(struct pg *pg, uint64_t ms)
{
	pg_timer_cancel(pg);
	pg->timer = loop_timer_add(pg->loop, ms, pg_timeout, pg);
}

static void	pg_io(struct loop *, int, short, void *);

/*
 * Watch libpq's socket for events. The socket can change while a
 * connection is being made (another address, SSL fallback), so the one
 * watched is compared with PQsocket() each time. 0 or -1.
 */
static int
pg_watch(struct pg *pg, short events)
{
	int	fd = PQsocket(pg->conn);

	if (fd < 0)
		return -1;
	if (fd != pg->fd) {
		if (pg->fd >= 0)
			loop_fd_del(pg->loop, pg->fd);
		pg->fd = -1;
		if (loop_fd_add(pg->loop, fd, events, pg_io, pg) == -1)
			return -1;
		pg->fd = fd;
	} else if (events != pg->events &&
	    loop_fd_set_events(pg->loop, fd, events) == -1)
		return -1;
	pg->events = events;
	return 0;
}

/*
 * Start libpq on the parsed URL. hosts and addrs (both or neither) replace
 * its host and hostaddr: the name repeated once per address we resolved,
 * so libpq tries each address in turn within one attempt and still checks
 * the certificate against the name.
 */
static void
pg_open(struct pg *pg, const char *hosts, const char *addrs)
{
	const char		*kw[PG_MAX_OPTIONS + 5], *val[PG_MAX_OPTIONS + 5];
	const PQconninfoOption	*o;
	size_t			 n = 0;

	for (o = pg->opts; o->keyword != NULL && n < PG_MAX_OPTIONS; o++) {
		if (o->val == NULL || o->val[0] == '\0' || (addrs != NULL &&
		    (strcmp(o->keyword, "hostaddr") == 0 ||
		    strcmp(o->keyword, "host") == 0)))
			continue;
		kw[n] = o->keyword;
		val[n++] = o->val;
	}
	if (addrs != NULL) {
		kw[n] = "host";
		val[n++] = hosts;
		kw[n] = "hostaddr";
		val[n++] = addrs;
	}
	if (pg_opt(pg, "client_encoding") == NULL) {
		kw[n] = "client_encoding";
		val[n++] = "UTF8";
	}
	if (pg_opt(pg, "application_name") == NULL) {
		kw[n] = "application_name";
		val[n++] = "cachebox";
	}
	kw[n] = val[n] = NULL;
	pg_set_state(pg, PG_CONNECTING);
	pg->conn = PQconnectStartParams(kw, val, 0);
	if (pg->conn == NULL) {
		pg_fail(pg, "connecting", "out of memory");
		return;
	}
	if (PQstatus(pg->conn) == CONNECTION_BAD) {
		pg_fail(pg, "connecting", PQerrorMessage(pg->conn));
		return;
	}
	/* Before the first PQconnectPoll, behave as if it asked to write. */
	if (pg_watch(pg, POLLOUT) == -1) {
		pg_fail(pg, "connecting", "no socket to watch");
		return;
	}
	pg_timer_set(pg, UPLINK_PG_CONNECT_TIMEOUT_MS);
}

static void
pg_resolved(const struct dns_addrs *addrs, const char *err, void *arg)
{
	struct pg	*pg = arg;
	const char	*name = pg_opt(pg, "host");
	char		 ip[NI_MAXHOST];
	char		 hosts[DNS_MAX_ADDRS * (URL_MAX_HOST + 1)];
	char		 list[DNS_MAX_ADDRS * 64];
	size_t		 i, hl = 0, ll = 0, nl = strnlen(name, URL_MAX_HOST);

	pg->dreq = NULL;
	if (addrs == NULL || name == NULL) {
		pg_fail(pg, "resolving the host", err != NULL ? err : "no host");
		return;
	}
	hosts[0] = list[0] = '\0';
	for (i = 0; i < addrs->n && i < DNS_MAX_ADDRS; i++) {
		if (getnameinfo((const struct sockaddr *)&addrs->addr[i],
		    addrs->len[i], ip, sizeof(ip), NULL, 0, NI_NUMERICHOST) != 0)
			continue;
		if (ll + strlen(ip) + 2 > sizeof(list) ||
		    hl + nl + 2 > sizeof(hosts))
			break;
		hl += (size_t)snprintf(hosts + hl, sizeof(hosts) - hl, "%s%.*s",
		    hl ? "," : "", (int)nl, name);
		ll += (size_t)snprintf(list + ll, sizeof(list) - ll, "%s%s",
		    ll ? "," : "", ip);
	}
	if (ll == 0) {
		pg_fail(pg, "resolving the host", "no usable address");
		return;
	}
	pg_open(pg, hosts, list);
}

/* Whether host is an IP literal (libpq will not look it up). */
static bool
pg_ip_literal(const char *host)
{
	unsigned char	a[sizeof(struct in6_addr)];

	return inet_pton(AF_INET, host, a) == 1 ||
	    inet_pton(AF_INET6, host, a) == 1;
}

static void
pg_connect(struct pg *pg)
{
	const char	*host = pg_opt(pg, "host"), *port = pg_opt(pg, "port");
	long		 p = PG_DEFAULT_PORT;
	struct dns	*dns;

	if (host == NULL || host[0] == '/' || host[0] == '@' ||
	    pg_opt(pg, "hostaddr") != NULL || pg_ip_literal(host)) {
		pg_open(pg, NULL, NULL);
		return;
	}
	if (strchr(host, ',') != NULL || (port != NULL &&
	    strchr(port, ',') != NULL)) {
		uplink_set_error(pg->up, "uplink.url: several hosts are not "
		    "supported; give one host");
		pg_set_state(pg, PG_FAILED);
		return;
	}
	if (port != NULL && ((p = strtol(port, NULL, 10)) <= 0 || p > 65535))
		p = PG_DEFAULT_PORT;
	if ((dns = uplink_dns(pg->up)) == NULL) {
		pg_fail(pg, "resolving the host", "no resolver");
		return;
	}
	pg_set_state(pg, PG_RESOLVING);
	pg_timer_set(pg, UPLINK_PG_CONNECT_TIMEOUT_MS);
	if ((pg->dreq = dns_resolve(dns, host, (uint16_t)p, pg_resolved,
	    pg)) == NULL)
		pg_fail(pg, "resolving the host", "out of memory");
}

/* Flush what libpq holds; watch POLLOUT too while some is left. */
static int
pg_flush(struct pg *pg)
{
	int	rc = PQflush(pg->conn);

	if (rc == -1) {
		pg_fail(pg, "connection lost", PQerrorMessage(pg->conn));
		return -1;
	}
	if (pg_watch(pg, rc == 1 ? POLLIN | POLLOUT : POLLIN) == -1) {
		pg_fail(pg, "connection lost", "socket gone");
		return -1;
	}
	return 0;
}

static void
pg_send(struct pg *pg, const char *sql, enum pg_state state)
{
	pg->q_failed = pg->q_committed = false;
	pg->q_error[0] = pg->q_sqlstate[0] = '\0';
	if (PQsendQuery(pg->conn, sql) == 0) {
		pg_fail(pg, "sending", PQerrorMessage(pg->conn));
		return;
	}
	pg_set_state(pg, state);
	pg_timer_set(pg, UPLINK_PG_QUERY_TIMEOUT_MS);
	(void)pg_flush(pg);
}

static void
pg_schema(struct pg *pg)
{
	const struct embed_file	*f;
	struct buf		 sql;

	buf_init(&sql, UPLINK_PG_QUERY_MAX_BYTES);
	for (f = uplink_pg_sql_files; f->name != NULL; f++)
		if (buf_append(&sql, f->data, f->len) == -1 ||
		    buf_putc(&sql, '\n') == -1)
			break;
	if (f->name != NULL) {
		buf_free(&sql);
		pg_fail(pg, "creating the schema", "schema too large");
		return;
	}
	pg_send(pg, buf_cstr(&sql), PG_SCHEMA);
	buf_free(&sql);
}

static void
pg_connected(struct pg *pg)
{
	pg_timer_cancel(pg);
	if (PQsetnonblocking(pg->conn, 1) == -1) {
		pg_fail(pg, "connecting", PQerrorMessage(pg->conn));
		return;
	}
	log_info("uplink: Postgres session open (server %d, %s)",
	    PQserverVersion(pg->conn), PQsslInUse(pg->conn) ? "TLS" :
	    "no TLS");
	if (!pg->schema_done &&
	    config_get_bool(uplink_cfg(pg->up), "uplink.pg.create_schema")) {
		pg_schema(pg);
		return;
	}
	pg_set_state(pg, PG_READY);
	pg_pump(pg);
}

static void
pg_connect_poll(struct pg *pg)
{
	switch (PQconnectPoll(pg->conn)) {
	case PGRES_POLLING_READING:
		if (pg_watch(pg, POLLIN) == -1)
			pg_fail(pg, "connecting", "socket gone");
		break;
	case PGRES_POLLING_WRITING:
		if (pg_watch(pg, POLLOUT) == -1)
			pg_fail(pg, "connecting", "socket gone");
		break;
	case PGRES_POLLING_OK:
		pg_connected(pg);
		break;
	default:
		pg_fail(pg, "connecting", PQerrorMessage(pg->conn));
		break;
	}
}

/*
 * Postgres's primary message and detail, on one line (the full message
 * quotes the statement, which here holds event text).
 */
static void
pg_error_text(char *out, size_t outlen, const PGresult *res)
{
	const char	*primary = PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY);
	const char	*detail = PQresultErrorField(res, PG_DIAG_MESSAGE_DETAIL);
	char		 text[UPLINK_ERROR_MAX + 1];

	if (primary == NULL) {
		pg_msg(out, outlen, PQresultErrorMessage(res));
		return;
	}
	if (detail != NULL)
		snprintf(text, sizeof(text), "%s (%s)", primary, detail);
	else
		snprintf(text, sizeof(text), "%s", primary);
	pg_msg(out, outlen, text);
}

/* Record one result of the query in flight. */
static void
pg_result(struct pg *pg, PGresult *res)
{
	ExecStatusType	 st = PQresultStatus(res);
	const char	*code;

	if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) {
		if (strcmp(PQcmdStatus(res), "COMMIT") == 0)
			pg->q_committed = true;
		else if (pg->state == PG_SENDING && !pg->q_failed &&
		    strcmp(PQcmdStatus(res), "ROLLBACK") == 0) {
			pg->q_failed = true;
			snprintf(pg->q_error, sizeof(pg->q_error),
			    "the transaction was rolled back");
		}
		return;
	}
	if (pg->q_failed)
		return;
	pg->q_failed = true;
	pg_error_text(pg->q_error, sizeof(pg->q_error), res);
	code = PQresultErrorField(res, PG_DIAG_SQLSTATE);
	snprintf(pg->q_sqlstate, sizeof(pg->q_sqlstate), "%s",
	    code != NULL ? code : "");
}

/* A refusal caused by a row's content, not by the server or the schema. */
static bool
pg_data_error(const struct pg *pg)
{
	return strncmp(pg->q_sqlstate, "22", 2) == 0 ||
	    strcmp(pg->q_sqlstate, "23514") == 0 ||
	    strcmp(pg->q_sqlstate, "54000") == 0;
}

static void
pg_batch_ok(struct pg *pg)
{
	int64_t	seqs[UPLINK_PG_BATCH_ROWS];
	int64_t	deleted;
	size_t	i, n = 0;

	for (i = 0; i < pg->cur->rows.n && n < UPLINK_PG_BATCH_ROWS; i++)
		seqs[n++] = pg->cur->rows.rows[i].seq;
	store_inbox_batch_clear(&pg->cur->rows);
	pg->failures = 0;
	uplink_clear_error(pg->up);
	if (pg->batch_max < UPLINK_PG_BATCH_ROWS)
		pg->batch_max = pg->batch_max * 2 > UPLINK_PG_BATCH_ROWS ?
		    UPLINK_PG_BATCH_ROWS : pg->batch_max * 2;
	pg_set_state(pg, PG_READY);
	/*
	 * A batch built ahead goes out first, so the delete overlaps its
	 * insert; without one, the next batch is read from the oldest
	 * pending row and must not find these rows again. On a store
	 * failure the rows stay and are sent again: harmless.
	 */
	if (pg->next_ready)
		pg_pump(pg);
	if ((deleted = store_inbox_confirm(pg->store, seqs, n)) > 0)
		uplink_delivered(pg->up, (uint64_t)deleted);
	pg_pump(pg);
}

/*
 * Postgres refused the batch. A content problem narrows the batch (one
 * row alone becomes a dead letter); anything else reconnects later.
 */
static void
pg_batch_refused(struct pg *pg)
{
	char	reason[UPLINK_ERROR_MAX + 1];

	if (!pg_data_error(pg)) {
		pg_fail(pg, "inserting into caching_event_inbox", pg->q_error[0] ?
		    pg->q_error : "COMMIT not confirmed");
		return;
	}
	store_inbox_batch_clear(&pg->next->rows);
	pg->next_ready = false;
	if (pg->cur->rows.n > 1) {
		pg->batch_max = pg->cur->rows.n / 2;
		log_info("uplink: Postgres refused a batch (%s); retrying "
		    "%zu rows at a time", pg->q_error, pg->batch_max);
	} else if (pg->cur->rows.n == 1) {
		snprintf(reason, sizeof(reason), "postgres: %.*s",
		    (int)(sizeof(reason) - 11), pg->q_error);
		if (store_inbox_dead(pg->store, pg->cur->rows.rows[0].seq, reason,
		    clock_wall_s()) == 1)
			uplink_rejected(pg->up, 1);
	}
	store_inbox_batch_clear(&pg->cur->rows);
	if (PQtransactionStatus(pg->conn) == PQTRANS_INERROR ||
	    PQtransactionStatus(pg->conn) == PQTRANS_INTRANS) {
		pg_send(pg, "ROLLBACK", PG_ROLLBACK);
		return;
	}
	pg_set_state(pg, PG_READY);
	pg_pump(pg);
}

/* The query in flight has all its results. */
static void
pg_query_done(struct pg *pg)
{
	pg_timer_cancel(pg);
	switch (pg->state) {
	case PG_SCHEMA:
		if (pg->q_failed) {
			pg_fail(pg, "creating the schema", pg->q_error);
			return;
		}
		pg->schema_done = true;
		log_info("uplink: caching_event_inbox schema applied");
		pg_set_state(pg, PG_READY);
		pg_pump(pg);
		break;
	case PG_SENDING:
		if (!pg->q_failed && pg->q_committed)
			pg_batch_ok(pg);
		else
			pg_batch_refused(pg);
		break;
	case PG_ROLLBACK:
		if (pg->q_failed) {
			pg_fail(pg, "rolling back", pg->q_error);
			return;
		}
		pg_set_state(pg, PG_READY);
		pg_pump(pg);
		break;
	default:
		break;
	}
}

/* Socket events while a session is open (a query in flight or idle). */
static void
pg_session_io(struct pg *pg, short revents)
{
	PGresult	*res;

	if ((revents & POLLOUT) && pg_flush(pg) == -1)
		return;
	if (!(revents & (POLLIN | POLLERR | POLLHUP)))
		return;
	if (PQconsumeInput(pg->conn) == 0) {
		pg_fail(pg, "connection lost", PQerrorMessage(pg->conn));
		return;
	}
	if ((pg->events & POLLOUT) && pg_flush(pg) == -1)
		return;
	while (pg->state != PG_READY && !PQisBusy(pg->conn)) {
		if ((res = PQgetResult(pg->conn)) == NULL) {
			pg_query_done(pg);
			return;
		}
		pg_result(pg, res);
		PQclear(res);
	}
	if (pg->conn != NULL && PQstatus(pg->conn) == CONNECTION_BAD)
		pg_fail(pg, "connection lost", PQerrorMessage(pg->conn));
}

static void
pg_io(struct loop *l, int fd, short revents, void *arg)
{
	struct pg	*pg = arg;

	if (pg->conn == NULL)
		return;
	if (pg->state == PG_CONNECTING)
		pg_connect_poll(pg);
	else
		pg_session_io(pg, revents);
}

/*
 * The batch statement is column-major: one array literal per column,
 * unnested into rows. Postgres parses a few long literals far faster than
 * a VALUES list of thousands of rows (it analyses each row of a VALUES
 * list as an expression list). Each array is written inside an E'...'
 * string, so the escaping does not depend on standard_conforming_strings:
 * an element is quoted for the array ("..." with \ and " escaped by a
 * backslash), then each backslash and quote is escaped again for the
 * string. Text that is not valid in the session's encoding is refused by
 * Postgres as a data exception, which isolates its row.
 */
#define PG_ROW_FIXED_BYTES	512	/* worst case of a row less its JSON and relay */
#define PG_ESCAPE_GROWTH	4	/* a backslash becomes four */

static const char pg_stmt_head[] =
    "BEGIN;INSERT INTO caching_event_inbox (event_id,pubkey,kind,"
    "created_at,event_json,source_class,source_relay,box_pubkey,received_at) "
    "SELECT e,p,k,c,j::jsonb,s,r,";
static const char pg_stmt_tail[] =
    ") AS u(e,p,k,c,j,s,r,rc) ON CONFLICT (event_id) DO NOTHING;COMMIT";

/* Append one text element (or NULL) of an array inside an E'' string. */
static int
pg_put_elem(struct buf *q, const char *s, size_t len)
{
	size_t	i;
	int	rc = 0;

	if (s == NULL)
		return buf_puts(q, "NULL");
	rc |= buf_putc(q, '"');
	for (i = 0; i < len && rc == 0; i++) {
		switch (s[i]) {
		case '\\':
			rc |= buf_puts(q, "\\\\\\\\");
			break;
		case '"':
			rc |= buf_puts(q, "\\\\\"");
			break;
		case '\'':
			rc |= buf_puts(q, "''");
			break;
		default:
			rc |= buf_putc(q, s[i]);
			break;
		}
	}
	return rc | buf_putc(q, '"');
}

enum pg_col { PG_COL_ID, PG_COL_PUBKEY, PG_COL_KIND, PG_COL_CREATED,
    PG_COL_JSON, PG_COL_SOURCE, PG_COL_RELAY, PG_COL_RECEIVED, PG_NCOLS };

static const char *const pg_col_type[PG_NCOLS] = {
	"text", "text", "int", "int8", "text", "text", "text", "int8",
};

/* Append row r's value of column c as an array element. */
static int
pg_put_cell(struct buf *q, const struct inbox_row *r, enum pg_col c)
{
	char	hex[65];

	switch (c) {
	case PG_COL_ID:
	case PG_COL_PUBKEY:
		if (hex_encode(c == PG_COL_ID ? r->id : r->pubkey, 32, hex,
		    sizeof(hex)) == -1)
			return -1;
		return buf_puts(q, hex);
	case PG_COL_KIND:
		return buf_printf(q, "%u", r->kind);
	case PG_COL_CREATED:
		return buf_printf(q, "%lld", (long long)r->created_at);
	case PG_COL_JSON:
		return pg_put_elem(q, r->json, r->json_len);
	case PG_COL_SOURCE:
		return pg_put_elem(q, r->source, strlen(r->source));
	case PG_COL_RELAY:
		return pg_put_elem(q, r->relay, r->relay != NULL ?
		    strlen(r->relay) : 0);
	case PG_COL_RECEIVED:
		return buf_printf(q, "%lld", (long long)r->received_at);
	default:
		return -1;
	}
}

/* Keep the rows whose worst-case statement fits; the rest stay pending. */
static void
pg_trim_batch(struct inbox_batch *b)
{
	size_t	i, need = sizeof(pg_stmt_head) + sizeof(pg_stmt_tail) + 256;

	for (i = 0; i < b->n; i++) {
		const struct inbox_row *r = &b->rows[i];

		need += PG_ROW_FIXED_BYTES + PG_ESCAPE_GROWTH * (r->json_len +
		    (r->relay != NULL ? strlen(r->relay) : 0));
		if (i > 0 && need > UPLINK_PG_QUERY_MAX_BYTES)
			break;
	}
	while (b->n > i) {
		struct inbox_row *r = &b->rows[--b->n];

		free(r->json);
		free(r->relay);
	}
}

/*
 * Build b's statement from its rows. Rows past what
 * fits in UPLINK_PG_QUERY_MAX_BYTES are left out (taken again next
 * time). 0, or -1 when memory ran out.
 */
static int
pg_build(const struct pg *pg, struct pg_batch *b)
{
	enum pg_col	c;
	size_t		i;
	int		rc;

	pg_trim_batch(&b->rows);
	buf_reset(&b->q);
	rc = buf_puts(&b->q, pg_stmt_head);
	rc |= buf_printf(&b->q, "'%s',rc FROM unnest(", pg->box_hex);
	for (c = 0; c < PG_NCOLS && rc == 0; c++) {
		rc |= buf_puts(&b->q, c == 0 ? "E'{" : ",E'{");
		for (i = 0; i < b->rows.n && rc == 0; i++) {
			if (i > 0)
				rc |= buf_putc(&b->q, ',');
			rc |= pg_put_cell(&b->q, &b->rows.rows[i], c);
		}
		rc |= buf_printf(&b->q, "}'::%s[]", pg_col_type[c]);
	}
	rc |= buf_puts(&b->q, pg_stmt_tail);
	return rc == 0 ? 0 : -1;
}

/*
 * Take and build into b the pending rows after after_seq. 1 ready, 0 no
 * rows, -1 out of memory or a store error.
 */
static int
pg_prepare(struct pg *pg, struct pg_batch *b, int64_t after_seq)
{
	int	n;

	n = store_inbox_take(pg->store, after_seq, pg->batch_max,
	    UPLINK_PG_BATCH_JSON_BYTES, &b->rows);
	if (n <= 0)
		return n;
	if (pg_build(pg, b) == -1) {
		store_inbox_batch_clear(&b->rows);
		return -1;
	}
	return 1;
}

/*
 * Send the next batch if the session is idle and rows are pending (the
 * one built ahead, else a fresh one from the oldest pending row), then
 * build the one after it while Postgres works.
 */
static void
pg_pump(struct pg *pg)
{
	struct pg_batch	*b;
	int64_t		 last;

	if (pg->state != PG_READY)
		return;
	if (pg->next_ready) {
		b = pg->cur;
		pg->cur = pg->next;
		pg->next = b;
		pg->next_ready = false;
	} else if (pg_prepare(pg, pg->cur, 0) <= 0)
		return;
	pg_send(pg, buf_cstr(&pg->cur->q), PG_SENDING);
	if (pg->state != PG_SENDING)
		return;
	last = pg->cur->rows.rows[pg->cur->rows.n - 1].seq;
	pg->next_ready = pg_prepare(pg, pg->next, last) == 1;
}

static void *
pg_start(struct uplink *up, const char *url)
{
	struct pg	*pg;
	char		*errmsg = NULL, text[UPLINK_ERROR_MAX + 1];

	if ((pg = calloc(1, sizeof(*pg))) == NULL) {
		uplink_set_error(up, "out of memory");
		return NULL;
	}
	if ((pg->opts = PQconninfoParse(url, &errmsg)) == NULL) {
		pg_msg(text, sizeof(text), errmsg != NULL ? errmsg :
		    "out of memory");
		uplink_set_error(up, "uplink.url: %s", text);
		PQfreemem(errmsg);
		free(pg);
		return NULL;
	}
	pg->up = up;
	pg->loop = uplink_loop(up);
	pg->store = uplink_store(up);
	pg->fd = -1;
	pg->batch_max = UPLINK_PG_BATCH_ROWS;
	pg->cur = &pg->slot[0];
	pg->next = &pg->slot[1];
	buf_init(&pg->slot[0].q, UPLINK_PG_QUERY_MAX_BYTES);
	buf_init(&pg->slot[1].q, UPLINK_PG_QUERY_MAX_BYTES);
	if (uplink_key(up) == NULL || hex_encode(uplink_key(up)->pubkey, 32,
	    pg->box_hex, sizeof(pg->box_hex)) == -1)
		pg->box_hex[0] = '\0';
	pg_connect(pg);
	return pg;
}

static void
pg_stop(void *arg)
{
	struct pg	*pg = arg;

	pg_close(pg);
	store_inbox_batch_free(&pg->slot[0].rows);
	store_inbox_batch_free(&pg->slot[1].rows);
	buf_free(&pg->slot[0].q);
	buf_free(&pg->slot[1].q);
	PQconninfoFree(pg->opts);
	free(pg);
}

static void
pg_kick(void *arg)
{
	pg_pump(arg);
}

const struct uplink_driver uplink_pg_driver = {
	.name = "postgres",
	.start = pg_start,
	.stop = pg_stop,
	.kick = pg_kick,
};
