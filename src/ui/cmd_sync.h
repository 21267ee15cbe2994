/*
 * cmd_sync.h — the planners' commands: the followed authors with their
 * per-relay drain progress, and resetting the drain of one author or of
 * all. Rows of the command table (commands.c); each answers a new JSON
 * object the caller owns, or {"error": "..."}.
 */
#ifndef CACHEBOX_UI_CMD_SYNC_H
#define CACHEBOX_UI_CMD_SYNC_H

#include <cjson/cJSON.h>

#include "ui/commands.h"

struct app;

/*
 * Args {"author": npub-or-hex} (optional: one author), or a page of the
 * followed authors in pubkey order: {"offset", "limit" (1 to
 * FOLLOWS_PAGE_MAX, default FOLLOWS_PAGE_DEFAULT), "q"} (all optional; q
 * keeps the authors whose npub or hex key starts with it or whose profile
 * name holds it, case-insensitively). {"follows": [{pubkey, npub, name
 * (kind 0, or null), is_root, stale, events_fetched (what its own drain
 * received), events_stored (what the store holds of it, however it came),
 * state,
 * history_back_to (the oldest until its drain reached, or null),
 * relays_complete, relays_incomplete, relays: [{url, state, until, pages,
 * events, new_events, reason, gap_since}]}], "total" (authors matching),
 * "offset", "limit", "q" (when given), "truncated": bool}.
 */
cJSON	*cmd_follows(struct app *, const cJSON *args,
	    enum cmd_origin);
/* Args {"author": npub-or-hex} (optional: all): {"reset": cursor rows}. */
cJSON	*cmd_backfill_reset(struct app *, const cJSON *args,
	    enum cmd_origin);

/*
 * No args: the recovery index, relay by relay: {"recovery": [{relay,
 * pending, in_flight, next_attempt (Unix s, 0 when none is due),
 * expired, attempts, recovered, can_restore_health, health,
 * negentropy}], "pending": total, "expired": total}.
 */
cJSON	*cmd_recovery(struct app *, const cJSON *args, enum cmd_origin);

/*
 * Args {"minutes": N} (optional, 1 to INGEST_MINUTES, default all):
 * events stored per minute, {"minutes": [counts, oldest first; the last
 * is the running minute], "known": minutes since start (at most N),
 * "minute_elapsed_s": seconds of the running minute, "rate_per_s"}.
 */
cJSON	*cmd_ingest_minutes(struct app *, const cJSON *args,
	    enum cmd_origin);

/*
 * Args {"hours": N} (optional, 1 to 168, default 24): events stored per
 * bucket of INGEST_HISTORY_BUCKET_S seconds over the last N hours, kept
 * in the store across restarts: {"counts": [oldest first; the last is
 * the running bucket], "bucket_s", "first": the first bucket's start
 * (Unix s), "now", "since": the oldest bucket kept (null: none)}.
 */
cJSON	*cmd_ingest_history(struct app *, const cJSON *args,
	    enum cmd_origin);

#endif
