/*
 * server.c — the relay endpoint's listening side (serve.h): the front door
 * (net/http_door.c: connection count, head deadline, head screen, a 503
 * with a reason when full), libmicrohttpd in external-epoll mode without a
 * listening socket of its own (as the status page's server, ui/http.c),
 * which answers NIP-11 and HTTP upgrades, the list of clients and their
 * reaping, the send budget over all clients, and the status section.
 *
 * The upgrade: libmicrohttpd parses the request; a GET with Upgrade:
 * websocket, Sec-WebSocket-Version 13 and a key is answered 101 with the
 * accept value (net/ws_handshake.c) through MHD_create_response_for_
 * upgrade; libmicrohttpd then hands over the socket and any bytes it read
 * past the head, which become a client (client.c) framed by wslay. The
 * socket stays libmicrohttpd's: a client's end is MHD_upgrade_action(
 * CLOSE), after which libmicrohttpd closes it at its next run.
 *
 * It never frees a client inside the client's callbacks: a client that
 * ended is reaped by a loop hook at the top of the next round.
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <netdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <microhttpd.h>

#include "core/buf.h"
#include "core/config.h"
#include "core/hex.h"
#include "core/limits.h"
#include "core/log.h"
#include "core/loop.h"
#include "core/utf8.h"
#include "net/http_door.h"
#include "net/ws.h"
#include "net/ws_handshake.h"
#include "net/ws_serve.h"
#include "serve/serve_int.h"
#include "store/scan.h"
#include "store/tags.h"
#include "sync/ingest.h"

#define RELAY_PORT_FILE		"relay.port"
#define NIP11_TYPE		"application/nostr+json"
#define RELAY_TEXT		"This is a Nostr relay (cachebox). Connect a " \
				"Nostr client to ws://this-address; ask with " \
				"Accept: application/nostr+json for its NIP-11 " \
				"document.\n"

/* What on_request keeps between its calls for one request. */
struct request {
	int	upgrade;	/* a WebSocket upgrade was asked */
};

/* ---- answers ---------------------------------------------------------- */

static void
cors(struct MHD_Response *r)
{
	MHD_add_response_header(r, "Access-Control-Allow-Origin", "*");
	MHD_add_response_header(r, "Access-Control-Allow-Headers", "*");
	MHD_add_response_header(r, "Access-Control-Allow-Methods",
	    "GET, OPTIONS");
}

