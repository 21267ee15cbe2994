/*
 * drain_page.c — the end-of-page decision of the author drain as pure
 * functions (drain_page.h): where the cursor goes after a page and whether the
 * relay is finished for the author, from the counters a step kept. No
 * state, no I/O; test_drain_page.c holds it to every rule.
 */
#include <string.h>

#include "sync/drain_page.h"

/* A full page: as many events as the relay gives in one answer. */
static bool
page_full(const struct drain_page *p)
{
	return p->received >= p->limit ||
	    (p->max_limit > 0 && p->received >= p->max_limit) ||
	    (p->cap_seen > 0 && p->received >= p->cap_seen);
}

/*
 * Events newer than until came: the relay ignores it (a correct relay
 * never sends them). A few such events beside a page of older ones may be
 * a hostile relay's unrequested extras, so only a page where they are at
 * least half, or where nothing older came, counts as proof.
 */
static bool
page_ignores_until(const struct drain_page *p)
{
	return p->started && p->newer > 0 &&
	    (p->newer >= p->received || p->older == 0);
}

/*
 * A relay that ignores until answers every page with its newest events of
 * the author, up to its cap. When that answer is smaller than a page the
 * relay has proven it returns (cap_seen, and never more than was asked),
 * the relay holds no more of the author than what it just sent. NIP-11
 * max_limit is no proof: a relay may cap silently below what it
 * advertises.
 */
static bool
page_all_sent(const struct drain_page *p)
{
	int64_t	proven = p->cap_seen < p->limit ? p->cap_seen : p->limit;

	return proven > 0 && p->received + p->newer < proven;
}

void
drain_page_verdict(const struct drain_page *p, struct drain_verdict *v)
{
	bool	one_second;

	memset(v, 0, sizeof(*v));
	v->next = DRAIN_NEXT_PAGE;
	v->until = p->until;
	v->gap_since = p->has_gap ? p->gap_since : -1;
	if (page_ignores_until(p)) {
		v->ignores_until = true;
		if (page_all_sent(p) && !p->has_gap) {
			v->next = DRAIN_NEXT_COMPLETE;
			return;
		}
		v->next = DRAIN_NEXT_INCOMPLETE;
		v->why = p->has_gap ? STORE_CURSOR_WHY_BURST :
		    STORE_CURSOR_WHY_UNTIL;
		if (!p->has_gap)
			v->gap_since = p->until;
		return;
	}
	one_second = p->received >= DRAIN_SAME_SECOND_MIN &&
	    p->oldest == p->newest;
	if (one_second && page_full(p)) {
		v->until = p->oldest - 1;
		v->gap = true;
		if (!p->has_gap)
			v->gap_since = p->oldest;
		return;
	}
	if (p->older == 0) {
		if (p->has_gap) {
			v->next = DRAIN_NEXT_INCOMPLETE;
			v->why = STORE_CURSOR_WHY_BURST;
		} else
			v->next = DRAIN_NEXT_COMPLETE;
		return;
	}
	/* Not full, all in one second: that second came whole (the relay
	 * sent all it has up to until). Asked again inclusively it would come
	 * back as the same events, and this page would by then be the
	 * largest the relay has returned: a false burst. */
	v->until = one_second ? p->oldest - 1 : p->oldest;
}

int64_t
drain_page_limit(int64_t page_size, int64_t max_limit)
{
	return max_limit > 0 && max_limit < page_size ? max_limit : page_size;
}

void
drain_page_add(struct drain_page *p, int64_t created_at, bool fresh)
{
	if (p->received == 0 || created_at < p->oldest)
		p->oldest = created_at;
	if (p->received == 0 || created_at > p->newest)
		p->newest = created_at;
	p->received++;
	if (fresh)
		p->fresh++;
	if (!p->started || created_at < p->until)
		p->older++;
}

void
drain_page_reset(struct drain_page *p)
{
	p->received = p->fresh = p->older = p->newer = 0;
	p->oldest = p->newest = 0;
}
