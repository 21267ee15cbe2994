-- 001_init.sql — the first schema of the local store (ARCHITECTURE.md §5).
--
-- Applied by store_open() inside one BEGIN IMMEDIATE transaction that also
-- sets PRAGMA user_version and PRAGMA application_id; never put BEGIN,
-- COMMIT or PRAGMA journal_mode in a migration file.
--
-- Hazards, stated once for every table below:
--  * The disk is an SD card: slow to fsync and worn by every page written.
--    Each index costs a page write per insert, so an index exists only for a
--    query the daemon runs on a timer or on the hot path. Writers batch many
--    rows into one transaction (one per ingested page), never one per event.
--  * Power is cut without warning. The store runs WAL with synchronous=NORMAL:
--    a cut may lose the last few committed transactions but never corrupts the
--    file. So every piece of progress commits together with the data it
--    describes (a drain cursor with the events of its page, an inbox row with
--    its event): after a cut, work is repeated, never skipped.
--  * Identifiers (event ids, public keys) are 32-byte blobs, not hex text:
--    half the bytes on disk and in every index.
--  * Times named *_at are Unix seconds (wall clock); *_ms are Unix
--    milliseconds. Monotonic time never reaches the disk: it means nothing
--    after a reboot.
--
-- Tables are STRICT so a wrong type from C is an error, not a silent cast.

-- events: the cache itself. A row is immutable once written.
-- Retention evicts the oldest rows (created_at, id) that are not in the inbox
-- and not a follow list (kinds 0, 3, 10002); the inbox foreign key below makes
-- evicting a queued event fail instead of losing it.
CREATE TABLE events (
	id		BLOB	PRIMARY KEY CHECK (length(id) = 32),
	pubkey		BLOB	NOT NULL CHECK (length(pubkey) = 32),
	kind		INTEGER	NOT NULL CHECK (kind BETWEEN 0 AND 65535),
	created_at	INTEGER	NOT NULL,
	json		TEXT	NOT NULL,
	source		TEXT	NOT NULL
	    CHECK (source IN ('live', 'backfill', 'job', 'recovery')),
	first_relay	TEXT,			-- NULL when it came from no relay
	received_at	INTEGER	NOT NULL
) STRICT;
-- An author's events by kind and time: drain, job author sources, kind 0/3/10002.
CREATE INDEX events_pubkey_kind_time ON events (pubkey, kind, created_at);
-- Negentropy's order (NIP-77 sorts by created_at, then id); also retention.
CREATE INDEX events_time_id ON events (created_at, id);

-- inbox: events waiting for the uplink, first in first out by seq.
-- A pending row is deleted only after the uplink confirmed it (OK true,
-- "duplicate:", or a committed Postgres transaction); a refused one becomes
-- 'dead' and keeps the relay's reason for the status page. AUTOINCREMENT
-- keeps seq rising even after the inbox empties, so a sequence number the
-- uplink holds in its window is never reused for another event.
CREATE TABLE inbox (
	seq		INTEGER	PRIMARY KEY AUTOINCREMENT,
	event_id	BLOB	NOT NULL UNIQUE REFERENCES events (id),
	state		TEXT	NOT NULL DEFAULT 'pending'
	    CHECK (state IN ('pending', 'dead')),
	reason		TEXT,			-- the relay's refusal when dead
	attempts	INTEGER	NOT NULL DEFAULT 0,
	enqueued_at	INTEGER	NOT NULL,
	last_attempt_at	INTEGER,
	CHECK (state = 'pending' OR reason IS NOT NULL)
) STRICT;
-- The uplink's take (pending, oldest first) and the dead-letter list.
CREATE INDEX inbox_state_seq ON inbox (state, seq);

-- follows: the follow set (roots and the authors they follow).
-- An author who is no longer followed is marked stale rather than deleted:
-- its cursors and counters stay, and following it again resumes the drain.
CREATE TABLE follows (
	pubkey		BLOB	PRIMARY KEY CHECK (length(pubkey) = 32),
	is_root		INTEGER	NOT NULL DEFAULT 0 CHECK (is_root IN (0, 1)),
	first_seen	INTEGER	NOT NULL,
	last_seen	INTEGER	NOT NULL,
	stale		INTEGER	NOT NULL DEFAULT 0 CHECK (stale IN (0, 1)),
	events_fetched	INTEGER	NOT NULL DEFAULT 0
) STRICT;

-- author_relays: an author's NIP-65 relay list (kind 10002). Replaced as a
-- whole, in one transaction, when a newer kind 10002 arrives.
CREATE TABLE author_relays (
	pubkey		BLOB	NOT NULL CHECK (length(pubkey) = 32),
	relay		TEXT	NOT NULL,
	read		INTEGER	NOT NULL DEFAULT 1 CHECK (read IN (0, 1)),
	write		INTEGER	NOT NULL DEFAULT 1 CHECK (write IN (0, 1)),
	list_created_at	INTEGER	NOT NULL,	-- created_at of the kind 10002
	PRIMARY KEY (pubkey, relay)
) STRICT, WITHOUT ROWID;
-- Which authors write to a relay: live subscriptions, per-relay drain.
CREATE INDEX author_relays_relay ON author_relays (relay, pubkey);

