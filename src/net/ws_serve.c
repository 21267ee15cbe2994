/*
 * ws_serve.c — owns the server end of a WebSocket connection (ws_serve.h):
 * a wslay server context in no-buffering mode (wslay parses every frame,
 * unmasks, validates UTF-8, answers pings and closes; this file assembles
 * the text messages itself, in one bounded buffer, so a frame's declared
 * length is judged before any of its payload is read), an output buffer
 * that batches wslay's frames into few send(2) calls, the connection's
 * state and its deadlines.
 *
 * It must never frame bytes itself, never close the socket (its owner
 * does, through libmicrohttpd), never call back after on_close, never
 * free the peer inside its own callbacks (on_close is told from a
 * zero-delay timer when the end is found inside one), and never read
 * from a peer while what it has queued for that peer is above the high
 * water mark.
 */
#include <sys/socket.h>

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <wslay/wslay.h>

#include "core/buf.h"
#include "core/limits.h"
#include "core/log.h"
#include "core/loop.h"
#include "net/ws.h"
#include "net/ws_handshake.h"
#include "net/ws_serve.h"

enum peer_state {
	PEER_OPEN,
	PEER_CLOSING,		/* our close queued or sent, waiting for the peer's */
	PEER_LINGER,		/* nothing more to say: read and drop until EOF */
	PEER_DONE,		/* on_close told (or about to be) */
};

struct ws_peer {
	struct loop		*loop;
	int			 fd;
	enum peer_state		 state;
	struct ws_peer_opts	 o;
	struct ws_peer_cbs	 cbs;
	void			*arg;
	wslay_event_context_ptr	 ctx;
	struct buf		 extra;		/* bytes read before the upgrade */
	struct buf		 msg;		/* the text message being assembled */
	size_t			 reserved;	/* of the input budget, for it */
	struct buf		 out;		/* frames not yet written */
	bool			 frame_data;	/* the frame being read is data */
	bool			 msg_binary;	/* the message being read is binary */
	bool			 discard;	/* too big: drop the rest */
	bool			 paused;	/* reading stopped: queue high */
	bool			 eof;
	int			 watched;	/* poll events asked for */
	uint64_t		 last_rx_ms;
	uint64_t		 timer;		/* ping, dead peer or linger */
	uint64_t		 done_timer;	/* on_close from the loop */
	uint64_t		 bytes_out;
	uint64_t		 progress_ms;	/* last write, or when the queue emptied */
	int			 end_code;
	char			 end_reason[WS_REASON_MAX];
	bool			 close_pending;	/* ours waits for the queue to empty */
	int			 peer_code;
	char			 peer_reason[WS_REASON_MAX];
};

static void	peer_pump(struct ws_peer *);

static const char *
peer_state_name(enum peer_state s)
{
	static const char *const names[] = { "open", "closing", "linger",
	    "done" };

	return names[s];
}

static void
peer_set_state(struct ws_peer *p, enum peer_state s)
{
	if (p->state == s)
		return;
	log_debug("ws peer %d: %s -> %s", p->fd, peer_state_name(p->state),
	    peer_state_name(s));
	p->state = s;
}

/* ---- the end ------------------------------------------------------------ */

static void
peer_tell_close(struct loop *l, void *arg)
{
	struct ws_peer	*p = arg;

	p->done_timer = 0;
	if (p->cbs.on_close != NULL)
		p->cbs.on_close(p, p->end_code, p->end_reason, p->arg);
}

/*
 * The connection is over: stop every watch and deadline, and tell the
 * owner from a later round (this may run inside wslay's callbacks or the
 * owner's own call).
 */
static void
peer_finish(struct ws_peer *p, int code, const char *reason)
{
	if (p->state == PEER_DONE)
		return;
	peer_set_state(p, PEER_DONE);
	p->end_code = code;
	snprintf(p->end_reason, sizeof(p->end_reason), "%s", reason);
	loop_timer_clear(p->loop, &p->timer);
	if (p->watched != -1)
		loop_fd_del(p->loop, p->fd);
	p->watched = -1;
	p->done_timer = loop_timer_add(p->loop, 0, peer_tell_close, p);
}

/* ---- wslay's callbacks: transport and message assembly ---------------- */

