/*
 * pg.c — the Postgres uplink driver: a batch of inbox rows goes into
 * caching_event_inbox (sql/postgres/) as one transaction: BEGIN, COPY of
 * the rows (text format) into a temporary staging table the session
 * creates once when it opens, INSERT ... SELECT from that table ... ON
 * CONFLICT (event_id) DO NOTHING, COMMIT. The staging table empties
 * itself at the end of every transaction. The rows leave the local inbox
 * only once the COMMIT was answered. A batch whose answer never came is
 * sent again after a reconnect, which the unique event_id makes harmless.
 *
 * Everything goes through libpq's asynchronous API, driven by the loop:
 * PQconnectStartParams/PQconnectPoll with PQsocket watched in the
 * direction PQconnectPoll asks for, PQsendQuery, PQflush until 0 while
 * POLLOUT, PQconsumeInput and PQgetResult only while PQisBusy is false.
 * The COPY rows are fed on the non-blocking connection a chunk at a time
 * with PQputCopyData, the next chunk only once PQflush has emptied
 * libpq's buffer (else after POLLOUT), then PQputCopyEnd; PQgetResult is
 * not called while rows are being fed. A host name is resolved with
 * c-ares first and handed to libpq as hostaddr (libpq's own lookup would
 * block). It must never call PQexec, PQconnectdb, PQgetResult on a busy
 * connection, or anything else that waits for the server.
 *
 * A batch Postgres refuses because of a row's content (a data exception
 * or a constraint, in the COPY or in the INSERT) is halved until the row
 * is alone; that row becomes a dead letter with Postgres's message. Any
 * other failure (password, unreachable host, missing table, server gone
 * mid-batch) keeps every row pending, shows the reason as last_error and
 * reconnects with backoff.
 *
 * What the store's rules withdraw after it was sent (deleted, superseded,
 * expired: the `withdrawn` table) is deleted from caching_event_inbox
 * too, where the relay's poller has not taken it yet: the driver follows
 * that table with a cursor (store_inbox_withdrawn_next), at most
 * UPLINK_WITHDRAWN_IDS ids per DELETE, its own transaction, between
 * batches; the cursor moves once the DELETE is answered, so a restart
 * repeats at most one DELETE, which changes nothing the second time. The
 * batch built ahead is dropped first (it may hold such an event; it is
 * taken again from the inbox, which no longer does).
 */
#include <sys/socket.h>

#include <arpa/inet.h>
#include <dlfcn.h>
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

/*
 * libpq is loaded when a Postgres uplink starts, not linked: with the
 * OpenSSL, Kerberos and LDAP libraries it brings, it is 2.6 MB of resident
 * pages that a box uplinking over WebSocket, or not at all, would carry
 * for nothing (tests/bench/scale.sh). Every function used is listed here
 * and called through pq.
 */
#define PG_LIBPQ		"libpq.so.5"
#define PQ_FUNCS(X) \
	X(PQclear) \
	X(PQcmdStatus) \
	X(PQconnectPoll) \
	X(PQconnectStartParams) \
	X(PQconninfoFree) \
	X(PQconninfoParse) \
	X(PQconsumeInput) \
	X(PQerrorMessage) \
	X(PQfinish) \
	X(PQflush) \
	X(PQfreemem) \
	X(PQgetResult) \
	X(PQisBusy) \
	X(PQputCopyData) \
	X(PQputCopyEnd) \
	X(PQresultErrorField) \
	X(PQresultErrorMessage) \
	X(PQresultStatus) \
	X(PQsendQuery) \
	X(PQserverVersion) \
	X(PQsetnonblocking) \
	X(PQsocket) \
	X(PQsslInUse) \
	X(PQstatus) \
	X(PQtransactionStatus)
#define PQ_SLOT(f)	__typeof__(f) *f;
static struct {
	void	*dl;
	PQ_FUNCS(PQ_SLOT)
} pq;

