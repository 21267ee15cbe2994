/*
 * negsync.c — the NIP-77 planner (negsync.h): steps that reconcile one
 * author on one relay window by window, the exact-id fetches of what the
 * relay has and the box lacks, the recovery of what did not come, and the
 * relays' NIP-77 support, remembered in the store.
 *
 * A step owns its set (at most NEGSYNC_WINDOW_ITEMS items), its session,
 * its queue of ids to fetch (at most NEGSYNC_QUEUE_IDS; ids past it in one
 * message are dropped and the window is reconciled once more, which finds
 * them again, so memory stays bounded whatever a relay sends) and its
 * fetches. It never frees itself inside a pool callback: it is marked
 * finished, its subscriptions closed, and a zero-delay timer reaps it.
 * Events go through ingest like any other; nothing here writes an event.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/clock.h"
#include "core/config.h"
#include "core/hex.h"
#include "core/limits.h"
#include "core/log.h"
#include "core/loop.h"
#include "core/queue.h"
#include "nostr/event.h"
#include "nostr/filter.h"
#include "nostr/negentropy.h"
#include "relay/pool.h"
#include "store/cursors.h"
#include "store/events.h"
#include "store/relays.h"
#include "store/scan.h"
#include "store/store.h"
#include "store/withdrawn.h"
#include "sync/ctx.h"
#include "sync/follow.h"
#include "sync/idfetch.h"
#include "sync/ingest.h"
#include "sync/negsync.h"
#include "sync/recovery.h"
#include "sync/sweep.h"

struct negsync;
struct nstep;

/* Where one id of a fetch is (nfetch.state). */
enum nid_state {
	NID_TODO = 0,		/* not asked yet, or asked again */
	NID_ASKED,		/* in the REQ open now */
	NID_CAME,		/* stored */
	NID_MISSING,		/* asked within the relay's cap, not sent */
};

/*
 * One exact-id fetch, a step's or a recovery attempt's (step NULL): its
 * ids asked in REQs of at most the relay's cap, one after the other
 * (sync/idfetch.h), until each came or is missing.
 */
struct nfetch {
	TAILQ_ENTRY(nfetch)	 entry;
	struct negsync		*ns;
	struct nstep		*step;
	struct pool_sub		*sub;		/* the REQ open now */
	char			 url[URL_MAX_BYTES + 1];
	uint8_t			(*ids)[32];	/* sorted, each once */
	size_t			 nids;
	uint8_t			*state;		/* per id, enum nid_state */
	struct filter		 f;		/* the REQ open now */
	size_t			 asked;		/* ids in it */
	size_t			 arrived;	/* of them, stored */
	uint64_t		 timer;
};
TAILQ_HEAD(nfetch_list, nfetch);

/*
 * What one session (one window) has taken, against what an honest one may
 * take (budget_over): the round trips neg_rounds_bound allows for the
 * items in play and the bytes received, the bytes those items can fill,
 * and the time their fetches can take.
 */
struct nbudget {
	uint64_t		 rounds;	/* NEG-MSGs received */
	uint64_t		 bytes;		/* bytes of them */
	uint64_t		 items;		/* the box's items in the window */
	uint64_t		 ids;		/* ids the relay named that the box lacks */
	uint64_t		 started_ms;	/* loop ms of NEG-OPEN */
};

struct nstep {
	TAILQ_ENTRY(nstep)	 entry;
	struct negsync		*ns;
	uint8_t			 pk[32];
	char			 pkhex[65];
	char			 url[URL_MAX_BYTES + 1];
	negsync_done_fn		 done;
	void			*arg;
	uint64_t		 batch;		/* recovery's source batch */
	struct neg_window	 w;		/* the window being reconciled */
	bool			 last_window;
	bool			 overflow;	/* ids dropped: run the window again */
	struct neg_storage	 set;
	struct neg_session	 sess;
	bool			 sess_live;
	struct nbudget		 budget;	/* of the window's session */
	struct pool_sub		*neg;		/* the NEG session, or NULL */
	bool			 replied;	/* a NEG-MSG came this window */
	bool			 neg_done;	/* this window reconciled */
	bool			 held;		/* out waits for room in queue */
	struct buf		 out;
	uint8_t			(*queue)[32];	/* ids to fetch, FIFO */
	size_t			 nq;
	int			 nfetches;
	int64_t			 missing;	/* handed to recovery */
	uint64_t		 timer;		/* first reply / idle */
	bool			 finished;
	/* A scoped step (negsync_start_scope): a filter, not an author. */
	bool			 scoped;
	struct filter		 sf;		/* its filter, no since/until */
	int64_t			 lo;		/* its lowest second, or -1 */
	int64_t			 top;		/* the next window's last second */
	int			 src;	/* enum ingest_source */
	negsync_window_fn	 window;
	int64_t			 win_came, win_new;	/* this window's fetches */
};
TAILQ_HEAD(nstep_list, nstep);

/* What is known of one relay's NIP-77 support. */
struct nrelay {
	char			 url[URL_MAX_BYTES + 1];
	enum negsync_support	 support;
	int64_t			 at;		/* Unix s when learnt */
	char			 why[NEGSYNC_WHY_MAX];	/* of a "no", or "" */
	int64_t			 id_cap;	/* ids its answers stop at; 0: none seen */
};

struct negsync {
	struct loop		*loop;
	struct pool		*pool;
	struct ingest		*ing;
	struct store		*st;
	const struct config	*cfg;
	struct follow		*follow;
	struct recovery		*rec;
	struct nstep_list	 steps;
	size_t			 nsteps;
	struct nfetch_list	 fetches;	/* recovery fetches */
	size_t			 nfetches;
	struct nrelay		*relays;
	size_t			 nrelays;
	uint64_t		 next_batch;
	uint64_t		 reap_timer;
	uint64_t		 rec_timer;
	uint8_t			 sat[NEGSYNC_SATISFIED_BATCH][32];
	size_t			 nsat;		/* stored ids for recovery */
	uint64_t		 sat_timer;
	struct negsync_stats	 stats;
};

static void	step_pump(struct nstep *);
static void	step_window(struct nstep *);
static void	step_end(struct nstep *, enum negsync_end, const char *);
static void	rec_schedule(struct negsync *, uint64_t delay_ms);
static void	step_scope_next(struct nstep *);

/* ---- relays' support ---------------------------------------------------- */

