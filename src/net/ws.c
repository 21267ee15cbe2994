/*
 * ws.c — owns a WebSocket client connection: the opening handshake (its
 * text is ws_handshake.c's), the wslay event context that does all
 * framing (masking, fragments, ping/pong, close), the send queue bound and
 * the connection's state machine. It must never frame bytes itself, never
 * block or poll, never free a connection inside its own callbacks (ws_free
 * only marks it and a zero-delay loop timer reaps it; ws_mute only marks it
 * and the owner calls ws_destroy from outside the callbacks), and never
 * read from a peer while that peer's send queue is above its high-water
 * mark.
 *
 * Hazard: with TLS, mbedTLS may hold decrypted bytes that poll cannot see,
 * so every read pass runs until the transport says "again", and a pass is
 * started by hand whenever reading resumes after back-pressure.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <wslay/wslay.h>

#include "core/buf.h"
#include "core/limits.h"
#include "core/log.h"
#include "core/loop.h"
#include "net/http.h"
#include "net/stream.h"
#include "net/tls.h"
#include "net/url.h"
#include "net/ws.h"
#include "net/ws_handshake.h"

struct ws_conn {
	struct loop		*loop;
	enum ws_state		 state;
	char			*url;
	struct ws_cbs		 cbs;
	void			*arg;
	struct ws_opts		 opts;
	struct stream		*st;
	wslay_event_context_ptr	 ctx;
	struct buf		 out;		/* upgrade request */
	struct buf		 in;		/* 101 head, then bytes after it */
	char			 accept[WS_ACCEPT_LEN + 1];
	uint64_t		 timer;		/* open or close deadline */
	uint64_t		 reap_timer;
	bool			 freed;
	bool			 silent;	/* owner abandoned it: no callbacks */
	bool			 opened;
	bool			 paused;	/* reading stopped: queue high */
	bool			 eof;
	char			 io_err[TLS_REASON_MAX + 64];
	uint64_t		 pongs;
	int			 close_code;	/* the code we sent */
	char			 close_reason[WS_REASON_MAX];
	int			 peer_code;	/* received from the peer */
	char			 peer_reason[WS_REASON_MAX];
};

static void	ws_pump(struct ws_conn *);

const char *
ws_state_name(enum ws_state s)
{
	static const char *const names[] = {
		"resolving", "connecting", "tls", "upgrading", "open", "closing",
		"closed"
	};

	return (unsigned)s < sizeof(names) / sizeof(names[0]) ? names[s] : "?";
}

static void
ws_set_state(struct ws_conn *c, enum ws_state s)
{
	if (c->state == s)
		return;
	log_debug("ws %s: %s -> %s", c->url, ws_state_name(c->state),
	    ws_state_name(s));
	c->state = s;
}

/* An opening step: record it and tell the owner (who keeps c). */
static void
ws_stage(struct ws_conn *c, enum ws_state s)
{
	if (c->state == s)
		return;
	ws_set_state(c, s);
	if (!c->freed && !c->silent && c->cbs.on_stage != NULL)
		c->cbs.on_stage(c, s, c->arg);
}

static void
ws_timer_stop(struct ws_conn *c)
{
	loop_timer_clear(c->loop, &c->timer);
}

/*
 * The one way a connection ends: transport closed, then exactly one of
 * on_close (after open) or on_error (before). Never frees c.
 */
static void
ws_finish(struct ws_conn *c, int code, const char *why)
{
	char	 reason[sizeof(c->io_err) + 64];

	if (c->state == WS_CLOSED)
		return;
	/* why may live in the stream closed below. */
	snprintf(reason, sizeof(reason), "%s", why);
	ws_set_state(c, WS_CLOSED);
	ws_timer_stop(c);
	stream_close(c->st);
	c->st = NULL;
	if (c->freed || c->silent)
		return;
	if (c->opened) {
		log_debug("ws %s: closed %d %s", c->url, code, reason);
		if (c->cbs.on_close != NULL)
			c->cbs.on_close(c, code, reason, c->arg);
	} else {
		log_debug("ws %s: failed: %s", c->url, reason);
		if (c->cbs.on_error != NULL)
			c->cbs.on_error(c, reason, c->arg);
	}
}

