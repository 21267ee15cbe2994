/*
 * http.c — libmicrohttpd glue: the daemon in external-epoll mode without
 * a listening socket of its own (its epoll descriptor is one watcher of
 * our loop, MHD_get_timeout() becomes a loop timer refreshed by a hook),
 * request state, limits, and the mapping of outcomes to HTTP status
 * codes. What a path or body means is api.c's; what a command does is the
 * command table's. Nothing here blocks: a command runs to completion
 * inside MHD_run() and answers at once.
 *
 * Connections arrive through the front door (net/http_door.c), which
 * bounds their number and the time their request heads take, and hands
 * over only heads it screened (one Content-Length, few query arguments).
 * Every answer closes its connection, so every request passes the door.
 * Once here, a connection must have its whole request (body included)
 * within HTTP_API_REQUEST_DEADLINE_MS of being accepted and be done within
 * HTTP_API_EXCHANGE_DEADLINE_MS, however slowly it sends or reads; past
 * either its socket is shut down and libmicrohttpd closes it.
 *
 * A request is refused as early as possible: an unknown path, a wrong
 * method, a missing token or a declared body over the limit are answered
 * before any of the body is read, so an unauthenticated peer never makes
 * us buffer a body. An address that sends HTTP_API_AUTH_FAILURES wrong
 * tokens (or first-run setup codes) within HTTP_API_AUTH_WINDOW_MS is
 * answered 429 without a check until the window ends (each check costs a
 * salted hash). A request whose Host is not one of the box's names or
 * addresses (net/boxnames.h: a page that a rebinding DNS points at the
 * box sends its own name) is answered 421, and a state-changing one whose
 * Origin is another site's (or "null", or Sec-Fetch-Site cross-site) 403,
 * before anything else. Since an address is cheap on a LAN (and the address slots
 * are few), HTTP_API_AUTH_GLOBAL_FAILURES wrong tokens from every address
 * together within the same window stop every check until it ends, as the
 * setup code's global limit does: the console is the way in meanwhile.
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <microhttpd.h>

#include "app.h"
#include "core/buf.h"
#include "core/config.h"
#include "core/embed.h"
#include "core/limits.h"
#include "core/log.h"
#include "core/loop.h"
#include "core/utf8.h"
#include "net/boxnames.h"
#include "net/http_door.h"
#include "net/mhd_loop.h"
#include "ui/api.h"
#include "ui/commands.h"
#include "ui/download.h"
#include "ui/firstrun.h"
#include "ui/http.h"
#include "ui/status.h"

#define HTTP_PORT_FILE		"http.port"
#define HTTP_JSON		"application/json"
#define HTTP_METRICS_TYPE	"text/plain; version=0.0.4; charset=utf-8"
#define HTTP_PAGE_POLICY	"default-src 'self'; img-src 'self' data:; " \
				"frame-ancestors 'none'"

/* A connection libmicrohttpd holds, oldest first in http.conns. */
struct http_conn {
	struct http_conn	*prev, *next;
	int			 fd;
	uint64_t		 accepted_ms;
	int			 answering;	/* the whole request is in */
	int			 cut;		/* shut down; MHD closes it soon */
	int			 download;	/* sends a backup download */
};

/* Wrong admin tokens counted for one peer address. */
struct auth_peer {
	uint8_t		addr[16];
	int		family;		/* 0: slot unused */
	uint64_t	window_ms;	/* start of the counting window */
	unsigned	failures;
};

struct http {
	struct app		*app;
	struct loop		*loop;
	struct mhd_loop		 ml;		/* libmicrohttpd on the loop */
	struct http_door	*door;
	uint64_t		 sweep;		/* deadline sweep timer, 0 if none */
	uint64_t		 handoff_ms;	/* accept time of the conn being added */
	uint16_t		 port;
	bool			 loopback;	/* listens on loopback only */
	struct http_conn	*conns, *conns_tail;
	unsigned		 nconns;	/* not cut */
	uint64_t		 cut_total;
	struct auth_peer	 peers[HTTP_API_AUTH_PEERS];
	struct auth_peer	 all;		/* every address together */
	char			 listen[256];
	char			 port_file[PATH_MAX];
};

enum http_kind {
	HTTP_COMMAND,
	HTTP_METRICS,
	HTTP_ASSET,
	HTTP_SETUP,		/* POST /api/setup: the first run's setup code */
	HTTP_DOWNLOAD,		/* GET DOWNLOAD_API_PATH: a backup download */
};

/* One request, from its first handler call to MHD's completion notice. */
struct http_req {
	enum http_kind		 kind;
	const struct command	*cmd;
	const struct embed_file	*asset;
	struct buf		 body;
	int			 too_big;
	int			 serving;	/* a backup download taken */
};

