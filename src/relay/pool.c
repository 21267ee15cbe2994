/*
 * pool.c — the planners' side of the relay pool: the set of relays (it
 * makes, calls and frees each one; a relay tells it what happened through
 * its hooks), the subscription and publish API, the loop hook that reaps
 * what callbacks marked dead, NIP-11 documents (fetched once per connect
 * cycle, refreshed at most every RELAY_NIP11_REFRESH_MS, applied), and the
 * reports of what should be recorded (states, NIP-11 facts, traffic)
 * handed to the observer.
 *
 * It never touches a socket itself (relay.c and src/net do), never writes
 * a database (the observer's layer does), and never reports per frame.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "core/hex.h"
#include "core/log.h"
#include "core/loop.h"
#include "net/http.h"
#include "net/url.h"
#include "net/ws.h"
#include "nostr/nip11.h"
#include "relay/pool.h"
#include "relay/relay.h"

struct pool {
	struct loop		*loop;
	struct relay_conf	 conf;		/* every relay's, by pointer */
	struct pool_observer	 observer;
	bool			 no_nip11;
	struct relay_list	 relays;
	size_t			 nrelays;
	uint64_t		 next_sub;
	uint64_t		 last_flush_ms;
	char			*ca_file;	/* owned copy of conf.ca_file */
};

static void	pool_nip11_start(struct pool *, struct relay *);
static void	pool_nip11_cancel(struct relay *);

static const char *const role_names[] = {
	[RELAY_ROLE_BOOTSTRAP] = "bootstrap",
	[RELAY_ROLE_OUTBOX] = "outbox",
	[RELAY_ROLE_CUSTOM] = "custom",
	[RELAY_ROLE_UPLINK] = "uplink",
};

const char *
relay_role_name(enum relay_role role)
{
	if ((unsigned)role >= sizeof(role_names) / sizeof(role_names[0]))
		return "custom";
	return role_names[role];
}

/* Free a relay the pool let go of, with what the pool kept beside it. */
static void
pool_relay_free(struct relay *r)
{
	pool_nip11_cancel(r);
	free(r->nip11_new);
	relay_free(r);
}

/* Something to record that should not wait for the traffic interval. */
static bool
pool_news(const struct pool *pool)
{
	const struct relay	*r;

	TAILQ_FOREACH(r, &pool->relays, entry)
		if (r->rec_added || r->rec_state || r->nip11_new != NULL)
			return true;
	return false;
}

static void
pool_hook(struct loop *l, void *arg)
{
	struct pool	*pool = arg;
	struct relay	*r, *rn;
	uint64_t	 since = loop_now_ms(l) - pool->last_flush_ms;

	if (since >= RELAY_STATS_FLUSH_MS ||
	    (since >= RELAY_RECORD_MS && pool_news(pool)))
		(void)pool_flush(pool);	/* -1: the reports wait for the next */
	TAILQ_FOREACH_SAFE(r, &pool->relays, entry, rn) {
		if (r->dead) {
			TAILQ_REMOVE(&pool->relays, r, entry);
			pool->nrelays--;
			pool_relay_free(r);
			continue;
		}
		relay_tick(r);
	}
}

/*
 * relay_hooks.state: a connect attempt begins (from new, backoff or
 * failed into a connecting state): fetch NIP-11 beside it; the relay is
 * removed: stop the fetch. Either way the state is news to record.
 */
static void
pool_on_state(struct relay *r, enum relay_state from, enum relay_state to,
    const char *error, void *arg)
{
	struct pool	*pool = arg;
	bool		 idle = from == RELAY_NEW || from == RELAY_BACKOFF ||
			    from == RELAY_FAILED;

	r->rec_state = true;
	if (idle && (to == RELAY_RESOLVING || to == RELAY_CONNECTING ||
	    to == RELAY_TLS || to == RELAY_UPGRADING))
		pool_nip11_start(pool, r);
	else if (to == RELAY_DISABLED)
		pool_nip11_cancel(r);
}

