/*
 * prog_net.c — drives src/net against the loopback peers of
 * net_echo_server.mjs (started by test_net.sh, which passes the ports as a
 * JSON line in NET_PORTS and the test CA file in NET_CA). Prints one
 * "ok"/"not ok" line per check and exits 1 if any failed.
 *
 * "prog_net mem N [ws]" instead opens N idle wss (or ws) connections and
 * prints the heap bytes they hold (mallinfo2), per connection.
 */
#include <dirent.h>
#include <malloc.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "core/log.h"
#include "core/loop.h"
#include "net/dns.h"
#include "net/http.h"
#include "net/tcp.h"
#include "net/tls.h"
#include "net/ws.h"

static struct loop	*L;
static struct dns	*D;
static const char	*ca;
static int		 p_ws, p_ws6, p_wss, p_wrong, p_rogue, p_hole;
static int		 failures, seq;

static void	check(bool, const char *, ...)
		    __attribute__((format(printf, 2, 3)));

static void
check(bool ok, const char *fmt, ...)
{
	va_list	 ap;

	printf("%s - ", ok ? "ok" : "not ok");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (!ok)
		failures++;
}

/* One scripted client. */
struct peer {
	const char	*name;
	struct ws_conn	*c;
	int		 step;
	bool		 opened, closed, errored, drained, done;
	int		 close_code;
	char		 reason[256];
	int		 order;		/* seq when it finished */
	char		*big;		/* a 100 KB message */
	int		 sent, echoed, bad;	/* back-pressure: messages */
	void		(*script)(struct peer *, const char *, size_t);
	bool		 free_in_cb;
	char		 stages[96];	/* "resolving>connecting>..." */
};

static void
peer_done(struct peer *p)
{
	p->done = true;
	p->order = ++seq;
}

static void
on_open(struct ws_conn *c, void *arg)
{
	struct peer	*p = arg;

	p->opened = true;
	if (p->script != NULL)
		p->script(p, NULL, 0);
}

static void
on_message(struct ws_conn *c, const char *m, size_t len, void *arg)
{
	struct peer	*p = arg;

	if (p->script != NULL)
		p->script(p, m, len);
}

static void
on_close(struct ws_conn *c, int code, const char *reason, void *arg)
{
	struct peer	*p = arg;

	p->closed = true;
	p->close_code = code;
	snprintf(p->reason, sizeof(p->reason), "%s", reason);
	peer_done(p);
}

static void
on_error(struct ws_conn *c, const char *reason, void *arg)
{
	struct peer	*p = arg;

	p->errored = true;
	snprintf(p->reason, sizeof(p->reason), "%s", reason);
	peer_done(p);
}

static void
on_drain(struct ws_conn *c, void *arg)
{
	((struct peer *)arg)->drained = true;
}

/* Every opening stage in order, as the owner sees them. */
static void
on_stage(struct ws_conn *c, enum ws_state st, void *arg)
{
	struct peer	*p = arg;
	size_t		 n = strlen(p->stages);

	snprintf(p->stages + n, sizeof(p->stages) - n, ">%s",
	    ws_state_name(st));
}

static const struct ws_cbs cbs = { on_open, on_message, on_close, on_error,
    on_drain, on_stage };

static bool
peer_start(struct peer *p, const char *url, const struct ws_opts *o)
{
	struct ws_opts	 def = { .dns = D };
	char		 err[256];

	p->c = ws_connect(L, url, o != NULL ? o : &def, &cbs, p, err, sizeof(err));
	if (p->c == NULL)
		check(false, "%s: ws_connect: %s", p->name, err);
	else
		snprintf(p->stages, sizeof(p->stages), "%s",
		    ws_state_name(ws_state(p->c)));
	return p->c != NULL;
}

/* Run the loop until every flag is set or ms pass. */
static bool
run_until(bool *const *flags, size_t n, uint64_t ms)
{
	uint64_t	 end;
	size_t		 i;

	loop_run_once(L, 0);
	end = loop_now_ms(L) + ms;
	while (loop_now_ms(L) < end) {
		for (i = 0; i < n && *flags[i]; i++)
			;
		if (i == n)
			return true;
		loop_run_once(L, 100);
	}
	return false;
}

