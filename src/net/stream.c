/*
 * stream.c — owns the opening sequence of an outgoing connection (resolve,
 * connect, TLS handshake) and the plain-or-TLS byte I/O after it. It owns
 * the socket and closes it. It must never block, never call poll, and
 * never touch itself after calling one of its owner's callbacks (the owner
 * may close it there).
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/limits.h"
#include "core/log.h"
#include "core/loop.h"
#include "net/dns.h"
#include "net/stream.h"
#include "net/tcp.h"
#include "net/tls.h"
#include "net/url.h"

struct stream {
	struct loop		*loop;
	enum stream_state	 state;
	struct stream_cbs	 cbs;
	void			*arg;
	struct dns_req		*dreq;
	struct tcp_connect	*tconn;
	struct tls_ctx		*tctx;		/* NULL for plain streams */
	struct tls_conn		*tls;
	int			 fd;
	uint32_t		 attempt_ms;
	bool			 want_rd, want_wr;	/* the owner */
	bool			 tls_rd, tls_wr;	/* TLS needs */
	char			 host[URL_MAX_HOST + 1];
	uint8_t			 ip[16];
	size_t			 iplen;
	char			 reason[TLS_REASON_MAX + 64];
};

static void
stream_update_events(struct stream *s)
{
	short	 ev = 0;

	if (s->fd == -1)
		return;
	if (s->state == STREAM_HANDSHAKE) {
		ev = s->tls_wr ? POLLOUT : POLLIN;
	} else {
		if (s->want_rd || s->tls_rd)
			ev |= POLLIN;
		if (s->want_wr || s->tls_wr)
			ev |= POLLOUT;
	}
	loop_fd_set_events(s->loop, s->fd, ev);
}

/* A later opening step: record it and tell the owner (who keeps s). */
static void
stream_stage(struct stream *s, enum stream_state st)
{
	s->state = st;
	if (s->cbs.on_stage != NULL)
		s->cbs.on_stage(s->arg, st);
}

/* Last thing a caller does: the owner may close s inside on_error. */
static void
stream_fail(struct stream *s, const char *reason)
{
	/* A long reason (a peer's text) is cut to what status shows. */
	snprintf(s->reason, sizeof(s->reason), "%.*s",
	    (int)sizeof(s->reason) - 1, reason);
	s->state = STREAM_FAILED;
	if (s->fd != -1)
		loop_fd_set_events(s->loop, s->fd, 0);
	s->cbs.on_error(s->arg, s->reason);
}

static void
stream_handshake(struct stream *s)
{
	int	 rc;

	rc = tls_handshake(s->tls);
	if (rc == TLS_WANT_READ || rc == TLS_WANT_WRITE) {
		s->tls_wr = rc == TLS_WANT_WRITE;
		stream_update_events(s);
		return;
	}
	if (rc == -1) {
		stream_fail(s, tls_reason(s->tls));
		return;
	}
	s->tls_wr = false;
	s->state = STREAM_READY;
	stream_update_events(s);
	s->cbs.on_ready(s->arg);
}

static void
stream_on_fd(struct loop *l, int fd, short revents, void *arg)
{
	struct stream	*s = arg;

	if (s->state == STREAM_HANDSHAKE)
		stream_handshake(s);
	else if (s->state == STREAM_READY)
		s->cbs.on_io(s->arg, revents);
}

static void
stream_on_connected(int fd, const char *err, void *arg)
{
	struct stream	*s = arg;

	s->tconn = NULL;
	if (fd == -1) {
		stream_fail(s, err);
		return;
	}
	s->fd = fd;
	if (loop_fd_add(s->loop, fd, 0, stream_on_fd, s) == -1) {
		stream_fail(s, "too many open connections");
		return;
	}
	if (s->tctx == NULL) {
		s->state = STREAM_READY;
		stream_update_events(s);
		s->cbs.on_ready(s->arg);
		return;
	}
	s->tls = tls_conn_new(s->tctx, fd, s->host, s->iplen ? s->ip : NULL,
	    s->iplen);
	if (s->tls == NULL) {
		stream_fail(s, "cannot start TLS session");
		return;
	}
	stream_stage(s, STREAM_HANDSHAKE);
	stream_handshake(s);
}

/* Start TCP; the caller has set (or announced) STREAM_CONNECTING. */
static int
stream_connect(struct stream *s, const struct dns_addrs *addrs)
{
	s->tconn = tcp_connect(s->loop, addrs, s->attempt_ms,
	    stream_on_connected, s);
	return s->tconn == NULL ? -1 : 0;
}

static void
stream_on_resolved(const struct dns_addrs *addrs, const char *err, void *arg)
{
	struct stream	*s = arg;
	char		 e[URL_MAX_HOST + 160];

	s->dreq = NULL;
	if (addrs == NULL) {
		snprintf(e, sizeof(e), "%s: %s", s->host, err);
		stream_fail(s, e);
		return;
	}
	stream_stage(s, STREAM_CONNECTING);
	if (stream_connect(s, addrs) == -1)
		stream_fail(s, "out of memory");
}

