/*
 * websrv.c — one web server on the loop (websrv.h): the door, the
 * libmicrohttpd daemon it feeds, the connections that daemon holds and
 * their deadlines, a request read whole, and the answer helpers.
 *
 * It owns the door, the daemon and one record per connection the daemon
 * holds (freed when libmicrohttpd says the connection ended). It never
 * closes a descriptor libmicrohttpd holds: a connection past a deadline,
 * or pushed out at the limit, is shut down and libmicrohttpd closes it at
 * its next run. It knows nothing of what a path means: the server's hooks
 * decide and answer.
 */
#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <limits.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/limits.h"
#include "core/log.h"
#include "core/loop.h"
#include "core/utf8.h"
#include "net/http_door.h"
#include "net/websrv.h"

/* A connection libmicrohttpd holds, oldest first in websrv.conns. */
struct websrv_conn {
	TAILQ_ENTRY(websrv_conn) entry;
	int		 fd;
	uint64_t	 accepted_ms;
	bool		 answering;	/* the whole request is in */
	bool		 cut;		/* shut down; MHD closes it soon */
	uint32_t	 exchange_ms;	/* its own exchange deadline; 0: none */
};
TAILQ_HEAD(websrv_conns, websrv_conn);

/* One request, from its first on_request to MHD's completion notice. */
struct websrv_req {
	struct websrv_request	 pub;
	struct buf		 body;
};

struct websrv {
	struct websrv_opts	 o;
	struct loop		*loop;
	struct MHD_Daemon	*mhd;
	int			 epfd;		/* -1 until watched */
	uint64_t		 timer;		/* MHD's next run, 0: none */
	uint64_t		 deadline_ms;	/* when it fires, 0 if none */
	bool			 hooked;	/* on_hook registered */
	struct http_door	*door;
	struct websrv_conns	 conns;
	unsigned		 held;		/* conns not cut */
	uint64_t		 cut_total;
	uint64_t		 sweep;		/* deadline sweep, 0: none */
	uint64_t		 handoff_ms;	/* accepted_ms of a handoff */
	uint16_t		 port;
	bool			 loopback;
	char			 who[16];
	char			 listen[256];
	char			 port_file[PATH_MAX];
};

/* ---- libmicrohttpd on the loop ------------------------------------------ */

void
websrv_run(struct websrv *ws)
{
	if (ws->mhd != NULL && MHD_run(ws->mhd) != MHD_YES)
		log_warnx_rl("%s: MHD_run failed", ws->who);
}

static void
on_epoll(struct loop *loop, int fd, short revents, void *arg)
{
	websrv_run(arg);
}

static void
on_timer(struct loop *loop, void *arg)
{
	struct websrv	*ws = arg;

	ws->timer = 0;
	ws->deadline_ms = 0;
	websrv_run(ws);
}

/*
 * Top of every round: the server's own work, then wake the loop when
 * libmicrohttpd next wants to run (an idle timeout, work in hand).
 */
static void
on_hook(struct loop *loop, void *arg)
{
	struct websrv		*ws = arg;
	MHD_UNSIGNED_LONG_LONG	 ms;
	uint64_t		 want = 0;

	if (ws->o.tick != NULL)
		ws->o.tick(ws->o.arg);
	if (MHD_get_timeout(ws->mhd, &ms) == MHD_YES)
		want = loop_now_ms(loop) + ms;
	if (want == ws->deadline_ms)
		return;
	loop_timer_clear(loop, &ws->timer);
	ws->deadline_ms = want;
	if (want != 0 && (ws->timer = loop_timer_add(loop, ms, on_timer,
	    ws)) == 0)
		ws->deadline_ms = 0;
}

/* MHD_OPTION_EXTERNAL_LOGGER; cls is the server's name. */
static void
mhd_log(void *cls, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));

static void
mhd_log(void *cls, const char *fmt, va_list ap)
{
	char	msg[512];
	size_t	n;

	vsnprintf(msg, sizeof(msg), fmt, ap);
	if ((n = strlen(msg)) > 0 && msg[n - 1] == '\n')
		msg[n - 1] = '\0';
	log_warnx_rl("%s: %s", (const char *)cls, msg);
}

