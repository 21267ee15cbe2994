/*
 * http.c — the status page's web server: what it asks of net/websrv.c (the
 * front door and libmicrohttpd on the loop) and what is its own: routing,
 * the early refusals, the admin token and its limiter, the headers of its
 * answers, and the mapping of outcomes to HTTP status codes. What a path
 * or body means is api.c's; what a command does is the command table's.
 * Nothing here blocks: a command runs to completion inside MHD_run() and
 * answers at once.
 *
 * Connections arrive through the front door (net/http_door.c), which
 * bounds their number and the time their request heads take, and hands
 * over only heads it screened (one Content-Length, few query arguments).
 * Every answer closes its connection, so every request passes the door.
 * Once past it, a connection must have its whole request (body included)
 * within HTTP_API_REQUEST_DEADLINE_MS of being accepted and be done within
 * HTTP_API_EXCHANGE_DEADLINE_MS, however slowly it sends or reads; past
 * either its socket is shut down and libmicrohttpd closes it. At the limit
 * the oldest connection at least HTTP_API_SHED_MIN_AGE_MS old makes room.
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
#include <limits.h>
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
#include "net/websrv.h"
#include "ui/api.h"
#include "ui/commands.h"
#include "ui/download.h"
#include "ui/firstrun.h"
#include "ui/http.h"
#include "ui/reply.h"
#include "ui/status.h"

#define HTTP_PORT_FILE		"http.port"
#define HTTP_JSON		"application/json"
#define HTTP_METRICS_TYPE	"text/plain; version=0.0.4; charset=utf-8"
#define HTTP_PAGE_POLICY	"default-src 'self'; img-src 'self' data:; " \
				"frame-ancestors 'none'"

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
	struct websrv		*web;		/* the door and libmicrohttpd */
	struct auth_peer	 peers[HTTP_API_AUTH_PEERS];
	struct auth_peer	 all;		/* every address together */
};

enum http_kind {
	HTTP_COMMAND,
	HTTP_METRICS,
	HTTP_ASSET,
	HTTP_SETUP,		/* POST /api/setup: the first run's setup code */
	HTTP_DOWNLOAD,		/* GET DOWNLOAD_API_PATH: a backup download */
};

/* What a request is, from its head to MHD's completion notice. */
struct http_req {
	enum http_kind		 kind;
	const struct command	*cmd;
	const struct embed_file	*asset;
	int			 serving;	/* a backup download taken */
};

/* ---- responses --------------------------------------------------------- */

/*
 * websrv_opts.headers: what every answer of the page carries besides the
 * web server's own (a 401 names its scheme, a page its content policy).
 */
static void
page_headers(struct MHD_Response *r, unsigned status, const char *type)
{
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	if (status == MHD_HTTP_UNAUTHORIZED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE,
		    "Bearer realm=\"cachebox\"");
	if (strncmp(type, "text/html", 9) == 0)
		MHD_add_response_header(r, "Content-Security-Policy",
		    HTTP_PAGE_POLICY);
}

static enum MHD_Result
send_405(struct http *h, struct MHD_Connection *c, const char *allow)
{
	struct MHD_Response	*r;
	char			*text;
	cJSON			*e;

	e = commands_error("method not allowed here; use %s", allow);
	text = e ? utf8_repair(cJSON_PrintUnformatted(e)) : NULL;
	cJSON_Delete(e);
	if (text == NULL || (r = websrv_response(h->web,
	    MHD_HTTP_METHOD_NOT_ALLOWED, HTTP_JSON, text, strlen(text),
	    MHD_RESPMEM_MUST_FREE)) == NULL)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, allow);
	return websrv_queue(c, MHD_HTTP_METHOD_NOT_ALLOWED, r);
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
			*rc = websrv_error(h->web, c, MHD_HTTP_NOT_FOUND,
			    "no such endpoint '%.200s' (GET /api/help lists "
			    "the commands)", url);
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
		*rc = websrv_error(h->web, c, MHD_HTTP_NOT_FOUND, "not found");
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
		*rc = websrv_error(h->web, c, MHD_HTTP_MISDIRECTED_REQUEST,
		    "this box is not reached by the name '%.100s' (Host); if "
		    "it is one of its names, add it to box.names on the "
		    "console", host);
		return 1;
	}
	if (is_read(method))
		return 0;
	origin = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Origin");
	site = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
	    "Sec-Fetch-Site");
	if ((origin != NULL && !origin_ok(h, origin)) || (site != NULL &&
	    strcasecmp(site, "cross-site") == 0)) {
		*rc = websrv_error(h->web, c, MHD_HTTP_FORBIDDEN, "refused: a "
		    "page of another site (Origin '%.100s') may not change "
		    "this box", origin != NULL ? origin : "?");
		return 1;
	}
	return 0;
}