static struct nrelay *
nrelay_get(struct negsync *ns, const char *url)
{
	struct nrelay	*r;
	size_t		 i;
	int		 value;
	int64_t		 at;

	for (i = 0; i < ns->nrelays; i++)
		if (strcmp(ns->relays[i].url, url) == 0)
			return &ns->relays[i];
	if ((r = realloc(ns->relays, (ns->nrelays + 1) * sizeof(*r))) == NULL)
		return NULL;
	ns->relays = r;
	r = &ns->relays[ns->nrelays++];
	memset(r, 0, sizeof(*r));
	snprintf(r->url, sizeof(r->url), "%s", url);
	if (store_relay_negentropy_get(ns->st, url, &value, &at) == 0 &&
	    value >= 0) {
		r->support = value ? NEGSYNC_YES : NEGSYNC_NO;
		r->at = at;
	}
	return r;
}

static void
nrelay_learn(struct negsync *ns, const char *url, enum negsync_support s,
    const char *why)
{
	struct nrelay	*r = nrelay_get(ns, url);

	if (r == NULL || r->support == s)
		return;
	r->support = s;
	r->at = clock_wall_s();
	snprintf(r->why, sizeof(r->why), "%s", s == NEGSYNC_NO && why != NULL ?
	    why : "");
	if (s == NEGSYNC_NO)
		log_info("negentropy: %s does not reconcile (%s); paging it, "
		    "trying again in a day", url, why);
	else
		log_info("negentropy: %s reconciles", url);
	/* Lost (logged): r still rules this run; a restart asks again. */
	(void)store_relay_negentropy_set(ns->st, url, s == NEGSYNC_YES,
	    r->at);
}

enum negsync_support
negsync_support(struct negsync *ns, const char *url)
{
	struct nrelay	*r = nrelay_get(ns, url);

	if (r == NULL)
		return NEGSYNC_UNKNOWN;
	if (r->support == NEGSYNC_NO &&
	    clock_wall_s() - r->at >= NEGSYNC_RETRY_REFUSAL_S)
		return NEGSYNC_UNKNOWN;
	return r->support;
}

const char *
negsync_support_why(struct negsync *ns, const char *url)
{
	struct nrelay	*r = nrelay_get(ns, url);

	if (r == NULL || negsync_support(ns, url) != NEGSYNC_NO)
		return "";
	return r->why;
}

const char *
negsync_support_name(enum negsync_support s)
{
	switch (s) {
	case NEGSYNC_YES:	return "yes";
	case NEGSYNC_NO:	return "no";
	default:		return "unknown";
	}
}

bool
negsync_wanted(struct negsync *ns, const char *url)
{
	return config_get_bool(ns->cfg, "negentropy.enabled") &&
	    negsync_support(ns, url) != NEGSYNC_NO;
}

/* ---- fetches ----------------------------------------------------------- */

static int
id_cmp(const void *a, const void *b)
{
	return memcmp(a, b, 32);
}

static void
fetch_free(struct nfetch *f)
{
	if (f->sub != NULL)
		pool_sub_close(f->sub);
	loop_timer_clear(f->ns->loop, &f->timer);
	filter_free(&f->f);
	free(f->ids);
	free(f->state);
	free(f);
}

static void
fetch_event(struct pool_sub *sub, struct relay_msg *msg, void *arg)
{
	struct nfetch		*f = arg;
	struct negsync		*ns = f->ns;
	struct ingest_info	 info;
	enum ingest_result	 r;
	uint8_t			(*hit)[32];
	size_t			 i;

	r = ingest_event(ns->ing, msg, &f->f, 1, f->step != NULL ?
	    f->step->src : INGEST_RECOVERY, f->url, &info);
	if (r == INGEST_INVALID)
		pool_sub_note_invalid(sub);
	else if (r == INGEST_UNREQUESTED && !info.off_time)
		pool_sub_note_unrequested(sub);
	if (r != INGEST_NEW && r != INGEST_DUPLICATE)
		return;
	if (ns->follow != NULL)
		follow_note(ns->follow, r, &info);
	hit = bsearch(info.id, f->ids, f->nids, 32, id_cmp);
	if (hit == NULL)
		return;
	i = (size_t)(hit - f->ids);
	if (f->state[i] == NID_ASKED)
		f->arrived++;
	if (f->state[i] != NID_CAME && f->step != NULL) {
		f->step->win_came++;
		f->step->win_new += r == INGEST_NEW;
	}
	f->state[i] = NID_CAME;
}

/* The ids of f in state st, into a new array (*n of them). */
static uint8_t (*fetch_ids(const struct nfetch *f, enum nid_state st,
    size_t *n))[32]
{
	uint8_t	(*m)[32];
	size_t	 i;

	*n = 0;
	if ((m = calloc(f->nids ? f->nids : 1, 32)) == NULL)
		return NULL;
	for (i = 0; i < f->nids; i++)
		if (f->state[i] == st)
			memcpy(m[(*n)++], f->ids[i], 32);
	return m;
}

/* A step's fetch ended: what did not come goes to recovery. */
static void
fetch_settle_step(struct nfetch *f)
{
	struct nstep			*s = f->step;
	struct negsync			*ns = f->ns;
	struct recovery_registered	 reg;
	uint8_t				(*m)[32];
	size_t				 n;

	ns->stats.fetched += f->nids;
	if ((m = fetch_ids(f, NID_MISSING, &n)) == NULL || n == 0) {
		free(m);
		return;
	}
	ns->stats.fetched -= n;
	if (recovery_register(ns->rec, f->url, s->batch,
	    (const uint8_t (*)[32])m, n, false, clock_wall_s() * 1000,
	    &reg) == 0) {
		s->missing += reg.added + reg.already_pending;
		ns->stats.registered += (uint64_t)reg.added;
		log_info("negentropy: %s: %zu ids of author %.16s did not come; "
		    "under recovery", f->url, n, s->pkhex);
		rec_schedule(ns, 0);
	}
	free(m);
}

