/*
 * outbox.c — the outbox relay plan: a bounded set of write relays, most
 * shared first, and each author's share of it (see outbox.h). The set is
 * kept sorted by URL so each lookup is a binary search; it holds at most
 * SYNC_OUTBOX_RELAYS_MAX entries, so a sync over thousands of authors
 * with full lists stays cheap. Reading the store goes through its
 * functions; nothing here dials or writes.
 */
#include <stdlib.h>
#include <string.h>

#include "core/limits.h"
#include "core/log.h"
#include "store/follows.h"
#include "sync/outbox.h"

void
outbox_plan_init(struct outbox_plan *p, size_t max, char **boots,
    size_t nboots)
{
	memset(p, 0, sizeof(*p));
	p->max = max;
	p->boots = boots;
	p->nboots = nboots;
}

void
outbox_plan_free(struct outbox_plan *p)
{
	size_t	i;

	for (i = 0; i < p->n; i++)
		free(p->v[i].url);
	free(p->v);
	p->v = NULL;
	p->n = 0;
}

/* Index of url in p->v, or where it would go (*found false). */
static size_t
plan_find(const struct outbox_plan *p, const char *url, bool *found)
{
	size_t	lo = 0, hi = p->n, mid;
	int	c;

	*found = false;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		c = strcmp(p->v[mid].url, url);
		if (c == 0) {
			*found = true;
			return mid;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

bool
outbox_is_bootstrap(const struct outbox_plan *p, const char *url)
{
	size_t	i;

	for (i = 0; i < p->nboots; i++)
		if (strcmp(p->boots[i], url) == 0)
			return true;
	return false;
}

int
outbox_plan_offer(struct outbox_plan *p, const char *url)
{
	struct outbox_entry	*grown;
	size_t			 at;
	bool			 found;

	if (p->n >= p->max || outbox_is_bootstrap(p, url))
		return 0;
	at = plan_find(p, url, &found);
	if (found)
		return 0;
	if ((grown = realloc(p->v, (p->n + 1) * sizeof(*grown))) == NULL)
		return -1;
	p->v = grown;
	memmove(&p->v[at + 1], &p->v[at], (p->n - at) * sizeof(*p->v));
	if ((p->v[at].url = strdup(url)) == NULL) {
		memmove(&p->v[at], &p->v[at + 1], (p->n - at) * sizeof(*p->v));
		return -1;
	}
	p->v[at].rank = p->n;
	p->n++;
	return 1;
}

int64_t
outbox_rank(const struct outbox_plan *p, const char *url)
{
	size_t	at;
	bool	found;

	at = plan_find(p, url, &found);
	return found ? (int64_t)p->v[at].rank : -1;
}

bool
outbox_allowed(const struct outbox_plan *p, const char *url)
{
	return outbox_is_bootstrap(p, url) || outbox_rank(p, url) >= 0;
}

size_t
outbox_pick(const struct outbox_plan *p, const char *const *urls, size_t n,
    size_t max, size_t *out)
{
	size_t	 nout = 0, nboot, i, j, tmp;
	int64_t	*rank;

	if ((rank = calloc(n > 0 ? n : 1, sizeof(*rank))) == NULL)
		return 0;
	for (i = 0; i < n; i++)
		if (outbox_is_bootstrap(p, urls[i]))
			out[nout++] = i;
	nboot = nout;
	for (i = 0; i < n; i++) {
		rank[i] = outbox_rank(p, urls[i]);
		if (rank[i] >= 0)
			out[nout++] = i;
	}
	/* The planned ones by rank (insertion sort: n is a list's length). */
	for (i = nboot + 1; i < nout; i++)
		for (j = i; j > nboot && rank[out[j]] < rank[out[j - 1]]; j--) {
			tmp = out[j];
			out[j] = out[j - 1];
			out[j - 1] = tmp;
		}
	free(rank);
	return nout - nboot > max ? nboot + max : nout;
}

/* Phase one: relays written to by two authors or more, most first. */
static int
plan_shared_cb(const char *url, int64_t authors, void *arg)
{
	struct outbox_plan	*p = arg;

	if (authors < 2)
		return 1;	/* the rest are one author's each */
	if (outbox_plan_offer(p, url) == -1)
		return 1;
	return p->n >= p->max ? 1 : 0;
}

/* An author's write relays, copied out of the store's callback. */
struct author_list {
	char	*urls[STORE_AUTHOR_RELAYS_MAX];
	size_t	 n;
};

static int
author_list_cb(const uint8_t pubkey[32], const struct store_author_relay *ar,
    void *arg)
{
	struct author_list	*l = arg;

	(void)pubkey;
	if (!ar->write || l->n >= STORE_AUTHOR_RELAYS_MAX)
		return 0;
	if ((l->urls[l->n] = strdup(ar->url)) != NULL)
		l->n++;
	return 0;
}

static void
author_list_free(struct author_list *l)
{
	size_t	i;

	for (i = 0; i < l->n; i++)
		free(l->urls[i]);
	l->n = 0;
}

struct cover {
	struct outbox_plan	*p;
	struct store		*st;
};

/*
 * Phase two: an author none of whose write relays is dialled yet gets
 * one (the first of its list), while there is room. However long its
 * list, an author adds one relay here, so no list crowds out the others.
 */
static int
plan_cover_cb(const struct store_follow *f, void *arg)
{
	struct cover		*c = arg;
	struct author_list	 l = { .n = 0 };
	size_t			 i;
	bool			 covered = false;

	if (store_author_relays_each(c->st, f->pubkey, author_list_cb, &l) ==
	    -1)
		return 1;
	for (i = 0; i < l.n && !covered; i++)
		covered = outbox_allowed(c->p, l.urls[i]);
	if (!covered && l.n > 0)
		(void)outbox_plan_offer(c->p, l.urls[0]);
	author_list_free(&l);
	return c->p->n >= c->p->max ? 1 : 0;
}

int
outbox_plan_load(struct outbox_plan *p, struct store *st)
{
	struct cover	c = { .p = p, .st = st };

	if (store_write_relays_each(st, plan_shared_cb, p) == -1)
		return -1;
	if (p->n >= p->max)
		return 0;
	return store_follows_each(st, false, plan_cover_cb, &c);
}

int
outbox_author_each(const struct outbox_plan *p, struct store *st,
    const uint8_t pubkey[32], store_author_relay_cb cb, void *arg)
{
	struct author_list		l = { .n = 0 };
	struct store_author_relay	ar = { .read = false, .write = true };
	size_t				idx[STORE_AUTHOR_RELAYS_MAX], k, i;
	int				rc = 0;

	if (store_author_relays_each(st, pubkey, author_list_cb, &l) == -1)
		rc = -1;
	k = outbox_pick(p, (const char *const *)l.urls, l.n,
	    SYNC_OUTBOX_PER_AUTHOR, idx);
	for (i = 0; rc != -1 && i < k; i++) {
		ar.url = l.urls[idx[i]];
		rc++;
		if (cb(pubkey, &ar, arg) != 0)
			break;
	}
	author_list_free(&l);
	return rc;
}