struct pool *
pool_new(struct loop *loop, const struct pool_opts *opts)
{
	struct pool	*pool;

	if ((pool = calloc(1, sizeof(*pool))) == NULL)
		return NULL;
	pool->loop = loop;
	if (opts != NULL) {
		pool->conf = opts->conf;
		pool->observer = opts->observer;
		pool->no_nip11 = opts->no_nip11;
	}
	if (pool->conf.ca_file != NULL && pool->conf.ca_file[0] != '\0' &&
	    (pool->ca_file = strdup(pool->conf.ca_file)) == NULL) {
		free(pool);
		return NULL;
	}
	pool->conf.ca_file = pool->ca_file;
	TAILQ_INIT(&pool->relays);
	pool->last_flush_ms = loop_now_ms(loop);
	if (loop_hook_add(loop, pool_hook, pool) == -1) {
		free(pool->ca_file);
		free(pool);
		return NULL;
	}
	return pool;
}

void
pool_free(struct pool *pool)
{
	struct relay	*r;

	if (pool == NULL)
		return;
	loop_hook_del(pool->loop, pool_hook, pool);
	(void)pool_flush(pool);	/* the last chance: -1 loses counters only */
	while ((r = TAILQ_FIRST(&pool->relays)) != NULL) {
		TAILQ_REMOVE(&pool->relays, r, entry);
		pool_relay_free(r);
	}
	free(pool->ca_file);
	free(pool);
}

struct relay *
pool_relay_find(struct pool *pool, const char *url)
{
	struct relay	*r;

	TAILQ_FOREACH(r, &pool->relays, entry)
		if (!r->dead && strcmp(r->url, url) == 0)
			return r;
	return NULL;
}

static void
pool_relay_start(struct loop *l, void *arg)
{
	(void)l;
	relay_connect(arg);
}

struct relay *
pool_relay_add(struct pool *pool, const char *url, enum relay_role role)
{
	struct relay	*r;
	struct url	 u;
	const char	*why = NULL;

	if ((r = pool_relay_find(pool, url)) != NULL) {
		if (r->role != role)
			r->rec_added = true;	/* its row gets the new role */
		r->role = role;
		return r;
	}
	if (url_parse(url, &u, &why) == -1 || u.scheme == URL_HTTP ||
	    u.scheme == URL_HTTPS) {
		log_warnx("relay %s: not a relay URL: %s", url,
		    why ? why : "not ws:// or wss://");
		return NULL;
	}
	if ((r = relay_new(pool->loop, url, role, &pool->conf,
	    &(struct relay_hooks){ pool_on_state, pool })) == NULL)
		return NULL;
	r->rec_added = true;
	TAILQ_INSERT_TAIL(&pool->relays, r, entry);
	pool->nrelays++;
	/* Connect from the loop, never inside the caller. */
	r->retry_timer = loop_timer_add(pool->loop, 0, pool_relay_start, r);
	return r;
}

void
pool_relay_remove(struct pool *pool, const char *url)
{
	struct relay	*r;

	if ((r = pool_relay_find(pool, url)) != NULL)
		relay_disable(r);
}

void
pool_relay_note_error(struct pool *pool, const char *url, const char *why)
{
	struct relay	*r;

	if ((r = pool_relay_find(pool, url)) != NULL)
		relay_note_error(r, why);
}

void
pool_relay_retire(struct pool *pool, const char *url, const char *why)
{
	struct relay	*r;

	if ((r = pool_relay_find(pool, url)) != NULL) {
		log_info("relay %s: closed: %s", url, why);
		relay_retire(r, why);
	}
}

/*
 * A subscription on url's relay, queued: its id is prefix and a counter,
 * its opening frame what build writes into a frame-sized buffer (REQ or
 * NEG-OPEN). NULL if the relay is unknown, build fails or memory ran out.
 */
static struct pool_sub *
pool_sub_queue(struct pool *pool, const char *url, char prefix,
    int (*build)(struct buf *, const char *id, const void *), const void *barg,
    bool keep)
{
	struct relay	*r;
	struct pool_sub	*s;
	struct buf	 b;

	if ((r = pool_relay_find(pool, url)) == NULL ||
	    (s = calloc(1, sizeof(*s))) == NULL)
		return NULL;
	snprintf(s->id, sizeof(s->id), "%c%llu", prefix,
	    (unsigned long long)++pool->next_sub);
	buf_init(&b, relay_frame_max(r));
	if (build(&b, s->id, barg) == -1 ||
	    (keep && (s->req = strdup(buf_cstr(&b))) == NULL)) {
		buf_free(&b);
		free(s);
		return NULL;
	}
	s->req_len = b.len;
	buf_free(&b);
	s->relay = r;
	s->state = SUB_QUEUED;
	TAILQ_INSERT_TAIL(&r->subs, s, entry);
	return s;
}

