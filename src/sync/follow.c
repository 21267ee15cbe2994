/*
 * follow.c — the follow graph: roots → their newest kind 3 → the followed
 * set in `follows`, then kind 0 and kind 10002 of the followed authors so
 * `author_relays` knows where each one writes.
 *
 * A resolve runs in two phases over every bootstrap relay: ROOTS asks for
 * the roots' kind 3; once each of those requests ended (EOSE, refusal or
 * FOLLOW_FETCH_TIMEOUT_MS) the newest stored kind 3 of each root is read
 * back and the set is synced; META then asks for kinds 0 and 10002 of the
 * authors the set gained (all of them on the first resolve since start),
 * and of the authors it kept only what is newer than the previous META
 * less FOLLOW_META_OVERLAP_S, so a list published only to the bootstrap
 * (index) relays is picked up at the next refresh at small cost.
 * Every event goes through ingest; a new kind 10002 (from here or any
 * other planner, via follow_note) replaces its author's relay list.
 *
 * A phase does not wait for the slowest relay. It ends when every request
 * of it ended (EOSE, refusal or timeout), or FOLLOW_GRACE_MS plus as long
 * again as the first relay to answer all of its requests took, counted
 * from that answer, whichever comes first; a relay that connects and never
 * answers (or is down) would otherwise hold the follow set, and with it
 * every drain, for FOLLOW_FETCH_TIMEOUT_MS. The requests still open when
 * a phase goes on are kept ("late"): they run to their own EOSE or
 * timeout, and what they bring is merged the way any later event is --
 * through ingest into the store, a new kind 10002 through follow_note, a
 * root's new kind 3 by a refresh (follow_note asks for one). When no
 * relay answers, the phase waits for every request to end, as before.
 * follow_resolved() stays false while late requests are open, so
 * --exit-when-idle never leaves before they ended.
 *
 * It must never drop a follow row (unfollowed authors turn stale) and
 * never call a listener from inside a relay callback (a zero timer does).
 */

#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "core/clock.h"
#include "core/config.h"
#include "core/hex.h"
#include "core/limits.h"
#include "core/log.h"
#include "core/loop.h"
#include "core/queue.h"
#include "nostr/event.h"
#include "nostr/filter.h"
#include "nostr/nip19.h"
#include "relay/pool.h"
#include "store/events.h"
#include "store/follows.h"
#include "store/store.h"
#include "sync/follow.h"
#include "sync/subs.h"

enum follow_phase {
	FOLLOW_NEW = 0,		/* not started */
	FOLLOW_ROOTS,		/* asking for the roots' kind 3 */
	FOLLOW_META,		/* asking for kinds 0 and 10002 */
	FOLLOW_RESOLVED,	/* waiting for the next refresh */
};

static const char *const phase_names[] = {
	"new", "roots", "meta", "resolved",
};

/*
 * One chunk of authors' filters, the same on every bootstrap relay: held
 * once and borrowed by each relay's request (5,000 authors on 20 relays
 * were 3 MB as a copy per relay).
 */
struct fetch_filters {
	unsigned		 refs;
	struct filter		 f[SYNC_FILTERS_PER_SUB];
	size_t			 nf;
};

struct fetch {
	TAILQ_ENTRY(fetch)	 entry;
	struct follow		*fg;
	struct pool_sub		*sub;
	struct fetch_filters	*ff;
	uint64_t		 timer;
	unsigned		 gen;		/* the phase that opened it */
	size_t			 relay;		/* index into the phase's relays */
};

/* One bootstrap relay in the current phase. */
struct phase_relay {
	size_t			 open;		/* its requests not ended */
	bool			 failed;	/* one ended without EOSE */
	bool			 left;		/* the phase went on without it */
};
TAILQ_HEAD(fetch_list, fetch);

struct listener {
	follow_change_cb	 cb;
	void			*arg;
};