/* Load libpq once. 0, or -1 with the reason in err. */
static int
pq_load(char *err, size_t errlen)
{
	void	*dl, *fn;
	char	*why;

	if (pq.dl != NULL)
		return 0;
	if ((dl = dlopen(PG_LIBPQ, RTLD_NOW | RTLD_LOCAL)) == NULL) {
		why = dlerror();
		snprintf(err, errlen, "cannot load %s (the libpq5 package): %s",
		    PG_LIBPQ, why != NULL ? why : "?");
		return -1;
	}
#define PQ_LOAD(f)							\
	if ((fn = dlsym(dl, #f)) == NULL) {				\
		snprintf(err, errlen, "%s has no %s", PG_LIBPQ, #f);	\
		dlclose(dl);						\
		return -1;						\
	}								\
	memcpy(&pq.f, &fn, sizeof(fn));
	PQ_FUNCS(PQ_LOAD)
#undef PQ_LOAD
	pq.dl = dl;
	return 0;
}

#define PG_DEFAULT_PORT		5432

enum pg_state {
	PG_RESOLVING = 0,
	PG_CONNECTING,
	PG_SCHEMA,		/* applying sql/postgres/ */
	PG_STAGING,		/* creating the session's staging table */
	PG_READY,		/* connected, no query in flight */
	PG_SENDING,		/* a batch in flight, its rows not being fed */
	PG_COPYING,		/* feeding the batch's rows to its COPY */
	PG_ROLLBACK,		/* ending a transaction a refused batch left */
	PG_WITHDRAWING,		/* deleting withdrawn events not yet taken */
	PG_BACKOFF,
	PG_FAILED,		/* the URL can never work */
};

static const char *const pg_state_names[] = {
	[PG_RESOLVING] = "resolving",
	[PG_CONNECTING] = "connecting",
	[PG_SCHEMA] = "creating schema",
	[PG_STAGING] = "creating staging table",
	[PG_READY] = "ready",
	[PG_SENDING] = "sending",
	[PG_COPYING] = "sending",
	[PG_ROLLBACK] = "rolling back",
	[PG_WITHDRAWING] = "sending",
	[PG_BACKOFF] = "backoff",
	[PG_FAILED] = "failed",
};

/* A batch: its rows and their COPY text. */
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
	char			 batch_sql[PG_BATCH_SQL_BYTES];
	size_t			 copy_off;	/* bytes of cur->q given to libpq */
	bool			 copy_begun;	/* the batch's COPY asked for rows */
	/*
	 * Rows of the last committed batch, still in the local inbox: they
	 * are deleted once the next batch's rows are on their way (or before
	 * the inbox is read from its oldest row again).
	 */
	int64_t			 done[UPLINK_PG_BATCH_ROWS];
	size_t			 ndone;
	/* The withdrawn ids of the DELETE in flight (PG_WITHDRAWING). */
	struct inbox_withdrawn	*wd;
	struct buf		 wd_sql;
	const uint8_t		*self;		/* the box's pubkey, or NULL */
	/* The answer to the query in flight. */
	bool			 q_failed;
	bool			 q_committed;
	int64_t			 q_deleted;	/* rows a DELETE removed */
	char			 q_error[UPLINK_ERROR_MAX + 1];
	char			 q_sqlstate[6];
};

static void	pg_connect(struct pg *);
static void	pg_pump(struct pg *);
static void	pg_copy_sent(struct pg *);

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
	loop_timer_clear(pg->loop, &pg->timer);
}

/*
 * Delete the committed rows from the local inbox. On a store failure they
 * stay and are sent again: harmless.
 */
static void
pg_confirm(struct pg *pg)
{
	int64_t	deleted;

	if (pg->ndone == 0)
		return;
	if ((deleted = store_inbox_confirm(pg->store, pg->done,
	    pg->ndone)) > 0)
		uplink_delivered(pg->up, (uint64_t)deleted);
	pg->ndone = 0;
}

/*
 * Drop the connection and anything in flight; rows not committed stay
 * pending.
 */
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
		pq.PQfinish(pg->conn);
	pg->conn = NULL;
	pg_confirm(pg);
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
	/* A count for people only; the rows stay pending either way. */
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
 * watched is compared with pq.PQsocket() each time. 0 or -1.
 */
static int
pg_watch(struct pg *pg, short events)
{
	int	fd = pq.PQsocket(pg->conn);

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
	pg->conn = pq.PQconnectStartParams(kw, val, 0);
	if (pg->conn == NULL) {
		pg_fail(pg, "connecting", "out of memory");
		return;
	}
	if (pq.PQstatus(pg->conn) == CONNECTION_BAD) {
		pg_fail(pg, "connecting", pq.PQerrorMessage(pg->conn));
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
	int	rc = pq.PQflush(pg->conn);

	if (rc == -1) {
		pg_fail(pg, "connection lost", pq.PQerrorMessage(pg->conn));
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
	pg->q_failed = pg->q_committed = pg->copy_begun = false;
	pg->q_deleted = 0;
	pg->copy_off = 0;
	pg->q_error[0] = pg->q_sqlstate[0] = '\0';
	if (pq.PQsendQuery(pg->conn, sql) == 0) {
		pg_fail(pg, "sending", pq.PQerrorMessage(pg->conn));
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

/*
 * The staging table the batches are copied into: one per session, never
 * seen by other sessions, emptied at each COMMIT (a ROLLBACK takes its
 * rows back anyway). The JSON stays text there and is cast in the INSERT,
 * so an event jsonb cannot hold is refused with jsonb's own data
 * exception; a value another column cannot take is refused by the COPY,
 * also as a data exception.
 */
static const char pg_stage_sql[] =
    "CREATE TEMP TABLE IF NOT EXISTS cachebox_stage (e text, p text, "
    "k int, c int8, j text, s text, r text, rc int8) ON COMMIT DELETE ROWS";

static void
pg_stage(struct pg *pg)
{
	pg_send(pg, pg_stage_sql, PG_STAGING);
}

static void
pg_connected(struct pg *pg)
{
	pg_timer_cancel(pg);
	if (pq.PQsetnonblocking(pg->conn, 1) == -1) {
		pg_fail(pg, "connecting", pq.PQerrorMessage(pg->conn));
		return;
	}
	log_info("uplink: Postgres session open (server %d, %s)",
	    pq.PQserverVersion(pg->conn), pq.PQsslInUse(pg->conn) ? "TLS" :
	    "no TLS");
	if (!pg->schema_done &&
	    config_get_bool(uplink_cfg(pg->up), "uplink.pg.create_schema")) {
		pg_schema(pg);
		return;
	}
	pg_stage(pg);
}

static void
pg_connect_poll(struct pg *pg)
{
	switch (pq.PQconnectPoll(pg->conn)) {
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
		pg_fail(pg, "connecting", pq.PQerrorMessage(pg->conn));
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
	const char	*primary = pq.PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY);
	const char	*detail = pq.PQresultErrorField(res, PG_DIAG_MESSAGE_DETAIL);
	char		 text[UPLINK_ERROR_MAX + 1];

	if (primary == NULL) {
		pg_msg(out, outlen, pq.PQresultErrorMessage(res));
		return;
	}
	if (detail != NULL)
		snprintf(text, sizeof(text), "%s (%s)", primary, detail);
	else
		snprintf(text, sizeof(text), "%s", primary);
	pg_msg(out, outlen, text);
}

/* Come back when libpq's socket takes more. 0, or -1 (closed). */
static int
pg_wait_writable(struct pg *pg)
{
	if (pg_watch(pg, POLLIN | POLLOUT) == 0)
		return 0;
	pg_fail(pg, "connection lost", "socket gone");
	return -1;
}

/*
 * Feed the current batch's COPY text to libpq from copy_off on, a chunk
 * at a time, stopping when libpq cannot hand a chunk to the socket yet
 * (POLLOUT brings us back), then end the COPY. 0, or -1 when the
 * connection failed (and was closed).
 */
static int
pg_copy_push(struct pg *pg)
{
	const struct buf	*q = &pg->cur->q;
	size_t			 n;
	int			 rc;

	while (pg->copy_off < q->len) {
		n = q->len - pg->copy_off;
		if (n > UPLINK_PG_COPY_CHUNK_BYTES)
			n = UPLINK_PG_COPY_CHUNK_BYTES;
		rc = pq.PQputCopyData(pg->conn, (const char *)q->data +
		    pg->copy_off, (int)n);
		if (rc == 1) {
			pg->copy_off += n;
			rc = pq.PQflush(pg->conn);
		} else if (rc == 0)
			rc = 1;		/* libpq's buffer is full: wait */
		if (rc == -1)
			break;
		if (rc == 1)
			return pg_wait_writable(pg);
	}
	if (pg->copy_off == q->len) {
		if ((rc = pq.PQputCopyEnd(pg->conn, NULL)) == 0)
			return pg_wait_writable(pg);
		if (rc == 1) {
			pg_set_state(pg, PG_SENDING);
			if (pg_flush(pg) == -1)
				return -1;
			pg_copy_sent(pg);
			return 0;
		}
	}
	pg_fail(pg, "sending", pq.PQerrorMessage(pg->conn));
	return -1;
}

/*
 * The server asks for rows: the batch's COPY has begun. Any other COPY
 * (a second one, or one outside a batch) cannot come from our statements
 * and ends the session. 0, or -1 when the connection was closed.
 */
static int
pg_copy_begin(struct pg *pg, ExecStatusType st)
{
	if (st != PGRES_COPY_IN || pg->state != PG_SENDING || pg->copy_begun) {
		pg_fail(pg, "sending", "unexpected COPY from the server");
		return -1;
	}
	pg->copy_begun = true;
	pg_set_state(pg, PG_COPYING);
	return pg_copy_push(pg);
}

/*
 * Record one result of the query in flight. 0, or -1 when the connection
 * was closed.
 */
static int
pg_result(struct pg *pg, PGresult *res)
{
	ExecStatusType	 st = pq.PQresultStatus(res);
	const char	*code;

	if (st == PGRES_COPY_IN || st == PGRES_COPY_OUT ||
	    st == PGRES_COPY_BOTH)
		return pg_copy_begin(pg, st);
	if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) {
		if (strcmp(pq.PQcmdStatus(res), "COMMIT") == 0)
			pg->q_committed = true;
		else if (strncmp(pq.PQcmdStatus(res), "DELETE ", 7) == 0)
			pg->q_deleted = strtoll(pq.PQcmdStatus(res) + 7, NULL,
			    10);
		else if (pg->state == PG_SENDING && !pg->q_failed &&
		    strcmp(pq.PQcmdStatus(res), "ROLLBACK") == 0) {
			pg->q_failed = true;
			snprintf(pg->q_error, sizeof(pg->q_error),
			    "the transaction was rolled back");
		}
		return 0;
	}
	if (pg->q_failed)
		return 0;
	pg->q_failed = true;
	pg_error_text(pg->q_error, sizeof(pg->q_error), res);
	code = pq.PQresultErrorField(res, PG_DIAG_SQLSTATE);
	snprintf(pg->q_sqlstate, sizeof(pg->q_sqlstate), "%s",
	    code != NULL ? code : "");
	return 0;
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
	size_t	i;

	pg_confirm(pg);
	for (i = 0; i < pg->cur->rows.n && i < UPLINK_PG_BATCH_ROWS; i++)
		pg->done[i] = pg->cur->rows.rows[i].seq;
	pg->ndone = i;
	store_inbox_batch_clear(&pg->cur->rows);
	pg->failures = 0;
	uplink_clear_error(pg->up);
	if (pg->batch_max < UPLINK_PG_BATCH_ROWS)
		pg->batch_max = pg->batch_max * 2 > UPLINK_PG_BATCH_ROWS ?
		    UPLINK_PG_BATCH_ROWS : pg->batch_max * 2;
	pg_set_state(pg, PG_READY);
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
	if (pq.PQtransactionStatus(pg->conn) == PQTRANS_INERROR ||
	    pq.PQtransactionStatus(pg->conn) == PQTRANS_INTRANS) {
		pg_send(pg, "ROLLBACK", PG_ROLLBACK);
		return;
	}
	pg_set_state(pg, PG_READY);
	pg_pump(pg);
}

/*
 * The DELETE of w's ids from caching_event_inbox into sql (hex ids from
 * our own encoder: nothing to quote). 0 or -1.
 */
static int
pg_withdraw_sql(struct buf *sql, const struct inbox_withdrawn *w)
{
	char	hex[65];
	size_t	i;
	int	rc;

	buf_reset(sql);
	rc = buf_puts(sql, "DELETE FROM caching_event_inbox WHERE event_id "
	    "IN (");
	for (i = 0; i < w->n && rc == 0; i++) {
		if (hex_encode(w->ids[i], 32, hex, sizeof(hex)) == -1)
			return -1;
		rc = buf_printf(sql, "%s'%s'", i > 0 ? "," : "", hex);
	}
	if (rc == 0)
		rc = buf_putc(sql, ')');
	return rc == 0 ? 0 : -1;
}

/*
 * Events withdrawn here since the cursor (before the last
 * UPLINK_WITHDRAWN_SETTLE_S seconds): send their DELETE, dropping the
 * batch built ahead. True when a query went out (or the session failed).
 */
static bool
pg_withdraw(struct pg *pg)
{
	int	n;

	n = store_inbox_withdrawn_next(pg->store, clock_wall_s() -
	    UPLINK_WITHDRAWN_SETTLE_S, pg->wd);
	if (n <= 0)
		return false;
	if (pg_withdraw_sql(&pg->wd_sql, pg->wd) == -1) {
		pg->wd->n = 0;
		return false;
	}
	pg_confirm(pg);
	store_inbox_batch_clear(&pg->next->rows);
	pg->next_ready = false;
	pg_send(pg, buf_cstr(&pg->wd_sql), PG_WITHDRAWING);
	return true;
}

/* The DELETE of withdrawn events was answered: move the cursor. */
static void
pg_withdrawn(struct pg *pg)
{
	if (pg->q_failed) {
		pg_fail(pg, "deleting withdrawn events from "
		    "caching_event_inbox", pg->q_error);
		return;
	}
	if (store_inbox_withdrawn_done(pg->store, pg->wd) == 0 &&
	    pg->q_deleted > 0)
		log_info("uplink: %lld withdrawn event(s) deleted from "
		    "caching_event_inbox before the relay took them",
		    (long long)pg->q_deleted);
	pg->wd->n = 0;
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
		pg_stage(pg);
		break;
	case PG_STAGING:
		if (pg->q_failed) {
			pg_fail(pg, "creating the staging table", pg->q_error);
			return;
		}
		pg_set_state(pg, PG_READY);
		pg_pump(pg);
		break;
	case PG_SENDING:
		if (!pg->q_failed && pg->q_committed)
			pg_batch_ok(pg);
		else
			pg_batch_refused(pg);
		break;
	case PG_WITHDRAWING:
		pg_withdrawn(pg);
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
	int		 rc;

	if ((revents & POLLOUT) && pg_flush(pg) == -1)
		return;
	if (pg->state == PG_COPYING && !(pg->events & POLLOUT) &&
	    pg_copy_push(pg) == -1)
		return;
	if (!(revents & (POLLIN | POLLERR | POLLHUP)))
		return;
	if (pq.PQconsumeInput(pg->conn) == 0) {
		pg_fail(pg, "connection lost", pq.PQerrorMessage(pg->conn));
		return;
	}
	if ((pg->events & POLLOUT) && pg_flush(pg) == -1)
		return;
	/* While rows are fed, PQgetResult would only repeat the COPY. */
	while (pg->state != PG_READY && pg->state != PG_COPYING &&
	    !pq.PQisBusy(pg->conn)) {
		if ((res = pq.PQgetResult(pg->conn)) == NULL) {
			pg_query_done(pg);
			return;
		}
		rc = pg_result(pg, res);
		pq.PQclear(res);
		if (rc == -1)
			return;
	}
	if (pg->conn != NULL && pq.PQstatus(pg->conn) == CONNECTION_BAD)
		pg_fail(pg, "connection lost", pq.PQerrorMessage(pg->conn));
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
 * The batch statement: the staging table is filled by the COPY in the
 * middle, and the INSERT reads it in COPY order. The box's key is the same
 * for every row, so it is written into the statement once.
 */
static const char pg_batch_fmt[] =
    "BEGIN;COPY pg_temp.cachebox_stage FROM STDIN;"
    "INSERT INTO caching_event_inbox (event_id,pubkey,kind,created_at,"
    "event_json,source_class,source_relay,box_pubkey,received_at) "
    "SELECT e,p,k,c,j::jsonb,s,r,'%s',rc FROM pg_temp.cachebox_stage "
    "ON CONFLICT (event_id) DO NOTHING;COMMIT";

/*
 * COPY text format: a tab between columns, a newline after each row, \N
 * for NULL. Inside a value, backslash, tab, newline and carriage return
 * are written as \\, \t, \n and \r (the letter is in this table); every
 * other byte goes through as it is. Text that is not valid in the
 * session's encoding (a NUL byte included) is refused by the COPY as a
 * data exception, which isolates its row.
 */
#define PG_ESCAPE_GROWTH	2	/* a backslash becomes two */

static const char pg_copy_esc[256] = {
	['\\'] = '\\', ['\t'] = 't', ['\n'] = 'n', ['\r'] = 'r',
};

/* Append one value (or NULL) of a COPY text row. 0 or -1. */
static int
pg_put_text(struct buf *q, const char *s, size_t len)
{
	char	esc[2] = { '\\', 0 };
	size_t	i, from = 0;
	int	rc = 0;

	if (s == NULL)
		return buf_append(q, "\\N", 2);
	for (i = 0; i < len && rc == 0; i++) {
		if ((esc[1] = pg_copy_esc[(unsigned char)s[i]]) == 0)
			continue;
		rc |= buf_append(q, s + from, i - from);
		rc |= buf_append(q, esc, sizeof(esc));
		from = i + 1;
	}
	if (rc != 0)
		return -1;
	return buf_append(q, s + from, len - from);
}

/* Append row r as one line of COPY text. 0 or -1. */
static int
pg_put_row(struct buf *q, const struct inbox_row *r)
{
	char	id[65], pubkey[65];
	int	rc;

	if (hex_encode(r->id, 32, id, sizeof(id)) == -1 ||
	    hex_encode(r->pubkey, 32, pubkey, sizeof(pubkey)) == -1)
		return -1;
	rc = buf_printf(q, "%s\t%s\t%u\t%lld\t", id, pubkey, r->kind,
	    (long long)r->created_at);
	rc |= pg_put_text(q, r->json, r->json_len);
	rc |= buf_putc(q, '\t');
	rc |= pg_put_text(q, r->source, strlen(r->source));
	rc |= buf_putc(q, '\t');
	rc |= pg_put_text(q, r->relay, r->relay != NULL ? strlen(r->relay) : 0);
	rc |= buf_printf(q, "\t%lld\n", (long long)r->received_at);
	return rc == 0 ? 0 : -1;
}

/* Keep the rows whose worst-case COPY text fits; the rest stay pending. */
static void
pg_trim_batch(struct inbox_batch *b)
{
	size_t	i, need = 0;

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
 * Build b's COPY text from its rows. Rows past what fits in
 * UPLINK_PG_QUERY_MAX_BYTES are left out (taken again next time). 0, or
 * -1 when memory ran out.
 */
static int
pg_build(struct pg_batch *b)
{
	size_t	i;

	pg_trim_batch(&b->rows);
	buf_reset(&b->q);
	for (i = 0; i < b->rows.n; i++)
		if (pg_put_row(&b->q, &b->rows.rows[i]) == -1)
			return -1;
	return 0;
}

/*
 * Take and build into b the pending rows after after_seq. 1 ready, 0 no
 * rows, -1 out of memory or a store error.
 */
static int
pg_prepare(struct pg *pg, struct pg_batch *b, int64_t after_seq)
{
	int	n;

	if (uplink_queueing(pg->up))
		return 0;	/* the tick kicks again when the pass ends */
	n = store_inbox_take(pg->store, after_seq, pg->batch_max,
	    UPLINK_PG_BATCH_JSON_BYTES, pg->self, &b->rows);
	if (n <= 0)
		return n;
	if (pg_build(b) == -1) {
		store_inbox_batch_clear(&b->rows);
		return -1;
	}
	return 1;
}

/*
 * Send the next batch if the session is idle and rows are pending: the
 * one built ahead, else a fresh one from the oldest pending row (which
 * must not find the last committed rows again, so they are deleted
 * first).
 */
static void
pg_pump(struct pg *pg)
{
	struct pg_batch	*b;

	if (pg->state != PG_READY || pg_withdraw(pg))
		return;
	if (pg->next_ready) {
		b = pg->cur;
		pg->cur = pg->next;
		pg->next = b;
		pg->next_ready = false;
	} else {
		pg_confirm(pg);
		if (pg_prepare(pg, pg->cur, 0) <= 0)
			return;
	}
	pg_send(pg, pg->batch_sql, PG_SENDING);
}

/*
 * The current batch's rows are all with libpq: while Postgres copies,
 * inserts and commits them, delete the rows of the batch before and build
 * the batch after, so the box's work (read, build, delete) overlaps the
 * server's.
 */
static void
pg_copy_sent(struct pg *pg)
{
	int64_t	last;

	pg_confirm(pg);
	last = pg->cur->rows.rows[pg->cur->rows.n - 1].seq;
	pg->next_ready = pg_prepare(pg, pg->next, last) == 1;
}

static void *
pg_start(struct uplink *up, const char *url)
{
	struct pg	*pg;
	char		*errmsg = NULL, text[UPLINK_ERROR_MAX + 1];

	if (pq_load(text, sizeof(text)) == -1) {
		log_warnx("uplink: %s", text);
		uplink_set_error(up, "%s", text);
		return NULL;
	}
	if ((pg = calloc(1, sizeof(*pg))) == NULL) {
		uplink_set_error(up, "out of memory");
		return NULL;
	}
	if ((pg->opts = pq.PQconninfoParse(url, &errmsg)) == NULL) {
		pg_msg(text, sizeof(text), errmsg != NULL ? errmsg :
		    "out of memory");
		uplink_set_error(up, "uplink.url: %s", text);
		pq.PQfreemem(errmsg);
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
	if ((pg->wd = calloc(1, sizeof(*pg->wd))) == NULL) {
		pq.PQconninfoFree(pg->opts);
		free(pg);
		uplink_set_error(up, "out of memory");
		return NULL;
	}
	buf_init(&pg->wd_sql, UPLINK_WITHDRAWN_IDS * 70 + 64);
	pg->self = uplink_key(up) != NULL ? uplink_key(up)->pubkey : NULL;
	buf_init(&pg->slot[0].q, UPLINK_PG_QUERY_MAX_BYTES);
	buf_init(&pg->slot[1].q, UPLINK_PG_QUERY_MAX_BYTES);
	if (uplink_key(up) == NULL || hex_encode(uplink_key(up)->pubkey, 32,
	    pg->box_hex, sizeof(pg->box_hex)) == -1)
		pg->box_hex[0] = '\0';
	snprintf(pg->batch_sql, sizeof(pg->batch_sql), pg_batch_fmt,
	    pg->box_hex);
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
	buf_free(&pg->wd_sql);
	free(pg->wd);
	pq.PQconninfoFree(pg->opts);
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
