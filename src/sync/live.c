/*
 * live.c — live subscriptions per relay. The author set of a relay is
 * built from the store each time the follow graph reports a change: every
 * followed author that lists the relay as a write relay the outbox plan
 * lets it use (sync/outbox.h), plus (on the bootstrap relays) the roots
 * and every author left with no such relay. A digest of the sorted set
 * tells whether anything changed; an unchanged relay keeps its
 * subscriptions untouched.
 *
 * since: the newest created_at seen live from the relay (memory, else the
 * store's relay_newest row) minus live.overlap_s; with nothing seen yet,
 * now minus the overlap (older history is the drain's). When the pool
 * sends a REQ again after a reconnect, the subscription is reopened at
 * the first sign of it with a fresh since, so the gap is covered without
 * asking for the whole overlap window of the old one.
 *
 * It never frees a subscription inside its own callback except after
 * closing it, and never writes SQL itself.
 */

#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "core/config.h"
#include "core/limits.h"
#include "core/log.h"
#include "core/loop.h"
#include "core/queue.h"
#include "nostr/filter.h"
#include "relay/pool.h"
#include "store/events.h"
#include "store/follows.h"
#include "sync/follow.h"
#include "sync/ingest.h"
#include "sync/ctx.h"
#include "sync/live.h"
#include "sync/outbox.h"
#include "sync/subs.h"

struct lrelay;

struct lsub {
	TAILQ_ENTRY(lsub)	 entry;
	struct lrelay		*lr;
	struct pool_sub		*sub;
	struct filter		 f[SYNC_FILTERS_PER_SUB];
	size_t			 nf;
	unsigned		 resent;
	bool			 reopen;	/* resent or closed: redo */
};
TAILQ_HEAD(lsub_list, lsub);

struct lrelay {
	TAILQ_ENTRY(lrelay)	 entry;
	struct live		*lv;
	char			*url;
	struct lsub_list	 subs;
	uint64_t		 digest;	/* of the author set subscribed */
	int64_t			 newest;	/* created_at seen live */
	uint64_t		 timer;		/* reopen marked subs */
	/*
	 * The author set being built by live_sync, as indices into its
	 * table of authors: 4 bytes an (author, relay) pair where a key was
	 * 32 (5,000 authors on 4 bootstrap and 20 outbox relays held 2.3 MB
	 * of keys at once).
	 */
	uint32_t		*set;
	size_t			 nset, capset;
};
TAILQ_HEAD(lrelay_list, lrelay);

struct live {
	struct loop		*loop;
	struct pool		*pool;
	struct ingest		*ing;
	struct store		*st;
	const struct config	*cfg;
	struct follow		*follow;
	struct lrelay_list	 relays;
	size_t			 nsubs;
	/* live_sync's table of the followed authors, in pubkey order. */
	uint8_t			 (*authors)[32];
	size_t			 nauthors, capauthors;
};

static void	lrelay_schedule(struct lrelay *, uint64_t delay_ms);

static int64_t
lrelay_since(struct lrelay *lr)
{
	int64_t	overlap = config_get_int(lr->lv->cfg, "live.overlap_s");
	int64_t	newest = lr->newest;

	/*
	 * A record that cannot be read (logged) gives now for this time only,
	 * not kept as if read: the next reopen reads it again.
	 */
	if (newest == 0 && store_relay_newest_get(lr->lv->st, lr->url,
	    &newest) == -1) {
		newest = clock_wall_s();
		return newest > overlap ? newest - overlap : 0;
	}
	if (newest == 0)
		newest = clock_wall_s();
	lr->newest = newest;
	return newest > overlap ? newest - overlap : 0;
}

/* Close ls and unlink it from head, the list it is on. */
static void
lsub_free(struct lsub_list *head, struct lsub *ls)
{
	struct lrelay	*lr = ls->lr;

	if (ls->sub != NULL) {
		pool_sub_close(ls->sub);
		lr->lv->nsubs--;
	}
	TAILQ_REMOVE(head, ls, entry);
	sync_filters_free(ls->f, ls->nf);
	free(ls);
}