struct req_args {
	const struct filter	*filters;
	size_t			 n;
};

static int
build_req(struct buf *b, const char *id, const void *arg)
{
	const struct req_args	*a = arg;

	return relay_msg_build_req(b, id, a->filters, a->n);
}

struct pool_sub *
pool_sub_open(struct pool *pool, const char *url,
    const struct filter *filters, size_t n, const struct pool_sub_cbs *cbs,
    void *arg)
{
	struct req_args	 a = { filters, n };
	struct pool_sub	*s;

	/* Built once to know it fits; built again at each send. */
	if ((s = pool_sub_queue(pool, url, 's', build_req, &a, false)) == NULL)
		return NULL;
	s->filters = filters;
	s->nfilters = n;
	if (cbs != NULL)
		s->cbs = *cbs;
	s->arg = arg;
	relay_pump(s->relay);
	return s;
}

struct neg_open_args {
	const struct filter	*filter;
	const uint8_t		*msg;
	size_t			 len;
};

static int
build_neg_open(struct buf *b, const char *id, const void *arg)
{
	const struct neg_open_args	*a = arg;

	return relay_msg_build_neg_open(b, id, a->filter, a->msg, a->len);
}

struct pool_sub *
pool_neg_open(struct pool *pool, const char *url, const struct filter *filter,
    const uint8_t *msg, size_t len, const struct pool_neg_cbs *cbs, void *arg)
{
	struct neg_open_args	 a = { filter, msg, len };
	struct pool_sub		*s;

	if ((s = pool_sub_queue(pool, url, 'n', build_neg_open, &a, true)) == NULL)
		return NULL;
	s->neg = true;
	if (cbs != NULL)
		s->neg_cbs = *cbs;
	s->arg = arg;
	relay_pump(s->relay);
	return s;
}

int
pool_neg_send(struct pool_sub *s, const uint8_t *msg, size_t len)
{
	return relay_neg_send(s, msg, len);
}

void
pool_sub_close(struct pool_sub *s)
{
	if (s == NULL)
		return;
	s->ending = false;	/* closed by its owner: no on_err either */
	if (s->state != SUB_DEAD)
		relay_sub_close(s);
}

const char *
pool_sub_id(const struct pool_sub *s)
{
	return s->id;
}

const char *
pool_sub_url(const struct pool_sub *s)
{
	return s->relay->url;
}

unsigned
pool_sub_resent(const struct pool_sub *s)
{
	return s->resent;
}

void
pool_sub_note_invalid(struct pool_sub *s)
{
	relay_note_invalid(s->relay);
}

void
pool_sub_note_unrequested(struct pool_sub *s)
{
	relay_note_unrequested(s->relay);
}

/* The "id" of event JSON text into id. 0 or -1. */
static int
pool_event_id(const char *json, size_t len, uint8_t id[32])
{
	cJSON	*o, *i;
	int	 rc = -1;

	if ((o = cJSON_ParseWithLength(json, len)) == NULL)
		return -1;
	i = cJSON_GetObjectItemCaseSensitive(o, "id");
	if (cJSON_IsString(i) && i->valuestring != NULL &&
	    hex_decode(i->valuestring, strlen(i->valuestring), id, 32) == 0)
		rc = 0;
	cJSON_Delete(o);
	return rc;
}