/* ---- responses --------------------------------------------------------- */

static enum MHD_Result
send_text(struct MHD_Connection *c, unsigned status, const char *type,
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
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	if (status == MHD_HTTP_UNAUTHORIZED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE,
		    "Bearer realm=\"cachebox\"");
	if (strncmp(type, "text/html", 9) == 0)
		MHD_add_response_header(r, "Content-Security-Policy",
		    HTTP_PAGE_POLICY);
	rc = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return rc;
}

/* Answer a JSON document (taken over and freed here), valid UTF-8. */
static enum MHD_Result
send_json(struct MHD_Connection *c, unsigned status, cJSON *doc)
{
	char	*text = doc ? utf8_repair(cJSON_PrintUnformatted(doc)) : NULL;
	size_t	 len;

	cJSON_Delete(doc);
	if (text == NULL)
		return MHD_NO;
	len = strlen(text);
	return send_text(c, status, HTTP_JSON, text, len,
	    MHD_RESPMEM_MUST_FREE);
}

static enum MHD_Result
send_error(struct MHD_Connection *c, unsigned status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static enum MHD_Result
send_error(struct MHD_Connection *c, unsigned status, const char *fmt, ...)
{
	char	msg[512];
	va_list	ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return send_json(c, status, commands_error("%s", msg));
}

static enum MHD_Result
send_405(struct MHD_Connection *c, const char *allow)
{
	struct MHD_Response	*r;
	enum MHD_Result		 rc;
	char			*text;
	cJSON			*e;

	e = commands_error("method not allowed here; use %s", allow);
	if ((text = e ? utf8_repair(cJSON_PrintUnformatted(e)) : NULL) == NULL ||
	    (r = MHD_create_response_from_buffer(strlen(text), text,
	    MHD_RESPMEM_MUST_FREE)) == NULL) {
		free(text);
		cJSON_Delete(e);
		return MHD_NO;
	}
	cJSON_Delete(e);
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, HTTP_JSON);
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
	MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, allow);
	rc = MHD_queue_response(c, MHD_HTTP_METHOD_NOT_ALLOWED, r);
	MHD_destroy_response(r);
	return rc;
}

/* ---- routing and early refusals --------------------------------------- */

static int
is_read(const char *method)
{
	return strcmp(method, MHD_HTTP_METHOD_GET) == 0 ||
	    strcmp(method, MHD_HTTP_METHOD_HEAD) == 0;
}

/*
 * Decide what the request is. 0 to go on reading it, or 1 when an answer
 * was queued already (*rc holds MHD's verdict).
 */
static int
route(struct http *h, struct MHD_Connection *c, const char *url,
    const char *method, struct http_req *rq, enum MHD_Result *rc)
{
	if (strcmp(url, FIRSTRUN_API_PATH) == 0 &&
	    strcmp(method, MHD_HTTP_METHOD_POST) == 0) {
		rq->kind = HTTP_SETUP;
		return 0;
	}
	if (strcmp(url, DOWNLOAD_API_PATH) == 0) {
		rq->kind = HTTP_DOWNLOAD;
		return 0;
	}
	if (strncmp(url, API_PREFIX, strlen(API_PREFIX)) == 0) {
		rq->kind = HTTP_COMMAND;
		if ((rq->cmd = api_command_for_path(url)) == NULL) {
			*rc = send_error(c, MHD_HTTP_NOT_FOUND, "no such endpoint "
			    "'%.200s' (GET /api/help lists the commands)", url);
			return 1;
		}
		return 0;
	}
	if (strcmp(url, "/metrics") == 0) {
		rq->kind = HTTP_METRICS;
		return 0;
	}
	rq->kind = HTTP_ASSET;
	if ((rq->asset = api_asset_for_path(url)) == NULL) {
		*rc = send_error(c, MHD_HTTP_NOT_FOUND, "not found");
		return 1;
	}
	return 0;
}

/* ---- Host and Origin ----------------------------------------------------- */

/* Whether origin ("scheme://authority", no path) is a page of the box. */
static bool
origin_ok(struct http *h, const char *origin)
{
	const char	*a;

	if (strncasecmp(origin, "http://", 7) == 0)
		a = origin + 7;
	else if (strncasecmp(origin, "https://", 8) == 0)
		a = origin + 8;
	else
		return false;	/* "null" (a sandbox, a file), another scheme */
	return boxnames_hostport_ok(h->app->cfg, a, strcspn(a, "/"));
}

