/*
 * pgurl.h — what a postgres:// URL asks libpq to open. libpq reads files
 * named in its parameters (certificates, keys, revocation lists, a
 * password file, a service file's section) and connects to a Unix socket
 * when a host is a path; a key that makes the daemon open a file is set
 * only from the console, the -c file or --set (ARCHITECTURE.md §9), so the
 * configuration asks this file whether an uplink URL is such a value.
 */
#ifndef CACHEBOX_CORE_PGURL_H
#define CACHEBOX_CORE_PGURL_H

#include <stddef.h>

/*
 * Whether url (a postgres:// or postgresql:// URL; anything else is not
 * this file's) names something libpq would open on the box: a parameter
 * outside the short list of network-only ones (sslmode, connect_timeout,
 * application_name, ...) in the query string, or a host that is a path.
 * Keys and values are compared after percent-decoding, as libpq reads
 * them. Returns 1 and writes the parameter's name (or "host") into what,
 * 0 when it names nothing, and 1 with "an undecodable parameter" for text
 * it cannot read the way libpq would.
 */
int	pgurl_names_file(const char *url, char *what, size_t whatlen);

#endif