static ssize_t
peer_recv_cb(wslay_event_context_ptr ctx, uint8_t *data, size_t len,
    int flags, void *arg)
{
	struct ws_peer	*p = arg;
	ssize_t		 n;

	/*
	 * wslay reads for as long as bytes come: a peer that sends many
	 * messages without reading the answers is paused here, between two
	 * of them, as soon as what waits for it passes the high-water mark.
	 */
	if (ws_peer_queued(p) > p->o.send_high_water) {
		p->paused = true;
		wslay_event_set_error(ctx, WSLAY_ERR_WOULDBLOCK);
		return -1;
	}
	if (buf_avail(&p->extra) > 0) {
		n = (ssize_t)(len < buf_avail(&p->extra) ? len :
		    buf_avail(&p->extra));
		buf_read(&p->extra, data, (size_t)n);
		return n;
	}
	if (len > WS_PEER_READ_BYTES)
		len = WS_PEER_READ_BYTES;
	n = recv(p->fd, data, len, 0);
	if (n > 0) {
		p->last_rx_ms = loop_now_ms(p->loop);
		return n;
	}
	if (n == 0)
		p->eof = true;
	wslay_event_set_error(ctx, n == -1 && (errno == EAGAIN ||
	    errno == EWOULDBLOCK || errno == EINTR) ? WSLAY_ERR_WOULDBLOCK :
	    WSLAY_ERR_CALLBACK_FAILURE);
	return -1;
}

/* wslay's frames go to the output buffer; peer_flush writes it. */
static ssize_t
peer_send_cb(wslay_event_context_ptr ctx, const uint8_t *data, size_t len,
    int flags, void *arg)
{
	struct ws_peer	*p = arg;
	size_t		 room = p->out.max - p->out.len;

	if (room == 0) {
		wslay_event_set_error(ctx, WSLAY_ERR_WOULDBLOCK);
		return -1;
	}
	if (len > room)
		len = room;
	if (buf_append(&p->out, data, len) == -1) {
		wslay_event_set_error(ctx, WSLAY_ERR_CALLBACK_FAILURE);
		return -1;
	}
	return (ssize_t)len;
}

static int
peer_genmask_cb(wslay_event_context_ptr ctx, uint8_t *buf, size_t len,
    void *arg)
{
	memset(buf, 0, len);	/* a server never masks */
	return 0;
}

/*
 * A frame begins. Data frames count towards the message and take their
 * declared length from the shared input budget; one that would take the
 * message past its limit, or the budget past its own, ends the
 * connection before its payload is read.
 */
static void
peer_frame_start(wslay_event_context_ptr ctx,
    const struct wslay_event_on_frame_recv_start_arg *a, void *arg)
{
	struct ws_peer	*p = arg;
	char		 why[WS_REASON_MAX];

	p->frame_data = a->opcode == WSLAY_TEXT_FRAME ||
	    a->opcode == WSLAY_BINARY_FRAME || a->opcode == WSLAY_CONTINUATION_FRAME;
	if (!p->frame_data || p->discard)
		return;
	if (a->opcode != WSLAY_CONTINUATION_FRAME)
		p->msg_binary = a->opcode == WSLAY_BINARY_FRAME;
	if (a->payload_length > p->o.max_msg_bytes - p->msg.len) {
		p->discard = true;
		if (p->cbs.on_too_big != NULL && p->state == PEER_OPEN)
			p->cbs.on_too_big(p, p->msg.len + a->payload_length,
			    p->arg);
		snprintf(why, sizeof(why), "message over %zu bytes",
		    p->o.max_msg_bytes);
		wslay_event_shutdown_read(ctx);
		ws_peer_close(p, WS_CODE_TOO_BIG, why);
		return;
	}
	if (p->o.input == NULL)
		return;
	if (a->payload_length <= p->o.input->max - p->o.input->held) {
		p->o.input->held += a->payload_length;
		p->reserved += a->payload_length;
		return;
	}
	p->discard = true;
	log_info_rl("ws peer %d: a %llu-byte frame over the input budget",
	    p->fd, (unsigned long long)a->payload_length);
	wslay_event_shutdown_read(ctx);
	ws_peer_close(p, WS_CODE_TRY_AGAIN, "busy receiving other large "
	    "messages; try again later");
}

static void
peer_frame_chunk(wslay_event_context_ptr ctx,
    const struct wslay_event_on_frame_recv_chunk_arg *a, void *arg)
{
	struct ws_peer	*p = arg;

	if (!p->frame_data || p->discard || p->msg_binary)
		return;
	/* The start of the frame checked the whole of it against the limit. */
	if (buf_append(&p->msg, a->data, a->data_length) == -1) {
		p->discard = true;
		wslay_event_shutdown_read(ctx);
		ws_peer_close(p, WS_CODE_TOO_BIG, "out of memory");
	}
}