/*
 * DNS rebinding and cross-site requests. A Host the box is not reached by
 * is a page of another site that a rebinding DNS pointed here: nothing is
 * answered to it (421), so it reads nothing either. A call that changes
 * state (anything but GET and HEAD, /api/setup included) from a page of
 * another site is refused (403) even when it needs no token, as setup
 * does: a browser always sends Origin with one, and Sec-Fetch-Site where
 * it knows it; a client without either (curl, cacheboxctl) is no page.
 * Same contract as route().
 */
static int
screen_site(struct http *h, struct MHD_Connection *c, const char *method,
    enum MHD_Result *rc)
{
	const char	*host, *origin, *site;

	host = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
	    MHD_HTTP_HEADER_HOST);
	if (host != NULL && !boxnames_hostport_ok(h->app->cfg, host,
	    strlen(host))) {
		*rc = send_error(c, MHD_HTTP_MISDIRECTED_REQUEST, "this box is "
		    "not reached by the name '%.100s' (Host); if it is one of "
		    "its names, add it to box.names on the console", host);
		return 1;
	}
	if (is_read(method))
		return 0;
	origin = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Origin");
	site = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
	    "Sec-Fetch-Site");
	if ((origin != NULL && !origin_ok(h, origin)) || (site != NULL &&
	    strcasecmp(site, "cross-site") == 0)) {
		*rc = send_error(c, MHD_HTTP_FORBIDDEN, "refused: a page of "
		    "another site (Origin '%.100s') may not change this box",
		    origin != NULL ? origin : "?");
		return 1;
	}
	return 0;
}

/* ---- wrong tokens, counted per peer address ------------------------- */

/* The address of c's peer as bytes (4 or 16) and a family; 0 if unknown. */
static int
peer_addr(struct MHD_Connection *c, uint8_t out[16])
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

/*
 * The slot counting c's peer; with make, a free or the stalest slot is
 * taken for it. NULL if none.
 */
static struct auth_peer *
auth_peer(struct http *h, struct MHD_Connection *c, int make)
{
	struct auth_peer	*p, *stale = &h->peers[0];
	uint8_t			 addr[16] = { 0 };
	int			 fam = peer_addr(c, addr);
	size_t			 i;

	if (fam == 0)
		return NULL;
	for (i = 0; i < HTTP_API_AUTH_PEERS; i++) {
		p = &h->peers[i];
		if (p->family == fam && memcmp(p->addr, addr, 16) == 0)
			return p;
		if (p->family == 0 || p->window_ms < stale->window_ms)
			stale = p;
	}
	if (!make)
		return NULL;
	*stale = (struct auth_peer){ .family = fam };
	memcpy(stale->addr, addr, 16);
	return stale;
}

/* Seconds p must still wait at max failures, or 0. */
static unsigned
window_wait_s(const struct auth_peer *p, unsigned max, uint64_t now)
{
	if (p == NULL || p->failures < max ||
	    now >= p->window_ms + HTTP_API_AUTH_WINDOW_MS)
		return 0;
	return (unsigned)((p->window_ms + HTTP_API_AUTH_WINDOW_MS - now +
	    999) / 1000);
}

/*
 * Seconds c's peer must still wait before its token is checked, or 0;
 * *global tells whether every address waits.
 */
static unsigned
auth_wait_s(struct http *h, struct MHD_Connection *c, bool *global)
{
	uint64_t	now = loop_now_ms(h->loop);
	unsigned	w;

	*global = false;
	if ((w = window_wait_s(&h->all, HTTP_API_AUTH_GLOBAL_FAILURES,
	    now)) > 0) {
		*global = true;
		return w;
	}
	return window_wait_s(auth_peer(h, c, 0), HTTP_API_AUTH_FAILURES, now);
}

/* One more failure in p's window. */
static unsigned
window_count(struct auth_peer *p, uint64_t now)
{
	if (p->failures == 0 || now >= p->window_ms + HTTP_API_AUTH_WINDOW_MS) {
		p->window_ms = now;
		p->failures = 0;
	}
	return ++p->failures;
}

static void
auth_failed(struct http *h, struct MHD_Connection *c)
{
	struct auth_peer	*p = auth_peer(h, c, 1);
	uint64_t		 now = loop_now_ms(h->loop);

	if (window_count(&h->all, now) == HTTP_API_AUTH_GLOBAL_FAILURES)
		log_warnx("http: %d wrong admin passwords or setup codes from "
		    "every address within %d s; none is checked until then "
		    "(the console still works)", HTTP_API_AUTH_GLOBAL_FAILURES,
		    HTTP_API_AUTH_WINDOW_MS / 1000);
	if (p == NULL)
		return;
	if (window_count(p, now) == HTTP_API_AUTH_FAILURES)
		log_warnx("http: %u wrong admin passwords or setup codes from one "
		    "address; it waits %d s", p->failures,
		    HTTP_API_AUTH_WINDOW_MS / 1000);
}

