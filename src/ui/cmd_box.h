/*
 * cmd_box.h — the commands that change what the box itself is told to do:
 * its relays, its follow roots, its log level and its admin token. They
 * are rows of the command table (commands.c); each takes the JSON
 * arguments the table names and answers a new JSON object the caller owns,
 * or {"error": "..."}.
 */
#ifndef CACHEBOX_UI_CMD_BOX_H
#define CACHEBOX_UI_CMD_BOX_H

#include <cjson/cJSON.h>

#include "ui/commands.h"

struct app;

cJSON	*cmd_relays_list(struct app *, const cJSON *args,
	    enum cmd_origin);
cJSON	*cmd_relays_add(struct app *, const cJSON *args,
	    enum cmd_origin);
cJSON	*cmd_relays_remove(struct app *, const cJSON *args,
	    enum cmd_origin);
cJSON	*cmd_relays_role(struct app *, const cJSON *args,
	    enum cmd_origin);
cJSON	*cmd_roots_list(struct app *, const cJSON *args,
	    enum cmd_origin);
cJSON	*cmd_roots_add(struct app *, const cJSON *args,
	    enum cmd_origin);
cJSON	*cmd_roots_remove(struct app *, const cJSON *args,
	    enum cmd_origin);
/*
 * The superseded versions of the roots' kinds 0, 3 and 10002 kept aside
 * (optionally of one root, key, and one kind), newest first, each with a
 * summary and the whole event: what an owner whose client wiped a follow
 * list republishes.
 */
cJSON	*cmd_roots_history(struct app *, const cJSON *args,
	    enum cmd_origin from);
cJSON	*cmd_log_level(struct app *, const cJSON *args,
	    enum cmd_origin);
cJSON	*cmd_admin_token_set(struct app *, const cJSON *args,
	    enum cmd_origin);

/* "setup" and the console's "setup code" (the first run, firstrun.h). */
cJSON	*cmd_setup(struct app *, const cJSON *args, enum cmd_origin);
cJSON	*cmd_setup_code(struct app *, const cJSON *args, enum cmd_origin);

#endif
