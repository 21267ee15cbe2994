/*
 * tcp.c — owns outgoing TCP connects: one non-blocking socket at a time,
 * walking the resolved addresses in order (so "localhost" works whether ::1
 * or 127.0.0.1 answers), each attempt bounded by a loop timer. It must never
 * block, never call poll, and never call its requester from inside
 * tcp_connect(): the first attempt starts from a zero-delay timer.
 * A connected socket is handed over and forgotten; tcp.c never reads it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/limits.h"
#include "core/log.h"
#include "core/loop.h"
#include "net/tcp.h"

struct tcp_connect {
	struct loop		*loop;
	struct dns_addrs	 addrs;
	size_t			 next;		/* index of the next address */
	int			 fd;		/* attempt in progress, or -1 */
	uint32_t		 attempt_ms;
	uint64_t		 timer;
	tcp_cb			 cb;
	void			*arg;
	char			 err[160];	/* why the last attempt failed */
};

static void	tcp_try_next(struct loop *, void *);

void
tcp_addr_str(const struct sockaddr *sa, char *out, size_t outlen)
{
	char	 h[INET6_ADDRSTRLEN];

	if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const void *)sa;

		inet_ntop(AF_INET6, &s6->sin6_addr, h, sizeof(h));
		snprintf(out, outlen, "[%s]:%u", h, ntohs(s6->sin6_port));
	} else if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *s4 = (const void *)sa;

		inet_ntop(AF_INET, &s4->sin_addr, h, sizeof(h));
		snprintf(out, outlen, "%s:%u", h, ntohs(s4->sin_port));
	} else
		snprintf(out, outlen, "?");
}

int
tcp_tune(int fd)
{
	int	 one = 1, idle = TCP_KEEPALIVE_IDLE_S;
	int	 intvl = TCP_KEEPALIVE_INTVL_S;
	int	 cnt = TCP_KEEPALIVE_PROBES;

	if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) == -1 ||
	    setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one)) == -1 ||
	    setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle)) == -1 ||
	    setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl)) == -1 ||
	    setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt)) == -1) {
		log_warn("tcp: setsockopt");
		return -1;
	}
	return 0;
}

static void
tcp_fail_attempt(struct tcp_connect *c, const char *what, int e)
{
	char	 a[64];

	tcp_addr_str((const struct sockaddr *)&c->addrs.addr[c->next - 1], a,
	    sizeof(a));
	snprintf(c->err, sizeof(c->err), "%s %s: %s", what, a, strerror(e));
	if (c->fd != -1) {
		loop_fd_del(c->loop, c->fd);
		close(c->fd);
		c->fd = -1;
	}
	loop_timer_clear(c->loop, &c->timer);
	tcp_try_next(c->loop, c);
}

static void
tcp_done(struct tcp_connect *c, int fd)
{
	tcp_cb	 cb = c->cb;
	void	*arg = c->arg;
	char	 err[sizeof(c->err)];

	memcpy(err, c->err, sizeof(err));
	loop_timer_clear(c->loop, &c->timer);
	free(c);
	cb(fd, fd == -1 ? err : NULL, arg);
}

static void
tcp_on_timeout(struct loop *l, void *arg)
{
	struct tcp_connect	*c = arg;

	c->timer = 0;
	tcp_fail_attempt(c, "connect timeout to", ETIMEDOUT);
}

static void
tcp_on_writable(struct loop *l, int fd, short revents, void *arg)
{
	struct tcp_connect	*c = arg;
	int			 e = 0;
	socklen_t		 elen = sizeof(e);

	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &elen) == -1)
		e = errno;
	if (e == 0 && (revents & (POLLERR | POLLHUP)) && !(revents & POLLOUT))
		e = ECONNREFUSED;
	if (e != 0) {
		tcp_fail_attempt(c, "cannot connect to", e);
		return;
	}
	loop_fd_del(l, fd);
	c->fd = -1;
	tcp_tune(fd);
	tcp_done(c, fd);
}

/* Start the attempt at c->next; on immediate failure, move on. */
static void
tcp_try_next(struct loop *l, void *arg)
{
	struct tcp_connect	*c = arg;
	const struct sockaddr	*sa;
	int			 fd;

	c->timer = 0;
	if (c->next >= c->addrs.n) {
		if (c->err[0] == '\0')
			snprintf(c->err, sizeof(c->err), "no address to connect to");
		tcp_done(c, -1);
		return;
	}
	sa = (const struct sockaddr *)&c->addrs.addr[c->next++];
	fd = socket(sa->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd == -1) {
		tcp_fail_attempt(c, "socket for", errno);
		return;
	}
	c->fd = fd;
	if (connect(fd, sa, c->addrs.len[c->next - 1]) == -1 &&
	    errno != EINPROGRESS) {
		tcp_fail_attempt(c, "cannot connect to", errno);
		return;
	}
	if (loop_fd_add(l, fd, POLLOUT, tcp_on_writable, c) == -1) {
		tcp_fail_attempt(c, "cannot watch socket for", EMFILE);
		return;
	}
	if ((c->timer = loop_timer_add(l, c->attempt_ms, tcp_on_timeout, c)) == 0)
		tcp_fail_attempt(c, "cannot arm timer for", ENOMEM);
}

struct tcp_connect *
tcp_connect(struct loop *l, const struct dns_addrs *addrs, uint32_t attempt_ms,
    tcp_cb cb, void *arg)
{
	struct tcp_connect	*c;

	if ((c = calloc(1, sizeof(*c))) == NULL) {
		log_warn("tcp: calloc");
		return NULL;
	}
	c->loop = l;
	c->addrs = *addrs;
	c->fd = -1;
	c->attempt_ms = attempt_ms != 0 ? attempt_ms : TCP_CONNECT_TIMEOUT_MS;
	c->cb = cb;
	c->arg = arg;
	if ((c->timer = loop_timer_add(l, 0, tcp_try_next, c)) == 0) {
		free(c);
		return NULL;
	}
	return c;
}

void
tcp_connect_cancel(struct tcp_connect *c)
{
	if (c == NULL)
		return;
	if (c->fd != -1) {
		loop_fd_del(c->loop, c->fd);
		close(c->fd);
	}
	loop_timer_clear(c->loop, &c->timer);
	free(c);
}
