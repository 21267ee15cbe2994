/*
 * dns.c — owns the c-ares channel of a loop: its sockets (registered with
 * loop_fd_* from c-ares' socket-state callback), its deadline (one loop
 * timer re-armed from ares_timeout after every call into c-ares) and the
 * requests in flight. It must never block, never call poll, and never run a
 * requester's callback from inside c-ares or from inside dns_resolve():
 * answers are parked and handed over from a zero-delay loop timer, so a
 * requester may cancel, resolve again or free itself from its callback.
 *
 * A request outlives its requester when cancelled while c-ares still works
 * on it (an orphan); c-ares' completion callback frees orphans.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include <ares.h>

#include "core/log.h"
#include "core/loop.h"
#include "net/dns.h"

enum dns_req_state {
	DNS_REQ_QUERYING = 0,	/* c-ares working, requester waiting */
	DNS_REQ_ORPHAN,		/* c-ares working, requester gone */
	DNS_REQ_ANSWERED,	/* answer parked, delivery timer armed */
};

struct dns_req {
	struct dns		*dns;
	enum dns_req_state	 state;
	uint16_t		 port;
	dns_cb			 cb;
	void			*arg;
	uint64_t		 deliver_timer;
	uint64_t		 timeout_timer;
	const char		*err;		/* static string, or NULL */
	struct dns_addrs	 addrs;
	struct dns_req		*prev, *next;	/* dns->reqs */
};

struct dns {
	struct loop	*loop;
	ares_channel	 channel;
	uint64_t	 timer;		/* c-ares deadline */
	size_t		 in_flight;	/* queries c-ares has not answered */
	struct dns_req	*reqs;		/* every request not yet freed */
	bool		 destroying;
};

#define DNS_DEFAULT_PORT	53	/* a server given without a port */

static int	dns_lib_refs;

static void	dns_rearm(struct dns *);

static void
dns_link(struct dns *d, struct dns_req *r)
{
	r->prev = NULL;
	r->next = d->reqs;
	if (d->reqs != NULL)
		d->reqs->prev = r;
	d->reqs = r;
}

static void
dns_req_destroy(struct dns_req *r)
{
	struct dns	*d = r->dns;

	if (r->prev != NULL)
		r->prev->next = r->next;
	else
		d->reqs = r->next;
	if (r->next != NULL)
		r->next->prev = r->prev;
	loop_timer_clear(d->loop, &r->deliver_timer);
	loop_timer_clear(d->loop, &r->timeout_timer);
	free(r);
}

static void
dns_on_fd(struct loop *l, int fd, short revents, void *arg)
{
	struct dns	*d = arg;
	ares_socket_t	 rfd = ARES_SOCKET_BAD, wfd = ARES_SOCKET_BAD;

	if (revents & (POLLIN | POLLERR | POLLHUP))
		rfd = fd;
	if (revents & POLLOUT)
		wfd = fd;
	ares_process_fd(d->channel, rfd, wfd);
	dns_rearm(d);
}

/* c-ares hands us fd numbers; the watcher needs our callback and arg. */
static void
dns_sock_state_cb(void *data, ares_socket_t fd, int readable, int writable)
{
	struct dns	*d = data;
	short		 ev = (short)((readable ? POLLIN : 0) | (writable ? POLLOUT : 0));

	if (ev == 0) {		/* also while ares_destroy closes sockets */
		loop_fd_del(d->loop, fd);
		return;
	}
	if (d->destroying)
		return;
	if (loop_fd_set_events(d->loop, fd, ev) == 0)
		return;
	if (loop_fd_add(d->loop, fd, ev, dns_on_fd, d) == -1)
		log_warnx("dns: cannot watch resolver socket %d", fd);
}

static void
dns_on_timer(struct loop *l, void *arg)
{
	struct dns	*d = arg;

	d->timer = 0;
	ares_process_fd(d->channel, ARES_SOCKET_BAD, ARES_SOCKET_BAD);
	dns_rearm(d);
}

static void
dns_rearm(struct dns *d)
{
	struct timeval	 tvbuf, *tv;
	uint64_t	 ms;

	loop_timer_clear(d->loop, &d->timer);
	if (d->in_flight == 0 || d->destroying)
		return;
	if ((tv = ares_timeout(d->channel, NULL, &tvbuf)) == NULL)
		return;
	ms = (uint64_t)tv->tv_sec * 1000 + ((uint64_t)tv->tv_usec + 999) / 1000;
	if ((d->timer = loop_timer_add(d->loop, ms, dns_on_timer, d)) == 0)
		log_warnx("dns: cannot arm resolver timer");
}

