/*
 * apply.c — pushes changed configuration into the running parts: the log
 * level, the relay pool's pacing and reconnect cap, the ingest size limit,
 * live subscriptions on or off, retention's budget at once, and a fresh follow-graph resolution when
 * the roots or the bootstrap relays change (which in turn reshapes the live
 * subscriptions and the drain's cursors). Keys the parts read from the
 * configuration each time they use them (backfill.*, live.overlap_s,
 * uplink.*) need nothing here. It only calls the parts' own functions; it
 * never touches their state directly.
 */
#include <string.h>

#include "app.h"
#include "core/config.h"
#include "core/log.h"
#include "relay/pool.h"
#include "sync/follow.h"
#include "sync/ingest.h"
#include "sync/live.h"
#include "sync/retention.h"
#include "ui/apply.h"

static int
is(const char *key, const char *name)
{
	return key == NULL || strcmp(key, name) == 0;
}

void
app_config_changed(struct app *app, const char *key)
{
	enum log_level	lvl;

	if (is(key, "log.level") &&
	    log_level_parse(config_get(app->cfg, "log.level"), &lvl) == 0)
		log_set_level(lvl);
	if (is(key, "backfill.pace_ms") && app->pool != NULL)
		pool_set_pace(app->pool,
		    (uint32_t)config_get_int(app->cfg, "backfill.pace_ms"));
	if (is(key, "relay.backoff_max_ms") && app->pool != NULL)
		pool_set_backoff_cap(app->pool,
		    (uint32_t)config_get_int(app->cfg, "relay.backoff_max_ms"));
	if (is(key, "limits.max_event_bytes") && app->ingest != NULL)
		ingest_configure(app->ingest, (size_t)config_get_int(app->cfg,
		    "limits.max_event_bytes"),
		    *config_get(app->cfg, "uplink.url") != '\0');
	if (is(key, "live.enabled") && app->live != NULL)
		live_sync(app->live);
	if (is(key, "store.max_bytes") && app->retention != NULL)
		retention_kick(app->retention);
	if ((is(key, "follow.roots") || is(key, "relays.bootstrap")) &&
	    app->follow != NULL)
		follow_refresh(app->follow);
}
