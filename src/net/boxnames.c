/*
 * boxnames.c — the names and addresses that are this box. It owns a short
 * cache of the interfaces' addresses (read again every
 * BOXNAMES_ADDR_CACHE_MS: an address can come with DHCP while the daemon
 * runs). It must never take a name by a prefix or suffix of another
 * (evil-cachebox.local is not cachebox.local), and never resolve a name:
 * a name is the box's only by being one of its own, whatever DNS says.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>

#include <ctype.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/config.h"
#include "core/limits.h"
#include "net/boxnames.h"

static struct {
	uint64_t	read_ms;
	bool		read;
	size_t		n;
	int		af[BOXNAMES_MAX_ADDRS];
	uint8_t		addr[BOXNAMES_MAX_ADDRS][16];
} box_addrs;

static void
boxnames_read_addrs(void)
{
	struct ifaddrs		*ifa, *i;
	const struct sockaddr	*sa;

	box_addrs.n = 0;
	box_addrs.read = true;
	box_addrs.read_ms = clock_mono_ms();
	if (getifaddrs(&ifa) == -1)
		return;
	for (i = ifa; i != NULL && box_addrs.n < BOXNAMES_MAX_ADDRS;
	    i = i->ifa_next) {
		if ((sa = i->ifa_addr) == NULL)
			continue;
		if (sa->sa_family == AF_INET)
			memcpy(box_addrs.addr[box_addrs.n],
			    &((const struct sockaddr_in *)(const void *)sa)->
			    sin_addr, 4);
		else if (sa->sa_family == AF_INET6)
			memcpy(box_addrs.addr[box_addrs.n],
			    &((const struct sockaddr_in6 *)(const void *)sa)->
			    sin6_addr, 16);
		else
			continue;
		box_addrs.af[box_addrs.n++] = sa->sa_family;
	}
	freeifaddrs(ifa);
}

/* Whether the address of family af is loopback or one of an interface. */
static bool
boxnames_addr_ours(int af, const uint8_t *a)
{
	static const uint8_t	v6_loop[16] = { [15] = 1 };
	size_t			i;

	if ((af == AF_INET && a[0] == 127) ||
	    (af == AF_INET6 && memcmp(a, v6_loop, 16) == 0))
		return true;
	if (!box_addrs.read ||
	    clock_mono_ms() - box_addrs.read_ms >= BOXNAMES_ADDR_CACHE_MS)
		boxnames_read_addrs();
	for (i = 0; i < box_addrs.n; i++)
		if (box_addrs.af[i] == af && memcmp(box_addrs.addr[i], a,
		    af == AF_INET ? 4 : 16) == 0)
			return true;
	return false;
}

/* Whether name (n bytes) equals want, ignoring case; suffix appended. */
static bool
boxnames_is(const char *name, size_t n, const char *want, const char *suffix)
{
	size_t	w = strlen(want), s = strlen(suffix);

	return n == w + s && strncasecmp(name, want, w) == 0 &&
	    strncasecmp(name + w, suffix, s) == 0;
}

/* Whether name is an item of the comma-separated list. */
static bool
boxnames_in_list(const char *list, const char *name, size_t n)
{
	const char	*p = list;
	size_t		 w;

	for (; *p != '\0'; p += w + (p[w] == ',')) {
		w = strcspn(p, ",");
		if (w == n && strncasecmp(p, name, n) == 0)
			return true;
	}
	return false;
}

static bool
boxnames_name_ok(const struct config *cfg, const char *name, size_t n)
{
	char	self[HOST_NAME_MAX + 1];

	if (boxnames_is(name, n, "cachebox.local", "") ||
	    boxnames_is(name, n, "localhost", "") ||
	    boxnames_in_list(config_get(cfg, "box.names"), name, n))
		return true;
	if (gethostname(self, sizeof(self)) == -1)
		return false;
	self[sizeof(self) - 1] = '\0';
	return self[0] != '\0' && (boxnames_is(name, n, self, "") ||
	    boxnames_is(name, n, self, ".local"));
}

bool
boxnames_host_ok(const struct config *cfg, const char *host, size_t len)
{
	char	lit[INET6_ADDRSTRLEN + 1];
	uint8_t	a[16];

	if (len > 0 && host[len - 1] == '.')
		len--;
	if (len == 0 || len > URL_MAX_HOST || memchr(host, '\0', len) != NULL)
		return false;
	if (len < sizeof(lit)) {
		memcpy(lit, host, len);
		lit[len] = '\0';
		if (inet_pton(AF_INET, lit, a) == 1)
			return boxnames_addr_ours(AF_INET, a) ||
			    boxnames_in_list(config_get(cfg, "box.names"),
			    host, len);
		if (inet_pton(AF_INET6, lit, a) == 1)
			return boxnames_addr_ours(AF_INET6, a) ||
			    boxnames_in_list(config_get(cfg, "box.names"),
			    host, len);
	}
	return boxnames_name_ok(cfg, host, len);
}

/* Whether [p, p + n) is a port: 1 to 5 digits. */
static bool
boxnames_port_ok(const char *p, size_t n)
{
	size_t	i;

	if (n == 0 || n > 5)
		return false;
	for (i = 0; i < n; i++)
		if (!isdigit((unsigned char)p[i]))
			return false;
	return true;
}

bool
boxnames_hostport_ok(const struct config *cfg, const char *hp, size_t len)
{
	const char	*end = hp + len, *close, *colon;

	if (len > 0 && hp[0] == '[') {
		if ((close = memchr(hp, ']', len)) == NULL)
			return false;
		if (close + 1 != end && (close[1] != ':' ||
		    !boxnames_port_ok(close + 2, (size_t)(end - close - 2))))
			return false;
		return boxnames_host_ok(cfg, hp + 1, (size_t)(close - hp - 1));
	}
	colon = memchr(hp, ':', len);
	if (colon != NULL && !boxnames_port_ok(colon + 1,
	    (size_t)(end - colon - 1)))
		return false;
	return boxnames_host_ok(cfg, hp, colon != NULL ?
	    (size_t)(colon - hp) : len);
}

bool
boxnames_relay_url_ok(const struct config *cfg, const char *url)
{
	const char	*auth, *slash;
	size_t		 n;

	if (strncasecmp(url, "ws://", 5) == 0)
		auth = url + 5;
	else if (strncasecmp(url, "wss://", 6) == 0)
		auth = url + 6;
	else
		return false;
	n = strcspn(auth, "/");
	slash = auth + n;
	if (*slash != '\0' && strcmp(slash, "/") != 0)
		return false;
	if (memchr(auth, '@', n) != NULL)
		return false;
	return boxnames_hostport_ok(cfg, auth, n);
}