/* A recovery attempt's fetch ended: settle it. */
static void
fetch_settle_recovery(struct nfetch *f)
{
	struct negsync		*ns = f->ns;
	struct recovery_outcome	 o;
	uint8_t			(*got)[32];
	size_t			 n;

	if ((got = fetch_ids(f, NID_CAME, &n)) == NULL)
		return;
	if (recovery_complete(ns->rec, f->url, (const uint8_t (*)[32])got, n,
	    clock_wall_s() * 1000, &o) == 0 && o.result != RECOVERY_NONE) {
		ns->stats.recovered += (uint64_t)o.recovered;
		ns->stats.expired += (uint64_t)o.expired;
		log_info("recovery: %s: %lld of %zu ids came; %lld pending, "
		    "%lld expired", f->url, (long long)o.recovered, f->nids,
		    (long long)o.remaining, (long long)o.expired);
		if (o.result == RECOVERY_FULLY_RECOVERED &&
		    o.can_restore_health && ingest_tx(ns->ing) == 0)
			(void)store_cursors_recovered(ns->st, f->url,
			    clock_wall_s());
	}
	free(got);
}

/* The relay's NIP-11 max_limit, 0 when none is known. */
static int64_t
relay_max_limit(struct negsync *ns, const char *url)
{
	struct pool_relay_info	info;

	return pool_relay_info_url(ns->pool, url, &info) == 0 &&
	    info.max_limit > 0 ? info.max_limit : 0;
}

/* Ids one REQ asks of url when left are to ask (sync/idfetch.h). */
static size_t
fetch_chunk(struct negsync *ns, const char *url, size_t left)
{
	struct nrelay	*r = nrelay_get(ns, url);

	return idfetch_chunk(left, RECOVERY_MAX_IDS_PER_ATTEMPT,
	    r != NULL ? r->id_cap : 0, relay_max_limit(ns, url));
}

static const struct pool_sub_cbs fetch_cbs;
static void	fetch_timeout(struct loop *, void *);

/* Ask the next ids of f still to ask in one REQ. 0, or -1. */
static int
fetch_req(struct nfetch *f)
{
	size_t	i, todo = 0, n;

	for (i = 0; i < f->nids; i++)
		todo += f->state[i] == NID_TODO;
	n = fetch_chunk(f->ns, f->url, todo);
	filter_free(&f->f);
	filter_init(&f->f);
	if ((f->f.ids = malloc((n ? n : 1) * 32)) == NULL)
		return -1;
	for (i = 0; i < f->nids && f->f.nids < n; i++)
		if (f->state[i] == NID_TODO) {
			f->state[i] = NID_ASKED;
			memcpy(f->f.ids[f->f.nids++], f->ids[i], 32);
		}
	f->f.has = FILTER_HAS_IDS;
	f->asked = f->f.nids;
	f->arrived = 0;
	if ((f->sub = pool_sub_open(f->ns->pool, f->url, &f->f, 1, &fetch_cbs,
	    f)) == NULL)
		return -1;
	f->timer = loop_timer_add(f->ns->loop, NEGSYNC_FETCH_TIMEOUT_MS,
	    fetch_timeout, f);
	return 0;
}

/*
 * The REQ open now is over (eose: by its EOSE): settle its ids, and ask
 * the rest at once when the relay stopped at its cap.
 */
static void
fetch_settle_req(struct nfetch *f, bool eose)
{
	struct nrelay		*r = nrelay_get(f->ns, f->url);
	int64_t			 cap = r != NULL ? r->id_cap : 0;
	enum idfetch_end	 end;
	size_t			 i;

	end = idfetch_settle(f->asked, f->arrived, eose, &cap);
	if (r != NULL && cap != r->id_cap) {
		log_info("negentropy: %s answers at most %lld ids at once; "
		    "asking that many", f->url, (long long)cap);
		r->id_cap = cap;
	}
	if (f->sub != NULL)
		pool_sub_close(f->sub);
	f->sub = NULL;
	loop_timer_clear(f->ns->loop, &f->timer);
	for (i = 0; i < f->nids; i++)
		if (f->state[i] == NID_ASKED ||
		    (end == IDFETCH_FAILED && f->state[i] == NID_TODO))
			f->state[i] = end == IDFETCH_CAPPED ? NID_TODO :
			    NID_MISSING;
	f->asked = f->arrived = 0;
}

/* Whether f has ids still to ask. */
static bool
fetch_todo(const struct nfetch *f)
{
	size_t	i;

	for (i = 0; i < f->nids; i++)
		if (f->state[i] == NID_TODO)
			return true;
	return false;
}

/*
 * A REQ of f is over (EOSE, CLOSED, timeout): go on with the rest, or
 * settle the fetch and let it go.
 */
static void
fetch_done(struct nfetch *f, bool eose)
{
	struct nstep	*s = f->step;
	struct negsync	*ns = f->ns;
	size_t		 i;

	fetch_settle_req(f, eose);
	if (fetch_todo(f)) {
		if (fetch_req(f) == 0)
			return;
		if (f->sub != NULL)
			pool_sub_close(f->sub);
		f->sub = NULL;
		for (i = 0; i < f->nids; i++)
			if (f->state[i] != NID_CAME)
				f->state[i] = NID_MISSING;
	}
	if (s != NULL) {
		fetch_settle_step(f);
		TAILQ_REMOVE(&ns->fetches, f, entry);
		s->nfetches--;
	} else {
		fetch_settle_recovery(f);
		TAILQ_REMOVE(&ns->fetches, f, entry);
		ns->nfetches--;
		rec_schedule(ns, 0);
	}
	fetch_free(f);
	if (s != NULL && !s->finished)
		step_pump(s);
}

static void
fetch_eose(struct pool_sub *sub, void *arg)
{
	fetch_done(arg, true);
}

static void
fetch_closed(struct pool_sub *sub, enum relay_reason reason,
    const char *message, void *arg)
{
	struct nfetch	*f = arg;

	f->sub = NULL;		/* ended by the pool */
	fetch_done(f, false);
}

static void
fetch_timeout(struct loop *l, void *arg)
{
	struct nfetch	*f = arg;

	f->timer = 0;
	fetch_done(f, false);
}

static const struct pool_sub_cbs fetch_cbs = {
	fetch_event, fetch_eose, fetch_closed,
};

/*
 * An exact-id fetch of ids[0..n) on url (sorted here, repeats kept once),
 * its first REQ sent. The fetch, linked in ns->fetches, or NULL.
 */