struct follow {
	struct loop		*loop;
	struct pool		*pool;
	struct ingest		*ing;
	struct store		*st;
	const struct config	*cfg;
	enum follow_phase	 phase;
	struct fetch_list	 fetches;
	size_t			 pending;	/* fetches of this phase not ended */
	size_t			 late;		/* of earlier phases, still open */
	unsigned		 gen;		/* bumped when a phase begins or goes on */
	struct phase_relay	*prel;		/* this phase's relays, by index */
	size_t			 nprel;
	uint64_t		 phase_ms;	/* monotonic, when the phase began */
	bool			 answered;	/* a relay answered it in full */
	uint64_t		 grace_timer;
	uint8_t			 roots[FOLLOW_MAX_ROOTS][32];
	size_t			 nroots;
	bool			 ever_resolved;
	bool			 meta_all;	/* the next META asks every author */
	int64_t			 meta_at;	/* wall s the last META began; 0: none */
	bool			 refresh_wanted; /* a root's kind 3 came mid-resolve */
	uint64_t		 refresh_timer;
	uint64_t		 notify_timer;
	uint64_t		 advance_timer;
	struct listener		 listeners[FOLLOW_MAX_LISTENERS];
	size_t			 nlisteners;
};

static void	follow_advance(struct loop *, void *);

static void
follow_set_phase(struct follow *fg, enum follow_phase p)
{
	if (fg->phase != p)
		log_debug("follow: %s -> %s", phase_names[fg->phase],
		    phase_names[p]);
	fg->phase = p;
}

static void
notify_now(struct loop *l, void *arg)
{
	struct follow	*fg = arg;
	size_t		 i;

	(void)l;
	fg->notify_timer = 0;
	for (i = 0; i < fg->nlisteners; i++)
		fg->listeners[i].cb(fg->listeners[i].arg);
}

/* Tell the listeners from the loop, once however often asked. */
static void
notify_soon(struct follow *fg)
{
	if (fg->notify_timer == 0)
		fg->notify_timer = loop_timer_add(fg->loop, 0, notify_now, fg);
}

static void
fetch_filters_drop(struct fetch_filters *ff)
{
	if (ff == NULL || --ff->refs > 0)
		return;
	sync_filters_free(ff->f, ff->nf);
	free(ff);
}

static void
fetch_free(struct fetch *fe)
{
	struct follow	*fg = fe->fg;

	if (fe->sub != NULL)
		pool_sub_close(fe->sub);
	loop_timer_clear(fg->loop, &fe->timer);
	TAILQ_REMOVE(&fg->fetches, fe, entry);
	fetch_filters_drop(fe->ff);
	free(fe);
}

static void
advance_soon(struct follow *fg)
{
	if (fg->advance_timer == 0)
		fg->advance_timer = loop_timer_add(fg->loop, 0, follow_advance,
		    fg);
}

/* A new phase: no relay has answered it yet. */
static void
phase_begin(struct follow *fg, enum follow_phase p)
{
	follow_set_phase(fg, p);
	fg->gen++;
	free(fg->prel);
	fg->prel = NULL;
	fg->nprel = 0;
	fg->answered = false;
	fg->phase_ms = loop_now_ms(fg->loop);
	loop_timer_clear(fg->loop, &fg->grace_timer);
}

/*
 * The grace after the first full answer is over: the requests still open
 * become late ones and the phase goes on with what the store holds.
 */
static void
grace_over(struct loop *l, void *arg)
{
	struct follow	*fg = arg;
	struct fetch	*fe;

	fg->grace_timer = 0;
	if (fg->pending == 0)
		return;
	TAILQ_FOREACH(fe, &fg->fetches, entry) {
		if (fe->gen != fg->gen || fe->relay >= fg->nprel ||
		    fg->prel[fe->relay].left || fe->sub == NULL)
			continue;
		fg->prel[fe->relay].left = true;
		log_info("follow: going on without %s: no answer to a list "
		    "request after %llu ms (merged if it comes)",
		    pool_sub_url(fe->sub),
		    (unsigned long long)(loop_now_ms(l) - fg->phase_ms));
	}
	fg->late += fg->pending;
	fg->pending = 0;
	fg->gen++;
	advance_soon(fg);
}

