/*
 * jobs.h — the `jobs`, `job_items` and `job_batches` tables: custom
 * backfill jobs (ARCHITECTURE.md §6). A job holds the filter its
 * batches share, its resolved author or id list (job_items,
 * once per job) and its batches, each a range of that list on one relay
 * with its own until-cursor.
 *
 * A batch's page (cursor, counters, and the job's totals) is written while
 * ingest's batch transaction is open (ingest_tx()), so it commits with the
 * page's events. None of these opens a transaction of its own except where
 * said; they nest inside the caller's.
 */
#ifndef CACHEBOX_STORE_JOBS_H
#define CACHEBOX_STORE_JOBS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/limits.h"
#include "store/cursors.h"

struct store;

enum store_job_status {
	STORE_JOB_PENDING = 0,
	STORE_JOB_RUNNING,
	STORE_JOB_COMPLETE,	/* every batch complete */
	STORE_JOB_INCOMPLETE,	/* every batch finished, some incomplete */
	STORE_JOB_FAILED,	/* some batch failed (after its retries) */
	STORE_JOB_CANCELLED,
};
#define STORE_JOB_NSTATUS	6

enum store_job_source {
	STORE_JOB_SRC_NONE = 0,
	STORE_JOB_SRC_MANUAL,
	STORE_JOB_SRC_ALL,		/* every author with an event stored */
	STORE_JOB_SRC_KIND1,		/* every author with a kind 1 stored */
	STORE_JOB_SRC_FOLLOWED,		/* the followed set */
};

enum store_job_mode {
	STORE_JOB_MODE_NONE = 0,	/* time window: one batch per relay */
	STORE_JOB_MODE_AUTHORS,
	STORE_JOB_MODE_IDS,
};

enum store_job_relays {
	STORE_JOB_RELAYS_BOOTSTRAP = 0,
	STORE_JOB_RELAYS_OUTBOX,
	STORE_JOB_RELAYS_CUSTOM,
};

/*
 * One job row. filter_json and relay_list are malloc'd (store_job_clear
 * frees them); times are Unix seconds, 0 when not set; run_since and
 * run_until are -1 when not set.
 */
struct store_job {
	int64_t			 id;
	char			 label[JOBS_LABEL_MAX + 1];
	char			*filter_json;
	enum store_job_source	 source;
	bool			 missing_kind0;
	char			 preset[32];
	int64_t			 items;
	enum store_job_mode	 mode;
	int64_t			 batch_size;
	enum store_job_relays	 relay_mode;
	char			*relay_list;
	enum store_job_status	 status;
	int64_t			 total_batches, done_batches;
	int64_t			 events_fetched, events_new, requests;
	char			 error[JOBS_REASON_MAX + 1];	/* "" when none */
	int64_t			 created_at, started_at, completed_at;
	char			 created_by[16];
	int64_t			 run_since, run_until;
	int64_t			 every_s;	/* 0: runs once */
	int64_t			 next_run_at, prev_run_at, runs;
};

/* One batch row. */
/* Which way a batch goes on its relay (013_job_way.sql). */
enum store_job_way {
	STORE_JOB_WAY_UNDECIDED = 0,
	STORE_JOB_WAY_NIP77,		/* reconciled window by window */
	STORE_JOB_WAY_PAGING,		/* paged */
};
/* "undecided", "nip77", "paging". */
const char	*store_job_way_name(enum store_job_way);

struct store_job_batch {
	int64_t			 id, job_id, index;
	int64_t			 item_lo, item_hi;
	uint8_t			 mask[JOBS_BATCH_SIZE_MAX / 8 + 1];
	bool			 has_mask;
	int64_t			 items;
	char			 relay[URL_MAX_BYTES + 1];
	enum store_job_status	 status;	/* never STORE_JOB_... other
						 * than pending .. cancelled */
	bool			 started;	/* until_cursor is set */
	int64_t			 until_cursor;
	int64_t			 pages, events_fetched, events_new;
	int64_t			 largest_page;
	bool			 has_gap;
	int64_t			 gap_since;
	enum store_cursor_why	 why;
	char			 error[JOBS_REASON_MAX + 1];
	int64_t			 attempts, next_attempt_ms;
	int64_t			 started_at, completed_at;
	enum store_job_way	 way;
};

/* "pending", "running", ...; NULL-safe names and their parse (-1: none). */
const char	*store_job_status_name(enum store_job_status);
int		 store_job_status_parse(const char *);
const char	*store_job_source_name(enum store_job_source);
int		 store_job_source_parse(const char *);
const char	*store_job_mode_name(enum store_job_mode);
const char	*store_job_relays_name(enum store_job_relays);
int		 store_job_relays_parse(const char *);

/* Free what a job row owns; it is zeroed. */
void	store_job_clear(struct store_job *);

/*
 * Insert job j (id, counters and run fields ignored; status pending).
 * The new id, or -1 (logged).
 */
