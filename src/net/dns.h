/*
 * dns.h — asynchronous name resolution with c-ares, driven by the loop.
 * One resolver (struct dns) per loop; it registers c-ares' sockets and
 * deadlines with the loop and never blocks. A resolution returns every
 * address (IPv6 and IPv4) so the connector can try each in turn.
 */
#ifndef CACHEBOX_NET_DNS_H
#define CACHEBOX_NET_DNS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "core/limits.h"

struct loop;
struct dns;
struct dns_req;

/* A list of socket addresses, port already set. */
struct dns_addrs {
	size_t			n;
	struct sockaddr_storage	addr[DNS_MAX_ADDRS];
	socklen_t		len[DNS_MAX_ADDRS];
};

/*
 * Result of a resolution: addrs (n >= 1) and err NULL on success, or addrs
 * NULL and err a short reason. Both are only valid during the call. The
 * request handle is gone once this runs.
 */
typedef void	(*dns_cb)(const struct dns_addrs *addrs, const char *err, void *arg);

/* A resolver on loop; NULL on failure (logged). */
struct dns	*dns_new(struct loop *);
/*
 * Ask servers instead of the system's (resolv.conf): a comma-separated
 * list of at most DNS_MAX_SERVERS numeric addresses, each "v4", "v4:port",
 * "[v6]", "[v6]:port" or a bare v6 (port 53 when none is given), as the
 * dns.servers key holds it. NULL or "" keeps the system's servers. Call it
 * before the first dns_resolve(). Returns 0, or -1 (logged) when an item
 * does not parse or c-ares refuses the list; the servers are then unchanged.
 */
int		 dns_set_servers(struct dns *, const char *servers);
/*
 * Free the resolver. Requests still pending are dropped without their
 * callback; their handles become invalid.
 */
void		 dns_free(struct dns *);

/*
 * Resolve host (a name or an IP literal) for TCP port. cb runs exactly once
 * from the loop, never from inside this call, within DNS_TIMEOUT_MS, unless
 * the request is cancelled first. Returns a handle for dns_cancel(), or NULL
 * on allocation failure (cb is then never called).
 */
struct dns_req	*dns_resolve(struct dns *, const char *host, uint16_t port,
		    dns_cb cb, void *arg);
/*
 * Forget a pending request: cb will not run. Safe at any time before cb
 * has run, including from inside other callbacks. The requester may free
 * its own state right after.
 */
void		 dns_cancel(struct dns_req *);

/* Requests not yet answered (c-ares queries in flight), for tests. */
size_t		 dns_pending(const struct dns *);

#endif