static bool
run1(bool *flag, uint64_t ms)
{
	bool	*f[1] = { flag };

	return run_until(f, 1, ms);
}

static void
send_or_fail(struct peer *p, const char *m, size_t len)
{
	if (ws_send_text(p->c, m, len) == -1)
		check(false, "%s: send refused", p->name);
}

#define SEND(p, s)	send_or_fail((p), (s), strlen(s))
#define IS(m, len, s)	((len) == strlen(s) && memcmp((m), (s), (len)) == 0)

/* Echo, 100 KB, fragmented reply, ping, normal close. */
static void
script_echo(struct peer *p, const char *m, size_t len)
{
	switch (p->step++) {
	case 0:
		SEND(p, "hello");
		break;
	case 1:
		check(IS(m, len, "hello"), "%s: text echo", p->name);
		send_or_fail(p, p->big, strlen(p->big));
		break;
	case 2:
		check(len == strlen(p->big) && memcmp(m, p->big, len) == 0,
		    "%s: 100 KB echo (%zu bytes)", p->name, len);
		SEND(p, "frag:ab|cd|ef");
		break;
	case 3:
		check(IS(m, len, "abcdef"), "%s: fragmented reply reassembled",
		    p->name);
		check(ws_ping(p->c) == 0, "%s: ping queued", p->name);
		SEND(p, "after-ping");
		break;
	case 4:
		check(IS(m, len, "after-ping") && ws_pongs(p->c) == 1,
		    "%s: pong counted before the next echo (%llu)", p->name,
		    (unsigned long long)ws_pongs(p->c));
		ws_close(p->c, WS_CODE_NORMAL, "bye");
		check(ws_state(p->c) == WS_CLOSING, "%s: closing", p->name);
		break;
	default:
		check(false, "%s: unexpected message", p->name);
	}
}

static char *
make_big(size_t n)
{
	char	*b = malloc(n + 1);
	size_t	 i;

	for (i = 0; i < n; i++)
		b[i] = (char)('a' + (i * 7 + i / 13) % 26);
	b[n] = '\0';
	return b;
}

static void
test_echo(const char *name, const char *url, const char *ca_file,
    const char *stages)
{
	struct peer	 p = { .name = name, .script = script_echo };
	struct ws_opts	 o = { .dns = D, .ca_file = ca_file };

	p.big = make_big(100 * 1000);
	if (peer_start(&p, url, &o)) {
		run1(&p.done, 10000);
		check(p.opened && p.closed && p.close_code == WS_CODE_NORMAL &&
		    p.step == 5, "%s: closed normally (code %d, step %d, %s)",
		    name, p.close_code, p.step, p.reason);
		check(strcmp(p.stages, stages) == 0, "%s: stages %s (got %s)",
		    name, stages, p.stages);
		ws_free(p.c);
	}
	free(p.big);
	loop_run_once(L, 0);
}

/* Expect a single message then free the connection inside on_message. */
static void
script_once(struct peer *p, const char *m, size_t len)
{
	if (p->step++ == 0) {
		SEND(p, "once");
		return;
	}
	check(IS(m, len, "once"), "%s: echo", p->name);
	ws_free(p->c);		/* inside its own callback */
	peer_done(p);
}

static void
test_simple(const char *name, const char *url, const char *ca_file)
{
	struct peer	 p = { .name = name, .script = script_once };
	struct ws_opts	 o = { .dns = D, .ca_file = ca_file };

	if (!peer_start(&p, url, &o))
		return;
	run1(&p.done, 10000);
	check(p.opened && p.step == 2 && !p.errored,
	    "%s: opened, echoed, freed in callback (%s)", name, p.reason);
	loop_run_once(L, 0);
}

static void
test_refused(const char *name, const char *url, const char *ca_file,
    const char *want, const char *stages)
{
	struct peer	 p = { .name = name };
	struct ws_opts	 o = { .dns = D, .ca_file = ca_file };

	if (!peer_start(&p, url, &o))
		return;
	run1(&p.done, 10000);
	check(p.errored && !p.opened && strcmp(p.reason, want) == 0,
	    "%s: refused with \"%s\" (got \"%s\")", name, want, p.reason);
	check(strcmp(p.stages, stages) == 0, "%s: refused after stages %s "
	    "(got %s)", name, stages, p.stages);
	ws_free(p.c);
}