static void
dns_deliver(struct loop *l, void *arg)
{
	struct dns_req	*r = arg;
	dns_cb		 cb = r->cb;
	void		*cbarg = r->arg;
	struct dns_addrs addrs = r->addrs;
	const char	*err = r->err;

	r->deliver_timer = 0;
	dns_req_destroy(r);
	cb(err == NULL ? &addrs : NULL, err, cbarg);
}

static void
dns_park(struct dns_req *r, const char *err)
{
	loop_timer_clear(r->dns->loop, &r->timeout_timer);
	r->err = err;
	r->state = DNS_REQ_ANSWERED;
	r->deliver_timer = loop_timer_add(r->dns->loop, 0, dns_deliver, r);
	if (r->deliver_timer == 0)
		log_warnx("dns: cannot arm delivery timer; answer lost");
}

static void
dns_copy(struct dns_req *r, const struct ares_addrinfo *ai)
{
	const struct ares_addrinfo_node	*n;
	struct dns_addrs		*a = &r->addrs;

	a->n = 0;
	for (n = ai->nodes; n != NULL && a->n < DNS_MAX_ADDRS; n = n->ai_next) {
		if (n->ai_family == AF_INET &&
		    n->ai_addrlen >= sizeof(struct sockaddr_in)) {
			struct sockaddr_in *sin = (void *)&a->addr[a->n];

			memcpy(sin, n->ai_addr, sizeof(*sin));
			sin->sin_port = htons(r->port);
			a->len[a->n++] = sizeof(*sin);
		} else if (n->ai_family == AF_INET6 &&
		    n->ai_addrlen >= sizeof(struct sockaddr_in6)) {
			struct sockaddr_in6 *sin6 = (void *)&a->addr[a->n];

			memcpy(sin6, n->ai_addr, sizeof(*sin6));
			sin6->sin6_port = htons(r->port);
			a->len[a->n++] = sizeof(*sin6);
		}
	}
}

static void
dns_on_answer(void *arg, int status, int timeouts, struct ares_addrinfo *ai)
{
	struct dns_req	*r = arg;
	struct dns	*d = r->dns;

	d->in_flight--;
	if (r->state == DNS_REQ_ORPHAN || status == ARES_EDESTRUCTION ||
	    d->destroying) {
		if (ai != NULL)
			ares_freeaddrinfo(ai);
		dns_req_destroy(r);
		return;
	}
	if (status == ARES_SUCCESS && ai != NULL)
		dns_copy(r, ai);
	if (ai != NULL)
		ares_freeaddrinfo(ai);
	if (status != ARES_SUCCESS)
		dns_park(r, status == ARES_ENOTFOUND || status == ARES_ENODATA ?
		    "host not found" : status == ARES_ETIMEOUT ?
		    "DNS timeout" : "DNS failure");
	else if (r->addrs.n == 0)
		dns_park(r, "host has no usable address");
	else
		dns_park(r, NULL);
}

static void
dns_on_timeout(struct loop *l, void *arg)
{
	struct dns_req	*r = arg;

	r->timeout_timer = 0;
	if (r->state != DNS_REQ_QUERYING)
		return;
	/* c-ares keeps the query; its answer will free the orphan. */
	r->state = DNS_REQ_ORPHAN;
	r->cb(NULL, "DNS timeout", r->arg);
}

struct dns *
dns_new(struct loop *l)
{
	struct dns		*d;
	struct ares_options	 o;
	int			 rc, mask;

	if (dns_lib_refs++ == 0 &&
	    (rc = ares_library_init(ARES_LIB_INIT_ALL)) != ARES_SUCCESS) {
		log_warnx("dns: ares_library_init: %s", ares_strerror(rc));
		dns_lib_refs--;
		return NULL;
	}
	if ((d = calloc(1, sizeof(*d))) == NULL) {
		log_warn("dns: calloc");
		goto fail;
	}
	d->loop = l;
	memset(&o, 0, sizeof(o));
	o.timeout = DNS_TRY_TIMEOUT_MS;
	o.tries = DNS_TRIES;
	o.sock_state_cb = dns_sock_state_cb;
	o.sock_state_cb_data = d;
	mask = ARES_OPT_TIMEOUTMS | ARES_OPT_TRIES | ARES_OPT_SOCK_STATE_CB;
	if ((rc = ares_init_options(&d->channel, &o, mask)) != ARES_SUCCESS) {
		log_warnx("dns: ares_init_options: %s", ares_strerror(rc));
		free(d);
		goto fail;
	}
	return d;
fail:
	if (--dns_lib_refs == 0)
		ares_library_cleanup();
	return NULL;
}