/* The first relay that answered every request of the phase starts the grace. */
static void
phase_answered(struct follow *fg)
{
	uint64_t	took = loop_now_ms(fg->loop) - fg->phase_ms;

	if (fg->answered)
		return;
	fg->answered = true;
	if (fg->pending > 0 && fg->grace_timer == 0)
		fg->grace_timer = loop_timer_add(fg->loop,
		    took + FOLLOW_GRACE_MS, grace_over, fg);
}

/*
 * One request ended (answered: by EOSE): when the last of a phase ends,
 * advance; when it was a relay's last one and all of them were answered,
 * the grace for the others may start. A late request just goes.
 */
static void
fetch_end(struct fetch *fe, bool answered)
{
	struct follow		*fg = fe->fg;
	struct phase_relay	*pr = NULL;

	if (fe->gen != fg->gen) {
		fetch_free(fe);
		if (fg->late > 0)
			fg->late--;
		return;
	}
	if (fe->relay < fg->nprel)
		pr = &fg->prel[fe->relay];
	fetch_free(fe);
	if (fg->pending > 0 && --fg->pending == 0)
		advance_soon(fg);
	if (pr == NULL)
		return;
	pr->open--;
	pr->failed |= !answered;
	if (pr->open == 0 && !pr->failed)
		phase_answered(fg);
}

static void
fetch_on_event(struct pool_sub *s, struct relay_msg *msg, void *arg)
{
	struct fetch		*fe = arg;
	struct ingest_info	 info;
	enum ingest_result	 r;

	r = ingest_event(fe->fg->ing, msg, fe->ff->f, fe->ff->nf, INGEST_BACKFILL,
	    pool_sub_url(s), &info);
	if (r == INGEST_INVALID)
		pool_sub_note_invalid(s);
	else if (r == INGEST_UNREQUESTED && !info.off_time)
		pool_sub_note_unrequested(s);
	follow_note(fe->fg, r, &info);
}

static void
fetch_on_eose(struct pool_sub *s, void *arg)
{
	(void)s;
	fetch_end(arg, true);
}

static void
fetch_on_closed(struct pool_sub *s, enum relay_reason reason,
    const char *message, void *arg)
{
	struct fetch	*fe = arg;

	(void)reason;
	log_info("follow: %s closed a list request: %s", pool_sub_url(s),
	    message != NULL ? message : "");
	fe->sub = NULL;		/* the handle dies with this callback */
	fetch_end(fe, false);
}

static void
fetch_timeout(struct loop *l, void *arg)
{
	struct fetch	*fe = arg;

	(void)l;
	fe->timer = 0;
	log_info("follow: %s gave no EOSE for a list request in %d ms",
	    pool_sub_url(fe->sub), FOLLOW_FETCH_TIMEOUT_MS);
	fetch_end(fe, false);
}

static const struct pool_sub_cbs fetch_cbs = {
	fetch_on_event, fetch_on_eose, fetch_on_closed,
};

/*
 * Ask every bootstrap relay for kinds[0..nkinds) of authors[0..n) created
 * at since or later (-1: any time), in subscriptions of chunked filters.
 * Returns the number of requests opened.
 */
/* Ask url (relay i of the phase) for the chunk ff. 1 if opened, or 0. */
static size_t
fetch_open(struct follow *fg, const char *url, size_t i,
    struct fetch_filters *ff)
{
	struct fetch	*fe;

	if (pool_relay_find(fg->pool, url) == NULL ||
	    (fe = calloc(1, sizeof(*fe))) == NULL)
		return 0;
	fe->ff = ff;
	ff->refs++;
	fe->fg = fg;
	fe->gen = fg->gen;
	fe->relay = i;
	TAILQ_INSERT_TAIL(&fg->fetches, fe, entry);
	fe->sub = pool_sub_open(fg->pool, url, ff->f, ff->nf, &fetch_cbs, fe);
	if (fe->sub == NULL) {
		fetch_free(fe);
		return 0;
	}
	fe->timer = loop_timer_add(fg->loop, FOLLOW_FETCH_TIMEOUT_MS,
	    fetch_timeout, fe);
	fg->pending++;
	fg->prel[i].open++;
	return 1;
}