/* Send cmd once open; expect on_close with code and reason. */
static void
script_cmd(struct peer *p, const char *m, size_t len)
{
	if (p->step++ == 0)
		send_or_fail(p, p->big, strlen(p->big));
}

static void
test_close(const char *name, const char *cmd, size_t max_msg, int code,
    const char *reason)
{
	struct peer	 p = { .name = name, .script = script_cmd };
	struct ws_opts	 o = { .dns = D, .max_msg_bytes = max_msg };
	char		 url[64];

	snprintf(url, sizeof(url), "ws://127.0.0.1:%d/", p_ws);
	p.big = (char *)cmd;
	if (!peer_start(&p, url, &o))
		return;
	run1(&p.done, 10000);
	check(p.closed && p.close_code == code && strcmp(p.reason, reason) == 0,
	    "%s: on_close(%d, \"%s\") (got %d \"%s\")", name, code, reason,
	    p.close_code, p.reason);
	ws_free(p.c);
}

/* Exactly max_msg_bytes is accepted. */
static void
script_limit(struct peer *p, const char *m, size_t len)
{
	if (p->step++ == 0) {
		SEND(p, "big:65536");
		return;
	}
	check(len == 65536, "%s: message of exactly the limit delivered",
	    p->name);
	ws_close(p->c, WS_CODE_NORMAL, NULL);
}

static void
test_limit_exact(void)
{
	struct peer	 p = { .name = "limit", .script = script_limit };
	struct ws_opts	 o = { .dns = D, .max_msg_bytes = 65536 };
	char		 url[64];

	snprintf(url, sizeof(url), "ws://127.0.0.1:%d/", p_ws);
	if (!peer_start(&p, url, &o))
		return;
	run1(&p.done, 10000);
	check(p.closed && p.close_code == WS_CODE_NORMAL && p.step == 2,
	    "limit: closed normally after the message");
	ws_free(p.c);
}

/*
 * Back-pressure: high water 20,000, queue max 70,000. A message is handed
 * to the transport at once, so nothing stays queued while the peer reads;
 * the server stops reading for 3 s ("hold"), and only once the socket's
 * buffers are full do messages stay queued: then over the high water the
 * sender hears 1, past the queue max -1, and on_drain runs when the server
 * reads again. Every message sent comes back.
 */
#define BP_MSG		30000
#define BP_MAX_SENDS	10000		/* 300 MB: far past any socket buffer */

static void
script_bp(struct peer *p, const char *m, size_t len)
{
	int	 rc = 0;

	if (p->step == 0) {
		p->step++;
		rc = ws_send_text(p->c, p->big, 3000);
		check(rc == 0 && ws_queued_bytes(p->c) == 0,
		    "bp: a message to a reading peer is not kept queued "
		    "(%d, %zu)", rc, ws_queued_bytes(p->c));
		SEND(p, "hold:3000");
		return;
	}
	if (p->step == 1) {		/* the echo of the first message */
		check(len == 3000 && memcmp(m, p->big, 3000) == 0,
		    "bp: first echo");
		p->step++;
		return;
	}
	if (p->step == 2) {		/* "held": the server reads no more */
		check(IS(m, len, "held"), "bp: server holds");
		p->step++;
		while (p->sent < BP_MAX_SENDS &&
		    (rc = ws_send_text(p->c, p->big, BP_MSG)) == 0)
			p->sent++;
		check(rc == 1 && ws_queued_bytes(p->c) > 20000,
		    "bp: queued above high water once the transport is full "
		    "(%d after %d messages, %zu queued)", rc, p->sent,
		    ws_queued_bytes(p->c));
		while (rc == 1 && p->sent < BP_MAX_SENDS) {
			p->sent++;
			rc = ws_send_text(p->c, p->big, BP_MSG);
		}
		check(rc == -1 && ws_queued_bytes(p->c) + BP_MSG > 70000,
		    "bp: refused once past queue max (%d, %zu queued)", rc,
		    ws_queued_bytes(p->c));
		return;
	}
	if (len != BP_MSG || memcmp(m, p->big, BP_MSG) != 0)
		p->bad++;
	if (++p->echoed < p->sent)
		return;
	check(p->bad == 0, "bp: every echo intact (%d not)", p->bad);
	check(p->drained, "bp: on_drain ran once the server read again");
	ws_close(p->c, WS_CODE_NORMAL, NULL);
	p->step++;
}

