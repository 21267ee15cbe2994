/*
 * jobs.h — custom backfill jobs (ARCHITECTURE.md §6): any NIP-01
 * filter, split into batches, each batch drained to completion on its
 * relay, restart-safe, with presets, a dry run and schedules.
 *
 * Planning (sync/jobs_plan.h): the job's list stored once and cut into
 * batches per relay; a dry run plans inside a transaction it rolls back.
 *
 * Running. One job runs at a time; its batches run on all its relays at
 * once, at most jobs.max_subs_per_relay per relay (less when the pool's
 * cap is taken by others: the author drain keeps its share) and paced by
 * the pool. A batch is a paged drain (sync/pager.h) inside the run's
 * window [since, until]: it asks {filter, "until": cursor, "limit": L} and at EOSE
 * decides with drain_page_verdict() (sync/drain_page.h): the cursor
 * moves to the page's oldest second, inclusive; a page with nothing older
 * ends the batch complete; a same-second burst over the relay's cap or a relay
 * ignoring until ends it incomplete with that reason (store_cursor_why),
 * never silently complete. The page's cursor and counters are written in
 * ingest's open batch, so they commit with the page's events. Events go
 * through ingest with source "job" (and into the uplink inbox).
 *
 * On a relay that speaks NIP-77 (negsync_wanted) a batch without a user
 * limit is reconciled instead (negsync_start_scope): window by window
 * from its cursor down to since, each window's cursor written with its
 * events; the batch row's way says which (store_job_batch_way). A
 * refusal, no answer to NEG-OPEN or a too dense second pages the same
 * batch from that cursor; ids the relay named and did not send leave it
 * incomplete (under recovery).
 *
 * A batch whose request fails (the relay closes it, or says nothing for
 * JOBS_STEP_TIMEOUT_MS while connected) is asked again from its cursor
 * after jobs.retry_base_ms, doubled per failure, and after
 * JOBS_MAX_ATTEMPTS failures recorded failed with the relay's reason. The
 * job ends complete when every batch is, else incomplete or failed with
 * the first reason. A restart puts running batches back to pending with
 * their cursors and resumes the running job. Cancel closes the job's
 * requests at once (an answer in flight is dropped before its next page).
 * A schedule (every) runs a finished job again that often, its window
 * starting at the previous run's start.
 */
#ifndef CACHEBOX_SYNC_JOBS_H
#define CACHEBOX_SYNC_JOBS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store/jobs.h"
#include "sync/jobs_plan.h"

struct loop;
struct pool;
struct ingest;
struct store;
struct config;
struct follow;
struct job_spec;
struct jobs;


struct sync_ctx;

/*
 * The planner over the parts of cx (sync/ctx.h); cx->follow may be
 * NULL (new relay lists are then not noted). It puts batches a crash left
 * running back to pending and starts looking for work. NULL on failure.
 */
struct jobs	*jobs_new(const struct sync_ctx *cx);
/* Drop every request (batches go back to pending) and free. */
void		 jobs_free(struct jobs *);

/*
 * Plan spec as a new job made by created_by ("console", "ctl", "web"):
 * resolve its list, cut its batches, store it pending (it runs when its
 * turn comes). With dry_run nothing stays in the store. 0 with *out
 * filled (jobs_plan_free), or -1 with a message naming the field in err
 * (an author source resolving to more than JOBS_MAX_ITEMS, no relay to
 * ask, a store failure).
 */
int		 jobs_create(struct jobs *, const struct job_spec *,
		    const char *created_by, bool dry_run,
		    struct jobs_plan *out, char *err, size_t errlen);
/*
 * Cancel job id: its requests are closed now, its unfinished batches
 * cancelled, its schedule dropped. 1 done, 0 not pending, running or
 * scheduled (or unknown), -1 store failure.
 */
int		 jobs_cancel(struct jobs *, int64_t id);
/*
 * Run the failed and cancelled batches of job id again (from their
 * cursors). Batches made pending, or -1.
 */
int64_t		 jobs_retry(struct jobs *, int64_t id);
/*
 * Delete job id with its list and batches; refused while it runs. 1
 * deleted, 0 unknown, -1 with the reason in err.
 */
int		 jobs_delete(struct jobs *, int64_t id, char *err,
		    size_t errlen);

/*
 * Backpressure, as drain_set_hold: while held(arg), no new request
 * starts (steps in flight end normally). held NULL removes the hook.
 */
void		 jobs_set_hold(struct jobs *, bool (*held)(void *),
		    void *arg);

/*
 * Reconcile batches through ns (sync/negsync.h) on relays that speak
 * NIP-77; NULL: page every batch.
 */
struct negsync;
void		 jobs_set_negsync(struct jobs *, struct negsync *);

/* The running job's id (0: none) and the requests open for it. */
int64_t		 jobs_running(const struct jobs *);
size_t		 jobs_in_flight(const struct jobs *);
/*
 * True when no job is running or pending (a scheduled job waiting for
 * its next run does not count) and nothing is in flight.
 */
bool		 jobs_idle(struct jobs *);

#endif