/* The message is delivered or abandoned: give its bytes back. */
static void
msg_release(struct ws_peer *p)
{
	if (p->o.input != NULL)
		p->o.input->held -= p->reserved;
	p->reserved = 0;
	if (p->msg.cap > WS_PEER_BUF_KEEP)
		buf_free(&p->msg);
	buf_reset(&p->msg);
}

static void
peer_msg_cb(wslay_event_context_ptr ctx,
    const struct wslay_event_on_msg_recv_arg *m, void *arg)
{
	struct ws_peer	*p = arg;

	switch (m->opcode) {
	case WSLAY_TEXT_FRAME:
		if (!p->discard && p->state == PEER_OPEN &&
		    p->cbs.on_message != NULL)
			p->cbs.on_message(p, (const char *)p->msg.data,
			    p->msg.len, p->arg);
		break;
	case WSLAY_BINARY_FRAME:
		log_debug("ws peer %d: binary message ignored", p->fd);
		break;
	case WSLAY_CONNECTION_CLOSE:
		p->peer_code = m->status_code != 0 ? m->status_code : 1005;
		if (m->msg_length > 2)
			ws_printable(p->peer_reason, sizeof(p->peer_reason),
			    (const char *)m->msg + 2, m->msg_length - 2);
		return;
	default:
		return;
	}
	msg_release(p);
	p->msg_binary = false;
}

/* ---- output -------------------------------------------------------------- */

/* Write what the output buffer holds. 0, or -1 when the socket failed. */
static int
peer_flush(struct ws_peer *p)
{
	ssize_t	n;

	while (p->out.len > 0) {
		n = send(p->fd, p->out.data, p->out.len, MSG_NOSIGNAL |
		    MSG_DONTWAIT);
		if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p->bytes_out += (uint64_t)n;
		p->progress_ms = loop_now_ms(p->loop);
		buf_consume(&p->out, (size_t)n);
	}
	buf_free(&p->out);	/* idle clients keep no buffer */
	buf_init(&p->out, WS_PEER_OUT_BYTES);
	return 0;
}

/*
 * Our close goes out after what was queued before it: wslay would send a
 * control frame ahead of queued messages (and nothing after it), so it is
 * given to wslay only once the messages are out.
 */
static void
peer_queue_close(struct ws_peer *p)
{
	size_t	rlen = strlen(p->end_reason);

	if (!p->close_pending || wslay_event_get_queued_msg_count(p->ctx) > 0)
		return;
	p->close_pending = false;
	if (wslay_event_queue_close(p->ctx, (uint16_t)p->end_code,
	    (const uint8_t *)p->end_reason, rlen) != 0)
		peer_finish(p, p->end_code, p->end_reason);
}

/* Let wslay fill the buffer and write it, until either has to wait. */
static int
peer_write(struct ws_peer *p)
{
	size_t	before;

	for (;;) {
		peer_queue_close(p);
		if (p->state == PEER_DONE)
			return 0;
		before = p->out.len;
		if (wslay_event_want_write(p->ctx) && p->out.len < p->out.max &&
		    wslay_event_send(p->ctx) != 0)
			return -1;
		if (peer_flush(p) == -1)
			return -1;
		if (p->out.len > 0)
			return 0;	/* the socket is full */
		if (p->close_pending && wslay_event_get_queued_msg_count(
		    p->ctx) == 0)
			continue;	/* the messages are out: now the close */
		if (!wslay_event_want_write(p->ctx) || p->out.len == before)
			return 0;
	}
}

size_t
ws_peer_queued(const struct ws_peer *p)
{
	return p->out.len + (p->ctx != NULL ?
	    wslay_event_get_queued_msg_length(p->ctx) : 0);
}

/* ---- the pump ------------------------------------------------------------ */

static void	peer_timer(struct loop *, void *);

/* Ask the loop for what the connection waits for. */
static void
peer_watch(struct ws_peer *p)
{
	int	ev = 0;
	bool	was = p->paused;

	if (p->state == PEER_DONE)
		return;
	p->paused = ws_peer_queued(p) > p->o.send_high_water;
	if (p->state == PEER_LINGER || (!p->paused &&
	    wslay_event_want_read(p->ctx)))
		ev |= POLLIN;
	if (p->out.len > 0 || (p->state != PEER_LINGER &&
	    wslay_event_want_write(p->ctx)))
		ev |= POLLOUT;
	if (ev != p->watched) {
		loop_fd_set_events(p->loop, p->fd, (short)ev);
		p->watched = ev;
	}
	if (was && !p->paused && p->state == PEER_OPEN &&
	    p->cbs.on_drain != NULL)
		p->cbs.on_drain(p, p->arg);
}