static struct nfetch *
fetch_open(struct negsync *ns, struct nstep *s, const char *url,
    const uint8_t (*ids)[32], size_t n)
{
	struct nfetch	*f;
	size_t		 i, k = 0;

	if ((f = calloc(1, sizeof(*f))) == NULL)
		return NULL;
	f->ns = ns;
	f->step = s;
	snprintf(f->url, sizeof(f->url), "%s", url);
	filter_init(&f->f);
	if ((f->ids = malloc((n ? n : 1) * 32)) == NULL ||
	    (f->state = calloc(n ? n : 1, 1)) == NULL)
		goto fail;
	memcpy(f->ids, ids, n * 32);
	qsort(f->ids, n, 32, id_cmp);
	for (i = 0; i < n; i++)
		if (k == 0 || memcmp(f->ids[k - 1], f->ids[i], 32) != 0)
			memmove(f->ids[k++], f->ids[i], 32);
	f->nids = k;
	if (fetch_req(f) == -1)
		goto fail;
	TAILQ_INSERT_TAIL(&ns->fetches, f, entry);
	return f;
fail:
	f->ns = ns;
	fetch_free(f);
	return NULL;
}

/* ---- steps --------------------------------------------------------------- */

static void
step_free(struct nstep *s)
{
	struct nfetch	*f, *fn;

	if (s->neg != NULL)
		pool_sub_close(s->neg);
	TAILQ_FOREACH_SAFE(f, &s->ns->fetches, entry, fn) {
		if (f->step != s)
			continue;
		TAILQ_REMOVE(&s->ns->fetches, f, entry);
		fetch_free(f);
	}
	loop_timer_clear(s->ns->loop, &s->timer);
	if (s->sess_live)
		neg_session_free(&s->sess);
	neg_storage_free(&s->set);
	buf_free(&s->out);
	free(s->queue);
	filter_free(&s->sf);
	free(s);
}

static void
reap(struct loop *l, void *arg)
{
	struct negsync	*ns = arg;
	struct nstep	*s, *sn;

	ns->reap_timer = 0;
	TAILQ_FOREACH_SAFE(s, &ns->steps, entry, sn) {
		if (!s->finished)
			continue;
		TAILQ_REMOVE(&ns->steps, s, entry);
		step_free(s);
	}
}

/*
 * End the step: close what it has open, count, tell the drain; the step
 * itself is reaped from the loop (we may be inside its callbacks).
 */
static void
step_end(struct nstep *s, enum negsync_end end, const char *why)
{
	struct negsync	*ns = s->ns;
	struct nfetch	*f;

	if (s->finished)
		return;
	s->finished = true;
	ns->nsteps--;
	if (s->neg != NULL) {
		pool_sub_close(s->neg);
		s->neg = NULL;
	}
	TAILQ_FOREACH(f, &ns->fetches, entry) {
		if (f->step != s)
			continue;
		if (f->sub != NULL)
			pool_sub_close(f->sub);
		f->sub = NULL;
		loop_timer_clear(ns->loop, &f->timer);
	}
	loop_timer_clear(ns->loop, &s->timer);
	switch (end) {
	case NEGSYNC_COMPLETE:		ns->stats.complete++; break;
	case NEGSYNC_RECOVERING:	ns->stats.recovering++; break;
	case NEGSYNC_REFUSED:		ns->stats.refused++; break;
	default:			ns->stats.failed++; break;
	}
	log_debug("negentropy: %s: author %.16s: %s", s->url, s->pkhex,
	    why != NULL ? why : "done");
	if (ns->reap_timer == 0)
		ns->reap_timer = loop_timer_add(ns->loop, 0, reap, ns);
	if (s->done != NULL)
		s->done(s->arg, end, why);
}

static void
step_timer(struct loop *l, void *arg)
{
	struct nstep	*s = arg;

	s->timer = 0;
	if (s->replied) {
		step_end(s, NEGSYNC_FAILED, "no progress in time");
		return;
	}
	nrelay_learn(s->ns, s->url, NEGSYNC_NO, "no answer to NEG-OPEN");
	step_end(s, NEGSYNC_REFUSED, "no answer to NEG-OPEN");
}

static void
step_arm(struct nstep *s)
{
	loop_timer_clear(s->ns->loop, &s->timer);
	s->timer = loop_timer_add(s->ns->loop, s->replied ? NEGSYNC_IDLE_MS :
	    NEGSYNC_FIRST_REPLY_MS, step_timer, s);
}

/* neg_ids.need: the relay has id and the box lacks it. */
static void
step_need(void *arg, const uint8_t id[NEG_ID_BYTES])
{
	struct nstep	*s = arg;

	s->ns->stats.need++;
	s->budget.ids++;
	/*
	 * What the box withdrew (a tombstone of a verified event) is never
	 * fetched again, nor counted missing: the relay still holds it.
	 */
	if (store_withdrawn_known(s->ns->st, id, NULL) == 1) {
		s->ns->stats.withdrawn++;
		return;
	}
	if (s->nq == NEGSYNC_QUEUE_IDS) {
		s->overflow = true;	/* found again in the next pass */
		return;
	}
	memcpy(s->queue[s->nq++], id, 32);
}

/* Send the message in s->out (a NEG-MSG of the session). */
static void
step_send(struct nstep *s)
{
	s->held = false;
	s->ns->stats.msgs_out++;
	s->ns->stats.bytes_out += s->out.len;
	if (pool_neg_send(s->neg, buf_rptr(&s->out), buf_avail(&s->out)) == -1)
		step_end(s, NEGSYNC_FAILED, "cannot send NEG-MSG");
}

/*
 * Start fetches while there is room; send a held message once the queue
 * has room again; move on when the window is reconciled and fetched.
 */
static void
step_pump(struct nstep *s)
{
	size_t	n, most;

	most = fetch_chunk(s->ns, s->url, RECOVERY_MAX_IDS_PER_ATTEMPT);
	while (s->nfetches < NEGSYNC_FETCHES_PER_STEP && s->nq > 0 &&
	    (s->nq >= most || s->neg_done || s->held)) {
		n = s->nq < most ? s->nq : most;
		if (fetch_open(s->ns, s, s->url, (const uint8_t (*)[32])s->queue,
		    n) == NULL) {
			step_end(s, NEGSYNC_FAILED, "cannot open a fetch");
			return;
		}
		s->nfetches++;
		memmove(s->queue, s->queue + n, (s->nq - n) * 32);
		s->nq -= n;
	}
	if (s->held && s->nq <= NEGSYNC_QUEUE_IDS / 2)
		step_send(s);
	if (s->finished || !s->neg_done || s->nq > 0 || s->nfetches > 0)
		return;
	if (s->overflow) {
		s->overflow = false;		/* the same window again */
		step_window(s);
	} else if (s->scoped) {
		step_scope_next(s);
	} else if (!s->last_window) {
		s->w.since = s->w.until + 1;
		step_window(s);
	} else
		step_end(s, s->missing > 0 ? NEGSYNC_RECOVERING :
		    NEGSYNC_COMPLETE, s->missing > 0 ? "ids under recovery" :
		    NULL);
}

