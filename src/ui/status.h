/*
 * status.h — the status document: what GET /api/status, `cacheboxctl
 * status --json` and the console's `status` all print (DESIGN.md §7).
 */
#ifndef CACHEBOX_UI_STATUS_H
#define CACHEBOX_UI_STATUS_H

#include <cjson/cJSON.h>

struct app;

/* A new status object owned by the caller; NULL on allocation failure. */
cJSON	*status_json(struct app *);

/* Resident set size of this process in bytes, 0 if unknown. */
long	 status_rss_bytes(void);

#endif