/* wslay callbacks: transport I/O only, errors parked for ws_pump. */

static ssize_t
ws_recv_cb(wslay_event_context_ptr ctx, uint8_t *data, size_t len, int flags,
    void *arg)
{
	struct ws_conn	*c = arg;
	ssize_t		 n;

	if (buf_avail(&c->in) > 0) {	/* frames that came with the 101 */
		n = (ssize_t)(len < buf_avail(&c->in) ? len : buf_avail(&c->in));
		buf_read(&c->in, data, (size_t)n);
		if (buf_avail(&c->in) == 0)
			buf_free(&c->in);
		return n;
	}
	n = stream_read(c->st, data, len);
	if (n > 0)
		return n;
	if (n == STREAM_AGAIN) {
		wslay_event_set_error(ctx, WSLAY_ERR_WOULDBLOCK);
		return -1;
	}
	if (n == 0)
		c->eof = true;
	else
		snprintf(c->io_err, sizeof(c->io_err), "%s", stream_reason(c->st));
	wslay_event_set_error(ctx, WSLAY_ERR_CALLBACK_FAILURE);
	return -1;
}

static ssize_t
ws_send_cb(wslay_event_context_ptr ctx, const uint8_t *data, size_t len,
    int flags, void *arg)
{
	struct ws_conn	*c = arg;
	ssize_t		 n;

	n = stream_write(c->st, data, len);
	if (n >= 0)
		return n;
	if (n == STREAM_AGAIN)
		wslay_event_set_error(ctx, WSLAY_ERR_WOULDBLOCK);
	else {
		snprintf(c->io_err, sizeof(c->io_err), "%s", stream_reason(c->st));
		wslay_event_set_error(ctx, WSLAY_ERR_CALLBACK_FAILURE);
	}
	return -1;
}

static int
ws_genmask_cb(wslay_event_context_ptr ctx, uint8_t *buf, size_t len, void *arg)
{
	if (tls_random(buf, len) == -1) {
		wslay_event_set_error(ctx, WSLAY_ERR_CALLBACK_FAILURE);
		return -1;
	}
	return 0;
}

static void
ws_msg_cb(wslay_event_context_ptr ctx, const struct wslay_event_on_msg_recv_arg *m,
    void *arg)
{
	struct ws_conn	*c = arg;

	switch (m->opcode) {
	case WSLAY_TEXT_FRAME:
		if (!c->freed && c->state == WS_OPEN && c->cbs.on_message != NULL)
			c->cbs.on_message(c, (const char *)m->msg, m->msg_length,
			    c->arg);
		break;
	case WSLAY_BINARY_FRAME:
		log_info_rl("ws %s: binary message of %zu bytes ignored",
		    c->url, m->msg_length);
		break;
	case WSLAY_PONG:
		c->pongs++;
		break;
	case WSLAY_CONNECTION_CLOSE:
		c->peer_code = m->status_code != 0 ? m->status_code : 1005;
		if (m->msg_length > 2)
			ws_printable(c->peer_reason, sizeof(c->peer_reason),
			    (const char *)m->msg + 2, m->msg_length - 2);
		break;
	default:
		break;
	}
}

/*
 * The transport ended or failed. A close frame from the peer, or one we
 * sent earlier, makes it the end of a close handshake; otherwise the
 * connection was lost (1006). Checked before wslay's own reaction to the
 * failure (it queues a close) can be mistaken for a handshake.
 */
static int
ws_check_lost(struct ws_conn *c)
{
	char	 why[sizeof(c->io_err) + 48];

	if (!c->eof && c->io_err[0] == '\0')
		return 0;
	if (wslay_event_get_close_received(c->ctx))
		ws_finish(c, c->peer_code, c->peer_reason);
	else if (c->state == WS_CLOSING)
		ws_finish(c, c->close_code, c->close_reason);
	else {
		snprintf(why, sizeof(why), "connection lost: %s", c->eof ?
		    "closed by peer without a close frame" : c->io_err);
		ws_finish(c, WS_CODE_ABNORMAL, why);
	}
	return 1;
}

