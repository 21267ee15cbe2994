-- 008_jobs.sql — custom backfill jobs as the code runs them
-- (ARCHITECTURE.md §6; src/store/jobs.c, src/sync/jobs.c).
--
-- 001 reserved jobs and job_batches before any code wrote them. Writing
-- the planner changed four things, so both tables are rebuilt (no binary
-- ever wrote a row; a hand-made job row is copied, its batches are not):
--  * A resolved author or id list is stored once per job, as rows of
--    job_items (32-byte blobs in the job's order, seq from 0), not as
--    comma-separated hex in the job and again in every batch: a job over
--    30,000 authors on four relays held each list five times. A batch
--    names a range [item_lo, item_hi) of its job's list; in outbox mode,
--    where each author is asked only on its own write relays, a bit mask
--    (bit i is item item_lo + i) picks the range's authors that use the
--    batch's relay. A time-window batch has an empty range.
--  * Every batch is drained to completion with an until-cursor inside the
--    job's window, like an author's history (ARCHITECTURE.md §6): it
--    keeps its cursor, the largest page its relay returned, the second of
--    a possible gap and, when it cannot be paged to the end, the reason
--    as a code (why, the codes of cursors.incomplete_why: 1 burst over
--    the relay cap, 2 relay ignores until, 3 no answer) and as text. A
--    batch row commits in the same transaction as the events of the page
--    that moved it, so after a power cut its cursor never points past
--    events that were not committed.
--  * Statuses: a batch is pending, running, complete, incomplete (paged
--    as far as the relay allows, reason given), failed (the relay refused
--    it JOBS_MAX_ATTEMPTS times; attempts and next_attempt_ms hold the
--    backoff between tries) or cancelled. A job is complete only when
--    every batch is complete, otherwise incomplete or failed with a reason.
--  * Schedules: every_s re-runs a finished job that often; a run's window
--    is [run_since, run_until], run_until fixed when the run starts (the
--    filter's until, else that moment) and run_since, for a re-run, the
--    previous run's start (prev_run_at), so consecutive runs leave no gap.
-- The author sources are named as the commands name them ('all', 'kind1';
-- 001 said 'all_in_store', 'kind1_authors'). CHECKs are comparisons, not IN
-- lists (003 says why).

CREATE TABLE jobs_new (
	id		INTEGER	PRIMARY KEY AUTOINCREMENT,
	label		TEXT	NOT NULL DEFAULT '',
	-- The part of the NIP-01 filter every batch shares: kinds, #tags,
	-- since, until, limit. Authors and ids are job_items.
	filter_json	TEXT	NOT NULL CHECK (json_valid(filter_json)),
	authors_source	TEXT	NOT NULL DEFAULT 'none' CHECK (
	    authors_source = 'manual' OR authors_source = 'all' OR
	    authors_source = 'kind1' OR authors_source = 'followed' OR
	    authors_source = 'none'),
	authors_missing_kind0 INTEGER NOT NULL DEFAULT 0
	    CHECK (authors_missing_kind0 IN (0, 1)),
	preset		TEXT	NOT NULL DEFAULT '',
	items		INTEGER	NOT NULL DEFAULT 0,	-- resolved authors or ids
	batch_mode	TEXT	NOT NULL DEFAULT 'none' CHECK (
	    batch_mode = 'authors' OR batch_mode = 'ids' OR batch_mode = 'none'),
	batch_size	INTEGER	NOT NULL DEFAULT 100
	    CHECK (batch_size BETWEEN 1 AND 1000),
	relay_mode	TEXT	NOT NULL DEFAULT 'bootstrap' CHECK (
	    relay_mode = 'bootstrap' OR relay_mode = 'outbox' OR
	    relay_mode = 'custom'),
	relay_list	TEXT	NOT NULL DEFAULT '',	-- comma-separated, custom mode
	status		TEXT	NOT NULL DEFAULT 'pending' CHECK (
	    status = 'pending' OR status = 'running' OR status = 'complete' OR
	    status = 'incomplete' OR status = 'failed' OR status = 'cancelled'),
	total_batches	INTEGER	NOT NULL DEFAULT 0,
	done_batches	INTEGER	NOT NULL DEFAULT 0,	-- finished this run
	events_fetched	INTEGER	NOT NULL DEFAULT 0,	-- matching events received this run
	events_new	INTEGER	NOT NULL DEFAULT 0,	-- of which new to the store
	requests	INTEGER	NOT NULL DEFAULT 0,	-- pages that reached EOSE this run
	error_message	TEXT,
	created_at	INTEGER	NOT NULL,
	started_at	INTEGER,			-- this run's start
	completed_at	INTEGER,
	created_by	TEXT	NOT NULL DEFAULT 'admin',
	run_since	INTEGER,
	run_until	INTEGER,
	every_s		INTEGER	CHECK (every_s IS NULL OR every_s > 0),
	next_run_at	INTEGER,			-- when a schedule runs it again
	prev_run_at	INTEGER,			-- the previous run's start
	runs		INTEGER	NOT NULL DEFAULT 0
) STRICT;

INSERT INTO jobs_new (id, label, filter_json, authors_source,
    authors_missing_kind0, batch_mode, batch_size, relay_mode, relay_list,
    status, error_message, created_at, started_at, completed_at, created_by)
    SELECT id, label, filter_json, CASE authors_source
	WHEN 'all_in_store' THEN 'all' WHEN 'kind1_authors' THEN 'kind1'
	ELSE authors_source END,
    authors_missing_kind0, batch_mode, min(batch_size, 1000), relay_mode,
    relay_list, CASE WHEN status = 'pending' OR status = 'running'
	THEN 'failed' ELSE status END,
    CASE WHEN status = 'pending' OR status = 'running'
	THEN 'its batches were not kept by migration 008'
	ELSE error_message END,
    created_at, started_at, completed_at, created_by FROM jobs;

DROP TABLE job_batches;
DROP TABLE jobs;
ALTER TABLE jobs_new RENAME TO jobs;
-- The queue: the oldest pending job; the running one after a restart.
CREATE INDEX jobs_active ON jobs (status, id)
    WHERE status = 'pending' OR status = 'running';

CREATE TABLE job_items (
	job_id		INTEGER	NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
	seq		INTEGER	NOT NULL,
	item		BLOB	NOT NULL CHECK (length(item) = 32),
	PRIMARY KEY (job_id, seq)
) STRICT, WITHOUT ROWID;

CREATE TABLE job_batches (
	id		INTEGER	PRIMARY KEY,
	job_id		INTEGER	NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
	batch_index	INTEGER	NOT NULL,
	item_lo		INTEGER	NOT NULL DEFAULT 0,
	item_hi		INTEGER	NOT NULL DEFAULT 0,
	item_mask	BLOB,			-- outbox mode; NULL: the whole range
	items		INTEGER	NOT NULL DEFAULT 0,	-- authors or ids it asks
	relay		TEXT	NOT NULL,
	status		TEXT	NOT NULL DEFAULT 'pending' CHECK (
	    status = 'pending' OR status = 'running' OR status = 'complete' OR
	    status = 'incomplete' OR status = 'failed' OR status = 'cancelled'),
	until_cursor	INTEGER,		-- NULL: starts at the run's until
	pages		INTEGER	NOT NULL DEFAULT 0,
	events_fetched	INTEGER	NOT NULL DEFAULT 0,
	events_new	INTEGER	NOT NULL DEFAULT 0,
	largest_page	INTEGER	NOT NULL DEFAULT 0,
	gap_since	INTEGER,
	why		INTEGER	NOT NULL DEFAULT 0 CHECK (why BETWEEN 0 AND 15),
	error_message	TEXT,
	attempts	INTEGER	NOT NULL DEFAULT 0,	-- failed attempts
	next_attempt_ms	INTEGER	NOT NULL DEFAULT 0,	-- Unix ms
	started_at	INTEGER,
	completed_at	INTEGER,
	UNIQUE (job_id, batch_index)
) STRICT;
-- A relay's next batches (the planner's pick), counts by status.
CREATE INDEX job_batches_todo ON job_batches (job_id, status, relay,
    batch_index);