static enum MHD_Result
mhd_answer(struct MHD_Connection *c, unsigned status, const char *type,
    char *text, size_t len, enum MHD_ResponseMemoryMode mode)
{
	struct MHD_Response	*r;
	enum MHD_Result		 rc;

	if ((r = MHD_create_response_from_buffer(len, text, mode)) == NULL) {
		if (mode == MHD_RESPMEM_MUST_FREE)
			free(text);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	cors(r);
	rc = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return rc;
}

static enum MHD_Result
answer_error(struct MHD_Connection *c, unsigned status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static enum MHD_Result
answer_error(struct MHD_Connection *c, unsigned status, const char *fmt, ...)
{
	char	msg[256], body[320];
	va_list	ap;
	int	n;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	n = snprintf(body, sizeof(body), "{\"error\":\"%s\"}\n", msg);
	return mhd_answer(c, status, "application/json", body,
	    n > 0 ? (size_t)n : 0, MHD_RESPMEM_MUST_COPY);
}

/*
 * The NIPs the box honours, for NIP-11's supported_nips: what the relay
 * endpoint and the store really apply (store/rules.h), nothing planned.
 * 1 basics (one version per replaceable key, ephemeral kinds never
 * stored), 9 deletions, 11 this document, 40 expiration, 42 AUTH, 45
 * COUNT, 62 requests to vanish, 70 protected events taken only from their
 * authenticated author, 77 negentropy.
 */
static const int nip11_nips[] = { 1, 9, 11, 40, 42, 45, 62, 70, 77 };

/* The NIP-11 document: who the box is and the limits it keeps. */
static char *
nip11_doc(struct serve *srv)
{
	cJSON	*d = cJSON_CreateObject(), *n, *l;
	char	 hex[65], *text;
	size_t	 i;

	if (d == NULL)
		return NULL;
	hex_encode(srv->pubkey, 32, hex, sizeof(hex));
	cJSON_AddStringToObject(d, "name", config_get(srv->cfg, "relay.name"));
	cJSON_AddStringToObject(d, "description",
	    config_get(srv->cfg, "relay.description"));
	cJSON_AddStringToObject(d, "pubkey", hex);
	cJSON_AddStringToObject(d, "software", "cachebox");
	cJSON_AddStringToObject(d, "version", CACHEBOX_VERSION);
	n = cJSON_AddArrayToObject(d, "supported_nips");
	for (i = 0; i < sizeof(nip11_nips) / sizeof(nip11_nips[0]); i++)
		cJSON_AddItemToArray(n, cJSON_CreateNumber(nip11_nips[i]));
	l = cJSON_AddObjectToObject(d, "limitation");
	cJSON_AddNumberToObject(l, "max_message_length", RELAYD_MAX_MSG_BYTES);
	cJSON_AddNumberToObject(l, "max_subscriptions", RELAYD_MAX_SUBS);
	cJSON_AddNumberToObject(l, "max_filters", RELAYD_MAX_FILTERS);
	cJSON_AddNumberToObject(l, "max_limit", RELAYD_MAX_LIMIT);
	cJSON_AddNumberToObject(l, "default_limit", RELAYD_MAX_LIMIT);
	cJSON_AddNumberToObject(l, "max_subid_length", RELAY_SUBID_MAX);
	cJSON_AddBoolToObject(l, "auth_required", strcmp(config_get(srv->cfg,
	    "relay.auth"), "owners") == 0);
	cJSON_AddBoolToObject(l, "restricted_writes", true);
	cJSON_AddBoolToObject(l, "payment_required", false);
	text = utf8_repair(cJSON_PrintUnformatted(d));
	cJSON_Delete(d);
	return text;
}

/* ---- the upgrade --------------------------------------------------------- */

/* The peer's address of c as text. */
static void
peer_addr(struct MHD_Connection *c, char *out, size_t outlen)
{
	const union MHD_ConnectionInfo	*ci;
	const struct sockaddr		*sa;
	char				 host[INET6_ADDRSTRLEN] = "?";

	ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	if (ci != NULL && (sa = ci->client_addr) != NULL) {
		if (sa->sa_family == AF_INET)
			inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->
			    sin_addr, host, sizeof(host));
		else if (sa->sa_family == AF_INET6)
			inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->
			    sin6_addr, host, sizeof(host));
	}
	snprintf(out, outlen, "%s", host);
}

/*
 * MHD_UpgradeHandler: the 101 is out; the socket becomes a client. It
 * gets TCP_NODELAY: a client waits for EOSE, the last small frame of an
 * answer, and with Nagle's algorithm on it stays in the kernel until the
 * peer acknowledges the frames before it, which a peer delaying its ACKs
 * does only after 40 ms (every short REQ took 40 ms).
 */
static void
on_upgraded(void *cls, struct MHD_Connection *con, void *con_cls,
    const char *extra, size_t extra_len, MHD_socket sock,
    struct MHD_UpgradeResponseHandle *urh)
{
	struct serve	*srv = cls;
	char		 addr[64];
	int		 fl, one = 1;

	peer_addr(con, addr, sizeof(addr));
	if (setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) == -1)
		log_warnx_rl("relay: TCP_NODELAY for %s: %s", addr,
		    strerror(errno));
	if ((fl = fcntl(sock, F_GETFL)) == -1 ||
	    fcntl(sock, F_SETFL, fl | O_NONBLOCK) == -1 ||
	    client_new(srv, sock, extra, extra_len, urh, addr) == NULL) {
		log_warnx_rl("relay: cannot take a client from %s", addr);
		MHD_upgrade_action(urh, MHD_UPGRADE_ACTION_CLOSE);
		return;
	}
	log_debug("relay: client %s connected", addr);
}

/* Whether the comma-separated header value v holds token (any case). */
static bool
has_token(const char *v, const char *token)
{
	size_t	n = strlen(token), len;

	while (v != NULL && *v != '\0') {
		v += strspn(v, " \t,");
		len = strcspn(v, " \t,");
		if (len == n && strncasecmp(v, token, n) == 0)
			return true;
		v += len;
	}
	return false;
}