/* The address list of an IP literal: no resolver involved. */
static void
stream_literal(const struct url *u, struct dns_addrs *a)
{
	memset(a, 0, sizeof(*a));
	a->n = 1;
	if (u->host_kind == URL_HOST_IPV4) {
		struct sockaddr_in *sin = (void *)&a->addr[0];

		sin->sin_family = AF_INET;
		sin->sin_port = htons(u->port);
		memcpy(&sin->sin_addr, u->addr, 4);
		a->len[0] = sizeof(*sin);
	} else {
		struct sockaddr_in6 *sin6 = (void *)&a->addr[0];

		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(u->port);
		memcpy(&sin6->sin6_addr, u->addr, 16);
		a->len[0] = sizeof(*sin6);
	}
}

struct stream *
stream_open(struct loop *l, const struct url *u, const struct stream_opts *o,
    const struct stream_cbs *cbs, void *arg, char *err, size_t errlen)
{
	struct stream		*s;
	struct dns_addrs	 a;

	if (u->host_kind == URL_HOST_NAME && o->dns == NULL) {
		snprintf(err, errlen, "no resolver for host name %s", u->host);
		return NULL;
	}
	if ((s = calloc(1, sizeof(*s))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	s->loop = l;
	s->cbs = *cbs;
	s->arg = arg;
	s->fd = -1;
	s->attempt_ms = o->attempt_ms;
	snprintf(s->host, sizeof(s->host), "%s", u->host);
	if (u->host_kind != URL_HOST_NAME) {
		s->iplen = u->host_kind == URL_HOST_IPV4 ? 4 : 16;
		memcpy(s->ip, u->addr, s->iplen);
	}
	if (u->tls && (s->tctx = tls_ctx_get(o->ca_file, err, errlen)) == NULL)
		goto fail;
	if (u->host_kind == URL_HOST_NAME) {
		s->state = STREAM_RESOLVING;
		s->dreq = dns_resolve(o->dns, u->host, u->port,
		    stream_on_resolved, s);
		if (s->dreq == NULL)
			goto nomem;
	} else {
		stream_literal(u, &a);
		s->state = STREAM_CONNECTING;	/* no callback inside open */
		if (stream_connect(s, &a) == -1)
			goto nomem;
	}
	return s;
nomem:
	snprintf(err, errlen, "out of memory");
fail:
	tls_ctx_put(s->tctx);
	free(s);
	return NULL;
}

void
stream_close(struct stream *s)
{
	if (s == NULL)
		return;
	dns_cancel(s->dreq);
	tcp_connect_cancel(s->tconn);
	if (s->tls != NULL) {
		if (s->state == STREAM_READY)
			tls_close_notify(s->tls);
		tls_conn_free(s->tls);
	}
	tls_ctx_put(s->tctx);
	if (s->fd != -1) {
		loop_fd_del(s->loop, s->fd);
		close(s->fd);
	}
	free(s);
}

ssize_t
stream_read(struct stream *s, void *buf, size_t len)
{
	ssize_t	 n;

	if (s->state != STREAM_READY)
		return -1;
	if (s->tls == NULL) {
		n = recv(s->fd, buf, len, 0);
		if (n >= 0)
			return n;
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
			return STREAM_AGAIN;
		snprintf(s->reason, sizeof(s->reason), "read: %s",
		    strerror(errno));
		return -1;
	}
	n = tls_read(s->tls, buf, len);
	s->tls_rd = false;
	s->tls_wr = n == TLS_WANT_WRITE;
	if (n == TLS_WANT_READ || n == TLS_WANT_WRITE) {
		stream_update_events(s);
		return STREAM_AGAIN;
	}
	if (n == -1)
		snprintf(s->reason, sizeof(s->reason), "%s", tls_reason(s->tls));
	return n;
}

ssize_t
stream_write(struct stream *s, const void *buf, size_t len)
{
	ssize_t	 n;

	if (s->state != STREAM_READY)
		return -1;
	if (s->tls == NULL) {
		n = send(s->fd, buf, len, MSG_NOSIGNAL);
		if (n >= 0)
			return n;
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
			return STREAM_AGAIN;
		snprintf(s->reason, sizeof(s->reason), "write: %s",
		    strerror(errno));
		return -1;
	}
	n = tls_write(s->tls, buf, len);
	s->tls_rd = n == TLS_WANT_READ;
	if (n == TLS_WANT_READ || n == TLS_WANT_WRITE) {
		stream_update_events(s);
		return STREAM_AGAIN;
	}
	if (n == -1)
		snprintf(s->reason, sizeof(s->reason), "%s", tls_reason(s->tls));
	return n;
}

void
stream_want(struct stream *s, bool rd, bool wr)
{
	s->want_rd = rd;
	s->want_wr = wr;
	if (s->state == STREAM_READY)
		stream_update_events(s);
}

size_t
stream_pending(const struct stream *s)
{
	return s->tls != NULL && s->state == STREAM_READY ?
	    tls_pending(s->tls) : 0;
}

enum stream_state
stream_state(const struct stream *s)
{
	return s->state;
}

const char *
stream_reason(const struct stream *s)
{
	return s->reason;
}