/* ---- admission --------------------------------------------------------- */

/* The token of a mutating call. Same contract as route(). */
static int
admit_token(struct http *h, struct MHD_Connection *c, enum MHD_Result *rc)
{
	const char	*auth;
	enum api_auth	 a;
	unsigned	 wait;
	bool		 global;

	if ((wait = auth_wait_s(h, c, &global)) > 0) {
		*rc = send_error(c, MHD_HTTP_TOO_MANY_REQUESTS, "too many wrong "
		    "admin passwords %s; try again in %u s", global ? "lately "
		    "(from every address together; the console still works)" :
		    "from this address", wait);
		return 1;
	}
	auth = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
	    MHD_HTTP_HEADER_AUTHORIZATION);
	a = api_auth_check(config_get(h->app->cfg, CONFIG_ADMIN_TOKEN), auth);
	if (a == API_AUTH_NO_TOKEN) {
		*rc = send_error(c, MHD_HTTP_FORBIDDEN, "no admin password is "
		    "set: set one from the console first (admin-token set "
		    "PASSWORD), or on the status page with the setup code shown "
		    "at the box");
		return 1;
	}
	if (a == API_AUTH_WRONG)
		auth_failed(h, c);
	if (a != API_AUTH_OK) {
		*rc = send_error(c, MHD_HTTP_UNAUTHORIZED, "%s", a ==
		    API_AUTH_MISSING ? "this change needs the admin password "
		    "(a client sends it as Authorization: Bearer PASSWORD)" :
		    "wrong admin password");
		return 1;
	}
	return 0;
}

/*
 * The first run's setup code stands in for the token (there is none yet):
 * an address that sent too many wrong tokens or codes waits, as for a
 * token. Same contract as route().
 */
static int
admit_setup(struct http *h, struct MHD_Connection *c, enum MHD_Result *rc)
{
	unsigned	wait;
	bool		global;

	if ((wait = auth_wait_s(h, c, &global)) > 0) {
		*rc = send_error(c, MHD_HTTP_TOO_MANY_REQUESTS, "too many wrong "
		    "setup codes or admin passwords %s; try again in %u s", global ?
		    "lately (from every address together)" : "from this address",
		    wait);
		return 1;
	}
	return 0;
}

/*
 * Check the method and the token. Same contract as route(). The door has
 * already refused a declared body over the limit.
 */
static int
admit(struct http *h, struct MHD_Connection *c, const char *method,
    struct http_req *rq, enum MHD_Result *rc)
{
	const struct command	*cmd = rq->cmd;
	const char		*why;

	if (rq->kind == HTTP_SETUP)
		return admit_setup(h, c, rc);
	if (rq->kind != HTTP_COMMAND || !commands_takes_body(cmd)) {
		if (!is_read(method)) {
			*rc = send_405(c, "GET, HEAD");
			return 1;
		}
		return 0;
	}
	if (strcmp(method, MHD_HTTP_METHOD_POST) != 0) {
		*rc = send_405(c, "POST");
		return 1;
	}
	if ((why = commands_refusal(cmd, CMD_FROM_WEB)) != NULL) {
		*rc = send_error(c, MHD_HTTP_FORBIDDEN, "'%s' %s", cmd->name,
		    why);
		return 1;
	}
	return admit_token(h, c, rc);
}

/* ---- answering --------------------------------------------------------- */

struct query {
	cJSON	*obj;
	int	 bad;
};

static enum MHD_Result
query_arg(void *arg, enum MHD_ValueKind kind, const char *key,
    const char *value)
{
	struct query	*q = arg;

	if (cJSON_AddStringToObject(q->obj, key, value ? value : "") == NULL)
		q->bad = 1;
	return MHD_YES;
}

/* The arguments of a request: its query (reads) or its body (mutations). */
static cJSON *
request_args(struct MHD_Connection *c, struct http_req *rq, char *err,
    size_t errlen)
{
	struct query	 q = { cJSON_CreateObject(), 0 };
	cJSON		*args;

	if (commands_takes_body(rq->cmd)) {
		cJSON_Delete(q.obj);
		return api_body_args(rq->cmd, (const char *)buf_rptr(&rq->body),
		    buf_avail(&rq->body), err, errlen);
	}
	if (q.obj == NULL)
		return NULL;
	MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, query_arg, &q);
	args = q.bad ? NULL : api_args_check(rq->cmd, q.obj, err, errlen);
	if (q.bad)
		snprintf(err, errlen, "out of memory");
	cJSON_Delete(q.obj);
	return args;
}