static enum MHD_Result
answer_upgrade(struct serve *srv, struct MHD_Connection *c)
{
	const char		*key, *ver;
	char			 accept[WS_ACCEPT_LEN + 1];
	struct MHD_Response	*r;
	enum MHD_Result		 rc;

	key = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
	    "Sec-WebSocket-Key");
	ver = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
	    "Sec-WebSocket-Version");
	if (ver == NULL || strcmp(ver, "13") != 0)
		return answer_error(c, MHD_HTTP_UPGRADE_REQUIRED, "WebSocket "
		    "version 13 only");
	if (key == NULL || strlen(key) != WS_KEY_LEN ||
	    ws_accept_for_key(key, accept) == -1)
		return answer_error(c, MHD_HTTP_BAD_REQUEST, "missing or "
		    "malformed Sec-WebSocket-Key");
	if (srv->nclients >= RELAYD_MAX_CLIENTS) {
		srv->stats.refused_full++;
		return answer_error(c, MHD_HTTP_SERVICE_UNAVAILABLE, "relay "
		    "full: %d clients connected; try again later",
		    RELAYD_MAX_CLIENTS);
	}
	if ((r = MHD_create_response_for_upgrade(on_upgraded, srv)) == NULL)
		return MHD_NO;
	/* libmicrohttpd writes Connection: Upgrade itself. */
	MHD_add_response_header(r, MHD_HTTP_HEADER_UPGRADE, "websocket");
	MHD_add_response_header(r, "Sec-WebSocket-Accept", accept);
	rc = MHD_queue_response(c, MHD_HTTP_SWITCHING_PROTOCOLS, r);
	MHD_destroy_response(r);
	return rc;
}

/* ---- requests -------------------------------------------------------------- */

static enum MHD_Result
answer_get(struct serve *srv, struct MHD_Connection *c)
{
	const char	*acc;
	char		*doc;

	acc = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
	    MHD_HTTP_HEADER_ACCEPT);
	if (acc != NULL && strstr(acc, NIP11_TYPE) != NULL) {
		if ((doc = nip11_doc(srv)) == NULL)
			return MHD_NO;
		srv->stats.nip11++;
		return mhd_answer(c, MHD_HTTP_OK, NIP11_TYPE, doc, strlen(doc),
		    MHD_RESPMEM_MUST_FREE);
	}
	return mhd_answer(c, MHD_HTTP_OK, "text/plain; charset=utf-8",
	    (char *)RELAY_TEXT, strlen(RELAY_TEXT), MHD_RESPMEM_PERSISTENT);
}

/*
 * libmicrohttpd calls this when the head is in (*con_cls NULL), then once
 * the (empty) body is: that call answers.
 */
static enum MHD_Result
on_request(void *cls, struct MHD_Connection *c, const char *url,
    const char *method, const char *version, const char *upload,
    size_t *upload_len, void **con_cls)
{
	struct serve	*srv = cls;
	struct request	*rq = *con_cls;
	const char	*up, *conn;

	if (rq == NULL) {
		if ((rq = calloc(1, sizeof(*rq))) == NULL)
			return MHD_NO;
		*con_cls = rq;
		up = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
		    MHD_HTTP_HEADER_UPGRADE);
		conn = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
		    MHD_HTTP_HEADER_CONNECTION);
		rq->upgrade = has_token(up, "websocket") &&
		    has_token(conn, "upgrade");
		return MHD_YES;
	}
	if (*upload_len > 0) {
		*upload_len = 0;	/* bodies mean nothing here */
		return MHD_YES;
	}
	if (strcmp(method, MHD_HTTP_METHOD_OPTIONS) == 0)
		return mhd_answer(c, MHD_HTTP_NO_CONTENT, "text/plain", (char *)"",
		    0, MHD_RESPMEM_PERSISTENT);
	if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 &&
	    strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
		return answer_error(c, MHD_HTTP_METHOD_NOT_ALLOWED, "GET only");
	if (rq->upgrade)
		return answer_upgrade(srv, c);
	return answer_get(srv, c);
}

static void
on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
    enum MHD_RequestTerminationCode toe)
{
	free(*con_cls);
	*con_cls = NULL;
}