/*
 * Why the session has taken more than an honest one could, or NULL. The
 * items in play are the box's in the window and the ids the relay named;
 * an honest relay's bytes are at most two ids and fingerprints per item
 * and a frame per round trip of the tree's depth.
 */
static const char *
budget_over(const struct nstep *s, uint64_t now_ms, char *why, size_t size)
{
	const struct nbudget	*b = &s->budget;
	uint64_t		 n = b->items + b->ids, rounds, bytes, ms;

	rounds = neg_rounds_bound(n, NEGSYNC_FRAME_BYTES);
	bytes = rounds * NEG_FRAME_MIN_BYTES + 2 * n * (NEG_ID_BYTES +
	    NEG_FP_BYTES);
	rounds += b->bytes / (NEG_FRAME_MIN_BYTES - NEG_FRAME_RESERVE_BYTES);
	ms = NEGSYNC_IDLE_MS + b->ids * NEGSYNC_FETCH_TIMEOUT_MS /
	    (NEGSYNC_FETCHES_PER_STEP * RECOVERY_MAX_IDS_PER_ATTEMPT);
	if (b->rounds > rounds)
		snprintf(why, size, "a session of %llu items took more than "
		    "%llu rounds", (unsigned long long)n,
		    (unsigned long long)rounds);
	else if (b->bytes > bytes)
		snprintf(why, size, "a session of %llu items sent more than "
		    "%llu bytes", (unsigned long long)n,
		    (unsigned long long)bytes);
	else if (now_ms - b->started_ms > ms)
		snprintf(why, size, "a session of %llu items took more than "
		    "%llu s", (unsigned long long)n,
		    (unsigned long long)(ms / 1000));
	else
		return NULL;
	return why;
}

/*
 * The relay broke NIP-77 (a session past its budget, a connection closed
 * for a message too big): it is recorded as not reconciling, with why, its
 * last_error says so, and every step on it ends refused, so its rows are
 * paged and its slots freed at once.
 */
static void
relay_refuse(struct negsync *ns, const char *url, const char *why)
{
	struct nstep	*s;
	char		 text[NEGSYNC_WHY_MAX + 16];

	snprintf(text, sizeof(text), "negentropy: %s", why);
	nrelay_learn(ns, url, NEGSYNC_NO, why);
	pool_relay_note_error(ns->pool, url, text);
	TAILQ_FOREACH(s, &ns->steps, entry)
		if (!s->finished && strcmp(s->url, url) == 0)
			step_end(s, NEGSYNC_REFUSED, why);
}

static void
neg_on_msg(struct pool_sub *sub, const uint8_t *msg, size_t len, void *arg)
{
	struct nstep		*s = arg;
	const struct neg_ids	 ids = { .need = step_need, .arg = s };
	enum neg_status		 st;
	char			 why[NEGSYNC_WHY_MAX];

	if (s->finished)
		return;
	if (!s->replied)
		nrelay_learn(s->ns, s->url, NEGSYNC_YES, NULL);
	s->replied = true;
	s->ns->stats.msgs_in++;
	s->ns->stats.bytes_in += len;
	s->budget.rounds++;
	s->budget.bytes += len;
	step_arm(s);
	st = neg_reconcile(&s->sess, msg, len, &s->out, &ids);
	if (st != NEG_ERROR && budget_over(s, loop_now_ms(s->ns->loop), why,
	    sizeof(why)) != NULL) {
		s->ns->stats.over_budget++;
		relay_refuse(s->ns, s->url, why);
		return;
	}
	if (st == NEG_ERROR) {
		log_info("negentropy: %s: bad message: %s", s->url,
		    neg_session_reason(&s->sess));
		step_end(s, NEGSYNC_FAILED, neg_session_reason(&s->sess));
		return;
	}
	if (st == NEG_DONE) {
		s->neg_done = true;
		pool_sub_close(s->neg);
		s->neg = NULL;
	} else if (s->nq > NEGSYNC_QUEUE_IDS / 2)
		s->held = true;		/* sent once fetches made room */
	else
		step_send(s);
	if (!s->finished)
		step_pump(s);
}

/*
 * The session ended without our NEG-CLOSE. Before any answer, a refusal
 * (NEG-ERR, CLOSED, a refusing NOTICE) means the relay does not
 * reconcile; a lost connection or a malformed answer means nothing about
 * its support: the step is tried again later.
 */
static void
neg_on_err(struct pool_sub *sub, enum pool_neg_end why, const char *text,
    void *arg)
{
	struct nstep	*s = arg;

	s->neg = NULL;		/* the pool ended it */
	if (s->finished)
		return;
	if (why == POOL_NEG_END_VIOLATION) {
		relay_refuse(s->ns, s->url, text);
		return;
	}
	if (!s->replied && (why == POOL_NEG_END_ERR ||
	    why == POOL_NEG_END_CLOSED || why == POOL_NEG_END_NOTICE)) {
		nrelay_learn(s->ns, s->url, NEGSYNC_NO, text);
		step_end(s, NEGSYNC_REFUSED, text);
		return;
	}
	step_end(s, NEGSYNC_FAILED, text);
}

static const struct pool_neg_cbs neg_cbs = { neg_on_msg, neg_on_err };

/* Collect the timestamps neg_window_next needs. */
struct ts_list {
	uint64_t	*ts;
	size_t		 n;
};

static int
collect_ts(int64_t created_at, const uint8_t id[32], void *arg)
{
	struct ts_list	*l = arg;

	l->ts[l->n++] = (uint64_t)created_at;
	return 0;
}

static int
collect_item(int64_t created_at, const uint8_t id[32], void *arg)
{
	return neg_storage_add(arg, (uint64_t)created_at, id) == 0 ? 0 : 1;
}

/* The scoped step's filter over [since, until] (since < 0: none). */
static int
filter_window(const struct filter *src, int64_t since, int64_t until,
    struct filter *f)
{
	struct buf	b;
	char		err[128];
	int		rc;