static enum MHD_Result
answer_command(struct http *h, struct MHD_Connection *c, struct http_req *rq)
{
	char	 err[512];
	cJSON	*args, *reply;

	if (rq->too_big)
		return send_error(c, MHD_HTTP_CONTENT_TOO_LARGE, "body over %d "
		    "bytes", HTTP_API_MAX_BODY_BYTES);
	if ((args = request_args(c, rq, err, sizeof(err))) == NULL)
		return send_error(c, MHD_HTTP_BAD_REQUEST, "%s", err);
	reply = commands_run(h->app, rq->cmd->name, args, CMD_FROM_WEB);
	cJSON_Delete(args);
	if (reply == NULL)
		return MHD_NO;
	if (rq->cmd->flags & CMD_MUTATING)
		log_info("api: %s", rq->cmd->name);
	return send_json(c, commands_is_error(reply) ?
	    MHD_HTTP_BAD_REQUEST : MHD_HTTP_OK, reply);
}

/* The string member name of o, or NULL. */
static const char *
member(const cJSON *o, const char *name)
{
	return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, name));
}

/*
 * POST /api/setup {"code": ..., "token": ...}: the admin token set with
 * the setup code (firstrun.c decides). A wrong code counts against the
 * address like a wrong token.
 */
static enum MHD_Result
answer_setup(struct http *h, struct MHD_Connection *c, struct http_req *rq)
{
	static const unsigned	 status[] = {
		[FIRSTRUN_DONE] = MHD_HTTP_OK,
		[FIRSTRUN_CLOSED] = MHD_HTTP_CONFLICT,
		[FIRSTRUN_BAD_TOKEN] = MHD_HTTP_BAD_REQUEST,
		[FIRSTRUN_WRONG] = MHD_HTTP_FORBIDDEN,
		[FIRSTRUN_NO_CODE] = MHD_HTTP_GONE,
		[FIRSTRUN_LOCKED] = MHD_HTTP_TOO_MANY_REQUESTS,
		[FIRSTRUN_FAILED] = MHD_HTTP_INTERNAL_SERVER_ERROR,
	};
	enum firstrun_result	 res;
	char			 msg[512];
	unsigned		 wait;
	cJSON			*body, *r;

	if (rq->too_big)
		return send_error(c, MHD_HTTP_CONTENT_TOO_LARGE, "body over %d "
		    "bytes", HTTP_API_MAX_BODY_BYTES);
	body = cJSON_ParseWithLength((const char *)buf_rptr(&rq->body),
	    buf_avail(&rq->body));
	if (member(body, "code") == NULL || member(body, "token") == NULL) {
		cJSON_Delete(body);
		return send_error(c, MHD_HTTP_BAD_REQUEST, "setup needs a JSON "
		    "body {\"code\": the setup code, \"token\": the new admin "
		    "token}");
	}
	res = firstrun_redeem(h->app->firstrun, member(body, "code"),
	    member(body, "token"), msg, sizeof(msg), &wait);
	cJSON_Delete(body);
	if (res == FIRSTRUN_WRONG)
		auth_failed(h, c);
	if (res != FIRSTRUN_DONE)
		return send_error(c, status[res], "%s", msg);
	if ((r = cJSON_CreateObject()) == NULL)
		return MHD_NO;
	cJSON_AddStringToObject(r, CONFIG_ADMIN_TOKEN, "set");
	return send_json(c, MHD_HTTP_OK, r);
}

static void	conn_download(struct MHD_Connection *);

/*
 * GET DOWNLOAD_API_PATH?ticket=T: the copy a `backup download` made,
 * once, to whoever holds its ticket (download.c decides; the ticket is
 * the admin's, so a wrong one counts like a wrong token). libmicrohttpd
 * sends the file from its descriptor (already unlinked) and closes it;
 * the exchange may take BACKUP_DOWNLOAD_DEADLINE_MS.
 */
static enum MHD_Result
answer_download(struct http *h, struct MHD_Connection *c, struct http_req *rq)
{
	struct MHD_Response	*r;
	enum MHD_Result		 res;
	char			 name[64], err[256], disp[128];
	uint64_t		 size;
	unsigned		 wait;
	bool			 global;
	int			 fd, rc;

	if ((wait = auth_wait_s(h, c, &global)) > 0)
		return send_error(c, MHD_HTTP_TOO_MANY_REQUESTS, "too many "
		    "wrong admin passwords or tickets; try again in %u s", wait);
	rc = download_take(h->app->download, MHD_lookup_connection_value(c,
	    MHD_GET_ARGUMENT_KIND, "ticket"), &fd, &size, name, sizeof(name),
	    err, sizeof(err));
	if (rc == -1)
		auth_failed(h, c);
	if (rc != 1)
		return send_error(c, rc == 0 ? MHD_HTTP_CONFLICT :
		    MHD_HTTP_FORBIDDEN, "%s", err);
	rq->serving = 1;
	if ((r = MHD_create_response_from_fd64(size, fd)) == NULL) {
		close(fd);
		return MHD_NO;
	}
	snprintf(disp, sizeof(disp), "attachment; filename=\"%s\"", name);
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
	    "application/vnd.sqlite3");
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_DISPOSITION, disp);
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	conn_download(c);
	res = MHD_queue_response(c, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return res;
}

