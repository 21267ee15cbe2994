/*
 * app.c — the application's own glue: what the parts of a running
 * cacheboxd mean together. Whether there is work left (idle), what a
 * changed configuration key does to the running parts, the ingest limits
 * that follow from the configuration, and the sections parts add to the
 * status. It calls the parts' own functions only; it never touches their
 * state, and no part calls back into it except through the callbacks
 * main.c wires (the uplink's target change, the surfaces' config edits,
 * the service manager's summary line).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "app.h"
#include "core/clock.h"
#include "core/config.h"
#include "core/limits.h"
#include "core/log.h"
#include "net/boxnames.h"
#include "net/url.h"
#include "nostr/nip19.h"
#include "relay/pool.h"
#include "store/cursors.h"
#include "store/events.h"
#include "store/store.h"
#include "store/withdrawn.h"
#include "sync/drain.h"
#include "sync/follow.h"
#include "sync/ingest.h"
#include "sync/jobs.h"
#include "sync/live.h"
#include "sync/negsync.h"
#include "sync/recovery.h"
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

/* A kind 62's relay tag names this box (the store's relay judge). */
static bool
judge_ours(void *arg, const char *url)
{
	return boxnames_relay_url_ok(arg, url);
}

void
app_store_lend(struct app *app)
{
	store_set_relay_judge(app->store, judge_ours, app->cfg);
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
 * Nor is the box idle while recovery will fetch ids again within
 * recovery.settle_s: idle means what the relays reported has come or
 * will not come soon.
 */
bool
app_recovery_wait(const struct app *app, char *relay, size_t len,
    int64_t *pending, int64_t *until_ms)
{
	struct recovery		*rec;
	struct recovery_summary	 sum;
	char			 url[URL_MAX_BYTES + 1];
	int64_t			 due, now = clock_wall_s() * 1000;

	if (app->negsync == NULL ||
	    (rec = negsync_recovery(app->negsync)) == NULL ||
	    recovery_next(rec, now, url, sizeof(url), &due) != 1 ||
	    due - now > config_get_int(app->cfg, "recovery.settle_s") * 1000)
		return false;
	if (relay != NULL)
		snprintf(relay, len, "%s", url);
	if (until_ms != NULL)
		*until_ms = due;
	if (pending != NULL)
		*pending = recovery_summary(rec, url, &sum) == 1 ?
		    sum.pending : 0;
	return true;
}

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
	if (app_recovery_wait(app, NULL, 0, NULL, NULL))
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
 * subscriptions and the drain's cursors), and the uplink's target at once
 * (so the answer to the change already shows the new one). Keys the parts
 * read on every use (backfill.*, live.overlap_s, the other uplink.* keys)
 * need nothing here.
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
	if (is(key, "uplink.url") && app->uplink != NULL)
		uplink_follow_config(app->uplink);
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

/* ---- the one-line summary ---------------------------------------------- */

/* Append ", " (unless buf is empty) and the formatted text; truncates. */
static void __attribute__((format(printf, 3, 4)))
summary_add(char *buf, size_t len, const char *fmt, ...)
{
	size_t	used = strnlen(buf, len);
	va_list	ap;

	if (used > 0 && used + 2 < len) {
		memcpy(buf + used, ", ", 3);
		used += 2;
	}
	if (used + 1 >= len)
		return;
	va_start(ap, fmt);
	(void)vsnprintf(buf + used, len - used, fmt, ap);
	va_end(ap);
}

/* Where the follow graph and the author drain are. */
static void
summary_backfill(const struct app *app, char *buf, size_t len)
{
	struct store_cursor_summary	s;

	if (store_cursors_summary(app->store, &s) == -1) {
		summary_add(buf, len, "backfill unknown");
		return;
	}
	if (s.authors_total == 0) {
		if (*config_get(app->cfg, "follow.roots") == '\0')
			summary_add(buf, len, "no roots to follow");
		else if (app->follow != NULL && !follow_resolved(app->follow))
			summary_add(buf, len, "reading follow lists");
		else
			summary_add(buf, len, "following nobody");
	} else if (!config_get_bool(app->cfg, "backfill.enabled"))
		summary_add(buf, len, "following %lld authors, backfill off",
		    (long long)s.authors_total);
	else if (s.authors_draining > 0)
		summary_add(buf, len, "draining %lld/%lld authors",
		    (long long)(s.authors_complete + s.authors_incomplete),
		    (long long)s.authors_total);
	else if (s.authors_incomplete > 0)
		summary_add(buf, len, "%lld authors backfilled, %lld incomplete",
		    (long long)s.authors_total, (long long)s.authors_incomplete);
	else
		summary_add(buf, len, "%lld authors backfilled",
		    (long long)s.authors_total);
}

/* Upstream relays open now, of those the pool runs. */
static void
summary_relays(const struct app *app, char *buf, size_t len)
{
	struct pool_relay_info	info;
	size_t			i, n, open = 0;

	if (app->pool == NULL || (n = pool_relay_count(app->pool)) == 0)
		return;
	for (i = 0; i < n; i++)
		if (pool_relay_info(app->pool, i, &info) == 0 &&
		    info.state == RELAY_OPEN)
			open++;
	summary_add(buf, len, "%zu/%zu relays open", open, n);
}

static void
summary_uplink(const struct app *app, char *buf, size_t len)
{
	struct uplink_status	st;

	if (app->uplink == NULL || !uplink_configured(app->uplink)) {
		summary_add(buf, len, "no uplink");
		return;
	}
	uplink_status(app->uplink, &st);
	if (strcmp(st.state, "open") == 0 || strcmp(st.state, "sending") == 0 ||
	    strcmp(st.state, "ready") == 0)
		summary_add(buf, len, "uplink ok");
	else
		summary_add(buf, len, "uplink %s", st.state);
}

/*
 * The service manager's STATUS= line (sdnotify_status_fn; arg: the app):
 * "draining 120/688 authors, 45210 events, 4/5 relays open, uplink ok".
 * Cheap enough for every few seconds: the counts are the store's
 * maintained ones plus one pass over the followed authors.
 */
void
app_summary(void *arg, char *buf, size_t len)
{
	const struct app	*app = arg;
	int64_t			 events, bytes;

	if (len == 0)
		return;
	buf[0] = '\0';
	if (store_damaged(app->store))
		summary_add(buf, len, "store damaged (see the log)");
	summary_backfill(app, buf, len);
	if (store_events_totals(app->store, &events, &bytes) == 0)
		summary_add(buf, len, "%lld events", (long long)events);
	if (app->retention != NULL &&
	    retention_state(app->retention) != RETENTION_WITHIN)
		summary_add(buf, len, "store full");
	summary_relays(app, buf, len);
	summary_uplink(app, buf, len);
}