static void
test_backpressure(void)
{
	struct peer	 p = { .name = "bp", .script = script_bp };
	struct ws_opts	 o = { .dns = D, .send_high_water = 20000,
	    .send_queue_max = 70000 };
	char		 url[64];

	p.big = make_big(BP_MSG);
	snprintf(url, sizeof(url), "ws://127.0.0.1:%d/", p_ws);
	if (peer_start(&p, url, &o)) {
		run1(&p.done, 60000);
		check(p.closed && p.step == 4 && p.echoed == p.sent,
		    "bp: finished, %d of %d echoes", p.echoed, p.sent);
		ws_free(p.c);
	}
	free(p.big);
}

/* A black hole times out without stalling a parallel connection. */
static void
script_one_echo(struct peer *p, const char *m, size_t len)
{
	if (p->step++ == 0) {
		SEND(p, "parallel");
		return;
	}
	check(IS(m, len, "parallel"), "%s: echo", p->name);
	peer_done(p);
}

static void
test_black_hole(void)
{
	struct peer	 hole = { .name = "hole" };
	struct peer	 live = { .name = "parallel", .script = script_one_echo };
	struct ws_opts	 o = { .dns = D, .open_timeout_ms = 1500 };
	char		 url[64];
	bool		*f[2] = { &hole.done, &live.done };

	snprintf(url, sizeof(url), "ws://127.0.0.1:%d/", p_hole);
	if (!peer_start(&hole, url, &o))
		return;
	snprintf(url, sizeof(url), "ws://localhost:%d/", p_ws);
	if (!peer_start(&live, url, NULL))
		return;
	run_until(f, 2, 10000);
	check(hole.errored && strcmp(hole.reason, "timed out while upgrading") == 0,
	    "hole: on_error \"timed out while upgrading\" (got \"%s\")",
	    hole.reason);
	check(live.done && live.order < hole.order,
	    "parallel connection finished first (%d < %d)", live.order,
	    hole.order);
	ws_free(hole.c);
	ws_free(live.c);
}

/* Free before DNS answers: no callback, no leak. */
static void
test_cancel(void)
{
	struct peer	 p = { .name = "cancel" };
	char		 url[64];

	snprintf(url, sizeof(url), "ws://localhost:%d/", p_ws);
	if (!peer_start(&p, url, NULL))
		return;
	ws_free(p.c);
	for (int i = 0; i < 10; i++)
		loop_run_once(L, 20);
	check(!p.done, "cancel: no callback after ws_free");
}

/* Descriptors this process holds now (/proc/self/fd), -1 without /proc. */
static int
fd_count(void)
{
	DIR		*d;
	struct dirent	*e;
	int		 n = 0;

	if ((d = opendir("/proc/self/fd")) == NULL)
		return -1;
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1;		/* the directory stream's own */
}

/* Send one message, then mute inside on_open: its echo must not arrive. */
static void
script_mute(struct peer *p, const char *m, size_t len)
{
	if (p->step++ == 0) {
		SEND(p, "hello");
		ws_mute(p->c);
		return;
	}
	check(false, "%s: message after ws_mute", p->name);
}

/* Run rounds until c reaches state st or ms pass. */
static bool
run_to_state(struct ws_conn *c, enum ws_state st, uint64_t ms)
{
	uint64_t	 end = loop_now_ms(L) + ms;

	while (ws_state(c) != st && loop_now_ms(L) < end)
		loop_run_once(L, 20);
	return ws_state(c) == st;
}

/*
 * ws_destroy releases at once: with no loop round after it the process
 * holds the descriptors it held before ws_connect, and no callback runs
 * later. Open over TLS, stuck upgrading, and muted inside on_open.
 */