static enum MHD_Result
answer_metrics(struct http *h, struct MHD_Connection *c)
{
	struct buf	 out;
	cJSON		*st = status_json(h->app);
	enum MHD_Result	 rc;
	char		*text;

	buf_init(&out, HTTP_API_MAX_REPLY_BYTES);
	if (st == NULL || api_metrics(st, &out) == -1 ||
	    (text = strdup(buf_cstr(&out))) == NULL) {
		cJSON_Delete(st);
		buf_free(&out);
		return send_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR,
		    "metrics too large or out of memory");
	}
	rc = send_text(c, MHD_HTTP_OK, HTTP_METRICS_TYPE, text, out.len,
	    MHD_RESPMEM_MUST_FREE);
	cJSON_Delete(st);
	buf_free(&out);
	return rc;
}

static enum MHD_Result
answer(struct http *h, struct MHD_Connection *c, struct http_req *rq)
{
	switch (rq->kind) {
	case HTTP_COMMAND:
		return answer_command(h, c, rq);
	case HTTP_METRICS:
		return answer_metrics(h, c);
	case HTTP_SETUP:
		return answer_setup(h, c, rq);
	case HTTP_DOWNLOAD:
		return answer_download(h, c, rq);
	case HTTP_ASSET:
		return send_text(c, MHD_HTTP_OK,
		    api_content_type(rq->asset->name),
		    (char *)rq->asset->data, rq->asset->len,
		    MHD_RESPMEM_PERSISTENT);
	}
	return MHD_NO;
}

/* ---- connections: deadlines and shedding ------------------------------ */

static void	http_run(struct http *);

/* The whole request of c is in: from now on only the exchange deadline. */
static void
conn_answering(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo	*ci;
	struct http_conn		*hc;

	ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	if (ci != NULL && (hc = ci->socket_context) != NULL)
		hc->answering = 1;
}

/* c sends a backup download: its exchange has a longer deadline. */
static void
conn_download(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo	*ci;
	struct http_conn		*hc;

	ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	if (ci != NULL && (hc = ci->socket_context) != NULL)
		hc->download = 1;
}

/*
 * Shut down hc's socket: libmicrohttpd sees the end of the stream at its
 * next run and closes the connection (we never close its descriptor).
 */
static void
conn_cut(struct http *h, struct http_conn *hc, const char *why)
{
	if (hc->cut)
		return;
	hc->cut = 1;
	h->nconns--;
	h->cut_total++;
	shutdown(hc->fd, SHUT_RDWR);
	log_debug("http: connection closed: %s", why);
}

static void
conn_sweep(struct loop *loop, void *arg)
{
	struct http		*h = arg;
	struct http_conn	*hc;
	uint64_t		 now = loop_now_ms(loop), age;

	h->sweep = 0;
	for (hc = h->conns; hc != NULL; hc = hc->next) {
		age = now - hc->accepted_ms;
		if (!hc->answering && age >= HTTP_API_REQUEST_DEADLINE_MS)
			conn_cut(h, hc, "request not complete in time");
		else if (age >= (hc->download ? BACKUP_DOWNLOAD_DEADLINE_MS :
		    HTTP_API_EXCHANGE_DEADLINE_MS))
			conn_cut(h, hc, "exchange not done in time");
	}
	if (h->conns != NULL)
		h->sweep = loop_timer_add(loop, HTTP_API_SWEEP_MS, conn_sweep, h);
	http_run(h);
}

static void
on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
    enum MHD_ConnectionNotificationCode code)
{
	struct http			*h = cls;
	struct http_conn		*hc = *socket_context;
	const union MHD_ConnectionInfo	*ci;

	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
		if (ci == NULL || (hc = calloc(1, sizeof(*hc))) == NULL)
			return;
		hc->fd = ci->connect_fd;
		hc->accepted_ms = h->handoff_ms != 0 ? h->handoff_ms :
		    loop_now_ms(h->loop);
		hc->prev = h->conns_tail;
		if (h->conns_tail != NULL)
			h->conns_tail->next = hc;
		else
			h->conns = hc;
		h->conns_tail = hc;
		h->nconns++;
		*socket_context = hc;
		if (h->sweep == 0)
			h->sweep = loop_timer_add(h->loop, HTTP_API_SWEEP_MS,
			    conn_sweep, h);
		return;
	}
	if (hc == NULL)
		return;
	if (hc->prev != NULL)
		hc->prev->next = hc->next;
	else
		h->conns = hc->next;
	if (hc->next != NULL)
		hc->next->prev = hc->prev;
	else
		h->conns_tail = hc->prev;
	if (!hc->cut)
		h->nconns--;
	free(hc);
	*socket_context = NULL;
}

