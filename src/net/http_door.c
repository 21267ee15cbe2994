/*
 * http_door.c — the listening socket and the connections waiting at it
 * for a whole request head (http_door.h). It owns those connections
 * until it hands one on; it never reads a byte that the server will need
 * (heads are peeked, not read) and never keeps one past its deadline.
 *
 * A connection is in one of two states: READING (its head is not whole
 * yet) and LINGERING (a refusal was written and our side shut down; what
 * the peer still sends is read and dropped until it closes or
 * HTTP_API_LINGER_MS pass, so the peer reads the refusal instead of a
 * reset). The list runs oldest first; eviction takes from its head.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/limits.h"
#include "core/log.h"
#include "core/loop.h"
#include "net/http_door.h"
#include "net/http_screen.h"

enum door_state {
	DOOR_READING,
	DOOR_LINGERING,
};

struct door_conn {
	struct http_door	*door;
	struct door_conn	*prev, *next;
	int			 fd;
	enum door_state		 state;
	uint64_t		 accepted_ms;
	uint64_t		 deadline_ms;
	size_t			 seen;		/* bytes of head seen so far */
	struct sockaddr_storage	 sa;
	socklen_t		 salen;
};

struct http_door {
	struct loop		*loop;
	struct http_door_opts	 o;
	int			 lfd;
	uint16_t		 port;
	struct door_conn	*head, *tail;	/* oldest first */
	unsigned		 n;
	uint64_t		 sweep;		/* timer id, 0 if none */
	uint64_t		 paused;	/* accept resumes by this timer */
	struct http_door_stats	 stats;
};

/* One scratch buffer for every peek: the loop runs one callback at a time. */
static char	door_scratch[HTTP_API_MAX_HEADER_BYTES + 1];

static void	door_sweep(struct loop *, void *);

/* ---- the list ---------------------------------------------------------- */

static void
conn_unlink(struct http_door *d, struct door_conn *c)
{
	if (c->prev != NULL)
		c->prev->next = c->next;
	else
		d->head = c->next;
	if (c->next != NULL)
		c->next->prev = c->prev;
	else
		d->tail = c->prev;
	d->n--;
}

/* Stop watching c and free it; close its socket unless handed on. */
static void
conn_drop(struct http_door *d, struct door_conn *c, int close_fd)
{
	loop_fd_del(d->loop, c->fd);
	if (close_fd)
		close(c->fd);
	conn_unlink(d, c);
	free(c);
}

/*
 * The connection to push out for a newcomer: the oldest that has sent
 * nothing at all, else the oldest still trickling its head, else one
 * lingering after a refusal; connections younger than evict_min_age_ms
 * are left alone. NULL if none may go.
 */
static struct door_conn *
eviction_candidate(struct http_door *d)
{
	struct door_conn	*c, *trickling = NULL, *lingering = NULL;
	uint64_t		 now = loop_now_ms(d->loop);

	for (c = d->head; c != NULL; c = c->next) {
		if (c->state != DOOR_READING) {
			if (lingering == NULL)
				lingering = c;
			continue;
		}
		if (now - c->accepted_ms < d->o.evict_min_age_ms)
			continue;	/* too young to push out */
		if (c->seen == 0)
			return c;
		if (trickling == NULL)
			trickling = c;
	}
	return trickling != NULL ? trickling : lingering;
}

/* ---- refusing ---------------------------------------------------------- */

/*
 * Write a small JSON refusal (it fits any socket buffer; what does not go
 * out at once is lost with the connection), shut our side and linger.
 */
static void
conn_refuse(struct http_door *d, struct door_conn *c, unsigned status,
    const char *reason)
{
	char	msg[512];
	int	n;

	n = snprintf(msg, sizeof(msg), "HTTP/1.1 %u %s\r\nContent-Type: "
	    "application/json\r\nCache-Control: no-store\r\nConnection: close"
	    "\r\nContent-Length: %zu\r\n\r\n{\"error\":\"%s\"}", status,
	    http_screen_phrase(status), strlen(reason) + 12, reason);
	if (n > 0 && (size_t)n < sizeof(msg))
		(void)send(c->fd, msg, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT);
	shutdown(c->fd, SHUT_WR);
	c->state = DOOR_LINGERING;
	c->deadline_ms = loop_now_ms(d->loop) + HTTP_API_LINGER_MS;
	d->stats.refused++;
}