-- cursors: one author drain per (author, relay), ARCHITECTURE.md §6.
-- until_cursor is inclusive (the oldest created_at of the last page); NULL
-- means the drain has not started and begins at "now". A cursor row commits
-- in the same transaction as the events of the page that moved it.
-- A relay is either still draining (complete = 0, no reason), complete, or
-- recorded incomplete with its reason and the second a gap starts at.
CREATE TABLE cursors (
	pubkey		BLOB	NOT NULL CHECK (length(pubkey) = 32),
	relay		TEXT	NOT NULL,
	until_cursor	INTEGER,
	complete	INTEGER	NOT NULL DEFAULT 0 CHECK (complete IN (0, 1)),
	incomplete_reason TEXT,
	gap_since	INTEGER,		-- second T of a possible gap
	pages		INTEGER	NOT NULL DEFAULT 0,
	events		INTEGER	NOT NULL DEFAULT 0,	-- events received
	new_events	INTEGER	NOT NULL DEFAULT 0,	-- of which were new ids
	largest_page	INTEGER	NOT NULL DEFAULT 0,	-- cap seen on this relay
	stalls		INTEGER	NOT NULL DEFAULT 0,	-- requests ended without EOSE
	stalls_total	INTEGER	NOT NULL DEFAULT 0,
	updated_at	INTEGER	NOT NULL,
	PRIMARY KEY (pubkey, relay),
	CHECK (NOT (complete = 1 AND incomplete_reason IS NOT NULL))
) STRICT, WITHOUT ROWID;
-- Work left per relay (round-robin drain picks from here).
CREATE INDEX cursors_relay_state ON cursors (relay, complete, pubkey);

-- jobs: custom backfill jobs (ARCHITECTURE.md §6), any NIP-01 filter. The filter JSON
-- is the source of truth; resolved author and id lists are comma-separated
-- hex, kept so a restart does not re-derive them. One job runs at a time.
CREATE TABLE jobs (
	id		INTEGER	PRIMARY KEY AUTOINCREMENT,
	label		TEXT	NOT NULL DEFAULT '',
	filter_json	TEXT	NOT NULL CHECK (json_valid(filter_json)),
	authors_source	TEXT	NOT NULL DEFAULT 'none' CHECK (authors_source IN
	    ('manual', 'all_in_store', 'kind1_authors', 'followed', 'none')),
	authors_missing_kind0 INTEGER NOT NULL DEFAULT 0
	    CHECK (authors_missing_kind0 IN (0, 1)),
	authors_resolved TEXT	NOT NULL DEFAULT '',
	ids_resolved	TEXT	NOT NULL DEFAULT '',
	batch_mode	TEXT	NOT NULL DEFAULT 'none'
	    CHECK (batch_mode IN ('authors', 'ids', 'none')),
	batch_size	INTEGER	NOT NULL DEFAULT 100 CHECK (batch_size > 0),
	relay_mode	TEXT	NOT NULL DEFAULT 'bootstrap'
	    CHECK (relay_mode IN ('bootstrap', 'outbox', 'custom')),
	relay_list	TEXT	NOT NULL DEFAULT '',	-- comma-separated, custom mode
	status		TEXT	NOT NULL DEFAULT 'pending' CHECK (status IN
	    ('pending', 'running', 'complete', 'failed', 'cancelled')),
	total_batches	INTEGER	NOT NULL DEFAULT 0,
	done_batches	INTEGER	NOT NULL DEFAULT 0,
	events_fetched	INTEGER	NOT NULL DEFAULT 0,
	error_message	TEXT,
	created_at	INTEGER	NOT NULL,
	started_at	INTEGER,
	completed_at	INTEGER,
	created_by	TEXT	NOT NULL DEFAULT 'admin'
) STRICT;
CREATE INDEX jobs_active ON jobs (status, id)
    WHERE status IN ('pending', 'running');

-- job_batches: one row per (group of authors or ids, relay); in time-window
-- mode one per relay, drained with its own until_cursor inside the window.
-- A batch found 'running' at start-up goes back to 'pending' (the job
-- module does that in one statement); cancel is checked between batches.
CREATE TABLE job_batches (
	id		INTEGER	PRIMARY KEY,
	job_id		INTEGER	NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
	batch_index	INTEGER	NOT NULL,
	items		TEXT	NOT NULL DEFAULT '',	-- comma-separated hex
	relay		TEXT	NOT NULL,
	status		TEXT	NOT NULL DEFAULT 'pending' CHECK (status IN
	    ('pending', 'running', 'complete', 'failed', 'cancelled')),
	until_cursor	INTEGER,		-- time-window drain position
	pages		INTEGER	NOT NULL DEFAULT 0,
	events_fetched	INTEGER	NOT NULL DEFAULT 0,
	error_message	TEXT,
	started_at	INTEGER,
	completed_at	INTEGER,
	UNIQUE (job_id, batch_index)
) STRICT;
CREATE INDEX job_batches_pending ON job_batches (job_id, batch_index)
    WHERE status = 'pending';