/* One port: 1 to 5 digits, 1..65535. -1 otherwise. */
static int
dns_parse_port(const char *s, unsigned short *port)
{
	unsigned long	v = 0;
	size_t		i, n = strlen(s);

	if (n == 0 || n > 5)
		return -1;
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (unsigned long)(s[i] - '0');
	}
	if (v == 0 || v > 65535)
		return -1;
	*port = (unsigned short)v;
	return 0;
}

/* One server item of n bytes at s into node (next untouched). 0 or -1. */
static int
dns_parse_server(const char *s, size_t n, struct ares_addr_port_node *node)
{
	char		 item[INET6_ADDRSTRLEN + 8], *host = item, *port = NULL;
	char		*end;
	unsigned short	 p = DNS_DEFAULT_PORT;

	while (n > 0 && (*s == ' ' || *s == '\t'))
		s++, n--;
	while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	if (n == 0 || n >= sizeof(item))
		return -1;
	memcpy(item, s, n);
	item[n] = '\0';
	node->family = AF_INET;
	if (item[0] == '[') {
		if ((end = strchr(item, ']')) == NULL ||
		    (end[1] != '\0' && end[1] != ':'))
			return -1;
		*end = '\0';
		host = item + 1;
		port = end[1] == ':' ? end + 2 : NULL;
		node->family = AF_INET6;
	} else if (strchr(item, ':') != strrchr(item, ':'))
		node->family = AF_INET6;
	else if ((port = strchr(item, ':')) != NULL)
		*port++ = '\0';
	if (port != NULL && dns_parse_port(port, &p) == -1)
		return -1;
	if (inet_pton(node->family, host, node->family == AF_INET ?
	    (void *)&node->addr.addr4 : (void *)&node->addr.addr6) != 1)
		return -1;
	node->udp_port = node->tcp_port = p;
	return 0;
}

int
dns_set_servers(struct dns *d, const char *servers)
{
	struct ares_addr_port_node	 nodes[DNS_MAX_SERVERS];
	const char			*p = servers;
	size_t				 n, i = 0;
	int				 rc;

	if (servers == NULL || *servers == '\0')
		return 0;
	memset(nodes, 0, sizeof(nodes));
	for (;;) {
		n = strcspn(p, ",");
		if (i == DNS_MAX_SERVERS ||
		    dns_parse_server(p, n, &nodes[i]) == -1) {
			log_warnx("dns: servers '%s': bad or too many entries",
			    servers);
			return -1;
		}
		if (i > 0)
			nodes[i - 1].next = &nodes[i];
		i++;
		if (p[n] == '\0')
			break;
		p += n + 1;
	}
	/* c-ares copies the list. */
	if ((rc = ares_set_servers_ports(d->channel, nodes)) != ARES_SUCCESS) {
		log_warnx("dns: ares_set_servers_ports: %s", ares_strerror(rc));
		return -1;
	}
	return 0;
}

void
dns_free(struct dns *d)
{
	if (d == NULL)
		return;
	d->destroying = true;
	loop_timer_clear(d->loop, &d->timer);
	/* Runs dns_on_answer(ARES_EDESTRUCTION) for every query in flight. */
	ares_destroy(d->channel);
	while (d->reqs != NULL)
		dns_req_destroy(d->reqs);
	free(d);
	if (--dns_lib_refs == 0)
		ares_library_cleanup();
}

struct dns_req *
dns_resolve(struct dns *d, const char *host, uint16_t port, dns_cb cb, void *arg)
{
	struct dns_req		*r;
	struct ares_addrinfo_hints h;

	if ((r = calloc(1, sizeof(*r))) == NULL) {
		log_warn("dns: calloc");
		return NULL;
	}
	r->dns = d;
	r->port = port;
	r->cb = cb;
	r->arg = arg;
	dns_link(d, r);
	r->timeout_timer = loop_timer_add(d->loop, DNS_TIMEOUT_MS,
	    dns_on_timeout, r);
	memset(&h, 0, sizeof(h));
	h.ai_family = AF_UNSPEC;
	h.ai_socktype = SOCK_STREAM;
	d->in_flight++;
	/* May answer synchronously (literals, /etc/hosts): dns_park defers. */
	ares_getaddrinfo(d->channel, host, NULL, &h, dns_on_answer, r);
	dns_rearm(d);
	return r;
}

void
dns_cancel(struct dns_req *r)
{
	if (r == NULL)
		return;
	if (r->state == DNS_REQ_QUERYING) {
		r->state = DNS_REQ_ORPHAN;
		loop_timer_clear(r->dns->loop, &r->timeout_timer);
		return;
	}
	if (r->state == DNS_REQ_ANSWERED)
		dns_req_destroy(r);
}

size_t
dns_pending(const struct dns *d)
{
	return d->in_flight;
}
