/*
 * boxnames.h — whether a name or an address is one the box is reached by:
 * cachebox.local, localhost, the host name (also with .local), the names
 * and addresses of the box.names key, a loopback address and the
 * addresses of its own interfaces. The web checks a request's Host and
 * Origin against it (a page of another site that a rebinding DNS points
 * at the box sends its own name), and the relay endpoint a NIP-42 relay
 * tag (an AUTH signed for another relay's URL proves nothing here).
 */
#ifndef CACHEBOX_NET_BOXNAMES_H
#define CACHEBOX_NET_BOXNAMES_H

#include <stdbool.h>
#include <stddef.h>

struct config;

/*
 * Whether host names the box: a name (any case, a trailing dot ignored)
 * or an IPv4 or IPv6 literal (without brackets), len bytes, no port.
 */
bool	boxnames_host_ok(const struct config *, const char *host, size_t len);

/*
 * The same for "host", "host:port", "[v6]" or "[v6]:port" (a Host header,
 * an Origin's or a URL's authority); a port must be 1 to 5 digits.
 */
bool	boxnames_hostport_ok(const struct config *, const char *hostport,
	    size_t len);

/*
 * Whether url is a ws:// or wss:// URL of the box: scheme in any case, a
 * host boxnames_host_ok takes, any port (a TLS proxy in front may change
 * it), and no path but "/" (a trailing slash is the same URL).
 */
bool	boxnames_relay_url_ok(const struct config *, const char *url);

#endif