/* A reconnect resent the REQ with the old since: reopen from the loop. */
static void
lsub_check_resent(struct lsub *ls)
{
	if (ls->sub != NULL && pool_sub_resent(ls->sub) != ls->resent &&
	    !ls->reopen) {
		ls->reopen = true;
		lrelay_schedule(ls->lr, 0);
	}
}

static void
lsub_on_event(struct pool_sub *sub, struct relay_msg *msg, void *arg)
{
	struct lsub		*ls = arg;
	struct live		*lv = ls->lr->lv;
	struct ingest_info	 info;
	enum ingest_result	 r;

	lsub_check_resent(ls);
	r = ingest_event(lv->ing, msg, ls->f, ls->nf, INGEST_LIVE,
	    ls->lr->url, &info);
	if (r == INGEST_NEW || r == INGEST_DUPLICATE) {
		if (info.created_at > ls->lr->newest &&
		    info.created_at <= clock_wall_s() + EVENT_MAX_FUTURE_S)
			ls->lr->newest = info.created_at;
		if (lv->follow != NULL)
			follow_note(lv->follow, r, &info);
	} else if (r == INGEST_INVALID)
		pool_sub_note_invalid(sub);
	else if (r == INGEST_UNREQUESTED && !info.off_time)
		pool_sub_note_unrequested(sub);
}

static void
lsub_on_eose(struct pool_sub *sub, void *arg)
{
	(void)sub;
	lsub_check_resent(arg);
}

static void
lsub_on_closed(struct pool_sub *sub, enum relay_reason reason,
    const char *message, void *arg)
{
	struct lsub	*ls = arg;

	(void)reason;
	log_info("live: %s closed a subscription: %s", pool_sub_url(sub),
	    message != NULL ? message : "");
	ls->sub = NULL;		/* the handle dies with this callback */
	ls->lr->lv->nsubs--;
	ls->reopen = true;
	lrelay_schedule(ls->lr, LIVE_RETRY_MS);
}

static const struct pool_sub_cbs lsub_cbs = {
	lsub_on_event, lsub_on_eose, lsub_on_closed,
};

/* (Re)send ls with since on its filters. 0 or -1. */
static int
lsub_open(struct lsub *ls, int64_t since)
{
	struct live	*lv = ls->lr->lv;
	size_t		 i;

	for (i = 0; i < ls->nf; i++) {
		ls->f[i].since = since;
		ls->f[i].has |= FILTER_HAS_SINCE;
	}
	if (ls->sub != NULL) {
		pool_sub_close(ls->sub);
		lv->nsubs--;
	}
	ls->sub = pool_sub_open(lv->pool, ls->lr->url, ls->f, ls->nf,
	    &lsub_cbs, ls);
	ls->reopen = ls->sub == NULL;
	if (ls->sub == NULL)
		return -1;
	ls->resent = 0;
	lv->nsubs++;
	return 0;
}

static void
lrelay_reopen(struct loop *l, void *arg)
{
	struct lrelay	*lr = arg;
	struct lsub	*ls;
	int64_t		 since = lrelay_since(lr);

	(void)l;
	lr->timer = 0;
	TAILQ_FOREACH(ls, &lr->subs, entry)
		if (ls->reopen && lsub_open(ls, since) == -1)
			lrelay_schedule(lr, LIVE_RETRY_MS);
}

static void
lrelay_schedule(struct lrelay *lr, uint64_t delay_ms)
{
	if (lr->timer == 0)
		lr->timer = loop_timer_add(lr->lv->loop, delay_ms,
		    lrelay_reopen, lr);
}

static struct lrelay *
lrelay_get(struct live *lv, const char *url)
{
	struct lrelay	*lr;

	TAILQ_FOREACH(lr, &lv->relays, entry)
		if (strcmp(lr->url, url) == 0)
			return lr;
	if ((lr = calloc(1, sizeof(*lr))) == NULL ||
	    (lr->url = strdup(url)) == NULL) {
		free(lr);
		return NULL;
	}
	lr->lv = lv;
	TAILQ_INIT(&lr->subs);
	TAILQ_INSERT_TAIL(&lv->relays, lr, entry);
	return lr;
}