static size_t
fetch_start(struct follow *fg, const uint8_t (*authors)[32], size_t n,
    const uint16_t *kinds, size_t nkinds, int64_t since)
{
	struct fetch_filters	 *ff;
	char			**urls;
	size_t			  nurls, i, pos, opened = 0;
	int			  nf;

	nurls = sync_urls_parse(config_get(fg->cfg, "relays.bootstrap"), &urls);
	if (nurls > fg->nprel) {
		struct phase_relay	*grown;

		if ((grown = realloc(fg->prel, nurls * sizeof(*grown))) ==
		    NULL) {
			sync_urls_free(urls, nurls);
			return 0;
		}
		memset(grown + fg->nprel, 0, (nurls - fg->nprel) *
		    sizeof(*grown));
		fg->prel = grown;
		fg->nprel = nurls;
	}
	/* NULL only for a URL that does not parse (logged). */
	for (i = 0; i < nurls; i++)
		if (pool_relay_find(fg->pool, urls[i]) == NULL)
			(void)pool_relay_add(fg->pool, urls[i],
			    RELAY_ROLE_BOOTSTRAP);
	for (pos = 0; pos < n;) {
		if ((ff = calloc(1, sizeof(*ff))) == NULL)
			break;
		ff->refs = 1;	/* this loop's, dropped after it */
		nf = sync_filters_chunk(ff->f, authors, n, &pos, kinds,
		    nkinds, since);
		if (nf <= 0) {
			free(ff);
			break;
		}
		ff->nf = (size_t)nf;
		for (i = 0; i < nurls; i++)
			opened += fetch_open(fg, urls[i], i, ff);
		fetch_filters_drop(ff);
	}
	sync_urls_free(urls, nurls);
	return opened;
}

/* follow.roots into fg->roots. */
static void
roots_parse(struct follow *fg)
{
	const char	*p = config_get(fg->cfg, "follow.roots"), *e;
	char		 item[NIP19_MAX_CHARS + 1];
	size_t		 len;

	fg->nroots = 0;
	while (p != NULL && *p != '\0' && fg->nroots < FOLLOW_MAX_ROOTS) {
		e = strchr(p, ',');
		len = e != NULL ? (size_t)(e - p) : strlen(p);
		while (len > 0 && *p == ' ')
			p++, len--;
		while (len > 0 && p[len - 1] == ' ')
			len--;
		if (len > 0 && len < sizeof(item)) {
			memcpy(item, p, len);
			item[len] = '\0';
			if (nip19_pubkey_parse(item, fg->roots[fg->nroots]) == 0)
				fg->nroots++;
			else
				log_warnx("follow: root '%s' is not a public "
				    "key", item);
		}
		p = e != NULL ? e + 1 : NULL;
	}
}

/* Append the "p" tags of the root's newest stored kind 3 to *list. */
static void
root_follows(struct follow *fg, const uint8_t root[32], uint8_t (**list)[32],
    size_t *n)
{
	struct event	 ev;
	const cJSON	*tag, *k, *v;
	uint8_t		 (*grown)[32];

	event_init(&ev);
	if (store_event_newest_parsed(fg->st, root, 3, &ev) != 1)
		return;
	cJSON_ArrayForEach(tag, ev.tags) {
		k = cJSON_GetArrayItem(tag, 0);
		v = cJSON_GetArrayItem(tag, 1);
		if (*n >= FOLLOW_MAX_FOLLOWS)
			break;
		if (!cJSON_IsString(k) || strcmp(k->valuestring, "p") != 0 ||
		    !cJSON_IsString(v) || strlen(v->valuestring) != 64)
			continue;
		if ((grown = realloc(*list, (*n + 1) * 32)) == NULL)
			break;
		*list = grown;
		if (hex_decode(v->valuestring, 64, (*list)[*n], 32) == 0)
			(*n)++;
	}
	event_free(&ev);
}

