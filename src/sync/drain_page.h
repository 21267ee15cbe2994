/*
 * drain_page.h — what one page of a paged request knows at its EOSE and
 * the end-of-page decision (the rules in drain.h and docs/ARCHITECTURE.md
 * section 6), as pure functions over counters; used by the pager
 * (pager.h) for the author drain and jobs alike.
 */
#ifndef CACHEBOX_SYNC_DRAIN_PAGE_H
#define CACHEBOX_SYNC_DRAIN_PAGE_H

#include <stdbool.h>
#include <stdint.h>

#include "store/cursors.h"

/*
 * What a step knows of one whole page at its EOSE (counters only; the
 * events went to ingest as they came). "The author's events" are the
 * asked author's events ingest accepted (new or duplicate), plus, for
 * newer, the author's events ingest refused as unrequested because they
 * were newer than until.
 */
struct drain_page {
	bool	started;	/* until was sent (else: first page, until = now) */
	int64_t	until;		/* asked, seconds */
	int64_t	limit;		/* asked */
	int64_t	received;	/* the author's events at or before until */
	int64_t	fresh;		/* of those, new ids */
	int64_t	older;		/* of those, strictly before until (all when
				 * not started) */
	int64_t	newer;		/* the author's events after until */
	int64_t	oldest;		/* oldest created_at of received (if any) */
	int64_t	newest;		/* newest created_at of received (if any) */
	bool	has_gap;	/* an earlier page stepped past a burst */
	int64_t	gap_since;	/* its second, valid when has_gap */
	int64_t	cap_seen;	/* largest whole page this relay has returned
				 * for one author before this one; 0: none */
	int64_t	max_limit;	/* NIP-11 limitation.max_limit; 0: none */
};

enum drain_next {
	DRAIN_NEXT_PAGE = 0,	/* ask again from until (gap: also record it) */
	DRAIN_NEXT_COMPLETE,	/* the relay has nothing more of the author */
	DRAIN_NEXT_INCOMPLETE,	/* finished, not all: reason, gap_since */
};

struct drain_verdict {
	enum drain_next	 next;
	int64_t		 until;		/* cursor to record (inclusive) */
	bool		 gap;		/* record a possible gap at gap_since */
	int64_t		 gap_since;	/* -1: none */
	enum store_cursor_why why;	/* DRAIN_NEXT_INCOMPLETE only */
	bool		 ignores_until;	/* the page proved it */
};

/*
 * The end-of-page decision (docs/ARCHITECTURE.md section 6) as a pure
 * function: where the cursor goes and whether the relay is finished for
 * the author.
 * A relay seen ignoring until still completes an author when the page
 * held fewer of the author's events than the relay has proven it returns
 * (cap_seen, bounded by the limit asked): it then sent all it has.
 */
void		 drain_page_verdict(const struct drain_page *,
		    struct drain_verdict *out);

/*
 * Count one event of the asked filter at or before until into the page
 * (fresh: a new id), and forget a page's counts (what was asked stays):
 * the bookkeeping every paged request shares (the author drain, jobs).
 */
void		 drain_page_add(struct drain_page *, int64_t created_at,
		    bool fresh);
void		 drain_page_reset(struct drain_page *);

/*
 * The limit to ask of a relay: backfill.page_size, lowered to the relay's
 * NIP-11 max_limit when it advertises a smaller one (max_limit <= 0:
 * none). The cap seen never lowers it: a limit sized to the largest page
 * seen would keep that page from ever growing, and the "fewer than the
 * proven cap" rule above would lose its proof.
 */
int64_t		 drain_page_limit(int64_t page_size, int64_t max_limit);

#endif