/* ---- connections: deadlines and shedding ------------------------------ */

/*
 * Shut down wc's socket: libmicrohttpd sees the end of the stream at its
 * next run and closes the connection (we never close its descriptor).
 */
static void
conn_cut(struct websrv *ws, struct websrv_conn *wc, const char *why)
{
	if (wc->cut)
		return;
	wc->cut = true;
	ws->held--;
	ws->cut_total++;
	shutdown(wc->fd, SHUT_RDWR);
	log_debug("%s: connection closed: %s", ws->who, why);
}

static void
conn_sweep(struct loop *loop, void *arg)
{
	struct websrv		*ws = arg;
	struct websrv_conn	*wc;
	uint64_t		 now = loop_now_ms(loop), age, limit;

	ws->sweep = 0;
	TAILQ_FOREACH(wc, &ws->conns, entry) {
		age = now - wc->accepted_ms;
		limit = wc->exchange_ms != 0 ? wc->exchange_ms :
		    ws->o.exchange_deadline_ms;
		if (!wc->answering && ws->o.request_deadline_ms != 0 &&
		    age >= ws->o.request_deadline_ms)
			conn_cut(ws, wc, "request not complete in time");
		else if (limit != 0 && age >= limit)
			conn_cut(ws, wc, "exchange not done in time");
	}
	if (!TAILQ_EMPTY(&ws->conns))
		ws->sweep = loop_timer_add(loop, HTTP_API_SWEEP_MS, conn_sweep,
		    ws);
	websrv_run(ws);
}

static void
conn_started(struct websrv *ws, struct MHD_Connection *c,
    void **socket_context)
{
	const union MHD_ConnectionInfo	*ci;
	struct websrv_conn		*wc;

	ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	if (ci == NULL || (wc = calloc(1, sizeof(*wc))) == NULL)
		return;
	wc->fd = ci->connect_fd;
	wc->accepted_ms = ws->handoff_ms != 0 ? ws->handoff_ms :
	    loop_now_ms(ws->loop);
	TAILQ_INSERT_TAIL(&ws->conns, wc, entry);
	ws->held++;
	*socket_context = wc;
	if (ws->sweep == 0 && (ws->o.request_deadline_ms != 0 ||
	    ws->o.exchange_deadline_ms != 0))
		ws->sweep = loop_timer_add(ws->loop, HTTP_API_SWEEP_MS,
		    conn_sweep, ws);
}

/* MHD_OPTION_NOTIFY_CONNECTION: a connection begins or ends. */
static void
on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
    enum MHD_ConnectionNotificationCode code)
{
	struct websrv		*ws = cls;
	struct websrv_conn	*wc = *socket_context;

	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		conn_started(ws, c, socket_context);
		return;
	}
	if (wc == NULL)
		return;
	TAILQ_REMOVE(&ws->conns, wc, entry);
	if (!wc->cut)
		ws->held--;
	free(wc);
	*socket_context = NULL;
}

/* The record of c, or NULL (none could be made). */
static struct websrv_conn *
conn_of(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo	*ci;

	ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	return ci != NULL ? ci->socket_context : NULL;
}

/* The whole request of c is in: from now on only the exchange deadline. */
static void
conn_answering(struct MHD_Connection *c)
{
	struct websrv_conn	*wc = conn_of(c);

	if (wc != NULL)
		wc->answering = true;
}

void
websrv_conn_long(struct MHD_Connection *c, uint32_t exchange_ms)
{
	struct websrv_conn	*wc = conn_of(c);

	if (wc != NULL)
		wc->exchange_ms = exchange_ms;
}

/* ---- the door ---------------------------------------------------------- */