/* http_door_opts.handoff: libmicrohttpd takes a screened connection. */
static int
door_handoff(void *arg, int fd, const struct sockaddr *sa, socklen_t salen,
    uint64_t accepted_ms)
{
	struct http	*h = arg;
	int		 rc;

	h->handoff_ms = accepted_ms;
	rc = MHD_add_connection(h->ml.mhd, fd, sa, salen) == MHD_YES ? 0 : -1;
	h->handoff_ms = 0;
	if (rc == -1) {
		log_warnx_rl("http: cannot take a connection");
		return -1;	/* MHD closed fd already */
	}
	http_run(h);
	return 0;
}

static unsigned
door_held(void *arg)
{
	return ((struct http *)arg)->nconns;
}

/*
 * http_door_opts.shed: every slot is held by a connection past the door.
 * Cut the oldest one that is at least a second old, so a flood of slow
 * readers cannot keep everyone else out, while a fresh exchange is left
 * to finish.
 */
static int
door_shed(void *arg)
{
	struct http		*h = arg;
	struct http_conn	*hc;
	uint64_t		 now = loop_now_ms(h->loop);

	for (hc = h->conns; hc != NULL; hc = hc->next) {
		if (hc->cut || hc->download)
			continue;	/* the one download is the admin's */
		if (now - hc->accepted_ms < HTTP_API_SHED_MIN_AGE_MS)
			return -1;
		conn_cut(h, hc, "making room for a new connection");
		http_run(h);
		return 0;
	}
	return -1;
}

/*
 * libmicrohttpd calls this once when the headers are in (*con_cls NULL),
 * once per chunk of body, and once more with no data when the body is
 * complete: that last call answers.
 */
static enum MHD_Result
on_request(void *cls, struct MHD_Connection *c, const char *url,
    const char *method, const char *version, const char *upload,
    size_t *upload_len, void **con_cls)
{
	struct http	*h = cls;
	struct http_req	*rq = *con_cls;
	enum MHD_Result	 rc = MHD_YES;

	if (rq == NULL) {
		if ((rq = calloc(1, sizeof(*rq))) == NULL)
			return MHD_NO;
		buf_init(&rq->body, HTTP_API_MAX_BODY_BYTES);
		*con_cls = rq;
		if (screen_site(h, c, method, &rc) ||
		    route(h, c, url, method, rq, &rc) ||
		    admit(h, c, method, rq, &rc))
			return rc;
		return MHD_YES;
	}
	if (*upload_len > 0) {
		if (!rq->too_big && buf_append(&rq->body, upload,
		    *upload_len) == -1)
			rq->too_big = 1;
		*upload_len = 0;
		return MHD_YES;
	}
	conn_answering(c);
	return answer(h, c, rq);
}

static void
on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
    enum MHD_RequestTerminationCode toe)
{
	struct http_req	*rq = *con_cls;

	if (rq == NULL)
		return;
	if (rq->serving)
		download_served(((struct http *)cls)->app->download);
	buf_free(&rq->body);
	free(rq);
	*con_cls = NULL;
}

/* ---- the loop ---------------------------------------------------------- */

static void
http_run(struct http *h)
{
	mhd_loop_run(&h->ml);
}

/*
 * Before each poll: make the loop wake up when libmicrohttpd wants to run
 * (a connection's idle timeout, or work it already has in hand).
 */
static void
on_hook(struct loop *loop, void *arg)
{
	struct http	*h = arg;

	mhd_loop_arm(&h->ml);
}

/* ---- start and stop ---------------------------------------------------- */

/*
 * libmicrohttpd without a listening socket: the door accepts and hands
 * connections over. Its own limit has room above ours, so a handoff made
 * while a shed connection is still closing never fails.
 */