static int
pk_cmp(const void *a, const void *b)
{
	return memcmp(a, b, 32);
}

/*
 * The authors of post (sorted) not in prev (sorted), into post itself;
 * returns their number.
 */
static size_t
pk_minus(uint8_t (*post)[32], size_t npost, uint8_t (*prev)[32], size_t nprev)
{
	size_t	i, j = 0, out = 0;

	for (i = 0; i < npost; i++) {
		while (j < nprev && memcmp(prev[j], post[i], 32) < 0)
			j++;
		if (j < nprev && memcmp(prev[j], post[i], 32) == 0)
			continue;
		memmove(post[out++], post[i], 32);
	}
	return out;
}

/* ROOTS ended: sync the set, ask for the lists of the authors gained. */
static void
follow_sync_set(struct follow *fg)
{
	struct store_follows_change	 chg = { 0 };
	uint8_t				 (*list)[32] = NULL, (*prev)[32] = NULL,
					 (*post)[32] = NULL, (*kept)[32] = NULL;
	size_t				 n = 0, nprev = 0, npost = 0, i, fresh,
					 nkept;
	static const uint16_t		 kinds[] = { 0, 10002 };
	bool				 all;

	for (i = 0; i < fg->nroots; i++)
		root_follows(fg, fg->roots[i], &list, &n);
	if (n > 1)
		qsort(list, n, 32, pk_cmp);
	/* Unread (logged), prev is empty: every author counts as gained. */
	(void)store_follows_active(fg->st, &prev, &nprev);
	if (store_follows_sync(fg->st, (const uint8_t (*)[32])list, n,
	    (const uint8_t (*)[32])fg->roots, fg->nroots, clock_wall_s(),
	    &chg) == 0)
		log_info("follow: %zu followed (%zu added, %zu back, %zu "
		    "dropped)", chg.active, chg.added, chg.returned,
		    chg.dropped);
	free(list);
	/*
	 * The set after, unread (logged): nothing is asked now, and the next
	 * resolution asks every author's lists, since its prev would hide the
	 * ones gained now.
	 */
	all = !fg->ever_resolved || fg->meta_all;
	fg->meta_all = store_follows_active(fg->st, &post, &npost) == -1;
	/* kept: a copy of post, less the fresh ones once post holds those. */
	if (npost > 0 && (kept = malloc(npost * 32)) != NULL)
		memcpy(kept, post, npost * 32);
	fresh = all ? npost : pk_minus(post, npost, prev, nprev);
	nkept = kept != NULL ? pk_minus(kept, npost, post, fresh) : 0;
	free(prev);
	notify_soon(fg);
	phase_begin(fg, FOLLOW_META);
	if (fresh > 0)
		fetch_start(fg, (const uint8_t (*)[32])post, fresh, kinds, 2, -1);
	if (nkept > 0 && fg->meta_at > 0)
		fetch_start(fg, (const uint8_t (*)[32])kept, nkept, kinds, 2,
		    fg->meta_at > FOLLOW_META_OVERLAP_S ?
		    fg->meta_at - FOLLOW_META_OVERLAP_S : 0);
	fg->meta_at = clock_wall_s();
	free(post);
	free(kept);
}

static void
refresh_timer_fired(struct loop *l, void *arg)
{
	struct follow	*fg = arg;

	(void)l;
	fg->refresh_timer = 0;
	follow_refresh(fg);
}

/* Move to the next phase once the requests of this one all ended. */
static void
follow_advance(struct loop *l, void *arg)
{
	struct follow	*fg = arg;

	(void)l;
	fg->advance_timer = 0;
	if (fg->pending > 0)
		return;
	switch (fg->phase) {
	case FOLLOW_ROOTS:
		follow_sync_set(fg);
		if (fg->pending > 0)
			break;
		/* FALLTHROUGH */
	case FOLLOW_META:
		follow_set_phase(fg, FOLLOW_RESOLVED);
		fg->ever_resolved = true;
		notify_soon(fg);
		if (fg->refresh_wanted) {
			fg->refresh_wanted = false;
			follow_refresh(fg);
		} else if (fg->refresh_timer == 0)
			fg->refresh_timer = loop_timer_add(fg->loop,
			    FOLLOW_REFRESH_MS, refresh_timer_fired, fg);
		break;
	default:
		break;
	}
}