/*
 * Has the close handshake ended the connection? It has when a close frame
 * went out, nothing more can be read (the peer's close came, or wslay
 * stopped reading after a protocol error or an over-size message) and
 * nothing is left to write.
 */
static int
ws_check_end(struct ws_conn *c)
{
	if (!wslay_event_get_close_sent(c->ctx) ||
	    wslay_event_get_read_enabled(c->ctx) ||
	    wslay_event_want_write(c->ctx))
		return 0;
	if (wslay_event_get_close_received(c->ctx))
		ws_finish(c, c->peer_code, c->peer_reason);
	else
		ws_finish(c, c->close_code, c->close_reason);
	return 1;
}

/* We started closing (or wslay did, e.g. 1009): note why, arm a deadline. */
static void ws_on_close_timeout(struct loop *, void *);

static void
ws_enter_closing(struct ws_conn *c, int code, const char *reason)
{
	if (c->state != WS_OPEN)
		return;
	ws_set_state(c, WS_CLOSING);
	snprintf(c->close_reason, sizeof(c->close_reason), "%s", reason);
	c->close_code = code;
	ws_timer_stop(c);
	c->timer = loop_timer_add(c->loop, WS_CLOSE_TIMEOUT_MS,
	    ws_on_close_timeout, c);
}

static void
ws_on_close_timeout(struct loop *l, void *arg)
{
	struct ws_conn	*c = arg;

	c->timer = 0;
	if (c->freed)
		return;
	ws_finish(c, c->close_code != 0 ? c->close_code : WS_CODE_ABNORMAL,
	    c->close_reason[0] != '\0' ? c->close_reason :
	    "peer did not answer the close");
}

static void
ws_update_want(struct ws_conn *c)
{
	size_t	 q;
	bool	 was = c->paused;

	/* Muted: stays off, or a readable socket would wake every poll. */
	if (c->st == NULL || c->ctx == NULL || c->freed)
		return;
	q = wslay_event_get_queued_msg_length(c->ctx);
	c->paused = q > c->opts.send_high_water;
	stream_want(c->st, !c->paused && wslay_event_want_read(c->ctx),
	    wslay_event_want_write(c->ctx));
	if (was && !c->paused) {
		if (!c->freed && c->cbs.on_drain != NULL)
			c->cbs.on_drain(c, c->arg);
	}
}

/* Write what the transport takes now; a failure is noted in io_err. */
static void
ws_write_pass(struct ws_conn *c)
{
	int	rc;

	if (wslay_event_want_write(c->ctx) &&
	    (rc = wslay_event_send(c->ctx)) != 0 && c->io_err[0] == '\0')
		snprintf(c->io_err, sizeof(c->io_err),
		    "WebSocket send failed (%d)", rc);
}

/* One read pass and one write pass, then decide what to wait for. */
static void
ws_pump(struct ws_conn *c)
{
	bool	 was_paused;
	int	 rc;

	do {
		was_paused = c->paused;
		if (!c->paused && wslay_event_want_read(c->ctx)) {
			rc = wslay_event_recv(c->ctx);
			if (rc != 0 && !c->eof && c->io_err[0] == '\0')
				snprintf(c->io_err, sizeof(c->io_err),
				    "WebSocket receive failed (%d)", rc);
		}
		if (c->state == WS_CLOSED)
			return;
		ws_write_pass(c);
		if (ws_check_lost(c))
			return;
		if (c->state == WS_OPEN && wslay_event_get_close_sent(c->ctx)) {
			uint16_t code = wslay_event_get_status_code_sent(c->ctx);

			ws_enter_closing(c, code, code == WS_CODE_TOO_BIG ?
			    "message too big" : code == WS_CODE_PROTOCOL ?
			    "protocol error" : "");
		}
		if (ws_check_end(c))
			return;
		ws_update_want(c);
		/* Resumed after back-pressure: TLS may hold unseen bytes. */
	} while (was_paused && !c->paused && c->state != WS_CLOSED);
}