static void
test_destroy(void)
{
	struct peer	 tls = { .name = "destroy-open" };
	struct peer	 hole = { .name = "destroy-upgrading" };
	struct peer	 mute = { .name = "destroy-muted", .script = script_mute };
	struct ws_opts	 o = { .dns = D, .ca_file = ca };
	char		 url[64];
	int		 before, n;

	if ((before = fd_count()) == -1)
		return;
	snprintf(url, sizeof(url), "wss://127.0.0.1:%d/", p_wss);
	if (peer_start(&tls, url, &o) && run1(&tls.opened, 10000)) {
		n = fd_count();
		ws_destroy(tls.c);
		check(n == before + 1 && fd_count() == before,
		    "destroy-open: socket closed before returning (%d -> %d -> "
		    "%d)", before, n, fd_count());
	} else
		check(false, "destroy-open: did not open");
	snprintf(url, sizeof(url), "ws://127.0.0.1:%d/", p_hole);
	if (peer_start(&hole, url, NULL) &&
	    run_to_state(hole.c, WS_UPGRADING, 5000)) {
		ws_destroy(hole.c);
		check(fd_count() == before, "destroy-upgrading: socket closed "
		    "before returning (%d, was %d)", fd_count(), before);
	} else
		check(false, "destroy-upgrading: never upgrading");
	snprintf(url, sizeof(url), "ws://127.0.0.1:%d/", p_ws);
	if (peer_start(&mute, url, NULL) && run1(&mute.opened, 10000)) {
		for (int i = 0; i < 10; i++)
			loop_run_once(L, 20);
		ws_destroy(mute.c);
		check(fd_count() == before, "destroy-muted: socket closed "
		    "before returning (%d, was %d)", fd_count(), before);
	} else
		check(false, "destroy-muted: did not open");
	for (int i = 0; i < 10; i++)
		loop_run_once(L, 20);
	check(!tls.done && !hole.done && !mute.done && mute.step == 1,
	    "destroy: no callback after ws_mute or ws_destroy");
}

/* The connector walks the address list. */
struct tcp_res {
	bool	 done;
	int	 fd;
	int	 family;
	char	 err[160];
};

static void
on_tcp(int fd, const char *err, void *arg)
{
	struct tcp_res		*r = arg;
	struct sockaddr_storage	 ss;
	socklen_t		 sl = sizeof(ss);

	r->done = true;
	r->fd = fd;
	if (fd != -1 && getpeername(fd, (struct sockaddr *)&ss, &sl) == 0)
		r->family = ss.ss_family;
	if (err != NULL)
		snprintf(r->err, sizeof(r->err), "%s", err);
}

static void
add4(struct dns_addrs *a, int port)
{
	struct sockaddr_in	*s = (void *)&a->addr[a->n];

	memset(s, 0, sizeof(*s));
	s->sin_family = AF_INET;
	s->sin_port = htons((uint16_t)port);
	s->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	a->len[a->n++] = sizeof(*s);
}

static void
add6(struct dns_addrs *a, int port)
{
	struct sockaddr_in6	*s = (void *)&a->addr[a->n];

	memset(s, 0, sizeof(*s));
	s->sin6_family = AF_INET6;
	s->sin6_port = htons((uint16_t)port);
	s->sin6_addr = in6addr_loopback;
	a->len[a->n++] = sizeof(*s);
}

static void
test_tcp_fallback(void)
{
	struct dns_addrs	 a;
	struct tcp_res		 r;

	memset(&a, 0, sizeof(a));
	add6(&a, p_ws);			/* nothing on ::1 at this port */
	add4(&a, p_ws);
	memset(&r, 0, sizeof(r));
	tcp_connect(L, &a, 0, on_tcp, &r);
	run1(&r.done, 10000);
	check(r.fd >= 0 && r.family == AF_INET,
	    "tcp: ::1 refused, 127.0.0.1 connected (%s)", r.err);
	if (r.fd >= 0)
		close(r.fd);
	if (p_ws6 == 0)
		return;
	memset(&a, 0, sizeof(a));
	add4(&a, p_ws6);		/* nothing on 127.0.0.1 at this port */
	add6(&a, p_ws6);
	memset(&r, 0, sizeof(r));
	tcp_connect(L, &a, 0, on_tcp, &r);
	run1(&r.done, 10000);
	check(r.fd >= 0 && r.family == AF_INET6,
	    "tcp: 127.0.0.1 refused, ::1 connected (%s)", r.err);
	if (r.fd >= 0)
		close(r.fd);
	memset(&a, 0, sizeof(a));
	add4(&a, p_ws6);
	memset(&r, 0, sizeof(r));
	tcp_connect(L, &a, 0, on_tcp, &r);
	run1(&r.done, 10000);
	check(r.fd == -1 && strstr(r.err, "Connection refused") != NULL,
	    "tcp: all refused reported (%s)", r.err);
}