static void
on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
    enum MHD_ConnectionNotificationCode code)
{
	struct serve	*srv = cls;

	if (code == MHD_CONNECTION_NOTIFY_STARTED)
		srv->held++;
	else if (srv->held > 0)
		srv->held--;
}

/* ---- libmicrohttpd on the loop ---------------------------------------- */

static void
mhd_run(struct serve *srv)
{
	mhd_loop_run(&srv->ml);
}

/*
 * Clients left: give the heap back. glibc keeps what was freed (the
 * filters of those clients, and the parse trees of their large messages,
 * which are freed at once but leave the heap grown) until the top of the
 * heap is free; malloc_trim returns every free page inside it too, so
 * the daemon's RSS falls back after a crowd of clients leaves.
 */
static void
heap_trim(struct serve *srv)
{
#ifdef __GLIBC__
	if (srv->mem_peak - srv->mem < RELAYD_TRIM_BYTES && srv->nclients > 0)
		return;
	malloc_trim(0);
#endif
	srv->mem_peak = srv->mem;
}

/*
 * Top of every round: reap the clients that ended (their sockets go back
 * to libmicrohttpd, which closes them at once), then ask libmicrohttpd
 * when it wants to run next.
 */
static void
on_hook(struct loop *loop, void *arg)
{
	struct serve			*srv = arg;
	struct client			*c, *next;
	struct MHD_UpgradeResponseHandle *urh;
	bool				 reaped = false;

	for (c = TAILQ_FIRST(&srv->clients); c != NULL; c = next) {
		next = TAILQ_NEXT(c, entry);
		if (c->state != CLIENT_DEAD)
			continue;
		urh = c->urh;
		client_free(c);
		MHD_upgrade_action(urh, MHD_UPGRADE_ACTION_CLOSE);
		reaped = true;
	}
	if (reaped) {
		mhd_run(srv);
		heap_trim(srv);
	}
	mhd_loop_arm(&srv->ml);
}

/* ---- the door -------------------------------------------------------------- */

static int
door_handoff(void *arg, int fd, const struct sockaddr *sa, socklen_t salen,
    uint64_t accepted_ms)
{
	struct serve	*srv = arg;

	if (MHD_add_connection(srv->ml.mhd, fd, sa, salen) != MHD_YES) {
		log_warnx_rl("relay: cannot take a connection");
		return -1;
	}
	mhd_run(srv);
	return 0;
}

static unsigned
door_held(void *arg)
{
	return ((struct serve *)arg)->held;
}

/*
 * At the limit: close the client that has said nothing for longest, if it
 * holds no subscription and has been silent RELAYD_SHED_IDLE_MS, so idle
 * connections make room for new ones. 0 when one was closed.
 */
static int
door_shed(void *arg)
{
	struct serve	*srv = arg;
	struct client	*c, *idle = NULL;
	uint64_t	 now = loop_now_ms(srv->loop);

	TAILQ_FOREACH(c, &srv->clients, entry) {
		if (c->state != CLIENT_OPEN || c->nsubs > 0 || c->nnegs > 0 ||
		    now - c->last_msg_ms < RELAYD_SHED_IDLE_MS)
			continue;
		if (idle == NULL || c->last_msg_ms < idle->last_msg_ms)
			idle = c;
	}
	if (idle == NULL)
		return -1;
	client_close(idle, WS_CODE_GOING_AWAY, "idle: making room for a new "
	    "connection");
	return 0;
}

/*
 * Every RELAYD_STALL_SWEEP_MS while clients are connected: end NIP-77
 * sessions left idle, and cut clients whose queue has not moved for
 * RELAYD_STALL_MS (their socket buffers are full and they read nothing).
 */
static void
stall_sweep(struct loop *loop, void *arg)
{
	struct serve	*srv = arg;
	struct client	*c;
	uint64_t	 now = loop_now_ms(loop), ms;
	char		 why[96];

	srv->stall_timer = 0;
	TAILQ_FOREACH(c, &srv->clients, entry) {
		if (c->state == CLIENT_OPEN)
			neg_sweep(c, now);
		if (c->state != CLIENT_OPEN || (ms = ws_peer_stalled_ms(c->peer,
		    now)) < RELAYD_STALL_MS)
			continue;
		snprintf(why, sizeof(why), "slow reader: %zu bytes waiting, none "
		    "taken for %llu s", client_queued(c),
		    (unsigned long long)(ms / 1000));
		srv->stats.cut_slow++;
		client_cut(c, WS_CODE_POLICY, why);
	}
	srv->stall_timer = loop_timer_add(loop, RELAYD_STALL_SWEEP_MS,
	    stall_sweep, srv);
}