struct follow *
follow_new(struct loop *loop, struct pool *pool, struct ingest *ing,
    struct store *st, const struct config *cfg)
{
	struct follow	*fg;

	if ((fg = calloc(1, sizeof(*fg))) == NULL)
		return NULL;
	fg->loop = loop;
	fg->pool = pool;
	fg->ing = ing;
	fg->st = st;
	fg->cfg = cfg;
	TAILQ_INIT(&fg->fetches);
	return fg;
}

void
follow_free(struct follow *fg)
{
	struct fetch	*fe;

	if (fg == NULL)
		return;
	while ((fe = TAILQ_FIRST(&fg->fetches)) != NULL)
		fetch_free(fe);
	loop_timer_clear(fg->loop, &fg->refresh_timer);
	loop_timer_clear(fg->loop, &fg->notify_timer);
	loop_timer_clear(fg->loop, &fg->advance_timer);
	loop_timer_clear(fg->loop, &fg->grace_timer);
	free(fg->prel);
	free(fg);
}

int
follow_listen(struct follow *fg, follow_change_cb cb, void *arg)
{
	if (fg->nlisteners >= FOLLOW_MAX_LISTENERS)
		return -1;
	fg->listeners[fg->nlisteners].cb = cb;
	fg->listeners[fg->nlisteners].arg = arg;
	fg->nlisteners++;
	return 0;
}

void
follow_start(struct follow *fg)
{
	notify_soon(fg);
	follow_refresh(fg);
}

void
follow_refresh(struct follow *fg)
{
	static const uint16_t	kinds[] = { 3 };

	if (fg->phase == FOLLOW_ROOTS || fg->phase == FOLLOW_META) {
		fg->refresh_wanted = true;
		return;
	}
	loop_timer_clear(fg->loop, &fg->refresh_timer);
	roots_parse(fg);
	phase_begin(fg, FOLLOW_ROOTS);
	if (fg->nroots > 0)
		fetch_start(fg, (const uint8_t (*)[32])fg->roots, fg->nroots,
		    kinds, 1, -1);
	if (fg->pending == 0)
		advance_soon(fg);
}

static bool
is_root(const struct follow *fg, const uint8_t pk[32])
{
	size_t	i;

	for (i = 0; i < fg->nroots; i++)
		if (memcmp(fg->roots[i], pk, 32) == 0)
			return true;
	return false;
}

/* A new kind 10002 is stored: its newest one replaces the relay list. */
static void
note_relay_list(struct follow *fg, const uint8_t pk[32])
{
	struct event	ev;

	event_init(&ev);
	if (store_event_newest_parsed(fg->st, pk, 10002, &ev) != 1)
		return;
	if (store_author_relays_from_event(fg->st, &ev) == 1)
		notify_soon(fg);
	event_free(&ev);
}

void
follow_note(struct follow *fg, enum ingest_result r,
    const struct ingest_info *info)
{
	if (r != INGEST_NEW || info == NULL)
		return;
	if (info->kind == 10002)
		note_relay_list(fg, info->pubkey);
	else if (info->kind == 3 && is_root(fg, info->pubkey)) {
		if (fg->phase == FOLLOW_META)
			fg->refresh_wanted = true;
		else if (fg->phase == FOLLOW_RESOLVED &&
		    fg->refresh_timer != 0) {
			loop_timer_cancel(fg->loop, fg->refresh_timer);
			fg->refresh_timer = loop_timer_add(fg->loop, 0,
			    refresh_timer_fired, fg);
		}
	}
}

bool
follow_resolved(const struct follow *fg)
{
	return fg->phase == FOLLOW_RESOLVED && fg->pending == 0 &&
	    fg->late == 0 && !fg->refresh_wanted && fg->advance_timer == 0 &&
	    fg->notify_timer == 0;
}