/* NIP-11 over HTTP. */
struct http_res {
	bool	 done;
	int	 status;
	char	*body;
	char	 err[160];
};

static void
on_http(int status, const char *body, size_t len, const char *err, void *arg)
{
	struct http_res	*r = arg;

	r->done = true;
	r->status = status;
	r->body = body != NULL ? strndup(body, len) : NULL;
	if (err != NULL)
		snprintf(r->err, sizeof(r->err), "%s", err);
}

static void
test_http(const char *url, const char *ca_file, int status, const char *body,
    const char *err)
{
	struct http_opts o = { .dns = D, .ca_file = ca_file,
	    .accept = "application/nostr+json" };
	struct http_res	 r = { 0 };
	char		 e[160];

	if (http_get(L, url, &o, on_http, &r, e, sizeof(e)) == NULL) {
		check(false, "http %s: %s", url, e);
		return;
	}
	run1(&r.done, 10000);
	if (err != NULL)
		check(r.status == 0 && strcmp(r.err, err) == 0,
		    "http %s: fails with \"%s\" (got \"%s\")", url, err, r.err);
	else
		check(r.status == status && r.body != NULL &&
		    strcmp(r.body, body) == 0, "http %s: %d %s (got %d %s %s)",
		    url, status, body, r.status, r.body ? r.body : "-", r.err);
	free(r.body);
}

static int
ports(void)
{
	const char	*s = getenv("NET_PORTS");
	cJSON		*j;

	ca = getenv("NET_CA");
	if (s == NULL || ca == NULL || (j = cJSON_Parse(s)) == NULL) {
		fprintf(stderr, "prog_net: NET_PORTS and NET_CA needed\n");
		return -1;
	}
	p_ws = cJSON_GetObjectItem(j, "ws")->valueint;
	p_ws6 = cJSON_GetObjectItem(j, "ws6")->valueint;
	p_wss = cJSON_GetObjectItem(j, "wss")->valueint;
	p_wrong = cJSON_GetObjectItem(j, "wrong")->valueint;
	p_rogue = cJSON_GetObjectItem(j, "rogue")->valueint;
	p_hole = cJSON_GetObjectItem(j, "hole")->valueint;
	cJSON_Delete(j);
	return 0;
}