/*
 * At the limit: tell a newcomer why in one small 503 (it fits any socket
 * buffer), read what it already sent so the close is not a reset, close.
 */
static void
turn_away(struct http_door *d, int fd)
{
	char	msg[512];
	int	n;

	n = snprintf(msg, sizeof(msg), "HTTP/1.1 503 Service Unavailable\r\n"
	    "Content-Type: application/json\r\nCache-Control: no-store\r\n"
	    "Connection: close\r\nRetry-After: 5\r\nContent-Length: %zu\r\n"
	    "\r\n{\"error\":\"%s\"}", strlen(d->o.full_reason) + 12,
	    d->o.full_reason);
	if (n > 0 && (size_t)n < sizeof(msg))
		(void)send(fd, msg, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT);
	shutdown(fd, SHUT_WR);
	while (recv(fd, door_scratch, sizeof(door_scratch), MSG_DONTWAIT) > 0)
		;
	close(fd);
}

/* Read and drop what a lingering peer still sends; close at its EOF. */
static void
conn_drain(struct http_door *d, struct door_conn *c)
{
	ssize_t	n;

	while ((n = recv(c->fd, door_scratch, sizeof(door_scratch), 0)) > 0)
		;
	if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK &&
	    errno != EINTR))
		conn_drop(d, c, 1);
}

/* ---- reading a head ---------------------------------------------------- */

/*
 * Hand c to the server. The watcher is removed first and never again:
 * the server may watch the same descriptor from inside the handoff (the
 * relay endpoint's WebSocket clients do).
 */
static void
conn_pass(struct http_door *d, struct door_conn *c)
{
	struct sockaddr_storage	sa = c->sa;
	socklen_t		salen = c->salen;
	uint64_t		accepted_ms = c->accepted_ms;
	int			fd = c->fd;

	loop_fd_del(d->loop, fd);
	conn_unlink(d, c);
	free(c);
	if (d->o.handoff(d->o.arg, fd, (struct sockaddr *)&sa, salen,
	    accepted_ms) == 0) {
		d->stats.passed++;
		return;
	}
	close(fd);
}

static void
conn_peek(struct http_door *d, struct door_conn *c)
{
	struct http_screen	s;
	ssize_t			n;

	n = recv(c->fd, door_scratch, d->o.max_head + 1, MSG_PEEK);
	if (n == 0 || (n == -1 && errno != EAGAIN && errno != EWOULDBLOCK &&
	    errno != EINTR)) {
		conn_drop(d, c, 1);	/* gone before its head was whole */
		return;
	}
	if (n < 0)
		return;
	c->seen = (size_t)n;
	switch (http_screen(door_scratch, (size_t)n, d->o.max_head,
	    d->o.max_body, &s)) {
	case HTTP_SCREEN_MORE:
		return;
	case HTTP_SCREEN_PASS:
		conn_pass(d, c);
		return;
	case HTTP_SCREEN_REFUSE:
		log_debug("http: %u %s", s.status, s.reason);
		conn_refuse(d, c, s.status, s.reason);
		return;
	}
}

static void
on_conn(struct loop *loop, int fd, short revents, void *arg)
{
	struct door_conn	*c = arg;

	if (c->state == DOOR_LINGERING)
		conn_drain(c->door, c);
	else
		conn_peek(c->door, c);
}

/* ---- accepting --------------------------------------------------------- */

/*
 * Look at every connection still reading before one is pushed out: a
 * head that arrived whole since the last wake-up is served, not evicted
 * (under a flood of new connections the loop may accept many before it
 * reads any).
 */
static void
peek_all(struct http_door *d)
{
	struct door_conn	*c, *next;

	for (c = d->head; c != NULL; c = next) {
		next = c->next;
		if (c->state == DOOR_READING)
			conn_peek(d, c);
	}
}

/*
 * Make room for one more connection at the limit: serve any head already
 * whole, then push out the connection eviction_candidate() names, else
 * ask the server to shed one. 0 or -1 (full).
 */
