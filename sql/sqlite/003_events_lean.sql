-- 003_events_lean.sql — a cheaper insert into events, same guarantees
-- (ARCHITECTURE.md §§5, 10: ingest must keep up with signature checks).
--
-- Measured on the ingest path (tests/bench/ingest), per stored event:
--  * The insert trigger of migration 002 ran a sub-program per row and
--    copied NEW.json (about 1 KB) to take its length: about 30,000
--    instructions per event. Inserts into event_totals are now counted by
--    the store in C (store_event_insert, the only way rows enter events):
--    each row is added to the open transaction's level, and the outermost
--    COMMIT writes the sum with one UPDATE inside the same transaction, so
--    the totals still commit or vanish together with the rows they count;
--    a savepoint that rolls back drops its share. Deletes (retention, a
--    few hundred rows now and then) keep their trigger, so any path that
--    deletes still keeps the totals exact.
--  * CHECK (source IN (four values)) made SQLite build a temporary b-tree
--    for the list on every insert (a page allocated and zeroed per row):
--    about 30,000 instructions more. The same rule is now written as
--    comparisons, which SQLite evaluates in place.
--  * json moves to the last column: a row whose JSON spills onto overflow
--    pages keeps every other column in its first page, so the uplink and
--    retention read source, first_relay and received_at without fetching
--    the overflow chain.
-- Kept as they were, after measuring the alternatives: a rowid table with
-- the id's unique index (WITHOUT ROWID keyed by id wrote 2.8 times the
-- bytes per event, keyed by (created_at, id) 1.9 times, because 1 KB rows
-- then move on every page split), and both secondary indexes (the drain,
-- jobs and replaceable lookups need (pubkey, kind, created_at); negentropy,
-- retention and the uplink's first queueing need (created_at, id); the
-- inbox's foreign key needs the unique index on id).
--
-- The table is rebuilt (CHECK constraints cannot be altered in place):
-- the store turns foreign keys off around migrations and runs
-- PRAGMA foreign_key_check before committing, so the inbox's reference to
-- events (id) is verified, not assumed. Rowids are kept.

DROP TRIGGER events_totals_insert;
DROP TRIGGER events_totals_delete;

CREATE TABLE events_new (
	id		BLOB	PRIMARY KEY CHECK (length(id) = 32),
	pubkey		BLOB	NOT NULL CHECK (length(pubkey) = 32),
	kind		INTEGER	NOT NULL CHECK (kind BETWEEN 0 AND 65535),
	created_at	INTEGER	NOT NULL,
	source		TEXT	NOT NULL CHECK (source = 'live' OR
	    source = 'backfill' OR source = 'job' OR source = 'recovery'),
	first_relay	TEXT,			-- NULL when it came from no relay
	received_at	INTEGER	NOT NULL,
	json		TEXT	NOT NULL
) STRICT;

INSERT INTO events_new (rowid, id, pubkey, kind, created_at, source,
    first_relay, received_at, json)
    SELECT rowid, id, pubkey, kind, created_at, source, first_relay,
    received_at, json FROM events ORDER BY rowid;

DROP TABLE events;
ALTER TABLE events_new RENAME TO events;

-- An author's events by kind and time: drain, job author sources, kind 0/3/10002.
CREATE INDEX events_pubkey_kind_time ON events (pubkey, kind, created_at);
-- Negentropy's order (NIP-77 sorts by created_at, then id); also retention.
CREATE INDEX events_time_id ON events (created_at, id);

-- Dropped with the old table; the same as in 002.
CREATE TRIGGER events_totals_delete AFTER DELETE ON events BEGIN
	UPDATE event_totals SET count = count - 1,
	    bytes = bytes - length(CAST(OLD.json AS BLOB)) WHERE id = 1;
END;

-- Recount once: from here on the store keeps the totals itself.
UPDATE event_totals SET count = (SELECT count(*) FROM events),
    bytes = (SELECT coalesce(sum(length(CAST(json AS BLOB))), 0)
    FROM events) WHERE id = 1;