static int
ws_start_framing(struct ws_conn *c)
{
	static const struct wslay_event_callbacks cbs = {
		ws_recv_cb, ws_send_cb, ws_genmask_cb, NULL, NULL, NULL,
		ws_msg_cb
	};

	if (wslay_event_context_client_init(&c->ctx, &cbs, c) != 0)
		return -1;
	wslay_event_config_set_max_recv_msg_length(c->ctx, c->opts.max_msg_bytes);
	return 0;
}

/* The 101 has arrived (head_len bytes of c->in); frames may follow it. */
static void
ws_opened(struct ws_conn *c, size_t head_len)
{
	ws_timer_stop(c);
	if (ws_start_framing(c) == -1) {
		ws_finish(c, WS_CODE_ABNORMAL, "out of memory");
		return;
	}
	buf_free(&c->out);
	buf_skip(&c->in, head_len);
	if (buf_avail(&c->in) == 0)
		buf_free(&c->in);
	c->opened = true;
	ws_set_state(c, WS_OPEN);
	if (!c->freed && c->cbs.on_open != NULL)
		c->cbs.on_open(c, c->arg);
	if (c->state == WS_OPEN || c->state == WS_CLOSING)
		ws_pump(c);
}

static void
ws_upgrade_read(struct ws_conn *c)
{
	char	 tmp[1024], why[192];
	size_t	 used = 0, room;
	ssize_t	 n;
	int	 rc;

	for (;;) {
		room = WS_HANDSHAKE_MAX_BYTES + 1 - c->in.len;
		n = stream_read(c->st, tmp, room < sizeof(tmp) ? room : sizeof(tmp));
		if (n == STREAM_AGAIN)
			return;
		if (n <= 0) {
			ws_finish(c, WS_CODE_ABNORMAL, n == 0 ?
			    "connection closed during the upgrade" :
			    stream_reason(c->st));
			return;
		}
		if (buf_append(&c->in, tmp, (size_t)n) == -1) {
			ws_finish(c, WS_CODE_ABNORMAL, "out of memory");
			return;
		}
		rc = ws_handshake_parse((const char *)c->in.data, c->in.len,
		    c->accept, &used, why, sizeof(why));
		if (rc == 1) {
			ws_opened(c, used);
			return;
		}
		if (rc == -1) {
			ws_finish(c, WS_CODE_ABNORMAL, why);
			return;
		}
	}
}

static void
ws_on_io(void *arg, short revents)
{
	struct ws_conn	*c = arg;
	ssize_t		 n;

	if (c->freed)
		return;
	if (c->state == WS_UPGRADING) {
		while (buf_avail(&c->out) > 0) {
			n = stream_write(c->st, buf_rptr(&c->out),
			    buf_avail(&c->out));
			if (n == STREAM_AGAIN)
				return;
			if (n < 0) {
				ws_finish(c, WS_CODE_ABNORMAL, stream_reason(c->st));
				return;
			}
			buf_skip(&c->out, (size_t)n);
		}
		stream_want(c->st, true, false);
		ws_upgrade_read(c);
		return;
	}
	if (c->state == WS_OPEN || c->state == WS_CLOSING)
		ws_pump(c);
}

static void
ws_on_ready(void *arg)
{
	struct ws_conn	*c = arg;

	if (c->freed)
		return;
	ws_stage(c, WS_UPGRADING);
	stream_want(c->st, false, true);
	ws_on_io(c, POLLOUT);
}

static void
ws_on_stream_error(void *arg, const char *reason)
{
	ws_finish(arg, WS_CODE_ABNORMAL, reason);
}

static void
ws_on_stream_stage(void *arg, enum stream_state st)
{
	struct ws_conn	*c = arg;

	if (c->freed)
		return;
	ws_stage(c, st == STREAM_HANDSHAKE ? WS_TLS : WS_CONNECTING);
}

static void
ws_on_open_timeout(struct loop *l, void *arg)
{
	struct ws_conn	*c = arg;
	char		 why[64];

	c->timer = 0;
	if (c->freed)
		return;
	snprintf(why, sizeof(why), "timed out while %s", c->state == WS_TLS ?
	    "in the TLS handshake" : ws_state_name(c->state));
	ws_finish(c, WS_CODE_ABNORMAL, why);
}