static int
make_room(struct http_door *d)
{
	struct door_conn	*c;

	if (d->n + d->o.held(d->o.arg) < d->o.max_conns)
		return 0;
	peek_all(d);
	if (d->n + d->o.held(d->o.arg) < d->o.max_conns)
		return 0;
	if ((c = eviction_candidate(d)) != NULL) {
		d->stats.evicted++;
		conn_drop(d, c, 1);
		return 0;
	}
	return d->o.shed(d->o.arg);
}

static void
sweep_arm(struct http_door *d)
{
	if (d->sweep == 0 && d->head != NULL)
		d->sweep = loop_timer_add(d->loop, HTTP_API_SWEEP_MS, door_sweep,
		    d);
}

static void
conn_new(struct http_door *d, int fd, const struct sockaddr_storage *sa,
    socklen_t salen)
{
	struct door_conn	*c;

	if ((c = calloc(1, sizeof(*c))) == NULL ||
	    loop_fd_add(d->loop, fd, POLLIN, on_conn, c) == -1) {
		free(c);
		close(fd);
		return;
	}
	c->door = d;
	c->fd = fd;
	c->accepted_ms = loop_now_ms(d->loop);
	c->deadline_ms = c->accepted_ms + HTTP_API_HEAD_DEADLINE_MS;
	c->sa = *sa;
	c->salen = salen;
	c->prev = d->tail;
	if (d->tail != NULL)
		d->tail->next = c;
	else
		d->head = c;
	d->tail = c;
	d->n++;
	d->stats.accepted++;
	sweep_arm(d);
}

static void	on_listen(struct loop *, int, short, void *);

static void
door_resume(struct loop *loop, void *arg)
{
	struct http_door	*d = arg;

	d->paused = 0;
	loop_fd_set_events(loop, d->lfd, POLLIN);
}

/*
 * Out of descriptors: the listening socket stays readable, so stop
 * watching it for a moment instead of spinning on accept.
 */
static void
door_pause(struct http_door *d)
{
	log_warnx_rl("http: accept: out of file descriptors; pausing %d ms",
	    HTTP_API_ACCEPT_PAUSE_MS);
	if (d->paused != 0)
		return;
	loop_fd_set_events(d->loop, d->lfd, 0);
	d->paused = loop_timer_add(d->loop, HTTP_API_ACCEPT_PAUSE_MS,
	    door_resume, d);
}

static void
on_listen(struct loop *loop, int lfd, short revents, void *arg)
{
	struct http_door	*d = arg;
	struct sockaddr_storage	 sa;
	socklen_t		 salen;
	int			 fd, i;

	for (i = 0; i < HTTP_API_ACCEPT_BURST; i++) {
		salen = sizeof(sa);
		fd = accept(lfd, (struct sockaddr *)&sa, &salen);
		if (fd == -1) {
			if (errno == EMFILE || errno == ENFILE)
				door_pause(d);
			else if (errno != EAGAIN && errno != EWOULDBLOCK &&
			    errno != EINTR && errno != ECONNABORTED)
				log_warnx_rl("http: accept: %s", strerror(errno));
			return;
		}
		if (fcntl(fd, F_SETFL, O_NONBLOCK) == -1 ||
		    fcntl(fd, F_SETFD, FD_CLOEXEC) == -1) {
			close(fd);
			continue;
		}
		if (make_room(d) == -1) {
			d->stats.turned_away++;
			if (d->o.full_reason != NULL)
				turn_away(d, fd);
			else
				close(fd);
			continue;
		}
		conn_new(d, fd, &sa, salen);
	}
}

/* Close every connection past its deadline; re-arm while any remain. */
static void
door_sweep(struct loop *loop, void *arg)
{
	struct http_door	*d = arg;
	struct door_conn	*c, *next;
	uint64_t		 now = loop_now_ms(loop);

	d->sweep = 0;
	for (c = d->head; c != NULL; c = next) {
		next = c->next;
		if (now < c->deadline_ms)
			continue;
		if (c->state == DOOR_READING)
			d->stats.timed_out++;
		conn_drop(d, c, 1);
	}
	sweep_arm(d);
}

/* ---- start and stop ---------------------------------------------------- */

