/*
 * app.c — the application's own glue: what the parts of a running
 * cacheboxd mean together. Whether there is work left (idle), what a
 * changed configuration key does to the running parts, the ingest limits
 * that follow from the configuration, and the sections parts add to the
 * status. It calls the parts' own functions only; it never touches their
 * state, and no part calls back into it except through the callbacks
 * main.c wires (the uplink's target change, the surfaces' config edits).
 */
#include <string.h>

#include "app.h"
#include "core/config.h"
#include "core/log.h"
#include "net/url.h"
#include "nostr/nip19.h"
#include "relay/pool.h"
#include "sync/drain.h"
#include "sync/follow.h"
#include "sync/ingest.h"
#include "sync/jobs.h"
#include "sync/live.h"
#include "sync/negsync.h"
#include "sync/retention.h"
#include "uplink/uplink.h"

/* ---- checks lent to the configuration --------------------------------- */

void
app_config_lend_checks(void)
{
	config_lend_check(CFG_URLS, url_check_relay);
	config_lend_check(CFG_KEYS, nip19_pubkey_check);
	config_lend_check(CFG_UPLINK, uplink_url_check);
}

/* ---- status sections --------------------------------------------------- */

int
app_section_add(struct app *app, const char *name,
    void (*add)(const void *, cJSON *), const void *part)
{
	size_t	i;

	for (i = 0; i < APP_MAX_SECTIONS; i++) {
		if (app->sections[i].add != NULL)
			continue;
		app->sections[i] = (struct app_section){ name, add, part };
		return 0;
	}
	log_warnx("app: no room for the status section \"%s\"", name);
	return -1;
}

void
app_section_del(struct app *app, const void *part)
{
	size_t	i;

	for (i = 0; i < APP_MAX_SECTIONS; i++)
		if (app->sections[i].part == part)
			memset(&app->sections[i], 0, sizeof(app->sections[i]));
}

/* ---- idle -------------------------------------------------------------- */

/*
 * Idle: the follow graph resolved (every root's kind 3 and the followed
 * authors' lists asked and answered), no drain step in flight, every
 * followed author's every cursor complete or recorded incomplete, no
 * custom job pending or running (a schedule waiting counts as idle), and
 * nothing of it still in ingest's open batch: "idle" promises that what
 * the work brought is committed, so a reader of the database sees it.
 */
bool
app_idle(const struct app *app)
{
	if (app->ingest != NULL && ingest_tx_open(app->ingest))
		return false;
	if (app->follow != NULL && !follow_resolved(app->follow))
		return false;
	if (app->drain != NULL && !drain_idle(app->drain))
		return false;
	if (app->negsync != NULL && negsync_fetches(app->negsync) > 0)
		return false;
	if (app->jobs != NULL && !jobs_idle(app->jobs))
		return false;
	if (app->uplink != NULL && uplink_busy(app->uplink))
		return false;
	if (app->retention != NULL && !retention_settled(app->retention))
		return false;
	return true;
}

/* ---- configuration ----------------------------------------------------- */

void
app_ingest_configure(struct app *app)
{
	if (app->ingest == NULL)
		return;
	ingest_configure(app->ingest,
	    (size_t)config_get_int(app->cfg, "limits.max_event_bytes"),
	    *config_get(app->cfg, "uplink.url") != '\0');
}

/* uplink_opts.target_changed: queue new events for an uplink, or not. */
void
app_uplink_target_changed(void *arg)
{
	app_ingest_configure(arg);
}

static int
is(const char *key, const char *name)
{
	return key == NULL || strcmp(key, name) == 0;
}

/*
 * Push the current value of key into the running parts (key NULL: every
 * run-time key, after a reload): the log level, the relay pool's pacing
 * and reconnect cap, the ingest size limit, live subscriptions on or off,
 * retention's budget at once, and a fresh follow-graph resolution when the
 * roots or the bootstrap relays change (which reshapes the live
 * subscriptions and the drain's cursors). Keys the parts read on every use
 * (backfill.*, live.overlap_s, uplink.*) need nothing here.
 */
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
	if (is(key, "limits.max_event_bytes"))
		app_ingest_configure(app);
	if (is(key, "live.enabled") && app->live != NULL)
		live_sync(app->live);
	if ((is(key, "recovery.backoff_base_ms") ||
	    is(key, "recovery.backoff_max_ms")) && app->negsync != NULL)
		negsync_config_changed(app->negsync);
	if (is(key, "store.max_bytes") && app->retention != NULL)
		retention_kick(app->retention);
	if ((is(key, "follow.roots") || is(key, "relays.bootstrap")) &&
	    app->follow != NULL)
		follow_refresh(app->follow);
}
