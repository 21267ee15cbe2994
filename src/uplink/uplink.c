/*
 * uplink.c — the uplink core: follows uplink.url, runs the driver its
 * options pick (uplink_opts.pick; the drivers call the core, never back),
 * drives the queue-everything pass for a new target, keeps the status
 * (state, last error, forward rate) and answers the surfaces.
 *
 * It never talks to a peer itself and never holds a row: rows are the
 * drivers' business between store_inbox_take and store_inbox_confirm.
 * A driver is only ever stopped from the core's own timer, never from
 * inside a driver's callback.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/backoff.h"
#include "core/clock.h"
#include "core/config.h"
#include "core/limits.h"
#include "core/log.h"
#include "core/redact.h"
#include "net/url.h"
#include "core/loop.h"
#include "net/dns.h"
#include "relay/pool.h"
#include "store/inbox.h"
#include "uplink/driver.h"
#include "uplink/uplink.h"

struct uplink {
	struct uplink_opts		 o;
	struct pool			*own_pool;
	struct dns			*own_dns;
	const struct uplink_driver	*drv;
	void				*ds;
	char				 url[UPLINK_URL_MAX + 1];
	char				 shown[UPLINK_URL_MAX + 1];
	const char			*driver_name;
	const char			*state;
	char				 error[UPLINK_ERROR_MAX + 1];
	uint64_t			 tick_timer;
	uint64_t			 kick_timer;
	bool				 started;
	bool				 enqueue_active;
	bool				 retarget;	/* the store missed a switch */
	uint64_t			 rate_count[UPLINK_RATE_WINDOW_S];
	uint64_t			 rate_sec[UPLINK_RATE_WINDOW_S];
	uint64_t			 forwarded, rejected;
};

static void	uplink_tick(struct loop *, void *);

struct uplink *
uplink_new(const struct uplink_opts *o)
{
	struct uplink	*up;

	if ((up = calloc(1, sizeof(*up))) == NULL)
		return NULL;
	up->o = *o;
	up->driver_name = "none";
	up->state = "off";
	return up;
}

void
uplink_free(struct uplink *up)
{
	if (up == NULL)
		return;
	uplink_stop(up);
	pool_free(up->own_pool);
	dns_free(up->own_dns);
	free(up);
}

struct loop *
uplink_loop(struct uplink *up)
{
	return up->o.loop;
}

struct store *
uplink_store(struct uplink *up)
{
	return up->o.store;
}

const struct config *
uplink_cfg(struct uplink *up)
{
	return up->o.cfg;
}

const struct nostr_key *
uplink_key(struct uplink *up)
{
	return up->o.key;
}

struct dns *
uplink_dns(struct uplink *up)
{
	if (up->o.dns != NULL)
		return up->o.dns;
	if (up->own_dns == NULL)
		up->own_dns = dns_new(up->o.loop);
	return up->own_dns;
}

struct pool *
uplink_pool(struct uplink *up)
{
	struct pool_opts	po;

	if (up->o.pool != NULL)
		return up->o.pool;
	if (up->own_pool == NULL) {
		memset(&po, 0, sizeof(po));
		po.conf.dns = uplink_dns(up);
		po.conf.ca_file = config_get(up->o.cfg, "tls.ca_file");
		po.conf.key = up->o.key;
		po.observer = up->o.relay_observer;
		up->own_pool = pool_new(up->o.loop, &po);
	}
	return up->own_pool;
}

void
uplink_set_state(struct uplink *up, const char *state)
{
	if (up->state != state && strcmp(up->state, state) != 0)
		log_debug("uplink: %s -> %s", up->state, state);
	up->state = state;
}

