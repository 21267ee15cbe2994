/*
 * url.h — parsing of the URLs cachebox dials: ws://, wss:// (relays and the
 * uplink) and http://, https:// (NIP-11 documents). A parsed URL is a plain
 * value with fixed-size fields; nothing is allocated.
 */
#ifndef CACHEBOX_NET_URL_H
#define CACHEBOX_NET_URL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/limits.h"

enum url_scheme {
	URL_WS = 0,
	URL_WSS,
	URL_HTTP,
	URL_HTTPS,
};

enum url_host_kind {
	URL_HOST_NAME = 0,	/* a DNS name, lower-cased */
	URL_HOST_IPV4,		/* dotted quad */
	URL_HOST_IPV6,		/* written in brackets; stored without them */
};

struct url {
	enum url_scheme		scheme;
	enum url_host_kind	host_kind;
	bool			tls;		/* wss or https */
	uint16_t		port;		/* explicit, or 80 / 443 */
	bool			port_explicit;
	char			host[URL_MAX_HOST + 1];
	uint8_t			addr[16];	/* the literal, for IPv4 (4) / IPv6 (16) */
	char			path[URL_MAX_BYTES + 1]; /* path + "?query", at least "/" */
};

/*
 * Parse text into u. Accepts ws, wss, http and https (scheme in any case),
 * a host name, an IPv4 literal or a bracketed IPv6 literal, an optional
 * port 1..65535 and an optional path and query. Refuses userinfo, a
 * fragment, spaces or control characters, IPv6 zone ids and anything
 * longer than URL_MAX_BYTES. Returns 0, or -1 with a short reason in
 * *why (a static string) when why is not NULL.
 */
int		 url_parse(const char *text, struct url *u, const char **why);

/*
 * Write the Host header value (host, brackets for IPv6, ":port" when not
 * the scheme default) into out. Returns 0, or -1 if it does not fit.
 */
int		 url_host_header(const struct url *u, char *out, size_t outlen);

/*
 * The configuration's check of a relay URL (config_lend_check, CFG_URLS):
 * 0 when url_parse takes text and its scheme is ws or wss, else -1 with
 * the reason in *why. A relay URL the configuration accepts is one the
 * pool can dial.
 */
int		 url_check_relay(const char *text, const char **why);

/* "ws", "wss", "http" or "https". */
const char	*url_scheme_name(enum url_scheme);

#endif
