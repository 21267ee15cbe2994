/*
 * cmd_uplink.h — the uplink's commands: its status, the dead-letter list
 * with the peer's reasons, and sending dead letters again. Rows of the
 * command table (commands.c); each answers a new JSON object the caller
 * owns, or {"error": "..."}.
 */
#ifndef CACHEBOX_UI_CMD_UPLINK_H
#define CACHEBOX_UI_CMD_UPLINK_H

#include <cjson/cJSON.h>

#include "ui/commands.h"

struct app;

/* {"uplink": {...}, "inbox": {...}}: the status document's two parts. */
cJSON	*cmd_uplink_status(struct app *, const cJSON *args,
	    enum cmd_origin);
/* {"dead": [{seq, id, kind, reason, attempts, ...}], "total": n}. */
cJSON	*cmd_uplink_deadletter(struct app *, const cJSON *args,
	    enum cmd_origin);
/* Args {"seq": n} (optional; none or 0: every dead letter): {"retried": n}. */
cJSON	*cmd_uplink_retry(struct app *, const cJSON *args,
	    enum cmd_origin);

#endif