bool
serve_backlogged(const struct serve *srv)
{
	const struct client	*c;

	if (srv == NULL)
		return false;
	TAILQ_FOREACH(c, &srv->clients, entry)
		if (c->state == CLIENT_OPEN && client_queued(c) >
		    RELAYD_SEND_HIGH_WATER)
			return true;
	return false;
}

/* ---- the tag index fill ---------------------------------------------------- */

static void
fill_step(struct loop *loop, void *arg)
{
	struct serve	*srv = arg;
	int64_t		 left;
	int		 rc;

	srv->fill_timer = 0;
	rc = store_tags_fill_step(srv->st, TAGS_FILL_STEP_EVENTS, &left);
	if (rc == 1)
		srv->fill_timer = loop_timer_add(loop, TAGS_FILL_GAP_MS,
		    fill_step, srv);
	else if (rc == 0)
		log_info("relay: tag index complete");
	else
		log_warnx("relay: tag index fill failed; tag queries read the "
		    "events themselves");
}

/* ---- start and stop -------------------------------------------------------- */

static int
start_mhd(struct serve *srv, char *err, size_t errlen)
{
	struct MHD_Daemon	*d;

	d = MHD_start_daemon(MHD_USE_EPOLL | MHD_USE_ERROR_LOG |
	    MHD_USE_NO_LISTEN_SOCKET | MHD_ALLOW_UPGRADE, 0, NULL, NULL,
	    on_request, srv,
	    MHD_OPTION_EXTERNAL_LOGGER, mhd_loop_log, "relay",
	    MHD_OPTION_CONNECTION_LIMIT,
	    (unsigned)(2 * (RELAYD_MAX_CLIENTS + RELAYD_HANDSHAKE_SLOTS)),
	    MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)HTTP_API_CONN_TIMEOUT_S,
	    MHD_OPTION_CONNECTION_MEMORY_LIMIT,
	    (size_t)HTTP_API_MAX_HEADER_BYTES,
	    MHD_OPTION_NOTIFY_COMPLETED, on_completed, srv,
	    MHD_OPTION_NOTIFY_CONNECTION, on_connection, srv,
	    MHD_OPTION_END);
	if (mhd_loop_attach(&srv->ml, srv->loop, d, "relay", err, errlen) ==
	    -1)
		return -1;
	if (loop_hook_add(srv->loop, on_hook, srv) == -1) {
		snprintf(err, errlen, "relay: cannot watch the HTTP server");
		return -1;
	}
	return 0;
}

static int
open_door(struct serve *srv, const struct addrinfo *ai, char *err,
    size_t errlen)
{
	static char		full[96];
	struct http_door_opts	o = {
		.max_conns = RELAYD_MAX_CLIENTS + RELAYD_HANDSHAKE_SLOTS,
		.max_head = HTTP_API_MAX_HEADER_BYTES,
		.max_body = 0,
		.handoff = door_handoff,
		.held = door_held,
		.shed = door_shed,
		.arg = srv,
		.evict_min_age_ms = RELAYD_EVICT_MIN_AGE_MS,
		.full_reason = full,
	};
	char			msg[256];

	snprintf(full, sizeof(full), "relay busy: %d connections at once; "
	    "try again later", RELAYD_MAX_CLIENTS + RELAYD_HANDSHAKE_SLOTS);
	if ((srv->door = http_door_open(srv->loop, ai, &o, msg,
	    sizeof(msg))) == NULL) {
		snprintf(err, errlen, "relay: cannot listen on %s: %s",
		    srv->listen, msg);
		return -1;
	}
	srv->port = http_door_port(srv->door);
	return 0;
}