int64_t	store_job_insert(struct store *, const struct store_job *j);
/* Job id into *out (cleared first). 1 found, 0 none, -1 (logged). */
int	store_job_get(struct store *, int64_t id, struct store_job *out);
/*
 * Call cb for up to max jobs, newest first. cb returns 0 to go on, 1 to
 * stop. Jobs handed to cb, or -1.
 */
typedef int	(*store_job_cb)(const struct store_job *, void *arg);
int64_t	store_jobs_each(struct store *, size_t max, store_job_cb cb,
	    void *arg);
/* Delete a job with its items and batches. 1 deleted, 0 none, -1. */
int	store_job_delete(struct store *, int64_t id);

/* ---- the resolved list --------------------------------------------------- */

/* Remove every item of job. 0 or -1. */
int	store_job_items_clear(struct store *, int64_t job);
/* Add item as number seq of job's list. 0 or -1. */
int	store_job_item_add(struct store *, int64_t job, int64_t seq,
	    const uint8_t item[32]);
/*
 * Fill job's list (cleared first) from the store, in pubkey order: every
 * author with an event stored (STORE_JOB_SRC_ALL), with a kind 1
 * (STORE_JOB_SRC_KIND1), or followed and not stale (..._FOLLOWED); with
 * missing_kind0 only authors without a kind 0 stored. At most max + 1
 * rows are written, so a count over max means "too many" and the caller
 * rolls back. The count, or -1.
 */
int64_t	store_job_items_resolve(struct store *, int64_t job,
	    enum store_job_source, bool missing_kind0, int64_t max);
/*
 * Items lo .. hi - 1 of job's list into out (room for hi - lo). The number
 * read, or -1.
 */
int64_t	store_job_items_read(struct store *, int64_t job, int64_t lo,
	    int64_t hi, uint8_t (*out)[32]);
/*
 * The write relays (NIP-65) of job's authors with how many of them write
 * there, most first (ties by URL), at most max. cb returns 0 to go on.
 * 0, or -1.
 */
typedef int	(*store_job_relay_cb)(const char *url, int64_t authors,
		    void *arg);
int	store_job_write_relays(struct store *, int64_t job, size_t max,
	    store_job_relay_cb cb, void *arg);

/* ---- batches ------------------------------------------------------------- */

/* A batch to add to a job's plan. */
struct store_job_batch_spec {
	int64_t		 job;
	int64_t		 index;		/* its number in the job */
	int64_t		 item_lo, item_hi; /* items [lo, hi) of the list */
	const uint8_t	*mask;		/* NULL: all of them; else masklen
					 * bytes, bit i is item lo + i */
	size_t		 masklen;
	int64_t		 items;		/* the number it asks */
	const char	*relay;
};
/* Add the batch b describes. 0 or -1. */
int	store_job_batch_add(struct store *,
	    const struct store_job_batch_spec *b);
/* Remove every batch of job. 0 or -1. */
int	store_job_batches_clear(struct store *, int64_t job);
/*
 * The job's plan is made: items resolved, batches total (done and the
 * run's counters back to 0, status pending, error cleared). 0 or -1.
 */
int	store_job_planned(struct store *, int64_t job, int64_t items,
	    int64_t batches);

/* The batch row id into *out. 1, 0 none, -1. */
int	store_job_batch_get(struct store *, int64_t id,
	    struct store_job_batch *out);
/*
 * Up to max pending batches of job on relay whose next attempt is due at
 * now_ms, in batch order. cb returns 0 to go on, 1 to stop. Handed, or -1.
 */
typedef int	(*store_job_batch_cb)(const struct store_job_batch *,
		    void *arg);
int64_t	store_job_batches_due(struct store *, int64_t job, const char *relay,
	    int64_t now_ms, size_t max, store_job_batch_cb cb, void *arg);
/*
 * Batches of job that are not complete (pending, running, incomplete,
 * failed, cancelled), in batch order, at most max. Handed, or -1.
 */
int64_t	store_job_batches_unfinished(struct store *, int64_t job,
	    size_t max, store_job_batch_cb cb, void *arg);
/*
 * The largest page relay has returned to any job batch or author drain:
 * the cap it has proven (sync/drain.h, page_all_sent). 0 when none, or
 * -1.
 */
int64_t	store_job_relay_largest(struct store *, const char *relay);
/* The distinct relays of job's batches that are pending or running. */
typedef int	(*store_job_url_cb)(const char *url, void *arg);
int	store_job_batch_relays(struct store *, int64_t job,
	    store_job_url_cb cb, void *arg);
/*
 * Batches of job by status into counts[STORE_JOB_NSTATUS]; *next_ms gets
 * the earliest next attempt of a pending batch (0: none pending). 0 or -1.
 */
int	store_job_batch_counts(struct store *, int64_t job,
	    int64_t counts[STORE_JOB_NSTATUS], int64_t *next_ms);

/* A step took the batch: running, started_at = now_s if not set. 0, -1. */
int	store_job_batch_start(struct store *, int64_t id, int64_t now_s);
/*
 * A page of batch id (of job) reached EOSE: until_cursor = until, pages
 * + 1, events_fetched + received, events_new + fresh, largest_page =
 * max(largest_page, received); the job's events_fetched, events_new and
 * requests grow the same. Write it inside ingest's batch. 0 or -1.
 */
