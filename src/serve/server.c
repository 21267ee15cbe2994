/*
 * server.c — the relay endpoint's listening side (serve.h): what the relay
 * asks of its web server (net/websrv.c: the front door with its connection
 * count, head deadline, head screen and a 503 with a reason when full;
 * libmicrohttpd fed by it, as for the status page, ui/http.c) and what is
 * its own there: the answers to NIP-11 and HTTP upgrades, the idle client
 * that makes room at the limit, the list of clients and their reaping, the
 * send budget over all clients, and the status section.
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
 * ended is reaped at the top of the next round (websrv_opts.tick).
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
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
#include "net/websrv.h"
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

/* ---- answers ---------------------------------------------------------- */

/* websrv_opts.headers: any page may read the relay's NIP-11 document. */
static void
cors(struct MHD_Response *r, unsigned status, const char *type)
{
	MHD_add_response_header(r, "Access-Control-Allow-Origin", "*");
	MHD_add_response_header(r, "Access-Control-Allow-Headers", "*");
	MHD_add_response_header(r, "Access-Control-Allow-Methods",
	    "GET, OPTIONS");
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

	websrv_peer_text(con, addr, sizeof(addr));
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

	key = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
	    "Sec-WebSocket-Key");
	ver = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
	    "Sec-WebSocket-Version");
	if (ver == NULL || strcmp(ver, "13") != 0)
		return websrv_error(srv->web, c, MHD_HTTP_UPGRADE_REQUIRED,
		    "WebSocket version 13 only");
	if (key == NULL || strlen(key) != WS_KEY_LEN ||
	    ws_accept_for_key(key, accept) == -1)
		return websrv_error(srv->web, c, MHD_HTTP_BAD_REQUEST,
		    "missing or malformed Sec-WebSocket-Key");
	if (srv->nclients >= RELAYD_MAX_CLIENTS) {
		srv->stats.refused_full++;
		return websrv_error(srv->web, c, MHD_HTTP_SERVICE_UNAVAILABLE,
		    "relay full: %d clients connected; try again later",
		    RELAYD_MAX_CLIENTS);
	}
	if ((r = MHD_create_response_for_upgrade(on_upgraded, srv)) == NULL)
		return MHD_NO;
	/* libmicrohttpd writes Connection: Upgrade itself. */
	MHD_add_response_header(r, MHD_HTTP_HEADER_UPGRADE, "websocket");
	MHD_add_response_header(r, "Sec-WebSocket-Accept", accept);
	return websrv_queue(c, MHD_HTTP_SWITCHING_PROTOCOLS, r);
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
		return websrv_text(srv->web, c, MHD_HTTP_OK, NIP11_TYPE, doc,
		    strlen(doc), MHD_RESPMEM_MUST_FREE);
	}
	return websrv_text(srv->web, c, MHD_HTTP_OK,
	    "text/plain; charset=utf-8", (char *)RELAY_TEXT, strlen(RELAY_TEXT),
	    MHD_RESPMEM_PERSISTENT);
}

/*
 * websrv_opts.answer: the whole request is in (a body means nothing here
 * and was dropped unread).
 */
static enum MHD_Result
on_answer(void *arg, struct MHD_Connection *c,
    const struct websrv_request *rq)
{
	struct serve	*srv = arg;
	const char	*up, *conn;

	if (strcmp(rq->method, MHD_HTTP_METHOD_OPTIONS) == 0)
		return websrv_text(srv->web, c, MHD_HTTP_NO_CONTENT,
		    "text/plain", (char *)"", 0, MHD_RESPMEM_PERSISTENT);
	if (strcmp(rq->method, MHD_HTTP_METHOD_GET) != 0 &&
	    strcmp(rq->method, MHD_HTTP_METHOD_HEAD) != 0)
		return websrv_error(srv->web, c, MHD_HTTP_METHOD_NOT_ALLOWED,
		    "GET only");
	up = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
	    MHD_HTTP_HEADER_UPGRADE);
	conn = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
	    MHD_HTTP_HEADER_CONNECTION);
	if (has_token(up, "websocket") && has_token(conn, "upgrade"))
		return answer_upgrade(srv, c);
	return answer_get(srv, c);
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
 * websrv_opts.tick, at the top of every round: reap the clients that
 * ended (their sockets go back to libmicrohttpd, which closes them at
 * once).
 */