struct serve *
serve_start(const struct serve_opts *o, char *err, size_t errlen)
{
	struct serve	*srv;
	struct addrinfo	*ai;

	if ((srv = calloc(1, sizeof(*srv))) == NULL) {
		snprintf(err, errlen, "relay: out of memory");
		return NULL;
	}
	srv->loop = o->loop;
	srv->st = o->store;
	srv->ing = o->ingest;
	srv->cfg = o->cfg;
	memcpy(srv->pubkey, o->pubkey, 32);
	srv->input.max = RELAYD_INPUT_BUDGET;
	TAILQ_INIT(&srv->clients);
	TAILQ_INIT(&srv->runq);
	TAILQ_INIT(&srv->waitq);
	buf_init(&srv->frame, EVENT_SERIAL_MAX_BYTES + 1024);
	snprintf(srv->listen, sizeof(srv->listen), "%s", o->listen);
	snprintf(srv->port_file, sizeof(srv->port_file), "%s/%s",
	    o->state_dir, RELAY_PORT_FILE);
	unlink(srv->port_file);
	if ((ai = http_door_resolve(o->listen, "relay.listen", err,
	    errlen)) == NULL) {
		serve_free(srv);
		return NULL;
	}
	if (start_mhd(srv, err, errlen) == -1 || open_door(srv, ai, err,
	    errlen) == -1 || ingest_listen(srv->ing, sub_on_stored,
	    srv) == -1) {
		if (err[0] == '\0')
			snprintf(err, errlen, "relay: no room among ingest's "
			    "listeners");
		freeaddrinfo(ai);
		serve_free(srv);
		return NULL;
	}
	srv->listening = true;
	srv->loopback = http_door_loopback(ai->ai_addr);
	freeaddrinfo(ai);
	http_door_port_file(srv->port_file, srv->port, "relay");
	srv->fill_timer = loop_timer_add(srv->loop, 0, fill_step, srv);
	srv->stall_timer = loop_timer_add(srv->loop, RELAYD_STALL_SWEEP_MS,
	    stall_sweep, srv);
	log_info("relay: serving the store on ws://%s (port %u)%s", o->listen,
	    srv->port, srv->loopback ? "" : ", reachable from the network");
	return srv;
}

void
serve_free(struct serve *srv)
{
	struct client	*c;

	if (srv == NULL)
		return;
	if (srv->listening)
		ingest_unlisten(srv->ing, sub_on_stored, srv);
	while ((c = TAILQ_FIRST(&srv->clients)) != NULL) {
		struct MHD_UpgradeResponseHandle *urh = c->urh;

		client_free(c);
		MHD_upgrade_action(urh, MHD_UPGRADE_ACTION_CLOSE);
	}
	http_door_free(srv->door);
	loop_timer_clear(srv->loop, &srv->work_timer);
	loop_timer_clear(srv->loop, &srv->fill_timer);
	loop_timer_clear(srv->loop, &srv->stall_timer);
	loop_hook_del(srv->loop, on_hook, srv);
	mhd_loop_stop(&srv->ml);
	if (srv->port != 0)
		unlink(srv->port_file);
	buf_free(&srv->frame);
	free(srv);
}

uint16_t
serve_port(const struct serve *srv)
{
	return srv->port;
}

const struct serve_stats *
serve_stats(const struct serve *srv)
{
	return &srv->stats;
}

/* ---- surfaces -------------------------------------------------------------- */

