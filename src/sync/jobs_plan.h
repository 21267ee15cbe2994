/*
 * jobs_plan.h — planning a custom backfill job (jobs.h) into batches.
 *
 * A job's author list (typed, or resolved from the store: every author in
 * it, kind-1 authors, the followed set; optionally only those without a
 * kind 0) or id list is stored once, in pubkey or id order, and cut into
 * batches of batch_size; each batch is asked of every relay of the job
 * (bootstrap, custom), or in outbox mode of the write relays (NIP-65) of
 * its authors, each author on at most JOBS_OUTBOX_PER_AUTHOR of them, the
 * bootstrap relays for authors without one. A filter without authors or
 * ids is a time window: one batch per relay. A dry run plans the same way
 * inside a transaction it rolls back, so its counts are those the job
 * would have. Store and configuration only: the planner runs nothing.
 */
#ifndef CACHEBOX_SYNC_JOBS_PLAN_H
#define CACHEBOX_SYNC_JOBS_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/limits.h"
#include "store/jobs.h"

struct store;
struct config;
struct job_spec;

/* What planning reads and writes (borrowed). */
struct jobs_planner {
	struct store		*st;
	const struct config	*cfg;	/* relays.bootstrap, backfill.pace_ms */
};

/* What a plan made (jobs new) or would make (a dry run). */
struct jobs_plan_relay {
	char		*url;		/* owned */
	int64_t		 batches;
	/* Which way its batches will go ("nip77", "paging") and why (set
	 * by jobs_create, which knows the relays' NIP-77 support). */
	char		 way[8];
	char		 way_why[JOBS_REASON_MAX + 1];
};

struct jobs_plan {
	int64_t			 job;		/* 0 in a dry run */
	enum store_job_mode	 mode;
	int64_t			 items;		/* resolved authors or ids */
	uint8_t			 preview[JOBS_PREVIEW_ITEMS][32];
	size_t			 npreview;
	int64_t			 batches;
	struct jobs_plan_relay	*relays;	/* owned, nrelays of them */
	size_t			 nrelays;
	int64_t			 requests;	/* first requests: one per batch */
	int64_t			 pace_ms;	/* backfill.pace_ms */
	int64_t			 estimated_s;	/* those requests at that pace */
	char			*filter_json;	/* owned: the shared filter */
};
void	jobs_plan_free(struct jobs_plan *);

/*
 * Plan spec as a new job made by created_by ("console", "ctl", "web"):
 * resolve its list, cut its batches, store it pending, in one
 * transaction; with dry_run the transaction is rolled back and out->job
 * is 0. 0 with *out filled (jobs_plan_free), or -1 with a message naming
 * the field in err (an author source resolving to more than
 * JOBS_MAX_ITEMS, no relay to ask, a store failure).
 */
int	jobs_plan_create(const struct jobs_planner *, const struct job_spec *,
	    const char *created_by, bool dry_run, struct jobs_plan *out,
	    char *err, size_t errlen);

/*
 * Plan a scheduled job's next run: its window starts at the previous
 * run's start (or the filter's since, when later); a list resolved from
 * the store is resolved again; its batches are cut anew. One
 * transaction. 0, or -1 (logged; the run is recorded skipped).
 */
int	jobs_plan_rerun(const struct jobs_planner *, int64_t id);

#endif