-- recovery_relays, missing_ids: the missing-event recovery index
-- (ARCHITECTURE.md §6), persisted so a restart loses nothing. Per relay: exponential backoff sized
-- by attempts without progress, one attempt in flight, and whether full
-- recovery may restore the relay's health (false once an unrelated failure
-- was seen). An attempt in flight does not survive a restart: in_flight and
-- missing_ids.attempted are cleared at start-up without spending budget.
CREATE TABLE recovery_relays (
	relay		TEXT	PRIMARY KEY,
	attempts_total	INTEGER	NOT NULL DEFAULT 0,
	attempts_without_progress INTEGER NOT NULL DEFAULT 0,
	next_attempt_ms	INTEGER	NOT NULL,
	in_flight	INTEGER	NOT NULL DEFAULT 0 CHECK (in_flight IN (0, 1)),
	can_restore_health INTEGER NOT NULL DEFAULT 1
	    CHECK (can_restore_health IN (0, 1)),
	recovered_total	INTEGER	NOT NULL DEFAULT 0,
	expired_total	INTEGER	NOT NULL DEFAULT 0,
	source_batches	TEXT	NOT NULL DEFAULT '',	-- bounded, for logs
	updated_at	INTEGER	NOT NULL
) STRICT, WITHOUT ROWID;

-- One row per id a relay reported and has not delivered. failures counts
-- the fetches of this id that failed (its own budget: recovering newer ids
-- never renews it). queue_seq is the round-robin position: an attempted id
-- moves behind the others, so a large inventory starves nobody.
CREATE TABLE missing_ids (
	relay		TEXT	NOT NULL
	    REFERENCES recovery_relays (relay) ON DELETE CASCADE,
	id		BLOB	NOT NULL CHECK (length(id) = 32),
	failures	INTEGER	NOT NULL DEFAULT 0,
	queue_seq	INTEGER	NOT NULL,
	attempted	INTEGER	NOT NULL DEFAULT 0 CHECK (attempted IN (0, 1)),
	state		TEXT	NOT NULL DEFAULT 'pending'
	    CHECK (state IN ('pending', 'expired')),
	registered_at	INTEGER	NOT NULL,
	PRIMARY KEY (relay, id)
) STRICT, WITHOUT ROWID;
CREATE INDEX missing_ids_queue ON missing_ids (relay, state, queue_seq);
-- An event that arrives by any path clears its id on every relay.
CREATE INDEX missing_ids_id ON missing_ids (id);

-- relays: every relay the box knows, its NIP-11 facts, health and counters.
-- Counters are totals since the row was created, flushed from memory
-- periodically (never one write per frame). negentropy is NULL until known,
-- 0 after a NEG-ERR or a refusing NOTICE, 1 when NIP-77 worked.
CREATE TABLE relays (
	url		TEXT	PRIMARY KEY,
	role		TEXT	NOT NULL
	    CHECK (role IN ('bootstrap', 'outbox', 'custom', 'uplink')),
	max_limit	INTEGER,
	max_subscriptions INTEGER,
	max_message_length INTEGER,
	supported_nips	TEXT	NOT NULL DEFAULT '',	-- comma-separated numbers
	negentropy	INTEGER	CHECK (negentropy IN (0, 1)),
	auth_required	INTEGER	NOT NULL DEFAULT 0 CHECK (auth_required IN (0, 1)),
	nip11_at	INTEGER,		-- when the NIP-11 document was read
	state		TEXT	NOT NULL DEFAULT 'new',
	last_error	TEXT,
	failures	INTEGER	NOT NULL DEFAULT 0,	-- consecutive, sizes backoff
	backoff_until_ms INTEGER,
	events		INTEGER	NOT NULL DEFAULT 0,
	bytes_in	INTEGER	NOT NULL DEFAULT 0,
	reqs		INTEGER	NOT NULL DEFAULT 0,
	eose		INTEGER	NOT NULL DEFAULT 0,
	notices		INTEGER	NOT NULL DEFAULT 0,
	closed		INTEGER	NOT NULL DEFAULT 0,
	auth		INTEGER	NOT NULL DEFAULT 0,
	invalid		INTEGER	NOT NULL DEFAULT 0,
	dropped		INTEGER	NOT NULL DEFAULT 0,
	first_seen	INTEGER	NOT NULL,
	updated_at	INTEGER	NOT NULL
) STRICT, WITHOUT ROWID;

-- config: keys set at run time (console, web, cacheboxctl). Loaded at
-- start-up below --set and -c (ARCHITECTURE.md §11). Keys a newer or older
-- binary does not know are kept and skipped, never deleted.
CREATE TABLE config (
	key		TEXT	PRIMARY KEY,
	value		TEXT	NOT NULL,
	updated_at	INTEGER	NOT NULL
) STRICT, WITHOUT ROWID;

-- meta: small facts about this store (uplink target last queued for,
-- forwarded totals, ...). Values may be text or integers.
CREATE TABLE meta (
	key		TEXT	PRIMARY KEY,
	value		ANY
) STRICT, WITHOUT ROWID;