/* The Upgrade request with a fresh key; remembers the expected accept. */
static int
ws_request(struct ws_conn *c, const struct url *u)
{
	char	key[WS_KEY_LEN + 1], host[URL_MAX_HOST + 16];

	if (ws_new_key(key, c->accept) == -1 ||
	    url_host_header(u, host, sizeof(host)) == -1)
		return -1;
	return buf_printf(&c->out, "GET %s HTTP/1.1\r\nHost: %s\r\n"
	    "Upgrade: websocket\r\nConnection: Upgrade\r\n"
	    "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n"
	    "User-Agent: cachebox/%s\r\n\r\n", u->path, host, key,
	    CACHEBOX_VERSION);
}

static void
ws_opts_fill(struct ws_opts *o, const struct ws_opts *in)
{
	memset(o, 0, sizeof(*o));
	if (in != NULL)
		*o = *in;
	if (o->max_msg_bytes == 0)
		o->max_msg_bytes = WS_MAX_MSG_BYTES_DEFAULT;
	if (o->max_msg_bytes > WS_MAX_MSG_BYTES_CEILING)
		o->max_msg_bytes = WS_MAX_MSG_BYTES_CEILING;
	if (o->send_high_water == 0)
		o->send_high_water = WS_SEND_HIGH_WATER_DEFAULT;
	if (o->send_queue_max == 0)
		o->send_queue_max = WS_SEND_QUEUE_MAX_DEFAULT;
	if (o->send_queue_max < o->send_high_water)
		o->send_queue_max = o->send_high_water;
	if (o->open_timeout_ms == 0)
		o->open_timeout_ms = WS_OPEN_TIMEOUT_MS;
	o->ca_file = NULL;	/* only used while opening; not kept */
}