void
uplink_set_error(struct uplink *up, const char *fmt, ...)
{
	char	raw[UPLINK_ERROR_MAX + 1], msg[UPLINK_ERROR_MAX + 1];
	va_list	ap;

	va_start(ap, fmt);
	vsnprintf(raw, sizeof(raw), fmt, ap);
	va_end(ap);
	/* A driver's message (libpq's) may quote parts of the URL. */
	redact_text(config_get(up->o.cfg, "uplink.url"), raw, msg, sizeof(msg));
	if (strcmp(msg, up->error) != 0)
		log_warnx("uplink %s: %s", up->shown, msg);
	memcpy(up->error, msg, sizeof(msg));
}

void
uplink_clear_error(struct uplink *up)
{
	if (up->error[0] != '\0')
		log_info("uplink %s: working again", up->shown);
	up->error[0] = '\0';
}

/* Count n events into the one-second slot of now. */
static void
uplink_rate_add(struct uplink *up, uint64_t n)
{
	uint64_t	sec = loop_now_ms(up->o.loop) / 1000;
	size_t		i = sec % UPLINK_RATE_WINDOW_S;

	if (up->rate_sec[i] != sec) {
		up->rate_sec[i] = sec;
		up->rate_count[i] = 0;
	}
	up->rate_count[i] += n;
}

static double
uplink_rate(const struct uplink *up)
{
	uint64_t	sec = clock_mono_ms() / 1000, sum = 0;
	size_t		i;

	for (i = 0; i < UPLINK_RATE_WINDOW_S; i++)
		if (up->rate_sec[i] + UPLINK_RATE_WINDOW_S > sec)
			sum += up->rate_count[i];
	return (double)sum / UPLINK_RATE_WINDOW_S;
}

void
uplink_delivered(struct uplink *up, uint64_t n)
{
	up->forwarded += n;
	uplink_rate_add(up, n);
}

bool
uplink_queueing(const struct uplink *up)
{
	return up->enqueue_active;
}

void
uplink_rejected(struct uplink *up, uint64_t n)
{
	up->rejected += n;
}

uint64_t
uplink_backoff_ms(unsigned failures)
{
	return backoff_ms(UPLINK_BACKOFF_BASE_MS,
	    failures > 0 ? failures - 1 : 0, UPLINK_BACKOFF_CAP_MS);
}

static void
uplink_driver_stop(struct uplink *up)
{
	up->state = "stopped";	/* the driver's state string goes with it */
	if (up->drv != NULL && up->ds != NULL)
		up->drv->stop(up->ds);
	up->ds = NULL;
	up->drv = NULL;
}

/*
 * Tell the store of the target: a new one queues every stored event, none
 * forgets the last (so the next one queues what arrived meanwhile). 0, or
 * -1 when the store failed (logged): the switch is then tried again at the
 * next tick, since a target the store missed would leave the owner's relay
 * without the events stored while none was configured.
 */
static int
uplink_record_target(struct uplink *up)
{
	int	rc;

	if (up->url[0] == '\0')
		rc = store_inbox_target_clear(up->o.store);
	else if ((rc = store_inbox_target(up->o.store, up->shown)) == 1)
		log_info("uplink: new target %s: queueing every stored event, "
		    "oldest first", up->shown);
	if (rc == -1) {
		up->retarget = true;
		uplink_set_error(up, "the store did not take the change of "
		    "target; trying again");
		return -1;
	}
	return 0;
}

/* Point the uplink at url (already validated by the config table). */
static void
uplink_switch(struct uplink *up, const char *url)
{
	const char	*why;

	uplink_driver_stop(up);
	if (strcmp(up->url, url) != 0)
		up->error[0] = '\0';	/* a retry keeps its error, logged once */
	up->retarget = false;
	snprintf(up->url, sizeof(up->url), "%s", url);
	if (up->o.target_changed != NULL)
		up->o.target_changed(up->o.target_arg);
	config_display(up->o.cfg, "uplink.url", up->shown, sizeof(up->shown));
	up->enqueue_active = false;
	up->driver_name = "none";
	if (url[0] == '\0') {
		up->state = "off";
		(void)uplink_record_target(up);	/* -1: retried at the next tick */
		return;
	}
	if ((up->drv = up->o.pick(url, &why)) == NULL) {
		up->state = "unsupported";
		uplink_set_error(up, "%s", why);
		return;
	}
	up->driver_name = up->drv->name;
	if (uplink_record_target(up) == -1) {
		up->state = "failed";
		up->drv = NULL;
		return;
	}
	up->enqueue_active = store_inbox_enqueue_active(up->o.store) == 1;
	up->state = "starting";
	log_info("uplink: forwarding to %s (%s)", up->shown, up->drv->name);
	if ((up->ds = up->drv->start(up, url)) == NULL) {
		up->state = "failed";
		up->drv = NULL;
	}
}