/* Add author i to the set being built (authors come in pubkey order). */
static void
lrelay_add(struct lrelay *lr, uint32_t i)
{
	uint32_t	*grown;
	size_t		 cap;

	if (lr->nset > 0 && lr->set[lr->nset - 1] == i)
		return;
	if (lr->nset == lr->capset) {
		cap = lr->capset ? lr->capset * 2 : 64;
		if ((grown = realloc(lr->set, cap * sizeof(*grown))) == NULL)
			return;
		lr->set = grown;
		lr->capset = cap;
	}
	lr->set[lr->nset++] = i;
}

/* FNV-1a over the set: enough to tell "same authors" from "changed". */
static uint64_t
set_digest(const uint8_t (*set)[32], size_t n)
{
	uint64_t	h = 1469598103934665603ULL;
	size_t		i;

	for (i = 0; i < n * 32; i++) {
		h ^= ((const uint8_t *)set)[i];
		h *= 1099511628211ULL;
	}
	return h ^ n;
}

static void
lrelay_close_all(struct lrelay *lr)
{
	struct lsub	*ls;

	while ((ls = TAILQ_FIRST(&lr->subs)) != NULL)
		lsub_free(&lr->subs, ls);
	lr->digest = 0;
}

/* Replace the relay's subscriptions by ones for its new set. */
static void
lrelay_apply(struct lrelay *lr)
{
	struct lsub		*ls;
	uint8_t			(*keys)[32];
	uint64_t		 dg;
	size_t			 pos = 0, i;
	int64_t			 since;
	int			 nf;

	/* The set's keys, for this relay only while it is applied. */
	if ((keys = calloc(lr->nset ? lr->nset : 1, 32)) == NULL)
		return;
	for (i = 0; i < lr->nset; i++)
		memcpy(keys[i], lr->lv->authors[lr->set[i]], 32);
	dg = set_digest((const uint8_t (*)[32])keys, lr->nset);
	if (dg == lr->digest && !TAILQ_EMPTY(&lr->subs)) {
		free(keys);
		return;
	}
	/*
	 * The old ones go first: the new ones ask from since, which covers
	 * the moment between, and the relay's subscription cap and memory
	 * never hold both sets (two copies of 5,000 follows' keys).
	 */
	lrelay_close_all(lr);
	lr->digest = dg;
	since = lrelay_since(lr);
	/* NULL only for a URL that does not parse (logged). */
	if (lr->nset > 0 && pool_relay_find(lr->lv->pool, lr->url) == NULL)
		(void)pool_relay_add(lr->lv->pool, lr->url, RELAY_ROLE_OUTBOX);
	while (pos < lr->nset) {
		if ((ls = calloc(1, sizeof(*ls))) == NULL)
			break;
		nf = sync_filters_chunk(ls->f, (const uint8_t (*)[32])keys,
		    lr->nset, &pos, NULL, 0, since);
		if (nf <= 0) {
			free(ls);
			break;
		}
		ls->nf = (size_t)nf;
		ls->lr = lr;
		TAILQ_INSERT_TAIL(&lr->subs, ls, entry);
		if (lsub_open(ls, since) == -1)
			lrelay_schedule(lr, LIVE_RETRY_MS);
	}
	free(keys);
	log_info("live: %s: %zu authors", lr->url, lr->nset);
}

struct build {
	struct live		*lv;
	uint32_t		 cur;		/* the author's index */
	char			**boots;	/* bootstrap relays, normalised */
	size_t			 nboots;
	struct outbox_plan	 plan;		/* outbox relays that may be used */
	bool			 any;
};