/* Our close frame is out and nothing more will be read: shut and drain. */
static void
peer_linger(struct ws_peer *p)
{
	peer_set_state(p, PEER_LINGER);
	shutdown(p->fd, SHUT_WR);
	loop_fd_set_events(p->loop, p->fd, POLLIN);
	p->watched = POLLIN;
	loop_timer_clear(p->loop, &p->timer);
	p->timer = loop_timer_add(p->loop, p->o.linger_ms, peer_timer, p);
}

/* Read and drop until the peer closes (PEER_LINGER). */
static void
peer_drain(struct ws_peer *p)
{
	char	junk[4096];
	ssize_t	n;

	while ((n = recv(p->fd, junk, sizeof(junk), 0)) > 0)
		;
	if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK &&
	    errno != EINTR))
		peer_finish(p, p->end_code, p->end_reason);
}

/*
 * After a pump: has the close handshake (or a failure) ended the
 * connection? Returns true when the state moved past CLOSING.
 */
static bool
peer_check_end(struct ws_peer *p)
{
	bool	sent = wslay_event_get_close_sent(p->ctx);
	bool	rcvd = wslay_event_get_close_received(p->ctx);

	if (p->eof && !rcvd) {
		peer_finish(p, sent ? p->end_code : WS_CODE_ABNORMAL,
		    sent ? p->end_reason : "connection lost: closed by peer "
		    "without a close frame");
		return true;
	}
	if (!sent || p->out.len > 0)
		return false;
	if (p->end_code == 0 && !rcvd)
		p->end_code = wslay_event_get_status_code_sent(p->ctx);
	if (rcvd) {
		peer_finish(p, p->end_code != 0 ? p->end_code : p->peer_code,
		    p->end_code != 0 ? p->end_reason : p->peer_reason);
		return true;
	}
	if (!wslay_event_get_read_enabled(p->ctx)) {
		peer_linger(p);
		return true;
	}
	return false;
}

static void
peer_pump(struct ws_peer *p)
{
	bool	was_paused;

	if (p->state == PEER_DONE)
		return;
	if (p->state == PEER_LINGER) {
		peer_drain(p);
		return;
	}
	do {
		was_paused = p->paused;
		if (!p->paused && wslay_event_want_read(p->ctx) &&
		    wslay_event_recv(p->ctx) != 0 && !p->eof) {
			peer_finish(p, WS_CODE_ABNORMAL, "connection lost: "
			    "receive failed");
			return;
		}
		if (p->state == PEER_DONE)
			return;
		if (p->state == PEER_OPEN && wslay_event_get_close_received(
		    p->ctx)) {
			peer_set_state(p, PEER_CLOSING);	/* wslay answers it */
		}
		if (p->state == PEER_OPEN && !wslay_event_get_read_enabled(
		    p->ctx)) {
			/* wslay refused a frame (protocol, UTF-8) and closes. */
			snprintf(p->end_reason, sizeof(p->end_reason),
			    "protocol error");
			peer_set_state(p, PEER_CLOSING);
		}
		if (peer_write(p) == -1) {
			peer_finish(p, WS_CODE_ABNORMAL, "connection lost: send "
			    "failed");
			return;
		}
		if (peer_check_end(p))
			return;
		peer_watch(p);
	} while (was_paused && !p->paused && p->state != PEER_DONE);
}

static void
peer_io(struct loop *l, int fd, short revents, void *arg)
{
	peer_pump(arg);
}

/* Ping a silent peer, drop a dead one, end a linger or a close wait. */
static void
peer_timer(struct loop *l, void *arg)
{
	struct ws_peer		*p = arg;
	struct wslay_event_msg	 ping = { WSLAY_PING, NULL, 0 };
	uint64_t		 now = loop_now_ms(l), quiet;

	p->timer = 0;
	if (p->state == PEER_LINGER || p->state == PEER_CLOSING) {
		peer_finish(p, p->end_code, p->end_reason[0] != '\0' ?
		    p->end_reason : "peer did not answer the close");
		return;
	}
	quiet = now - p->last_rx_ms;
	if (quiet >= p->o.dead_ms) {
		peer_finish(p, WS_CODE_ABNORMAL, "no frame from the peer in "
		    "time (dead connection)");
		return;
	}
	if (quiet >= p->o.ping_ms && wslay_event_queue_msg(p->ctx, &ping) == 0)
		peer_pump(p);
	if (p->state == PEER_OPEN)
		p->timer = loop_timer_add(l, quiet >= p->o.ping_ms ?
		    p->o.dead_ms - quiet : p->o.ping_ms - quiet, peer_timer, p);
}