int	store_job_batch_page(struct store *, int64_t id, int64_t job,
	    int64_t until, int64_t received, int64_t fresh);
/* Record which way batch id goes. 0 or -1. */
int	store_job_batch_way(struct store *, int64_t id, enum store_job_way);
/*
 * A reconciled window of batch id (of job) is fetched: until_cursor =
 * until (below the window), way nip77, pages + 1, events_fetched +
 * received, events_new + fresh (largest_page is a page's, untouched); the
 * job's counters grow as for a page. Write it inside ingest's batch.
 * 0 or -1.
 */
int	store_job_batch_window(struct store *, int64_t id, int64_t job,
	    int64_t until, int64_t received, int64_t fresh);
/* A possible gap at second gap_since (the batch goes on). 0 or -1. */
int	store_job_batch_gap(struct store *, int64_t id, int64_t gap_since);
/* How a batch ended. */
struct store_job_batch_outcome {
	int64_t			 id;		/* the batch */
	int64_t			 job;		/* its job */
	enum store_job_status	 status;	/* complete, incomplete, failed */
	enum store_cursor_why	 why;		/* incomplete only */
	const char		*reason;	/* not complete; NULL: none */
	int64_t			 gap_since;	/* not complete; < 0: none */
	int64_t			 now_s;		/* completed_at */
};
/*
 * Batch o->id is finished as o says; the job's done_batches + 1. 0 or
 * -1.
 */
int	store_job_batch_end(struct store *,
	    const struct store_job_batch_outcome *o);
/*
 * An attempt of batch id failed and it will be asked again: pending,
 * attempts = attempts, next_attempt_ms, error = reason; the cursor stays.
 * 0 or -1.
 */
int	store_job_batch_later(struct store *, int64_t id, int64_t attempts,
	    int64_t next_attempt_ms, const char *reason);
/*
 * Put a running batch of job back to pending (a step dropped without an
 * answer; the cursor stays). 0 or -1.
 */
int	store_job_batch_release(struct store *, int64_t id);

/* ---- the queue and a job's life ----------------------------------------- */

/*
 * Start-up after a crash or a stop: every running batch is pending again
 * with its cursor. Rows changed, or -1.
 */
int64_t	store_jobs_recover(struct store *);
/*
 * The job that runs next: the running one if any (a restart), else the
 * oldest pending. 1 with *id, 0 none, -1.
 */
int	store_job_next(struct store *, int64_t *id);
/*
 * Job id starts (or resumes) running: status running. A run begins when
 * run_until is not set (a new job, or a schedule's re-run): started_at =
 * now_s, runs + 1, run_until = until. A restart or a retry resumes the
 * run (its window and start stay). 0 or -1.
 */
int	store_job_run(struct store *, int64_t id, int64_t until, int64_t now_s);
/*
 * Job id is finished with status (complete, incomplete or failed) and
 * error ("" or NULL: none); completed_at = now_s; a scheduled job's
 * next_run_at = started_at + every_s (now_s if that has passed). 0 or -1.
 */
int	store_job_finish(struct store *, int64_t id, enum store_job_status,
	    const char *error, int64_t now_s);
/*
 * Cancel job id: status cancelled, completed_at = now_s, its pending and
 * running batches cancelled, no next run. 1 done, 0 the job is finished
 * or unknown, -1.
 */
int	store_job_cancel(struct store *, int64_t id, int64_t now_s);
/*
 * Failed and cancelled batches of job id pending again (attempts and
 * error cleared, cursors kept); a job not running becomes pending, its
 * done_batches counted anew. Batches made pending, or -1.
 */
int64_t	store_job_retry(struct store *, int64_t id);
/*
 * Jobs whose schedule is due at now_s (next_run_at <= now_s and status
 * complete, incomplete or failed), oldest next_run_at first, at most max:
 * ids into out. The number, or -1.
 */
int64_t	store_jobs_due(struct store *, int64_t now_s, int64_t *out,
	    size_t max);
/*
 * Prepare job id for another run of its schedule: run_since = since,
 * prev_run_at = started_at, run_until cleared, next_run_at cleared (the
 * caller plans the batches again with store_job_planned). 0 or -1.
 */
int	store_job_rerun(struct store *, int64_t id, int64_t since);

/*
 * A scheduled run of job id could not be planned: status failed with
 * error, and the schedule tries again one period after now_s. 0 or -1.
 */
int	store_job_skip_run(struct store *, int64_t id, const char *error,
	    int64_t now_s);

/* Jobs by status and the events every job fetched, for the status. */
struct store_jobs_summary {
	int64_t	by_status[STORE_JOB_NSTATUS];
	int64_t	events_fetched, events_new;
	int64_t	running_id;		/* 0: none */
	int64_t	scheduled;		/* jobs with a schedule */
};
int	store_jobs_summary(struct store *, struct store_jobs_summary *out);

#endif