/* ---- wrong tokens, counted per peer address ------------------------- */

/*
 * The slot counting c's peer; with make, a free or the stalest slot is
 * taken for it. NULL if none.
 */
static struct auth_peer *
auth_peer(struct http *h, struct MHD_Connection *c, int make)
{
	struct auth_peer	*p, *stale = &h->peers[0];
	uint8_t			 addr[16] = { 0 };
	int			 fam = websrv_peer_addr(c, addr);
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
		*rc = websrv_error(h->web, c, MHD_HTTP_TOO_MANY_REQUESTS, "too "
		    "many wrong admin passwords %s; try again in %u s", global ?
		    "lately "
		    "(from every address together; the console still works)" :
		    "from this address", wait);
		return 1;
	}
	auth = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
	    MHD_HTTP_HEADER_AUTHORIZATION);
	a = api_auth_check(config_get(h->app->cfg, CONFIG_ADMIN_TOKEN), auth);
	if (a == API_AUTH_NO_TOKEN) {
		*rc = websrv_error(h->web, c, MHD_HTTP_FORBIDDEN, "no admin "
		    "password is set: set one from the console first "
		    "(admin-token set PASSWORD), or on the status page with "
		    "the setup code shown at the box");
		return 1;
	}
	if (a == API_AUTH_WRONG)
		auth_failed(h, c);
	if (a != API_AUTH_OK) {
		*rc = websrv_error(h->web, c, MHD_HTTP_UNAUTHORIZED, "%s", a ==
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
		*rc = websrv_error(h->web, c, MHD_HTTP_TOO_MANY_REQUESTS, "too "
		    "many wrong setup codes or admin passwords %s; try again "
		    "in %u s", global ? "lately (from every address together)" :
		    "from this address", wait);
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
			*rc = send_405(h, c, "GET, HEAD");
			return 1;
		}
		return 0;
	}
	if (strcmp(method, MHD_HTTP_METHOD_POST) != 0) {
		*rc = send_405(h, c, "POST");
		return 1;
	}
	if ((why = commands_refusal(cmd, CMD_FROM_WEB)) != NULL) {
		*rc = websrv_error(h->web, c, MHD_HTTP_FORBIDDEN, "'%s' %s",
		    cmd->name, why);
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
request_args(struct MHD_Connection *c, const struct websrv_request *wr,
    char *err, size_t errlen)
{
	const struct http_req	*rq = wr->own;
	struct query		 q = { cJSON_CreateObject(), 0 };
	cJSON			*args;

	if (commands_takes_body(rq->cmd)) {
		cJSON_Delete(q.obj);
		return api_body_args(rq->cmd, wr->body, wr->body_len, err,
		    errlen);
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
answer_command(struct http *h, struct MHD_Connection *c,
    const struct websrv_request *wr)
{
	const struct http_req	*rq = wr->own;
	char			 err[512];
	cJSON			*args, *reply;

	if (wr->too_big)
		return websrv_error(h->web, c, MHD_HTTP_CONTENT_TOO_LARGE,
		    "body over %d bytes", HTTP_API_MAX_BODY_BYTES);
	if ((args = request_args(c, wr, err, sizeof(err))) == NULL)
		return websrv_error(h->web, c, MHD_HTTP_BAD_REQUEST, "%s", err);
	reply = commands_run(h->app, rq->cmd->name, args, CMD_FROM_WEB);
	cJSON_Delete(args);
	if (reply == NULL)
		return MHD_NO;
	if (rq->cmd->flags & CMD_MUTATING)
		log_info("api: %s", rq->cmd->name);
	return websrv_json(h->web, c, commands_is_error(reply) ?
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
answer_setup(struct http *h, struct MHD_Connection *c,
    const struct websrv_request *wr)
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

	if (wr->too_big)
		return websrv_error(h->web, c, MHD_HTTP_CONTENT_TOO_LARGE,
		    "body over %d bytes", HTTP_API_MAX_BODY_BYTES);
	body = cJSON_ParseWithLength(wr->body, wr->body_len);
	if (member(body, "code") == NULL || member(body, "token") == NULL) {
		cJSON_Delete(body);
		return websrv_error(h->web, c, MHD_HTTP_BAD_REQUEST, "setup "
		    "needs a JSON body {\"code\": the setup code, \"token\": "
		    "the new admin token}");
	}
	res = firstrun_redeem(h->app->firstrun, member(body, "code"),
	    member(body, "token"), msg, sizeof(msg), &wait);
	cJSON_Delete(body);
	if (res == FIRSTRUN_WRONG)
		auth_failed(h, c);
	if (res != FIRSTRUN_DONE)
		return websrv_error(h->web, c, status[res], "%s", msg);
	if ((r = cJSON_CreateObject()) == NULL)
		return MHD_NO;
	cJSON_AddStringToObject(r, CONFIG_ADMIN_TOKEN, "set");
	return websrv_json(h->web, c, MHD_HTTP_OK, r);
}

/*
 * GET DOWNLOAD_API_PATH?ticket=T: the copy a `backup download` made,
 * once, to whoever holds its ticket (download.c decides; the ticket is
 * the admin's, so a wrong one counts like a wrong token). libmicrohttpd
 * sends the file from its descriptor (already unlinked) and closes it;
 * the exchange may take BACKUP_DOWNLOAD_DEADLINE_MS and is never shed.
 */
static enum MHD_Result
answer_download(struct http *h, struct MHD_Connection *c,
    const struct websrv_request *wr)
{
	struct http_req		*rq = wr->own;
	struct MHD_Response	*r;
	char			 name[64], err[256], disp[128];
	uint64_t		 size;
	unsigned		 wait;
	bool			 global;
	int			 fd, rc;

	if ((wait = auth_wait_s(h, c, &global)) > 0)
		return websrv_error(h->web, c, MHD_HTTP_TOO_MANY_REQUESTS,
		    "too many wrong admin passwords or tickets; try again in "
		    "%u s", wait);
	rc = download_take(h->app->download, MHD_lookup_connection_value(c,
	    MHD_GET_ARGUMENT_KIND, "ticket"), &fd, &size, name, sizeof(name),
	    err, sizeof(err));
	if (rc == -1)
		auth_failed(h, c);
	if (rc != 1)
		return websrv_error(h->web, c, rc == 0 ? MHD_HTTP_CONFLICT :
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
	websrv_conn_long(c, BACKUP_DOWNLOAD_DEADLINE_MS);
	return websrv_queue(c, MHD_HTTP_OK, r);
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
		return websrv_error(h->web, c, MHD_HTTP_INTERNAL_SERVER_ERROR,
		    "metrics too large or out of memory");
	}
	rc = websrv_text(h->web, c, MHD_HTTP_OK, HTTP_METRICS_TYPE, text,
	    out.len, MHD_RESPMEM_MUST_FREE);
	cJSON_Delete(st);
	buf_free(&out);
	return rc;
}

/* websrv_opts.answer: the whole request is in. */
static enum MHD_Result
on_answer(void *arg, struct MHD_Connection *c,
    const struct websrv_request *wr)
{
	struct http		*h = arg;
	const struct http_req	*rq = wr->own;

	switch (rq->kind) {
	case HTTP_COMMAND:
		return answer_command(h, c, wr);
	case HTTP_METRICS:
		return answer_metrics(h, c);
	case HTTP_SETUP:
		return answer_setup(h, c, wr);
	case HTTP_DOWNLOAD:
		return answer_download(h, c, wr);
	case HTTP_ASSET:
		return websrv_text(h->web, c, MHD_HTTP_OK,
		    api_content_type(rq->asset->name),
		    (char *)rq->asset->data, rq->asset->len,
		    MHD_RESPMEM_PERSISTENT);
	}
	return MHD_NO;
}

/*
 * websrv_opts.head: the head is in. What the request is, and the
 * refusals made before any of its body is read.
 */
static int
on_head(void *arg, struct MHD_Connection *c, struct websrv_request *wr,
    enum MHD_Result *rc)
{
	struct http	*h = arg;
	struct http_req	*rq;

	if ((rq = calloc(1, sizeof(*rq))) == NULL) {
		*rc = MHD_NO;
		return 1;
	}
	wr->own = rq;
	return screen_site(h, c, wr->method, rc) ||
	    route(h, c, wr->url, wr->method, rq, rc) ||
	    admit(h, c, wr->method, rq, rc);
}

/* websrv_opts.done: the request is over (a download's file is closed). */
static void
on_done(void *arg, void *own)
{
	struct http	*h = arg;
	struct http_req	*rq = own;

	if (rq->serving)
		download_served(h->app->download);
	free(rq);
}

/* ---- start and stop ---------------------------------------------------- */

/*
 * The door and libmicrohttpd (net/websrv.h): HTTP_API_MAX_CONNS
 * connections, a body of at most HTTP_API_MAX_BODY_BYTES, the request and
 * exchange deadlines, the oldest connection shed at the limit.
 */
static int
open_web(struct http *h, const char *listen, const char *port_file,
    char *err, size_t errlen)
{
	struct websrv_opts	o = {
		.loop = h->loop,
		.who = "http",
		.listen = listen,
		.key = "http.listen",
		.port_file = port_file,
		.max_conns = HTTP_API_MAX_CONNS,
		.max_head = HTTP_API_MAX_HEADER_BYTES,
		.max_body = HTTP_API_MAX_BODY_BYTES,
		.request_deadline_ms = HTTP_API_REQUEST_DEADLINE_MS,
		.exchange_deadline_ms = HTTP_API_EXCHANGE_DEADLINE_MS,
		.arg = h,
		.head = on_head,
		.answer = on_answer,
		.done = on_done,
		.headers = page_headers,
		.shed_min_age_ms = HTTP_API_SHED_MIN_AGE_MS,
	};

	h->web = websrv_start(&o, err, errlen);
	return h->web != NULL ? 0 : -1;
}

/* app_section.add: the server's facts under "http" in the status. */
static void
http_status_json(const void *part, cJSON *o)
{
	const struct http		*h = part;
	const struct http_door_stats	*ds = websrv_door_stats(h->web);

	if (o == NULL)
		return;
	cJSON_AddStringToObject(o, "listen", websrv_listen(h->web));
	cJSON_AddNumberToObject(o, "port", websrv_port(h->web));
	cJSON_AddBoolToObject(o, "loopback_only", websrv_loopback(h->web));
	cJSON_AddNumberToObject(o, "connections",
	    websrv_connections(h->web));
	cJSON_AddNumberToObject(o, "max_connections", HTTP_API_MAX_CONNS);
	cJSON_AddNumberToObject(o, "accepted", (double)ds->accepted);
	cJSON_AddNumberToObject(o, "refused", (double)ds->refused);
	cJSON_AddNumberToObject(o, "evicted", (double)ds->evicted);
	cJSON_AddNumberToObject(o, "timed_out", (double)(ds->timed_out +
	    websrv_cut(h->web)));
	cJSON_AddNumberToObject(o, "turned_away", (double)ds->turned_away);
}

struct http *
http_start(struct app *app, const char *listen, char *err, size_t errlen)
{
	struct http	*h;
	char		 port_file[PATH_MAX];

	snprintf(err, errlen, "%s", "");
	if ((h = calloc(1, sizeof(*h))) == NULL) {
		snprintf(err, errlen, "http: out of memory");
		return NULL;
	}
	h->app = app;
	h->loop = app->loop;
	snprintf(port_file, sizeof(port_file), "%s/%s", app->state_dir,
	    HTTP_PORT_FILE);
	if (open_web(h, listen, port_file, err, errlen) == -1) {
		free(h);
		return NULL;
	}
	app_section_add(app, "http", http_status_json, h);
	log_info("http: status page and API on %s (port %u)", listen,
	    websrv_port(h->web));
	if (!websrv_loopback(h->web) &&
	    *config_get(app->cfg, CONFIG_ADMIN_TOKEN) == '\0')
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
	websrv_free(h->web);
	free(h);
}

uint16_t
http_port(const struct http *h)
{
	return websrv_port(h->web);
}
