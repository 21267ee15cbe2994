/*
 * drivers.c — which driver serves an uplink URL (uplink.h): the one file
 * that knows every driver. main.c hands uplink_driver_for to the core as
 * uplink_opts.pick, so the core never names a driver and the drivers,
 * which call the core, are never called back by name.
 */
#include <stddef.h>
#include <strings.h>

#include "uplink/driver.h"
#include "uplink/uplink.h"

const struct uplink_driver *
uplink_driver_for(const char *url, const char **why)
{
	*why = NULL;
	if (strncasecmp(url, "ws://", 5) == 0 ||
	    strncasecmp(url, "wss://", 6) == 0)
		return &uplink_nostr_driver;
	if (strncasecmp(url, "postgres://", 11) == 0 ||
	    strncasecmp(url, "postgresql://", 13) == 0) {
#ifdef CACHEBOX_WITH_POSTGRES
		return &uplink_pg_driver;
#else
		*why = "postgres:// uplinks need a build with "
		    "CACHEBOX_WITH_POSTGRES=ON; this cacheboxd was built "
		    "without libpq";
		return NULL;
#endif
	}
	*why = "uplink.url is not ws://, wss://, postgres:// or postgresql://";
	return NULL;
}