static void
reap(void *arg)
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
		websrv_run(srv->web);
		heap_trim(srv);
	}
}

/* ---- the door's limit ---------------------------------------------------- */

/*
 * websrv_opts.shed, at the limit: close the client that has said nothing
 * for longest, if it holds no subscription and has been silent
 * RELAYD_SHED_IDLE_MS, so idle connections make room for new ones. 0 when
 * one was closed.
 */
static int
shed_idle(void *arg)
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

/*
 * The door and libmicrohttpd (net/websrv.h): room for RELAYD_MAX_CLIENTS
 * clients and RELAYD_HANDSHAKE_SLOTS connections at the door or upgrading,
 * no body, no deadline past the head's (a client is the relay's own once
 * upgraded), the idle client shed at the limit.
 */
static int
open_web(struct serve *srv, const char *listen, const char *port_file,
    char *err, size_t errlen)
{
	static char		full[96];
	struct websrv_opts	o = {
		.loop = srv->loop,
		.who = "relay",
		.listen = listen,
		.key = "relay.listen",
		.port_file = port_file,
		.max_conns = RELAYD_MAX_CLIENTS + RELAYD_HANDSHAKE_SLOTS,
		.max_head = HTTP_API_MAX_HEADER_BYTES,
		.max_body = 0,
		.upgrade = true,
		.evict_min_age_ms = RELAYD_EVICT_MIN_AGE_MS,
		.full_reason = full,
		.arg = srv,
		.answer = on_answer,
		.headers = cors,
		.shed = shed_idle,
		.tick = reap,
	};

	snprintf(full, sizeof(full), "relay busy: %d connections at once; "
	    "try again later", RELAYD_MAX_CLIENTS + RELAYD_HANDSHAKE_SLOTS);
	srv->web = websrv_start(&o, err, errlen);
	return srv->web != NULL ? 0 : -1;
}

struct serve *
serve_start(const struct serve_opts *o, char *err, size_t errlen)
{
	struct serve	*srv;
	char		 port_file[PATH_MAX];

	err[0] = '\0';
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
	snprintf(port_file, sizeof(port_file), "%s/%s", o->state_dir,
	    RELAY_PORT_FILE);
	if (open_web(srv, o->listen, port_file, err, errlen) == -1 ||
	    ingest_listen(srv->ing, sub_on_stored, srv) == -1) {
		if (err[0] == '\0')
			snprintf(err, errlen, "relay: no room among ingest's "
			    "listeners");
		serve_free(srv);
		return NULL;
	}
	srv->listening = true;
	srv->fill_timer = loop_timer_add(srv->loop, 0, fill_step, srv);
	srv->stall_timer = loop_timer_add(srv->loop, RELAYD_STALL_SWEEP_MS,
	    stall_sweep, srv);
	log_info("relay: serving the store on ws://%s (port %u)%s", o->listen,
	    websrv_port(srv->web), websrv_loopback(srv->web) ? "" :
	    ", reachable from the network");
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
	websrv_free(srv->web);
	loop_timer_clear(srv->loop, &srv->work_timer);
	loop_timer_clear(srv->loop, &srv->fill_timer);
	loop_timer_clear(srv->loop, &srv->stall_timer);
	buf_free(&srv->frame);
	free(srv);
}

uint16_t
serve_port(const struct serve *srv)
{
	return websrv_port(srv->web);
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
	cJSON_AddStringToObject(o, "listen", websrv_listen(srv->web));
	cJSON_AddNumberToObject(o, "port", websrv_port(srv->web));
	cJSON_AddBoolToObject(o, "loopback_only", websrv_loopback(srv->web));
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