int
pool_publish(struct pool *pool, const char *url, const char *event_json,
    size_t len, pool_ok_cb cb, void *arg)
{
	struct relay		*r;
	struct relay_pub	*p;
	struct buf		 b;

	if ((r = pool_relay_find(pool, url)) == NULL ||
	    r->state != RELAY_OPEN || r->npubs >= RELAY_MAX_PENDING_OK ||
	    len > EVENT_MAX_BYTES_CEILING || (p = calloc(1, sizeof(*p))) == NULL)
		return -1;
	buf_init(&b, EVENT_MAX_BYTES_CEILING + 16);
	if (pool_event_id(event_json, len, p->id) == -1 ||
	    relay_msg_build_event(&b, event_json, len) == -1 ||
	    (p->frame = strdup(buf_cstr(&b))) == NULL) {
		buf_free(&b);
		free(p);
		return -1;
	}
	p->frame_len = b.len;
	buf_free(&b);
	p->cb = cb;
	p->arg = arg;
	if (relay_publish(r, p) == -1) {
		free(p->frame);
		free(p);
		return -1;
	}
	TAILQ_INSERT_TAIL(&r->pubs, p, entry);
	r->npubs++;
	return 0;
}

void
pool_set_pace(struct pool *pool, uint32_t pace_ms)
{
	struct relay	*r;

	pool->conf.pace_ms = pace_ms;
	TAILQ_FOREACH(r, &pool->relays, entry)
		relay_pump(r);
}

void
pool_set_backoff_cap(struct pool *pool, uint32_t cap_ms)
{
	/* Read by relay_backoff_ms at each failure: the next wait uses it. */
	pool->conf.backoff_cap_ms = cap_ms;
}

/* stats - reported into d; true if any counter moved. */
static bool
pool_delta(const struct relay *r, struct relay_counters *d)
{
	const uint64_t	*t = (const uint64_t *)&r->stats;
	const uint64_t	*f = (const uint64_t *)&r->reported;
	uint64_t	*o = (uint64_t *)d;
	size_t		 i, n = sizeof(*d) / sizeof(uint64_t);
	bool		 moved = false;

	for (i = 0; i < n; i++) {
		o[i] = t[i] - f[i];
		moved |= o[i] != 0;
	}
	return moved;
}

/* What r has to record, into rep; false when nothing. */
static bool
pool_report_fill(const struct relay *r, struct pool_report *rep)
{
	uint64_t	now = loop_now_ms(r->loop);
	bool		moved = pool_delta(r, &rep->delta);

	if (!moved && !r->rec_added && !r->rec_state && r->nip11_new == NULL)
		return false;
	rep->url = r->url;
	rep->role = r->role;
	rep->added = r->rec_added;
	rep->state_changed = r->rec_state || r->rec_added;
	rep->state = relay_state_name(r->state);
	rep->last_error = r->last_error;
	rep->failures = r->failures;
	rep->backoff_until_ms = r->state == RELAY_BACKOFF &&
	    r->backoff_until_ms > now ? clock_wall_s() * 1000 +
	    (int64_t)(r->backoff_until_ms - now) : 0;
	rep->nip11 = r->nip11_new;
	return true;
}

/* The observer recorded what pool_report_fill gave for r: forget it. */
static void
pool_report_done(struct relay *r)
{
	r->reported = r->stats;
	r->rec_added = r->rec_state = false;
	free(r->nip11_new);
	r->nip11_new = NULL;
}

int
pool_flush(struct pool *pool)
{
	struct pool_report	*reps;
	struct relay		*r;
	size_t			 n = 0;
	int			 rc = 0;

	pool->last_flush_ms = loop_now_ms(pool->loop);
	if (pool->observer.flush == NULL || pool->nrelays == 0)
		return 0;
	if ((reps = calloc(pool->nrelays, sizeof(*reps))) == NULL)
		return -1;
	TAILQ_FOREACH(r, &pool->relays, entry)
		if (pool_report_fill(r, &reps[n]))
			n++;
	if (n > 0 && (rc = pool->observer.flush(pool->observer.arg, reps,
	    n)) == 0)
		TAILQ_FOREACH(r, &pool->relays, entry)
			pool_report_done(r);
	free(reps);
	return rc;
}

static void
pool_nip11_done(int status, const char *body, size_t len, const char *err,
    void *arg)
{
	struct relay		*r = arg;
	struct nip11_info	 info;
	char			 why[128];

	r->nip11_req = NULL;
	if (err != NULL || status != 200) {
		log_info("relay %s: no NIP-11 document (%s)", r->url,
		    err != NULL ? err : "status not 200");
		relay_limits_pending(r, false);	/* REQs held for it go now */
		return;
	}
	if (nip11_parse(body, len, &info, why, sizeof(why)) == -1) {
		log_info("relay %s: NIP-11 document refused: %s", r->url, why);
		relay_limits_pending(r, false);
		return;
	}
	r->nip11_at_ms = loop_now_ms(r->loop);
	r->max_limit = info.max_limit;
	r->max_subscriptions = info.max_subscriptions;
	r->max_message_length = info.max_message_length;
	free(r->nip11_new);
	if ((r->nip11_new = malloc(sizeof(*r->nip11_new))) != NULL)
		*r->nip11_new = info;	/* reported at the next flush */
	relay_apply_limits(r);
}