	buf_init(&b, NEGSYNC_FILTER_MAX_BYTES);
	if (filter_to_json(src, &b) == -1) {
		buf_free(&b);
		return -1;
	}
	filter_init(f);
	rc = filter_parse_text(f, (const char *)buf_rptr(&b), buf_avail(&b),
	    err, sizeof(err));
	buf_free(&b);
	if (rc == -1)
		return -1;
	f->has &= ~(unsigned)(FILTER_HAS_LIMIT | FILTER_HAS_SINCE |
	    FILTER_HAS_UNTIL);
	if (since >= 0) {
		f->since = since;
		f->has |= FILTER_HAS_SINCE;
	}
	f->until = until;
	f->has |= FILTER_HAS_UNTIL;
	filter_sort(f);
	return 0;
}

/* The box's items of a scoped step's window, newest first. */
struct scope_items {
	int64_t		*ts;
	uint8_t		(*ids)[32];
	size_t		 n, max;
};

static int
scope_item(void *arg, const struct store_scan_row *row, const char *json,
    size_t len)
{
	struct scope_items	*l = arg;

	(void)json;
	(void)len;
	l->ts[l->n] = row->created_at;
	memcpy(l->ids[l->n], row->id, 32);
	return ++l->n >= l->max ? 1 : 0;
}

/*
 * A scoped step's next window, going down from s->top: the box's newest
 * NEGSYNC_WINDOW_ITEMS items of the filter at most, whole seconds only
 * (the second that would split is the next window's), into the set.
 * 0, or -1 (one second holds more, or the store failed).
 */
static int
scope_pick(struct nstep *s)
{
	const struct store_scan_opts	 o = { .no_limit = true };
	struct scope_items		 l = { 0 };
	struct store_scan		*sc = NULL;
	struct filter			 f;
	size_t				 i;
	int				 rc = -1, more;

	l.max = NEGSYNC_WINDOW_ITEMS + 1;
	if (filter_window(&s->sf, s->lo, s->top, &f) == -1)
		return -1;
	if ((l.ts = calloc(l.max, sizeof(*l.ts))) == NULL ||
	    (l.ids = calloc(l.max, 32)) == NULL ||
	    (sc = store_scan_new(s->ns->st, &f, 1, &o)) == NULL)
		goto out;
	do
		more = store_scan_step(sc, NEGSYNC_WINDOW_ITEMS, scope_item, &l);
	while (more == 1 && l.n < l.max);
	if (more == -1)
		goto out;
	s->w.until = (uint64_t)s->top;
	if (l.n < l.max) {
		s->w.since = s->lo > 0 ? (uint64_t)s->lo : 0;
		s->last_window = true;
	} else if (l.ts[l.max - 1] >= s->top)
		goto out;			/* one second too dense */
	else {
		s->w.since = (uint64_t)l.ts[l.max - 1] + 1;
		s->last_window = false;
	}
	neg_storage_free(&s->set);
	neg_storage_init(&s->set, NEGSYNC_WINDOW_ITEMS);
	for (i = 0; i < l.n; i++)
		if (l.ts[i] >= (int64_t)s->w.since && l.ts[i] >= 0 &&
		    neg_storage_add(&s->set, (uint64_t)l.ts[i], l.ids[i]) == -1)
			goto out;
	rc = 0;
out:
	store_scan_free(sc);
	filter_free(&f);
	free(l.ts);
	free(l.ids);
	return rc;
}

/*
 * A scoped step's window is reconciled and fetched: its cursor moves
 * below it (in ingest's batch, with the events), then the next window or
 * the end.
 */
static void
step_scope_next(struct nstep *s)
{
	int64_t	next = (int64_t)s->w.since - 1;

	if (s->window != NULL && (ingest_tx(s->ns->ing) == -1 ||
	    s->window(s->arg, next, s->win_came, s->win_new) == -1)) {
		step_end(s, NEGSYNC_FAILED, "cannot record the window");
		return;
	}
	s->win_came = s->win_new = 0;
	if (s->last_window || next < 0 || (s->lo >= 0 && next < s->lo)) {
		step_end(s, s->missing > 0 ? NEGSYNC_RECOVERING :
		    NEGSYNC_COMPLETE, s->missing > 0 ? "ids under recovery" :
		    NULL);
		return;
	}
	s->top = next;
	step_window(s);
}

/* Pick the window from w.since on: 0, or -1 (dense second, store error). */
static int
step_pick_window(struct nstep *s)
{
	struct ts_list	l = { NULL, 0 };
	int		rc;

	if (s->scoped)
		return scope_pick(s);
	if ((l.ts = calloc(NEGSYNC_WINDOW_ITEMS + 1, sizeof(*l.ts))) == NULL)
		return -1;
	if (store_events_author_items(s->ns->st, s->pk, (int64_t)s->w.since,
	    -1, NEGSYNC_WINDOW_ITEMS + 1, collect_ts, &l) < 0) {
		free(l.ts);
		return -1;
	}
	rc = neg_window_next(l.ts, l.n, s->w.since, NEGSYNC_WINDOW_ITEMS,
	    &s->w);
	free(l.ts);
	if (rc == -1)
		return -1;
	s->last_window = rc == 0;
	return 0;
}

/* The window's filter: the author, since and until when they bound it. */
static int
step_filter(const struct nstep *s, struct filter *f)
{
	if (s->scoped)
		return filter_window(&s->sf, s->w.since > 0 || s->lo >= 0 ?
		    (int64_t)s->w.since : -1, (int64_t)s->w.until, f);
	filter_init(f);
	if ((f->authors = malloc(32)) == NULL)
		return -1;
	memcpy(f->authors[0], s->pk, 32);
	f->nauthors = 1;
	f->has = FILTER_HAS_AUTHORS;
	if (s->w.since > 0) {
		f->since = (int64_t)s->w.since;
		f->has |= FILTER_HAS_SINCE;
	}
	if (!s->last_window) {
		f->until = (int64_t)s->w.until;
		f->has |= FILTER_HAS_UNTIL;
	}
	return 0;
}

