/*
 * tcp.h — non-blocking TCP connect over a list of addresses, each tried in
 * turn with its own deadline, driven by the loop.
 */
#ifndef CACHEBOX_NET_TCP_H
#define CACHEBOX_NET_TCP_H

#include <stdint.h>

#include "net/dns.h"

struct loop;
struct tcp_connect;

/*
 * Outcome of a connect: fd >= 0 (non-blocking, TCP_NODELAY and keepalive
 * set; the callee now owns it and must close it) and err NULL, or fd -1
 * and err a short reason valid during the call. The handle is gone once
 * this runs.
 */
typedef void	(*tcp_cb)(int fd, const char *err, void *arg);

/*
 * Connect to addrs->addr[0], then [1], ... until one accepts; each attempt
 * is given attempt_ms (0: TCP_CONNECT_TIMEOUT_MS). cb runs exactly once from
 * the loop (never inside this call) unless cancelled. addrs is copied.
 * Returns a handle, or NULL on allocation failure (cb never runs).
 */
struct tcp_connect *tcp_connect(struct loop *, const struct dns_addrs *addrs,
		    uint32_t attempt_ms, tcp_cb cb, void *arg);
/* Abandon a connect before cb ran: the socket in progress is closed. */
void		 tcp_connect_cancel(struct tcp_connect *);

/* Set TCP_NODELAY and keepalive (TCP_KEEPALIVE_* limits) on fd. 0 or -1. */
int		 tcp_tune(int fd);

/* "addr:port" or "[v6]:port" of sa into out (at least 64 bytes). */
void		 tcp_addr_str(const struct sockaddr *sa, char *out, size_t outlen);

#endif