struct ws_conn *
ws_connect(struct loop *l, const char *text, const struct ws_opts *opts,
    const struct ws_cbs *cbs, void *arg, char *err, size_t errlen)
{
	static const struct stream_cbs	 scbs = {
		ws_on_ready, ws_on_stream_error, ws_on_io, ws_on_stream_stage
	};
	struct stream_opts		 so;
	struct ws_conn			*c;
	struct url			 u;
	const char			*why;

	if (url_parse(text, &u, &why) == -1) {
		snprintf(err, errlen, "bad URL: %s", why);
		return NULL;
	}
	if (u.scheme != URL_WS && u.scheme != URL_WSS) {
		snprintf(err, errlen, "bad URL: not ws:// or wss://");
		return NULL;
	}
	if ((c = calloc(1, sizeof(*c))) == NULL || (c->url = strdup(text)) == NULL) {
		free(c);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	c->loop = l;
	c->arg = arg;
	if (cbs != NULL)
		c->cbs = *cbs;
	ws_opts_fill(&c->opts, opts);
	buf_init(&c->out, URL_MAX_BYTES + URL_MAX_HOST + 512);
	buf_init(&c->in, WS_HANDSHAKE_MAX_BYTES + 1);
	memset(&so, 0, sizeof(so));
	so.dns = c->opts.dns;
	so.ca_file = opts != NULL ? opts->ca_file : NULL;
	so.attempt_ms = c->opts.attempt_ms;
	if (ws_request(c, &u) == -1) {
		snprintf(err, errlen, "cannot build the upgrade request");
		goto fail;
	}
	c->timer = loop_timer_add(l, c->opts.open_timeout_ms,
	    ws_on_open_timeout, c);
	if (c->timer == 0) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	if ((c->st = stream_open(l, &u, &so, &scbs, c, err, errlen)) == NULL)
		goto fail;
	c->state = stream_state(c->st) == STREAM_RESOLVING ? WS_RESOLVING :
	    WS_CONNECTING;
	log_debug("ws %s: connecting", c->url);
	return c;
fail:
	ws_timer_stop(c);
	buf_free(&c->out);
	buf_free(&c->in);
	free(c->url);
	free(c);
	return NULL;
}

int
ws_send_text(struct ws_conn *c, const char *msg, size_t len)
{
	struct wslay_event_msg	 m;
	size_t			 q;

	if (c->state != WS_OPEN || c->freed)
		return -1;
	q = wslay_event_get_queued_msg_length(c->ctx);
	if (len > c->opts.send_queue_max || q > c->opts.send_queue_max - len)
		return -1;
	m.opcode = WSLAY_TEXT_FRAME;
	m.msg = (const uint8_t *)msg;
	m.msg_length = len;
	if (wslay_event_queue_msg(c->ctx, &m) != 0)
		return -1;
	/*
	 * Hand it to the transport now rather than at the next round: a pass
	 * that opens subscriptions on 20 relays would otherwise hold every
	 * relay's frames at once (1.3 MB for 5,000 follows). Not while paused:
	 * the queue only grows then, so no on_drain can fire from in here. A
	 * failure is left in io_err for the next pump, which ends the
	 * connection from the loop, outside the caller.
	 */
	if (!c->paused)
		ws_write_pass(c);
	ws_update_want(c);
	return wslay_event_get_queued_msg_length(c->ctx) >
	    c->opts.send_high_water ? 1 : 0;
}

int
ws_ping(struct ws_conn *c)
{
	struct wslay_event_msg	 m = { WSLAY_PING, NULL, 0 };

	if (c->state != WS_OPEN || c->freed ||
	    wslay_event_queue_msg(c->ctx, &m) != 0)
		return -1;
	ws_update_want(c);
	return 0;
}

void
ws_close(struct ws_conn *c, int code, const char *reason)
{
	size_t	 rlen = reason != NULL ? strnlen(reason, WS_REASON_MAX - 1) : 0;

	if (c->state < WS_OPEN) {
		c->silent = true;
		ws_finish(c, code, "closed by owner");
		return;
	}
	if (c->state != WS_OPEN)
		return;
	if (wslay_event_queue_close(c->ctx, (uint16_t)code,
	    (const uint8_t *)reason, rlen) != 0) {
		ws_finish(c, code, "closed by owner");
		return;
	}
	ws_enter_closing(c, code, reason != NULL ? reason : "");
	ws_update_want(c);
}

/*
 * Release everything now. A close frame still queued (ws_close just before)
 * gets one non-blocking write attempt so the peer may see why; what does
 * not fit is dropped with the socket.
 */
static void
ws_release(struct ws_conn *c)
{
	ws_timer_stop(c);
	loop_timer_clear(c->loop, &c->reap_timer);
	if (c->ctx != NULL && c->st != NULL && c->state == WS_CLOSING &&
	    wslay_event_want_write(c->ctx))
		(void)wslay_event_send(c->ctx);
	stream_close(c->st);
	if (c->ctx != NULL)
		wslay_event_context_free(c->ctx);
	buf_free(&c->out);
	buf_free(&c->in);
	free(c->url);
	free(c);
}

static void
ws_reap(struct loop *l, void *arg)
{
	struct ws_conn	*c = arg;

	(void)l;
	c->reap_timer = 0;
	ws_release(c);
}

void
ws_mute(struct ws_conn *c)
{
	if (c == NULL || c->freed)
		return;
	c->freed = true;
	ws_timer_stop(c);
	if (c->st != NULL)
		stream_want(c->st, false, false);
}

void
ws_free(struct ws_conn *c)
{
	if (c == NULL || c->freed)
		return;
	ws_mute(c);
	c->reap_timer = loop_timer_add(c->loop, 0, ws_reap, c);
	if (c->reap_timer == 0)
		log_warnx("ws %s: cannot schedule release; leaked", c->url);
}

void
ws_destroy(struct ws_conn *c)
{
	if (c == NULL)
		return;
	ws_mute(c);
	ws_release(c);
}

enum ws_state
ws_state(const struct ws_conn *c)
{
	return c->state;
}

size_t
ws_queued_bytes(const struct ws_conn *c)
{
	return c->ctx != NULL ? wslay_event_get_queued_msg_length(c->ctx) : 0;
}

uint64_t
ws_pongs(const struct ws_conn *c)
{
	return c->pongs;
}

const char *
ws_url(const struct ws_conn *c)
{
	return c->url;
}