/* Build the window's set and open its session (NEG-OPEN). */
static int
step_open(struct nstep *s)
{
	struct filter	f;
	int64_t		until = s->last_window ? -1 : (int64_t)s->w.until;

	if (!s->scoped) {
		neg_storage_free(&s->set);
		neg_storage_init(&s->set, NEGSYNC_WINDOW_ITEMS);
		if (store_events_author_items(s->ns->st, s->pk,
		    (int64_t)s->w.since, until, NEGSYNC_WINDOW_ITEMS,
		    collect_item, &s->set) < 0)
			return -1;
	}
	neg_storage_seal(&s->set);
	memset(&s->budget, 0, sizeof(s->budget));
	s->budget.items = s->set.count;
	s->budget.started_ms = loop_now_ms(s->ns->loop);
	if (s->sess_live)
		neg_session_free(&s->sess);
	s->sess_live = false;
	if (neg_session_init(&s->sess, &s->set, NEG_INITIATOR,
	    NEGSYNC_FRAME_BYTES) == -1)
		return -1;
	s->sess_live = true;
	if (neg_initiate(&s->sess, &s->out) != NEG_SEND ||
	    step_filter(s, &f) == -1)
		return -1;
	s->neg = pool_neg_open(s->ns->pool, s->url, &f, buf_rptr(&s->out),
	    buf_avail(&s->out), &neg_cbs, s);
	filter_free(&f);
	if (s->neg == NULL)
		return -1;
	s->ns->stats.sessions++;
	s->ns->stats.msgs_out++;
	s->ns->stats.bytes_out += s->out.len;
	return 0;
}

/* Reconcile the window from s->w.since on. */
static void
step_window(struct nstep *s)
{
	s->neg_done = false;
	s->held = false;
	s->replied = false;
	if (step_pick_window(s) == -1) {
		step_end(s, NEGSYNC_DENSE, "more events in one second than "
		    "a session holds");
		return;
	}
	if (step_open(s) == -1) {
		step_end(s, NEGSYNC_FAILED, "cannot open a session");
		return;
	}
	step_arm(s);
}

static struct nstep *
step_author(const struct negsync *ns, const uint8_t pk[32])
{
	struct nstep	*s;

	TAILQ_FOREACH(s, &ns->steps, entry)
		if (!s->finished && !s->scoped && memcmp(s->pk, pk, 32) == 0)
			return s;
	return NULL;
}

/* Steps running on url. */
static size_t
steps_on(const struct negsync *ns, const char *url)
{
	const struct nstep	*s;
	size_t			 n = 0;

	TAILQ_FOREACH(s, &ns->steps, entry)
		if (!s->finished && strcmp(s->url, url) == 0)
			n++;
	return n;
}

bool
negsync_can_start(const struct negsync *ns, const uint8_t pk[32],
    const char *url)
{
	return ns->nsteps < NEGSYNC_MAX_STEPS &&
	    steps_on(ns, url) < NEGSYNC_STEPS_PER_RELAY &&
	    step_author(ns, pk) == NULL;
}

struct negsync_step *
negsync_start(struct negsync *ns, const uint8_t pk[32], const char *url,
    negsync_done_fn done, void *arg)
{
	struct nstep	*s;
	int64_t		 floor;

	if (!negsync_can_start(ns, pk, url) || (s = calloc(1, sizeof(*s))) == NULL)
		return NULL;
	if ((s->queue = calloc(NEGSYNC_QUEUE_IDS, 32)) == NULL) {
		free(s);
		return NULL;
	}
	s->ns = ns;
	memcpy(s->pk, pk, 32);
	hex_encode(pk, 32, s->pkhex, sizeof(s->pkhex));
	snprintf(s->url, sizeof(s->url), "%s", url);
	s->done = done;
	s->arg = arg;
	s->src = INGEST_BACKFILL;
	s->batch = ++ns->next_batch;
	buf_init(&s->out, NEGSYNC_FRAME_BYTES);
	neg_storage_init(&s->set, NEGSYNC_WINDOW_ITEMS);
	TAILQ_INSERT_TAIL(&ns->steps, s, entry);
	ns->nsteps++;
	ns->stats.steps++;
	floor = sweep_author_floor(ns->st, pk);
	s->w.since = floor > 0 ? (uint64_t)floor : 0;
	if (step_pick_window(s) == -1 || step_open(s) == -1) {
		s->done = NULL;		/* not started: no callback */
		step_end(s, NEGSYNC_FAILED, "cannot start");
		return NULL;
	}
	step_arm(s);
	return (struct negsync_step *)s;
}

bool
negsync_can_start_scope(const struct negsync *ns, const char *url)
{
	return ns->nsteps < NEGSYNC_MAX_STEPS &&
	    steps_on(ns, url) < NEGSYNC_STEPS_PER_RELAY;
}

struct negsync_step *
negsync_start_scope(struct negsync *ns, const struct negsync_scope *sc,
    const char *url, negsync_done_fn done, void *arg)
{
	struct nstep	*s;

	if (!negsync_can_start_scope(ns, url) || sc->until < 0 ||
	    (s = calloc(1, sizeof(*s))) == NULL)
		return NULL;
	filter_init(&s->sf);
	if ((s->queue = calloc(NEGSYNC_QUEUE_IDS, 32)) == NULL) {
		free(s);
		return NULL;
	}
	s->ns = ns;
	s->scoped = true;
	snprintf(s->pkhex, sizeof(s->pkhex), "%s", sc->label != NULL ?
	    sc->label : "scope");
	snprintf(s->url, sizeof(s->url), "%s", url);
	s->done = done;
	s->arg = arg;
	s->window = sc->window;
	s->src = sc->source;
	s->lo = sc->since;
	s->top = sc->until;
	s->batch = ++ns->next_batch;
	buf_init(&s->out, NEGSYNC_FRAME_BYTES);
	neg_storage_init(&s->set, NEGSYNC_WINDOW_ITEMS);
	TAILQ_INSERT_TAIL(&ns->steps, s, entry);
	ns->nsteps++;
	ns->stats.steps++;
	if (filter_window(sc->f, -1, 0, &s->sf) == -1) {
		s->done = NULL;
		step_end(s, NEGSYNC_FAILED, "cannot start");
		return NULL;
	}
	s->sf.has &= ~(unsigned)FILTER_HAS_UNTIL;
	if (step_pick_window(s) == -1) {
		s->done = NULL;
		step_end(s, NEGSYNC_DENSE, "more events in one second than "
		    "a session holds");
		return NULL;
	}
	if (step_open(s) == -1) {
		s->done = NULL;
		step_end(s, NEGSYNC_FAILED, "cannot start");
		return NULL;
	}
	step_arm(s);
	return (struct negsync_step *)s;
}

void
negsync_cancel(struct negsync_step *handle)
{
	struct nstep	*s = (struct nstep *)handle;

	s->done = NULL;
	step_end(s, NEGSYNC_FAILED, "cancelled");
}

/* ---- recovery ------------------------------------------------------------ */