/*
 * Fetch r's NIP-11 document beside a connect attempt, unless one is in
 * flight or was read less than RELAY_NIP11_REFRESH_MS ago. While the
 * first one is on its way, r holds its REQs for it (a moment).
 */
static void
pool_nip11_start(struct pool *pool, struct relay *r)
{
	struct http_opts	 ho;
	uint64_t		 now = loop_now_ms(pool->loop);
	char			 err[256];

	if (pool->no_nip11 || r->nip11_req != NULL ||
	    (r->nip11_at_ms != 0 && now - r->nip11_at_ms <
	    RELAY_NIP11_REFRESH_MS))
		return;
	memset(&ho, 0, sizeof(ho));
	ho.dns = pool->conf.dns;
	ho.ca_file = pool->ca_file;
	ho.accept = "application/nostr+json";
	r->nip11_req = http_get(pool->loop, r->url, &ho, pool_nip11_done, r,
	    err, sizeof(err));
	if (r->nip11_req == NULL)
		log_info("relay %s: NIP-11 not fetched: %s", r->url, err);
	else if (r->nip11_at_ms == 0)
		relay_limits_pending(r, true);
}

static void
pool_nip11_cancel(struct relay *r)
{
	if (r->nip11_req != NULL)
		http_cancel(r->nip11_req);
	r->nip11_req = NULL;
}

static void
pool_info_fill(const struct relay *r, struct pool_relay_info *info)
{
	const struct pool_sub	*s;

	memset(info, 0, sizeof(*info));
	info->url = r->url;
	info->state = r->state;
	info->state_name = relay_state_name(r->state);
	info->role = relay_role_name(r->role);
	info->last_error = r->last_error;
	info->last_error_at = r->last_error_at;
	info->last_open_at = r->last_open_at;
	info->failures = r->failures;
	TAILQ_FOREACH(s, &r->subs, entry) {
		if (s->state == SUB_SENT || s->state == SUB_LIVE)
			info->subs_open++;
		else if (s->state == SUB_QUEUED || s->state == SUB_AUTH_WAIT)
			info->subs_queued++;
	}
	info->events = r->stats.events;
	info->bytes_in = r->stats.bytes_in;
	info->reqs = r->stats.reqs;
	info->eose = r->stats.eose;
	info->notices = r->stats.notices;
	info->closed = r->stats.closed;
	info->auth = r->stats.auth;
	info->invalid = r->stats.invalid;
	info->dropped = r->stats.dropped;
	info->unrequested = r->stats.unrequested;
	info->neg_opens = r->stats.neg_opens;
	info->neg_msgs_in = r->stats.neg_msgs_in;
	info->neg_msgs_out = r->stats.neg_msgs_out;
	info->neg_errs = r->stats.neg_errs;
	info->cut_invalid = r->cut_invalid;
	info->max_limit = r->max_limit;
	info->max_subscriptions = r->max_subscriptions;
	info->authenticated = r->auth == RELAY_AUTH_OK;
	info->auth_state = r->auth;
}

size_t
pool_relay_count(const struct pool *pool)
{
	return pool->nrelays;
}

int
pool_relay_info(const struct pool *pool, size_t i, struct pool_relay_info *info)
{
	const struct relay	*r;

	TAILQ_FOREACH(r, &pool->relays, entry)
		if (i-- == 0) {
			pool_info_fill(r, info);
			return 0;
		}
	return -1;
}

int
pool_relay_info_url(const struct pool *pool, const char *url,
    struct pool_relay_info *info)
{
	const struct relay	*r;

	TAILQ_FOREACH(r, &pool->relays, entry)
		if (strcmp(r->url, url) == 0) {
			pool_info_fill(r, info);
			return 0;
		}
	return -1;
}