/* http_door_opts.handoff: libmicrohttpd takes a screened connection. */
static int
door_handoff(void *arg, int fd, const struct sockaddr *sa, socklen_t salen,
    uint64_t accepted_ms)
{
	struct websrv	*ws = arg;
	int		 rc;

	ws->handoff_ms = accepted_ms;
	rc = MHD_add_connection(ws->mhd, fd, sa, salen) == MHD_YES ? 0 : -1;
	ws->handoff_ms = 0;
	if (rc == -1) {
		log_warnx_rl("%s: cannot take a connection", ws->who);
		return -1;	/* MHD closed fd already */
	}
	websrv_run(ws);
	return 0;
}

static unsigned
door_held(void *arg)
{
	return ((struct websrv *)arg)->held;
}

/* http_door_opts.shed: the server's own choice, or the oldest connection. */
static int
door_shed(void *arg)
{
	struct websrv		*ws = arg;
	struct websrv_conn	*wc;
	uint64_t		 now = loop_now_ms(ws->loop);

	if (ws->o.shed != NULL)
		return ws->o.shed(ws->o.arg);
	TAILQ_FOREACH(wc, &ws->conns, entry) {
		if (wc->cut || wc->exchange_ms != 0)
			continue;	/* a long answer is never shed */
		if (now - wc->accepted_ms < ws->o.shed_min_age_ms)
			return -1;
		conn_cut(ws, wc, "making room for a new connection");
		websrv_run(ws);
		return 0;
	}
	return -1;
}

/* ---- requests ---------------------------------------------------------- */

/*
 * libmicrohttpd calls this once when the head is in (*con_cls NULL), once
 * per chunk of body, and once more with no data when the body is
 * complete: that last call answers.
 */
static enum MHD_Result
on_request(void *cls, struct MHD_Connection *c, const char *url,
    const char *method, const char *version, const char *upload,
    size_t *upload_len, void **con_cls)
{
	struct websrv		*ws = cls;
	struct websrv_req	*rq = *con_cls;
	enum MHD_Result		 rc = MHD_YES;

	if (rq == NULL) {
		if ((rq = calloc(1, sizeof(*rq))) == NULL)
			return MHD_NO;
		buf_init(&rq->body, ws->o.max_body);
		*con_cls = rq;
		rq->pub.url = url;
		rq->pub.method = method;
		if (ws->o.head != NULL && ws->o.head(ws->o.arg, c, &rq->pub,
		    &rc))
			return rc;
		return MHD_YES;
	}
	if (*upload_len > 0) {
		if (ws->o.max_body > 0 && !rq->pub.too_big &&
		    buf_append(&rq->body, upload, *upload_len) == -1)
			rq->pub.too_big = true;
		*upload_len = 0;
		return MHD_YES;
	}
	conn_answering(c);
	rq->pub.url = url;
	rq->pub.method = method;
	rq->pub.body = (const char *)buf_rptr(&rq->body);
	rq->pub.body_len = buf_avail(&rq->body);
	return ws->o.answer(ws->o.arg, c, &rq->pub);
}

/* MHD_OPTION_NOTIFY_COMPLETED: the request is over, answered or not. */
static void
on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
    enum MHD_RequestTerminationCode toe)
{
	struct websrv		*ws = cls;
	struct websrv_req	*rq = *con_cls;

	if (rq == NULL)
		return;
	if (rq->pub.own != NULL && ws->o.done != NULL)
		ws->o.done(ws->o.arg, rq->pub.own);
	buf_free(&rq->body);
	free(rq);
	*con_cls = NULL;
}

/* ---- start and stop ---------------------------------------------------- */

/*
 * libmicrohttpd without a listening socket: the door accepts and hands
 * connections over. Its own limit has room above the door's, so a handoff
 * made while a shed connection is still closing never fails.
 */
