/*
 * cmd_jobs.h — the custom backfill jobs' commands (rows of the command
 * table, commands.c). Each answers a new JSON object the caller owns, or
 * {"error": "..."} naming the argument at fault.
 *
 *   jobs new      the seed's form fields (label, kinds, authors_source,
 *                 authors, only_missing_kind0, ids, since, until, limit,
 *                 tags, batch_size, relay_mode, relays, preset, every):
 *                 {"job": N, "batches": B, "batch_mode", "authors" or
 *                 "ids", "relays": [{url, batches}], "warnings": [...]}
 *   jobs dry-run  the same arguments; what jobs new would do, sending
 *                 and keeping nothing: {"dry_run": true, "batches",
 *                 "authors"/"ids" and their first few, "batch_mode",
 *                 "relays", "requests", "pace_ms", "estimated_s", ...}
 *   jobs list     {"jobs": [job, ...]} newest first
 *   jobs show     {job}: one job with its unfinished batches
 *   jobs cancel / retry / delete   {"job": N, ...}
 *   jobs presets  {"presets": [{name, title, fields...}]}
 */
#ifndef CACHEBOX_UI_CMD_JOBS_H
#define CACHEBOX_UI_CMD_JOBS_H

#include <cjson/cJSON.h>

#include "ui/commands.h"

struct app;

/* The params string of jobs new and jobs dry-run. */
#define CMD_JOBS_NEW_PARAMS	"[label] [kinds] [authors_source] [authors] " \
	"[only_missing_kind0] [ids] [since] [until] [limit] [tags] " \
	"[batch_size] [relay_mode] [relays] [preset] [every]"

cJSON	*cmd_jobs_new(struct app *, const cJSON *args, enum cmd_origin);
cJSON	*cmd_jobs_dry_run(struct app *, const cJSON *args, enum cmd_origin);
cJSON	*cmd_jobs_list(struct app *, const cJSON *args, enum cmd_origin);
cJSON	*cmd_jobs_show(struct app *, const cJSON *args, enum cmd_origin);
cJSON	*cmd_jobs_cancel(struct app *, const cJSON *args, enum cmd_origin);
cJSON	*cmd_jobs_retry(struct app *, const cJSON *args, enum cmd_origin);
cJSON	*cmd_jobs_delete(struct app *, const cJSON *args, enum cmd_origin);
cJSON	*cmd_jobs_presets(struct app *, const cJSON *args, enum cmd_origin);

#endif