static struct MHD_Daemon *
start_mhd(struct http *h)
{
	unsigned	flags = MHD_USE_EPOLL | MHD_USE_ERROR_LOG |
			    MHD_USE_NO_LISTEN_SOCKET;

	return MHD_start_daemon(flags, 0, NULL, NULL, on_request, h,
	    MHD_OPTION_EXTERNAL_LOGGER, mhd_loop_log, "http",
	    MHD_OPTION_CONNECTION_LIMIT,
	    (unsigned)(2 * HTTP_API_MAX_CONNS),
	    MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)HTTP_API_CONN_TIMEOUT_S,
	    MHD_OPTION_CONNECTION_MEMORY_LIMIT,
	    (size_t)HTTP_API_MAX_HEADER_BYTES,
	    MHD_OPTION_NOTIFY_COMPLETED, on_completed, h,
	    MHD_OPTION_NOTIFY_CONNECTION, on_connection, h,
	    MHD_OPTION_END);
}

static int
open_door(struct http *h, const struct addrinfo *ai, char *err,
    size_t errlen)
{
	struct http_door_opts	o = {
		.max_conns = HTTP_API_MAX_CONNS,
		.max_head = HTTP_API_MAX_HEADER_BYTES,
		.max_body = HTTP_API_MAX_BODY_BYTES,
		.handoff = door_handoff,
		.held = door_held,
		.shed = door_shed,
		.arg = h,
	};
	char			msg[256];

	if ((h->door = http_door_open(h->loop, ai, &o, msg,
	    sizeof(msg))) == NULL) {
		snprintf(err, errlen, "http: cannot listen on %s: %s",
		    h->listen, msg);
		return -1;
	}
	h->port = http_door_port(h->door);
	return 0;
}

/* app_section.add: the server's facts under "http" in the status. */
static void
http_status_json(const void *part, cJSON *o)
{
	const struct http		*h = part;
	const struct http_door_stats	*ds = http_door_stats(h->door);

	if (o == NULL)
		return;
	cJSON_AddStringToObject(o, "listen", h->listen);
	cJSON_AddNumberToObject(o, "port", h->port);
	cJSON_AddBoolToObject(o, "loopback_only", h->loopback);
	cJSON_AddNumberToObject(o, "connections", (double)(h->nconns +
	    http_door_waiting(h->door)));
	cJSON_AddNumberToObject(o, "max_connections", HTTP_API_MAX_CONNS);
	cJSON_AddNumberToObject(o, "accepted", (double)ds->accepted);
	cJSON_AddNumberToObject(o, "refused", (double)ds->refused);
	cJSON_AddNumberToObject(o, "evicted", (double)ds->evicted);
	cJSON_AddNumberToObject(o, "timed_out", (double)(ds->timed_out +
	    h->cut_total));
	cJSON_AddNumberToObject(o, "turned_away", (double)ds->turned_away);
}

struct http *
http_start(struct app *app, const char *listen, char *err, size_t errlen)
{
	struct http	*h;
	struct addrinfo	*ai;

	snprintf(err, errlen, "%s", "");
	if ((h = calloc(1, sizeof(*h))) == NULL) {
		snprintf(err, errlen, "http: out of memory");
		return NULL;
	}
	h->app = app;
	h->loop = app->loop;
	snprintf(h->listen, sizeof(h->listen), "%s", listen);
	snprintf(h->port_file, sizeof(h->port_file), "%s/%s", app->state_dir,
	    HTTP_PORT_FILE);
	unlink(h->port_file);
	if ((ai = http_door_resolve(listen, "http.listen", err,
	    errlen)) == NULL) {
		free(h);
		return NULL;
	}
	if (mhd_loop_attach(&h->ml, h->loop, start_mhd(h), "http", err,
	    errlen) == -1 || loop_hook_add(h->loop, on_hook, h) == -1 ||
	    open_door(h, ai, err, errlen) == -1) {
		if (*err == '\0')
			snprintf(err, errlen, "http: cannot watch the server");
		freeaddrinfo(ai);
		http_free(h);
		return NULL;
	}
	h->loopback = http_door_loopback(ai->ai_addr);
	freeaddrinfo(ai);
	app_section_add(app, "http", http_status_json, h);
	http_door_port_file(h->port_file, h->port, "http");
	log_info("http: status page and API on %s (port %u)", listen, h->port);
	if (!h->loopback && *config_get(app->cfg, CONFIG_ADMIN_TOKEN) == '\0')
		log_warnx("http: %s is reachable from the network and no admin "
		    "password is set: anyone there can read the status page; "
		    "changes from the web stay refused until one is set on "
		    "the console (admin-token set) or with the setup code",
		    listen);
	return h;
}

void
http_free(struct http *h)
{
	if (h == NULL)
		return;
	app_section_del(h->app, h);
	http_door_free(h->door);
	loop_timer_clear(h->loop, &h->sweep);
	loop_hook_del(h->loop, on_hook, h);
	mhd_loop_stop(&h->ml);
	unlink(h->port_file);
	free(h);
}

uint16_t
http_port(const struct http *h)
{
	return h->port;
}