static int
start_mhd(struct websrv *ws, char *err, size_t errlen)
{
	const union MHD_DaemonInfo	*info;
	unsigned			 flags = MHD_USE_EPOLL |
					    MHD_USE_ERROR_LOG |
					    MHD_USE_NO_LISTEN_SOCKET;

	if (ws->o.upgrade)
		flags |= MHD_ALLOW_UPGRADE;
	ws->mhd = MHD_start_daemon(flags, 0, NULL, NULL, on_request, ws,
	    MHD_OPTION_EXTERNAL_LOGGER, mhd_log, ws->who,
	    MHD_OPTION_CONNECTION_LIMIT, 2 * ws->o.max_conns,
	    MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)HTTP_API_CONN_TIMEOUT_S,
	    MHD_OPTION_CONNECTION_MEMORY_LIMIT, ws->o.max_head,
	    MHD_OPTION_NOTIFY_COMPLETED, on_completed, ws,
	    MHD_OPTION_NOTIFY_CONNECTION, on_connection, ws,
	    MHD_OPTION_END);
	if (ws->mhd == NULL) {
		snprintf(err, errlen, "%s: cannot start the HTTP server",
		    ws->who);
		return -1;
	}
	if ((info = MHD_get_daemon_info(ws->mhd, MHD_DAEMON_INFO_EPOLL_FD)) ==
	    NULL) {
		snprintf(err, errlen, "%s: no epoll descriptor", ws->who);
		return -1;
	}
	if (loop_fd_add(ws->loop, info->epoll_fd, POLLIN, on_epoll, ws) == -1) {
		snprintf(err, errlen, "%s: cannot watch the epoll descriptor",
		    ws->who);
		return -1;
	}
	ws->epfd = info->epoll_fd;
	if (loop_hook_add(ws->loop, on_hook, ws) == -1) {
		snprintf(err, errlen, "%s: cannot watch the HTTP server",
		    ws->who);
		return -1;
	}
	ws->hooked = true;
	return 0;
}

static int
open_door(struct websrv *ws, const struct addrinfo *ai, char *err,
    size_t errlen)
{
	struct http_door_opts	d = {
		.max_conns = ws->o.max_conns,
		.max_head = ws->o.max_head,
		.max_body = ws->o.max_body,
		.handoff = door_handoff,
		.held = door_held,
		.shed = door_shed,
		.arg = ws,
		.evict_min_age_ms = ws->o.evict_min_age_ms,
		.full_reason = ws->o.full_reason,
	};
	char			msg[256];

	if ((ws->door = http_door_open(ws->loop, ai, &d, msg,
	    sizeof(msg))) == NULL) {
		snprintf(err, errlen, "%s: cannot listen on %s: %s", ws->who,
		    ws->listen, msg);
		return -1;
	}
	ws->port = http_door_port(ws->door);
	return 0;
}

struct websrv *
websrv_start(const struct websrv_opts *o, char *err, size_t errlen)
{
	struct websrv	*ws;
	struct addrinfo	*ai;

	if ((ws = calloc(1, sizeof(*ws))) == NULL) {
		snprintf(err, errlen, "%s: out of memory", o->who);
		return NULL;
	}
	ws->o = *o;
	ws->loop = o->loop;
	ws->epfd = -1;
	TAILQ_INIT(&ws->conns);
	snprintf(ws->who, sizeof(ws->who), "%s", o->who);
	snprintf(ws->listen, sizeof(ws->listen), "%s", o->listen);
	snprintf(ws->port_file, sizeof(ws->port_file), "%s", o->port_file);
	ws->o.who = ws->who;
	ws->o.listen = ws->listen;
	ws->o.port_file = ws->port_file;
	unlink(ws->port_file);
	if ((ai = http_door_resolve(o->listen, o->key, err, errlen)) == NULL) {
		websrv_free(ws);
		return NULL;
	}
	if (start_mhd(ws, err, errlen) == -1 || open_door(ws, ai, err,
	    errlen) == -1) {
		freeaddrinfo(ai);
		websrv_free(ws);
		return NULL;
	}
	ws->loopback = http_door_loopback(ai->ai_addr);
	freeaddrinfo(ai);
	http_door_port_file(ws->port_file, ws->port, ws->who);
	return ws;
}