static int
build_write(const uint8_t pk[32], const struct store_author_relay *ar,
    void *arg)
{
	struct build	*b = arg;
	struct lrelay	*lr;

	(void)pk;
	if (!ar->write || (lr = lrelay_get(b->lv, ar->url)) == NULL)
		return 0;
	lrelay_add(lr, b->cur);
	b->any = true;
	return 0;
}

/* The author on its write relays; roots and list-less ones on bootstrap. */
static int
build_author(const struct store_follow *f, void *arg)
{
	struct build	*b = arg;
	struct live	*lv = b->lv;
	struct lrelay	*lr;
	uint8_t		(*grown)[32];
	size_t		 i, cap;

	if (lv->nauthors == lv->capauthors) {
		cap = lv->capauthors ? lv->capauthors * 2 : 256;
		if ((grown = realloc(lv->authors, cap * 32)) == NULL)
			return 0;
		lv->authors = grown;
		lv->capauthors = cap;
	}
	memcpy(lv->authors[lv->nauthors], f->pubkey, 32);
	b->cur = (uint32_t)lv->nauthors++;
	b->any = false;
	(void)outbox_author_each(&b->plan, b->lv->st, f->pubkey, build_write,
	    b);
	if (b->any && !f->is_root)
		return 0;
	for (i = 0; i < b->nboots; i++)
		if ((lr = lrelay_get(b->lv, b->boots[i])) != NULL)
			lrelay_add(lr, b->cur);
	return 0;
}

void
live_sync(void *arg)
{
	struct live	*lv = arg;
	struct lrelay	*lr;
	struct build	 b = { .lv = lv };
	bool		 on = config_get_bool(lv->cfg, "live.enabled");
	bool		 unread = false;

	TAILQ_FOREACH(lr, &lv->relays, entry) {
		lr->nset = 0;
	}
	if (on) {
		b.nboots = sync_urls_parse(config_get(lv->cfg,
		    "relays.bootstrap"), &b.boots);
		outbox_plan_init(&b.plan, SYNC_OUTBOX_RELAYS_MAX, b.boots,
		    b.nboots);
		if (outbox_plan_load(&b.plan, lv->st) == -1 ||
		    store_follows_each(lv->st, false, build_author, &b) == -1)
			unread = true;
		outbox_plan_free(&b.plan);
		sync_urls_free(b.boots, b.nboots);
	}
	/*
	 * A set read in part would close the subscriptions of every author
	 * left out: they stay as they were until live_sync runs again (the
	 * follow graph tells of every resolution, at least every refresh).
	 */
	if (unread)
		log_warnx("live: the followed set or its relays could not be "
		    "read; live subscriptions left as they were");
	TAILQ_FOREACH(lr, &lv->relays, entry) {
		if (!unread && (!on || lr->nset == 0))
			lrelay_close_all(lr);
		else if (!unread)
			lrelay_apply(lr);
		free(lr->set);
		lr->set = NULL;
		lr->nset = lr->capset = 0;
	}
	free(lv->authors);
	lv->authors = NULL;
	lv->nauthors = lv->capauthors = 0;
}

struct live *
live_new(const struct sync_ctx *cx)
{
	struct live	*lv;

	if ((lv = calloc(1, sizeof(*lv))) == NULL)
		return NULL;
	lv->loop = cx->loop;
	lv->pool = cx->pool;
	lv->ing = cx->ing;
	lv->st = cx->st;
	lv->cfg = cx->cfg;
	lv->follow = cx->follow;
	TAILQ_INIT(&lv->relays);
	return lv;
}

void
live_free(struct live *lv)
{
	struct lrelay	*lr;

	if (lv == NULL)
		return;
	while ((lr = TAILQ_FIRST(&lv->relays)) != NULL) {
		TAILQ_REMOVE(&lv->relays, lr, entry);
		lrelay_close_all(lr);
		loop_timer_clear(lv->loop, &lr->timer);
		free(lr->set);
		free(lr->url);
		free(lr);
	}
	free(lv);
}

size_t
live_subs(const struct live *lv)
{
	return lv->nsubs;
}
