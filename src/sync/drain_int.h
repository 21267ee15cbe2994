/*
 * drain_int.h — what the author drain's two files share: the planner's
 * life, its cursor rows and its ticks (sync/drain.c) and the steps and
 * pumps that page or reconcile one author on one relay
 * (sync/drain_step.c). drain.c calls drain_step.c; nothing calls back.
 */
#ifndef CACHEBOX_SYNC_DRAIN_INT_H
#define CACHEBOX_SYNC_DRAIN_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/queue.h"
#include "relay/pool.h"
#include "sync/drain.h"
#include "sync/pager.h"

struct config;
struct follow;
struct ingest;
struct loop;
struct negsync;
struct negsync_step;
struct store;

struct drelay;

struct step {
	TAILQ_ENTRY(step)	 entry;
	struct drelay		*dr;
	struct pager		 pg;		/* the request and its page */
	uint8_t			 pk[32];
	char			 pkhex[65];
	int64_t			 stalls;
	struct negsync_step	*neg;		/* a NIP-77 step instead of a REQ */
	bool			 is_neg;	/* a NIP-77 step (neg may be gone) */
};
TAILQ_HEAD(step_list, step);

struct drelay {
	TAILQ_ENTRY(drelay)	 entry;
	struct drain		*d;
	char			*url;
	struct step_list	 steps;
	size_t			 nsteps;
	uint8_t			 after[32];	/* round-robin position */
	bool			 has_after;
	int64_t			 largest_page;	/* cap seen on this relay */
	size_t			 cap_limit;	/* after drops; 0: none */
	unsigned		 ok_pages;	/* EOSEs since the last drop */
	struct pager_pump	 pump;
	uint64_t		 paused_until_ms;
};
TAILQ_HEAD(drelay_list, drelay);

struct drain {
	struct loop		*loop;
	struct pool		*pool;
	struct ingest		*ing;
	struct store		*st;
	const struct config	*cfg;
	struct follow		*follow;
	struct negsync		*ns;		/* NIP-77 steps, or NULL */
	struct drelay_list	 relays;
	size_t			 nsteps;
	int64_t			 pace_ms;	/* last given to the pool */
	uint64_t		 tick_timer;
	uint64_t		 retry_sweep_ms; /* next look for rows due a retry */
	bool			 synced;	/* drain_sync ran at least once */
	size_t			 norelay;	/* authors without rows, logged */
	drain_held_fn		 held;		/* backpressure, or NULL */
	void			*held_arg;
	bool			 was_held;	/* logged */
};

/* What a pump keeps of a cursor row it may start. */
struct pick {
	uint8_t		pk[32];
	bool		started;
	int64_t		until;
	bool		has_gap;
	int64_t		gap_since;
	int64_t		largest;
	int64_t		stalls;
};

struct picks {
	struct drelay	*dr;
	struct pick	*v;
	size_t		 n, max;
};

/* backfill.enabled. */
bool	drain_enabled(const struct drain *);
/* Whether backpressure holds new steps back (each change logged). */
bool	drain_is_held(struct drain *);
/* Hand backfill.pace_ms to the pool when it changed. */
void	drain_apply_pace(struct drain *);
/*
 * The drain's relay url (dialled with role when new): NULL on allocation
 * failure. Owned by the drain until drain_relay_free.
 */
struct drelay	*drain_relay_get(struct drain *, const char *url,
		    enum relay_role role);
/* Close dr's steps and free it (already unlinked from the drain). */
void	drain_relay_free(struct drelay *);
/* Look at dr's rows after delay_ms (its pump). */
void	drain_relay_kick(struct drelay *, uint64_t delay_ms);
/* End step s: close its request and free it, and look for the next. */
void	drain_step_finish(struct step *);

#endif