/* Whether url is open in the pool now. */
static bool
relay_open(struct negsync *ns, const char *url)
{
	struct pool_relay_info	info;

	return pool_relay_info_url(ns->pool, url, &info) == 0 &&
	    info.state == RELAY_OPEN;
}

/* Begin an attempt on the due relay url, or defer it. */
static void
rec_attempt(struct negsync *ns, const char *url, int64_t now)
{
	struct recovery_attempt	*a;
	struct nfetch		*f;

	if (!relay_open(ns, url)) {
		(void)recovery_defer(ns->rec, url, now);
		return;
	}
	if ((a = malloc(sizeof(*a))) == NULL)
		return;
	if (recovery_begin(ns->rec, url, now, a) == RECOVERY_BEGUN) {
		if ((f = fetch_open(ns, NULL, url, (const uint8_t (*)[32])a->ids,
		    a->n)) == NULL)
			(void)recovery_defer(ns->rec, url, now);
		else {
			ns->nfetches++;
			ns->stats.recovery_attempts++;
			log_info("recovery: %s: attempt %lld, %zu ids", url,
			    (long long)a->number, a->n);
		}
	}
	free(a);
}

static void
rec_tick(struct loop *l, void *arg)
{
	struct negsync	*ns = arg;
	char		 url[URL_MAX_BYTES + 1];
	int64_t		 due, now = clock_wall_s() * 1000;
	int		 i;

	ns->rec_timer = 0;
	for (i = 0; i < NEGSYNC_RECOVERY_PER_TICK &&
	    ns->nfetches < NEGSYNC_RECOVERY_FETCHES; i++) {
		if (recovery_next(ns->rec, now, url, sizeof(url), &due) != 1)
			return;
		if (due > now) {
			rec_schedule(ns, (uint64_t)(due - now));
			return;
		}
		rec_attempt(ns, url, now);
	}
	rec_schedule(ns, NEGSYNC_RECOVERY_TICK_MS);
}

static void
rec_schedule(struct negsync *ns, uint64_t delay_ms)
{
	if (delay_ms > NEGSYNC_RECOVERY_TICK_MS)
		delay_ms = NEGSYNC_RECOVERY_TICK_MS;
	loop_timer_clear(ns->loop, &ns->rec_timer);
	ns->rec_timer = loop_timer_add(ns->loop, delay_ms, rec_tick, ns);
}

/*
 * recovery_satisfied's callback: a relay's last pending id came by
 * another path; if nothing else spoiled its history, its rows waiting on
 * recovery are complete (in ingest's batch, with the events).
 */
static void
sat_recovered(const char *relay, const struct recovery_outcome *o, void *arg)
{
	struct negsync	*ns = arg;

	ns->stats.recovered += (uint64_t)o->recovered;
	log_info("recovery: %s: every missing id arrived by another path",
	    relay);
	if (o->can_restore_health && ingest_tx(ns->ing) == 0)
		(void)store_cursors_recovered(ns->st, relay, clock_wall_s());
}

/* Events stored by any path clear their ids in the index, in batches. */
static void
sat_flush(struct loop *l, void *arg)
{
	struct negsync	*ns = arg;

	ns->sat_timer = 0;
	if (ns->nsat == 0)
		return;
	(void)recovery_satisfied(ns->rec, (const uint8_t (*)[32])ns->sat,
	    ns->nsat, clock_wall_s() * 1000, sat_recovered, ns);
	ns->nsat = 0;
}

static void
on_stored(void *arg, const struct ingest_stored *s)
{
	struct negsync	*ns = arg;

	memcpy(ns->sat[ns->nsat++], s->ev->id, 32);
	if (ns->nsat == NEGSYNC_SATISFIED_BATCH)
		sat_flush(ns->loop, ns);
	else if (ns->sat_timer == 0)
		ns->sat_timer = loop_timer_add(ns->loop,
		    NEGSYNC_SATISFIED_MS, sat_flush, ns);
}

/* ---- life ---------------------------------------------------------------- */

struct negsync *
negsync_new(const struct sync_ctx *cx)
{
	struct negsync	*ns;

	if ((ns = calloc(1, sizeof(*ns))) == NULL)
		return NULL;
	ns->loop = cx->loop;
	ns->pool = cx->pool;
	ns->ing = cx->ing;
	ns->st = cx->st;
	ns->cfg = cx->cfg;
	ns->follow = cx->follow;
	TAILQ_INIT(&ns->steps);
	TAILQ_INIT(&ns->fetches);
	ns->rec = recovery_new(cx->st, config_get_int(cx->cfg,
	    "recovery.backoff_base_ms"), config_get_int(cx->cfg,
	    "recovery.backoff_max_ms"));
	if (ns->rec == NULL) {
		free(ns);
		return NULL;
	}
	if (ingest_listen(cx->ing, on_stored, ns) == -1) {
		recovery_free(ns->rec);
		free(ns);
		return NULL;
	}
	rec_schedule(ns, 0);
	return ns;
}

void
negsync_free(struct negsync *ns)
{
	struct nstep	*s;
	struct nfetch	*f;

	if (ns == NULL)
		return;
	ingest_unlisten(ns->ing, on_stored, ns);
	sat_flush(ns->loop, ns);
	while ((s = TAILQ_FIRST(&ns->steps)) != NULL) {
		TAILQ_REMOVE(&ns->steps, s, entry);
		step_free(s);
	}
	while ((f = TAILQ_FIRST(&ns->fetches)) != NULL) {
		TAILQ_REMOVE(&ns->fetches, f, entry);
		fetch_free(f);
	}
	loop_timer_clear(ns->loop, &ns->reap_timer);
	loop_timer_clear(ns->loop, &ns->rec_timer);
	loop_timer_clear(ns->loop, &ns->sat_timer);
	recovery_free(ns->rec);
	free(ns->relays);
	free(ns);
}

void
negsync_config_changed(struct negsync *ns)
{
	recovery_set_backoff(ns->rec, config_get_int(ns->cfg,
	    "recovery.backoff_base_ms"), config_get_int(ns->cfg,
	    "recovery.backoff_max_ms"));
	rec_schedule(ns, 0);
}

struct recovery *
negsync_recovery(const struct negsync *ns)
{
	return ns->rec;
}

const struct negsync_stats *
negsync_stats(const struct negsync *ns)
{
	return &ns->stats;
}

size_t
negsync_steps(const struct negsync *ns)
{
	return ns->nsteps;
}

size_t
negsync_fetches(const struct negsync *ns)
{
	return ns->nfetches;
}