/* One step of the queue-everything pass. */
static void
uplink_enqueue(struct uplink *up)
{
	int64_t	queued = 0;
	int	rc;

	rc = store_inbox_enqueue_step(up->o.store, UPLINK_ENQUEUE_CHUNK,
	    clock_wall_s(), &queued);
	if (rc == -1) {
		uplink_set_error(up, "queueing stored events failed "
		    "(store error); trying again");
		return;
	}
	if (queued > 0)
		log_debug("uplink: queued %lld stored events",
		    (long long)queued);
	if (rc == 0) {
		up->enqueue_active = false;
		log_info("uplink: every stored event is queued");
	}
}

static void
uplink_tick(struct loop *l, void *arg)
{
	struct uplink	*up = arg;
	const char	*url = config_get(up->o.cfg, "uplink.url");

	up->tick_timer = 0;
	if (strcmp(url, up->url) != 0 || up->retarget)
		uplink_switch(up, url);
	if (up->enqueue_active && up->ds != NULL)
		uplink_enqueue(up);
	if (up->ds != NULL)
		up->drv->kick(up->ds);
	up->tick_timer = loop_timer_add(l, up->enqueue_active && up->ds != NULL ?
	    0 : UPLINK_TICK_MS, uplink_tick, up);
}

void
uplink_follow_config(struct uplink *up)
{
	const char	*url;

	if (up == NULL || !up->started)
		return;
	url = config_get(up->o.cfg, "uplink.url");
	if (strcmp(url, up->url) != 0 || up->retarget)
		uplink_switch(up, url);
}

int
uplink_start(struct uplink *up)
{
	const char	*url = config_get(up->o.cfg, "uplink.url");

	if (up->started)
		return 0;
	up->started = true;
	up->url[0] = '\0';
	/* Force a switch even to "", so an unused target is forgotten. */
	snprintf(up->url, sizeof(up->url), "%s", url[0] == '\0' ? "-" : "");
	up->tick_timer = loop_timer_add(up->o.loop, 0, uplink_tick, up);
	return up->tick_timer == 0 ? -1 : 0;
}

void
uplink_stop(struct uplink *up)
{
	if (!up->started)
		return;
	loop_timer_clear(up->o.loop, &up->tick_timer);
	loop_timer_clear(up->o.loop, &up->kick_timer);
	uplink_driver_stop(up);
	up->started = false;
	up->state = "off";
}

static void
uplink_kick_cb(struct loop *l, void *arg)
{
	struct uplink	*up = arg;

	up->kick_timer = 0;
	if (up->ds != NULL)
		up->drv->kick(up->ds);
}

void
uplink_kick(struct uplink *up)
{
	if (up == NULL || !up->started || up->ds == NULL || up->kick_timer != 0)
		return;
	up->kick_timer = loop_timer_add(up->o.loop, 0, uplink_kick_cb, up);
}

bool
uplink_configured(const struct uplink *up)
{
	return up != NULL && config_get(up->o.cfg, "uplink.url")[0] != '\0';
}

bool
uplink_busy(struct uplink *up)
{
	if (!uplink_configured(up))
		return false;
	if (up->enqueue_active || strcmp(up->url,
	    config_get(up->o.cfg, "uplink.url")) != 0)
		return true;
	return store_inbox_has_pending(up->o.store) != 0;
}