void
websrv_free(struct websrv *ws)
{
	if (ws == NULL)
		return;
	http_door_free(ws->door);
	if (ws->hooked)
		loop_hook_del(ws->loop, on_hook, ws);
	loop_timer_clear(ws->loop, &ws->timer);
	if (ws->epfd != -1)
		loop_fd_del(ws->loop, ws->epfd);
	if (ws->mhd != NULL)
		MHD_stop_daemon(ws->mhd);
	loop_timer_clear(ws->loop, &ws->sweep);
	if (ws->port != 0)
		unlink(ws->port_file);
	free(ws);
}

uint16_t
websrv_port(const struct websrv *ws)
{
	return ws->port;
}

const char *
websrv_listen(const struct websrv *ws)
{
	return ws->listen;
}

bool
websrv_loopback(const struct websrv *ws)
{
	return ws->loopback;
}

unsigned
websrv_connections(const struct websrv *ws)
{
	return ws->held + http_door_waiting(ws->door);
}

uint64_t
websrv_cut(const struct websrv *ws)
{
	return ws->cut_total;
}

const struct http_door_stats *
websrv_door_stats(const struct websrv *ws)
{
	return http_door_stats(ws->door);
}

/* ---- answers ----------------------------------------------------------- */

struct MHD_Response *
websrv_response(const struct websrv *ws, unsigned status, const char *type,
    char *text, size_t len, enum MHD_ResponseMemoryMode mode)
{
	struct MHD_Response	*r;

	if ((r = MHD_create_response_from_buffer(len, text, mode)) == NULL) {
		if (mode == MHD_RESPMEM_MUST_FREE)
			free(text);
		return NULL;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	if (ws->o.headers != NULL)
		ws->o.headers(r, status, type);
	return r;
}

enum MHD_Result
websrv_queue(struct MHD_Connection *c, unsigned status, struct MHD_Response *r)
{
	enum MHD_Result	rc;

	if (r == NULL)
		return MHD_NO;
	rc = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return rc;
}

enum MHD_Result
websrv_text(const struct websrv *ws, struct MHD_Connection *c,
    unsigned status, const char *type, char *text, size_t len,
    enum MHD_ResponseMemoryMode mode)
{
	return websrv_queue(c, status, websrv_response(ws, status, type, text,
	    len, mode));
}

enum MHD_Result
websrv_json(const struct websrv *ws, struct MHD_Connection *c,
    unsigned status, cJSON *doc)
{
	char	*text = doc ? utf8_repair(cJSON_PrintUnformatted(doc)) : NULL;

	cJSON_Delete(doc);
	if (text == NULL)
		return MHD_NO;
	return websrv_text(ws, c, status, "application/json", text,
	    strlen(text), MHD_RESPMEM_MUST_FREE);
}

enum MHD_Result
websrv_error(const struct websrv *ws, struct MHD_Connection *c,
    unsigned status, const char *fmt, ...)
{
	char	 msg[512];
	va_list	 ap;
	cJSON	*e;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if ((e = cJSON_CreateObject()) == NULL ||
	    cJSON_AddStringToObject(e, "error", msg) == NULL) {
		cJSON_Delete(e);
		return MHD_NO;
	}
	return websrv_json(ws, c, status, e);
}

/* ---- the peer ---------------------------------------------------------- */

int
websrv_peer_addr(struct MHD_Connection *c, uint8_t out[16])
{
	const union MHD_ConnectionInfo	*ci;
	const struct sockaddr		*sa;

	ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	if (ci == NULL || (sa = ci->client_addr) == NULL)
		return 0;
	if (sa->sa_family == AF_INET) {
		memcpy(out, &((const struct sockaddr_in *)sa)->sin_addr, 4);
		return AF_INET;
	}
	if (sa->sa_family == AF_INET6) {
		memcpy(out, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
		return AF_INET6;
	}
	return 0;
}

void
websrv_peer_text(struct MHD_Connection *c, char *out, size_t outlen)
{
	uint8_t	addr[16];
	char	host[INET6_ADDRSTRLEN] = "?";
	int	fam;

	if ((fam = websrv_peer_addr(c, addr)) != 0 &&
	    inet_ntop(fam, addr, host, sizeof(host)) == NULL)
		snprintf(host, sizeof(host), "?");
	snprintf(out, outlen, "%s", host);
}
