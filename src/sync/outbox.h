/*
 * outbox.h — which outbox relays (NIP-65 write relays of followed
 * authors) the planners may dial. A kind 10002 names hosts the box would
 * connect to on the author's word alone: a hostile list, or many authors
 * with scattered lists, must not make a small board dial hundreds of
 * hosts. The plan keeps at most SYNC_OUTBOX_RELAYS_MAX outbox relays in
 * all: first the relays two or more followed authors write to, most
 * authors first (ties by URL); then, while there is room, one relay for
 * each author none of whose relays is in yet (so a list of a thousand
 * relays adds one). The bootstrap relays are dialled anyway and never
 * count. Each author then gets the bootstrap relays it lists plus at most
 * SYNC_OUTBOX_PER_AUTHOR planned outbox relays, the most shared first. An
 * author left with none is read from the bootstrap relays.
 *
 * It only decides; it never opens a connection or writes the store.
 */
#ifndef CACHEBOX_SYNC_OUTBOX_H
#define CACHEBOX_SYNC_OUTBOX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store/follows.h"

struct store;

struct outbox_entry {
	char	*url;		/* normalised, owned */
	size_t	 rank;		/* 0 = most shared */
};

struct outbox_plan {
	struct outbox_entry	*v;	/* sorted by url for lookup */
	size_t			 n;
	size_t			 max;	/* outbox relays kept at most */
	char			**boots;	/* borrowed bootstrap URLs */
	size_t			 nboots;
};

/*
 * An empty plan of at most max outbox relays beside boots[0..nboots)
 * (borrowed: they must outlive the plan).
 */
void	outbox_plan_init(struct outbox_plan *, size_t max, char **boots,
	    size_t nboots);
/* Free what the plan owns; it is empty afterwards. */
void	outbox_plan_free(struct outbox_plan *);

/*
 * Offer url, in the order of preference (most shared first). Returns 1
 * when it joined the plan, 0 when not (a bootstrap relay, a repeat, or
 * the plan is full), -1 on allocation failure.
 */
int	outbox_plan_offer(struct outbox_plan *, const char *url);

/* Whether url is a bootstrap relay of the plan. */
bool	outbox_is_bootstrap(const struct outbox_plan *, const char *url);

/* The rank of url among the planned outbox relays, or -1 when not one. */
int64_t	outbox_rank(const struct outbox_plan *, const char *url);

/* Whether the planners may dial url: bootstrap or planned outbox. */
bool	outbox_allowed(const struct outbox_plan *, const char *url);

/*
 * Of one author's write relays urls[0..n): the indexes to use into
 * out[] (room for n), the bootstrap ones first (in list order), then at
 * most max planned outbox relays by rank. Returns how many were written.
 */
size_t	outbox_pick(const struct outbox_plan *, const char *const *urls,
	    size_t n, size_t max, size_t *out);

/*
 * Fill the plan from the store's write relays of followed (not stale)
 * authors, as said above. 0, or -1 (the plan holds what was read).
 */
int	outbox_plan_load(struct outbox_plan *, struct store *);

/*
 * Call cb for each relay of pubkey's list that outbox_pick keeps (with
 * SYNC_OUTBOX_PER_AUTHOR); write is true in each. Returns the number of
 * calls, or -1.
 */
int	outbox_author_each(const struct outbox_plan *, struct store *,
	    const uint8_t pubkey[32], store_author_relay_cb cb, void *arg);

#endif