void
uplink_status(const struct uplink *up, struct uplink_status *st)
{
	memset(st, 0, sizeof(*st));
	st->url = up->url[0] == '-' && up->url[1] == '\0' ? "" : up->shown;
	st->driver = up->driver_name;
	st->state = up->state;
	st->last_error = up->error;
	st->forward_rate = uplink_rate(up);
	st->forwarded_session = up->forwarded;
	st->rejected_session = up->rejected;
	st->enqueue_active = up->enqueue_active;
}

/* Set obj[name] to a number, replacing what is there. */
static void
json_set_number(cJSON *obj, const char *name, double v)
{
	cJSON	*n = cJSON_CreateNumber(v);

	if (n == NULL)
		return;
	if (cJSON_GetObjectItemCaseSensitive(obj, name) != NULL)
		cJSON_ReplaceItemInObjectCaseSensitive(obj, name, n);
	else
		cJSON_AddItemToObject(obj, name, n);
}

void
uplink_status_json(struct uplink *up, struct store *st, cJSON *root)
{
	struct uplink_status	 s = { "", "none", "off", "", 0, 0, 0, false };
	struct inbox_counts	 c;
	cJSON			*u, *in;
	int64_t			 age = 0;

	if (up != NULL)
		uplink_status(up, &s);
	(void)store_inbox_counts(st, &c);	/* zeros when unread (logged) */
	if (c.oldest_enqueued_at > 0 && clock_wall_s() > c.oldest_enqueued_at)
		age = clock_wall_s() - c.oldest_enqueued_at;
	if ((u = cJSON_AddObjectToObject(root, "uplink")) != NULL) {
		cJSON_AddStringToObject(u, "url", s.url);
		cJSON_AddStringToObject(u, "driver", s.driver);
		cJSON_AddStringToObject(u, "state", s.state);
		if (s.last_error[0] != '\0')
			cJSON_AddStringToObject(u, "last_error", s.last_error);
		else
			cJSON_AddNullToObject(u, "last_error");
		cJSON_AddNumberToObject(u, "forward_rate",
		    (double)(int64_t)(s.forward_rate * 10 + 0.5) / 10);
		cJSON_AddNumberToObject(u, "forwarded_session",
		    (double)s.forwarded_session);
		cJSON_AddNumberToObject(u, "rejected_session",
		    (double)s.rejected_session);
		cJSON_AddNumberToObject(u, "oldest_pending_age_s", (double)age);
		cJSON_AddBoolToObject(u, "queueing_store", s.enqueue_active);
	}
	if ((in = cJSON_GetObjectItemCaseSensitive(root, "inbox")) == NULL &&
	    (in = cJSON_AddObjectToObject(root, "inbox")) == NULL)
		return;
	json_set_number(in, "pending", (double)c.pending);
	json_set_number(in, "forwarded", (double)c.forwarded);
	json_set_number(in, "rejected", (double)c.dead);
	json_set_number(in, "skipped_protected", (double)c.skipped_protected);
	json_set_number(in, "oldest_pending_age_s", (double)age);
}

int64_t
uplink_retry(struct uplink *up, int64_t seq)
{
	int64_t	n = store_inbox_retry(up->o.store, seq);

	if (n > 0) {
		log_info("uplink: %lld dead letter(s) back to pending",
		    (long long)n);
		if (up->ds != NULL && up->drv->rewind != NULL)
			up->drv->rewind(up->ds);
		uplink_kick(up);
	}
	return n;
}

int
uplink_url_check(const char *text, const char **why)
{
	if (strncasecmp(text, "ws://", 5) == 0 ||
	    strncasecmp(text, "wss://", 6) == 0)
		return url_check_relay(text, why);
	if (strncasecmp(text, "postgres://", 11) != 0 &&
	    strncasecmp(text, "postgresql://", 13) != 0) {
		*why = NULL;
		return -1;
	}
	if (strpbrk(text, " \t") != NULL) {
		*why = "spaces in a URL";
		return -1;
	}
	return 0;
}