static void
all_tests(void)
{
	const char	*nip11 =
	    "{\"name\":\"net test relay\",\"supported_nips\":[1,11]}";
	char		 u[128];

	snprintf(u, sizeof(u), "ws://127.0.0.1:%d/", p_ws);
	test_echo("ws", u, NULL, "connecting>upgrading");
	snprintf(u, sizeof(u), "wss://localhost:%d/path?q=1", p_wss);
	test_echo("wss", u, ca, "resolving>connecting>tls>upgrading");
	snprintf(u, sizeof(u), "ws://localhost:%d/", p_ws);
	test_simple("localhost", u, NULL);
	if (p_ws6 != 0) {
		snprintf(u, sizeof(u), "ws://[::1]:%d/", p_ws6);
		test_simple("ipv6", u, NULL);
	}
	snprintf(u, sizeof(u), "wss://127.0.0.1:%d/", p_wss);
	test_simple("wss-ip", u, ca);
	snprintf(u, sizeof(u), "wss://localhost:%d/", p_wrong);
	test_refused("wrong-name", u, ca, "host name mismatch",
	    "resolving>connecting>tls");
	snprintf(u, sizeof(u), "wss://127.0.0.1:%d/", p_wrong);
	test_refused("wrong-ip", u, ca,
	    "host name mismatch (IP address not in certificate)",
	    "connecting>tls");
	snprintf(u, sizeof(u), "wss://localhost:%d/", p_rogue);
	test_refused("untrusted", u, ca, "certificate not trusted",
	    "resolving>connecting>tls");
	snprintf(u, sizeof(u), "wss://localhost:%d/", p_wss);
	test_refused("system-store", u, NULL, "certificate not trusted",
	    "resolving>connecting>tls");
	snprintf(u, sizeof(u), "ws://127.0.0.1:%d/", p_wss);
	test_refused("plain-to-tls", u, NULL,
	    "connection closed during the upgrade", "connecting>upgrading");
	test_close("cut", "cut", 0, WS_CODE_ABNORMAL,
	    "connection lost: closed by peer without a close frame");
	test_close("too-big", "big:100000", 65536, WS_CODE_TOO_BIG,
	    "message too big");
	test_close("peer-close", "close:4000", 0, 4000, "asked to close");
	test_limit_exact();
	test_backpressure();
	test_black_hole();
	test_cancel();
	test_destroy();
	test_tcp_fallback();
	snprintf(u, sizeof(u), "http://127.0.0.1:%d/nip11", p_ws);
	test_http(u, NULL, 200, nip11, NULL);
	snprintf(u, sizeof(u), "ws://localhost:%d/chunked", p_ws);
	test_http(u, NULL, 200, nip11, NULL);
	snprintf(u, sizeof(u), "https://localhost:%d/nip11", p_wss);
	test_http(u, ca, 200, nip11, NULL);
	snprintf(u, sizeof(u), "http://127.0.0.1:%d/none", p_ws);
	test_http(u, NULL, 404, "no", NULL);
	snprintf(u, sizeof(u), "http://127.0.0.1:%d/huge", p_ws);
	test_http(u, NULL, 0, NULL, "body too large");
}

/* Heap held by n idle, open wss (or ws, when plain) connections. */
static int
mem(int n, bool plain)
{
	struct peer	*p = calloc((size_t)n, sizeof(*p));
	struct tls_ctx	*keep;
	struct ws_opts	 o = { .dns = D, .ca_file = ca };
	struct mallinfo2 a, b;
	bool		*flags[1024];
	char		 u[128], err[128];
	int		 i;

	if (n < 1 || n > 1024 || p == NULL)
		return 1;
	/* Load the CA set and seed the generator outside the measurement. */
	if ((keep = tls_ctx_get(ca, err, sizeof(err))) == NULL)
		return 1;
	snprintf(u, sizeof(u), plain ? "ws://localhost:%d/" :
	    "wss://localhost:%d/", plain ? p_ws : p_wss);
	malloc_trim(0);
	a = mallinfo2();
	for (i = 0; i < n; i++) {
		p[i].name = "mem";
		peer_start(&p[i], u, &o);
		flags[i] = &p[i].opened;
	}
	run_until(flags, (size_t)n, 20000);
	for (i = 0; i < 5; i++)
		loop_run_once(L, 10);
	b = mallinfo2();
	printf("mem: %d idle %s connections hold %zu heap bytes, %zu per "
	    "connection\n", n, plain ? "ws" : "wss", b.uordblks - a.uordblks,
	    (b.uordblks - a.uordblks) / (size_t)n);
	for (i = 0; i < n; i++)
		ws_free(p[i].c);
	loop_run_once(L, 0);
	tls_ctx_put(keep);
	free(p);
	return 0;
}

int
main(int argc, char **argv)
{
	int	 rc;

	log_init(stderr, getenv("NET_DEBUG") != NULL ? LOG_LEVEL_DEBUG :
	    LOG_LEVEL_WARN);
	if (ports() == -1 || (L = loop_new()) == NULL || (D = dns_new(L)) == NULL)
		return 2;
	if (argc >= 3 && strcmp(argv[1], "mem") == 0)
		rc = mem(atoi(argv[2]), argc == 4 && strcmp(argv[3], "ws") == 0);
	else {
		all_tests();
		rc = failures > 0;
		printf("%d failed\n", failures);
	}
	for (int i = 0; i < 5; i++)
		loop_run_once(L, 0);
	dns_free(D);
	loop_free(L);
	return rc;
}