/* ---- the owner's calls ---------------------------------------------------- */

struct ws_peer *
ws_peer_new(struct loop *loop, int fd, const void *extra, size_t extra_len,
    const struct ws_peer_opts *o, const struct ws_peer_cbs *cbs, void *arg)
{
	static const struct wslay_event_callbacks wcbs = {
		peer_recv_cb, peer_send_cb, peer_genmask_cb, peer_frame_start,
		peer_frame_chunk, NULL, peer_msg_cb
	};
	struct ws_peer	*p;

	if ((p = calloc(1, sizeof(*p))) == NULL)
		return NULL;
	p->loop = loop;
	p->fd = fd;
	p->o = *o;
	if (cbs != NULL)
		p->cbs = *cbs;
	p->arg = arg;
	p->watched = 0;
	p->last_rx_ms = loop_now_ms(loop);
	buf_init(&p->extra, extra_len);
	buf_init(&p->msg, o->max_msg_bytes);
	buf_init(&p->out, WS_PEER_OUT_BYTES);
	if (wslay_event_context_server_init(&p->ctx, &wcbs, p) != 0 ||
	    (extra_len > 0 && buf_append(&p->extra, extra, extra_len) == -1) ||
	    loop_fd_add(loop, fd, POLLIN, peer_io, p) == -1) {
		if (p->ctx != NULL)
			wslay_event_context_free(p->ctx);
		buf_free(&p->extra);
		free(p);
		return NULL;
	}
	wslay_event_config_set_no_buffering(p->ctx, 1);
	p->watched = POLLIN;
	p->timer = loop_timer_add(loop, o->ping_ms, peer_timer, p);
	if (extra_len > 0)
		peer_pump(p);
	return p;
}

void
ws_peer_free(struct ws_peer *p)
{
	if (p == NULL)
		return;
	loop_timer_clear(p->loop, &p->timer);
	loop_timer_clear(p->loop, &p->done_timer);
	if (p->watched != -1)
		loop_fd_del(p->loop, p->fd);
	wslay_event_context_free(p->ctx);
	buf_free(&p->extra);
	msg_release(p);
	buf_free(&p->msg);
	buf_free(&p->out);
	free(p);
}

int
ws_peer_send_text(struct ws_peer *p, const char *msg, size_t len)
{
	struct wslay_event_msg	m = { WSLAY_TEXT_FRAME, (const uint8_t *)msg,
				    len };
	size_t			q = ws_peer_queued(p);

	if (p->state != PEER_OPEN || q > p->o.send_queue_max ||
	    wslay_event_queue_msg(p->ctx, &m) != 0)
		return -1;
	if (q == 0)
		p->progress_ms = loop_now_ms(p->loop);	/* waiting from now */
	/* Written by the next pump: the loop sees POLLOUT at once. */
	if (!(p->watched & POLLOUT)) {
		loop_fd_set_events(p->loop, p->fd, (short)(p->watched | POLLOUT));
		p->watched |= POLLOUT;
	}
	if (q + len > p->o.send_high_water) {
		p->paused = true;
		return 1;
	}
	return 0;
}

void
ws_peer_close(struct ws_peer *p, int code, const char *reason)
{
	size_t	rlen = reason != NULL ? strnlen(reason, WS_REASON_MAX - 1) : 0;

	if (p->state != PEER_OPEN)
		return;
	p->end_code = code;
	snprintf(p->end_reason, sizeof(p->end_reason), "%.*s", (int)rlen,
	    reason != NULL ? reason : "");
	p->close_pending = true;
	peer_set_state(p, PEER_CLOSING);
	loop_timer_clear(p->loop, &p->timer);
	p->timer = loop_timer_add(p->loop, p->o.linger_ms, peer_timer, p);
	if (p->watched != -1 && !(p->watched & POLLOUT)) {
		loop_fd_set_events(p->loop, p->fd, (short)(p->watched | POLLOUT));
		p->watched |= POLLOUT;
	}
}

void
ws_peer_abort(struct ws_peer *p, int code, const char *reason)
{
	peer_finish(p, code, reason != NULL ? reason : "");
}

uint64_t
ws_peer_bytes_out(const struct ws_peer *p)
{
	return p->bytes_out;
}

int
ws_peer_open(const struct ws_peer *p)
{
	return p->state == PEER_OPEN;
}

uint64_t
ws_peer_stalled_ms(const struct ws_peer *p, uint64_t now_ms)
{
	if (ws_peer_queued(p) == 0 || now_ms < p->progress_ms)
		return 0;
	return now_ms - p->progress_ms;
}