void
serve_status_json(const void *part, cJSON *o)
{
	const struct serve		*srv = part;
	const struct serve_stats	*s = &srv->stats;
	const struct client		*c;
	unsigned			 subs = 0, live = 0;
	uint64_t			 out = s->bytes_out;
	size_t				 queued = 0;
	const struct sub		*u;

	if (o == NULL)
		return;
	TAILQ_FOREACH(c, &srv->clients, entry) {
		subs += c->nsubs;
		TAILQ_FOREACH(u, &c->subs, entry)
			live += u->phase == SUB_LIVE;
		queued += client_queued(c);
		out += c->peer != NULL ? ws_peer_bytes_out(c->peer) : 0;
	}
	cJSON_AddStringToObject(o, "listen", srv->listen);
	cJSON_AddNumberToObject(o, "port", srv->port);
	cJSON_AddBoolToObject(o, "loopback_only", srv->loopback);
	cJSON_AddStringToObject(o, "accept", config_get(srv->cfg,
	    "relay.accept"));
	cJSON_AddStringToObject(o, "auth", config_get(srv->cfg, "relay.auth"));
	cJSON_AddNumberToObject(o, "clients", srv->nclients);
	cJSON_AddNumberToObject(o, "max_clients", RELAYD_MAX_CLIENTS);
	cJSON_AddNumberToObject(o, "subscriptions", subs);
	cJSON_AddNumberToObject(o, "subscriptions_live", live);
	cJSON_AddNumberToObject(o, "queries_running", srv->active_scans);
	cJSON_AddNumberToObject(o, "negentropy_sessions", srv->neg_sessions);
	cJSON_AddNumberToObject(o, "queued_bytes", (double)queued);
	cJSON_AddNumberToObject(o, "connections", (double)s->connections);
	cJSON_AddNumberToObject(o, "reqs", (double)s->reqs);
	cJSON_AddNumberToObject(o, "counts", (double)s->counts);
	cJSON_AddNumberToObject(o, "negentropy", (double)s->negs);
	cJSON_AddNumberToObject(o, "events_sent", (double)s->events_sent);
	cJSON_AddNumberToObject(o, "live_sent", (double)s->live_sent);
	cJSON_AddNumberToObject(o, "bytes_out", (double)out);
	cJSON_AddNumberToObject(o, "writes_accepted",
	    (double)s->writes_accepted);
	cJSON_AddNumberToObject(o, "writes_refused", (double)s->writes_refused);
	cJSON_AddNumberToObject(o, "protected_refused",
	    (double)s->protected_refused);
	cJSON_AddNumberToObject(o, "bad_messages", (double)s->bad_messages);
	cJSON_AddNumberToObject(o, "cut_slow", (double)s->cut_slow);
	cJSON_AddNumberToObject(o, "refused_full", (double)s->refused_full);
	cJSON_AddNumberToObject(o, "refused_memory", (double)s->refused_mem);
	cJSON_AddNumberToObject(o, "filter_bytes", (double)srv->mem);
	cJSON_AddNumberToObject(o, "filter_bytes_max", RELAYD_MEM_BUDGET);
	cJSON_AddNumberToObject(o, "nip11", (double)s->nip11);
	cJSON_AddBoolToObject(o, "tag_index_ready",
	    store_tags_ready(srv->st) == 1);
}

cJSON *
serve_clients_json(const struct serve *srv)
{
	const struct client	*c;
	uint64_t		 now = loop_now_ms(srv->loop);
	cJSON			*list = cJSON_CreateArray(), *e;
	char			 hex[65];

	TAILQ_FOREACH(c, &srv->clients, entry) {
		if ((e = cJSON_CreateObject()) == NULL)
			break;
		cJSON_AddStringToObject(e, "address", c->addr);
		cJSON_AddStringToObject(e, "state", c->state == CLIENT_OPEN ?
		    "open" : "closing");
		cJSON_AddNumberToObject(e, "connected_s",
		    (double)((now - c->connected_ms) / 1000));
		cJSON_AddNumberToObject(e, "idle_s",
		    (double)((now - c->last_msg_ms) / 1000));
		cJSON_AddNumberToObject(e, "subscriptions", c->nsubs);
		cJSON_AddNumberToObject(e, "negentropy", c->nnegs);
		cJSON_AddNumberToObject(e, "reqs", (double)c->reqs);
		cJSON_AddNumberToObject(e, "events_sent",
		    (double)c->events_sent);
		cJSON_AddNumberToObject(e, "refused", (double)c->refused);
		cJSON_AddNumberToObject(e, "filter_bytes", (double)c->mem);
		cJSON_AddNumberToObject(e, "queued_bytes",
		    (double)client_queued(c));
		cJSON_AddNumberToObject(e, "bytes_out", c->peer != NULL ?
		    (double)ws_peer_bytes_out(c->peer) : 0);
		if (c->authed) {
			hex_encode(c->auth_pubkey, 32, hex, sizeof(hex));
			cJSON_AddStringToObject(e, "pubkey", hex);
		}
		cJSON_AddItemToArray(list, e);
	}
	return list;
}