static int
listen_socket(const struct addrinfo *ai, char *err, size_t errlen)
{
	int	fd, one = 1;

	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0);
	if (fd == -1) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return -1;
	}
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) == -1 ||
	    bind(fd, ai->ai_addr, ai->ai_addrlen) == -1 ||
	    listen(fd, 128) == -1) {
		snprintf(err, errlen, "%s", strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

static uint16_t
bound_port(int fd)
{
	struct sockaddr_storage	sa;
	socklen_t		len = sizeof(sa);

	if (getsockname(fd, (struct sockaddr *)&sa, &len) == -1)
		return 0;
	if (sa.ss_family == AF_INET6)
		return ntohs(((struct sockaddr_in6 *)&sa)->sin6_port);
	return ntohs(((struct sockaddr_in *)&sa)->sin_port);
}

struct http_door *
http_door_open(struct loop *loop, const struct addrinfo *ai,
    const struct http_door_opts *o, char *err, size_t errlen)
{
	struct http_door	*d;

	if (o->max_head > HTTP_API_MAX_HEADER_BYTES) {
		snprintf(err, errlen, "head limit over %d bytes",
		    HTTP_API_MAX_HEADER_BYTES);
		return NULL;
	}
	if ((d = calloc(1, sizeof(*d))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	d->loop = loop;
	d->o = *o;
	if ((d->lfd = listen_socket(ai, err, errlen)) == -1) {
		free(d);
		return NULL;
	}
	d->port = bound_port(d->lfd);
	if (loop_fd_add(loop, d->lfd, POLLIN, on_listen, d) == -1) {
		snprintf(err, errlen, "cannot watch the listening socket");
		close(d->lfd);
		free(d);
		return NULL;
	}
	return d;
}

void
http_door_free(struct http_door *d)
{
	if (d == NULL)
		return;
	while (d->head != NULL)
		conn_drop(d, d->head, 1);
	loop_timer_clear(d->loop, &d->sweep);
	loop_timer_clear(d->loop, &d->paused);
	loop_fd_del(d->loop, d->lfd);
	close(d->lfd);
	free(d);
}

uint16_t
http_door_port(const struct http_door *d)
{
	return d->port;
}

unsigned
http_door_waiting(const struct http_door *d)
{
	return d->n;
}

const struct http_door_stats *
http_door_stats(const struct http_door *d)
{
	return &d->stats;
}

/* ---- the address and the port file ------------------------------------ */

struct addrinfo *
http_door_resolve(const char *listen, const char *key, char *err,
    size_t errlen)
{
	struct addrinfo	 hints, *res = NULL;
	char		 host[256];
	const char	*colon = strrchr(listen, ':');
	size_t		 hl;
	int		 e;

	if (colon == NULL || (hl = (size_t)(colon - listen)) >= sizeof(host)) {
		snprintf(err, errlen, "%s '%s': want host:port", key, listen);
		return NULL;
	}
	memcpy(host, listen, hl);
	host[hl] = '\0';
	if (hl >= 2 && host[0] == '[' && host[hl - 1] == ']') {
		memmove(host, host + 1, hl - 2);
		host[hl - 2] = '\0';
	}
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
	if ((e = getaddrinfo(host[0] ? host : NULL, colon + 1, &hints,
	    &res)) != 0) {
		snprintf(err, errlen, "%s '%s': %s", key, listen,
		    gai_strerror(e));
		return NULL;
	}
	return res;
}

bool
http_door_loopback(const struct sockaddr *sa)
{
	const struct sockaddr_in6	*s6 = (const struct sockaddr_in6 *)sa;
	const uint8_t			*b = s6->sin6_addr.s6_addr;
	static const uint8_t		 v4mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0,
					    0, 0, 0xff, 0xff };

	if (sa->sa_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr)
		    >> 24) == 127;
	if (sa->sa_family != AF_INET6)
		return false;
	if (IN6_IS_ADDR_LOOPBACK(&s6->sin6_addr))
		return true;
	return memcmp(b, v4mapped, 12) == 0 && b[12] == 127;
}

void
http_door_port_file(const char *path, uint16_t port, const char *who)
{
	char	tmp[PATH_MAX + 8];
	FILE	*f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	if ((f = fopen(tmp, "w")) == NULL) {
		log_warn("%s: %s", who, tmp);
		return;
	}
	fprintf(f, "%u\n", port);
	if (fclose(f) != 0 || rename(tmp, path) == -1)
		log_warn("%s: %s", who, path);
}
