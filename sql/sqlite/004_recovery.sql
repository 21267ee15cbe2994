-- 004_recovery.sql — the missing-event recovery index as the code uses it
-- (ARCHITECTURE.md §6; src/store/recovery.c, src/sync/recovery.c).
--
-- 001 sketched recovery_relays and missing_ids before any code wrote them.
-- Writing the policy showed three things to change, so both tables are
-- rebuilt here (they were never written by an earlier binary, but any row
-- is copied all the same):
--  * The backoff is sized by the largest failures count among the ids still
--    pending on the relay, not by a per-relay "attempts without progress"
--    counter: a counter that progress resets would let newly registered ids
--    that arrive at once shorten the wait of old ids that keep failing.
--    That max is read through an index (relay, state, failures), in
--    O(log n) whatever the relay holds; the counter column is gone.
--  * The attempt in flight is a range of queue_seq, not a flag per row.
--    Starting an attempt reads the first ids of the relay's queue and moves
--    them, as one block and in one statement, behind every other pending id
--    (queue_next onwards); recovery_relays keeps the block's range
--    (attempt_lo, attempt_hi). Completing it touches only that range, so ids
--    registered while it was in flight never pay for it, and nothing needs
--    clearing row by row after a crash: start-up sets in_flight = 0, the
--    moved ids keep their place behind the others and no failure is counted.
--  * Surfaces and the policy need the pending and expired counts of a relay
--    on every call; count(*) over 100,000 ids is a scan. Triggers keep them
--    in recovery_relays within the same statement as the rows they count,
--    whatever path inserts, expires or deletes (a row is a few dozen bytes,
--    unlike the events whose insert trigger 003 had to drop). A row's relay
--    never changes.
-- The state CHECK is written as comparisons (003 explains why: an IN list
-- builds a temporary b-tree on every insert).
--
-- Times: next_attempt_ms is Unix milliseconds given by the caller (a wall
-- clock, so the deadline means the same after a reboot); *_at are seconds.
-- A relay row lives while the relay has pending or expired ids, or while
-- full recovery could no longer restore its health; a relay fully recovered
-- with its health restorable has no row.

CREATE TABLE recovery_relays_new (
	relay		TEXT	PRIMARY KEY,
	pending		INTEGER	NOT NULL DEFAULT 0 CHECK (pending >= 0),
	expired		INTEGER	NOT NULL DEFAULT 0 CHECK (expired >= 0),
	in_flight	INTEGER	NOT NULL DEFAULT 0 CHECK (in_flight IN (0, 1)),
	attempt_lo	INTEGER	NOT NULL DEFAULT 0,	-- queue_seq range of the
	attempt_hi	INTEGER	NOT NULL DEFAULT -1,	-- attempt in flight
	queue_next	INTEGER	NOT NULL DEFAULT 0,	-- next queue_seq to hand out
	next_attempt_ms	INTEGER	NOT NULL,
	attempts_total	INTEGER	NOT NULL DEFAULT 0,
	recovered_total	INTEGER	NOT NULL DEFAULT 0,
	expired_total	INTEGER	NOT NULL DEFAULT 0,
	can_restore_health INTEGER NOT NULL DEFAULT 1
	    CHECK (can_restore_health IN (0, 1)),
	source_batches	TEXT	NOT NULL DEFAULT '',	-- comma-separated, bounded
	updated_at	INTEGER	NOT NULL
) STRICT, WITHOUT ROWID;

INSERT INTO recovery_relays_new (relay, in_flight, next_attempt_ms,
    attempts_total, can_restore_health, recovered_total, expired_total,
    source_batches, updated_at)
    SELECT relay, 0, next_attempt_ms, attempts_total, can_restore_health,
    recovered_total, expired_total, source_batches, updated_at
    FROM recovery_relays;

CREATE TABLE missing_ids_new (
	relay		TEXT	NOT NULL
	    REFERENCES recovery_relays (relay) ON DELETE CASCADE,
	id		BLOB	NOT NULL CHECK (length(id) = 32),
	failures	INTEGER	NOT NULL DEFAULT 0 CHECK (failures >= 0),
	queue_seq	INTEGER	NOT NULL,
	state		TEXT	NOT NULL DEFAULT 'pending'
	    CHECK (state = 'pending' OR state = 'expired'),
	registered_at	INTEGER	NOT NULL,
	PRIMARY KEY (relay, id)
) STRICT, WITHOUT ROWID;

INSERT INTO missing_ids_new (relay, id, failures, queue_seq, state,
    registered_at)
    SELECT relay, id, failures, queue_seq, state, registered_at
    FROM missing_ids;

DROP TABLE missing_ids;
DROP TABLE recovery_relays;
ALTER TABLE recovery_relays_new RENAME TO recovery_relays;
ALTER TABLE missing_ids_new RENAME TO missing_ids;

-- The round-robin queue: a relay's pending ids in turn order (an attempt
-- reads its page here), and the range of an attempt.
CREATE INDEX missing_ids_queue ON missing_ids (relay, state, queue_seq);
-- The backoff: the largest failures count among a relay's pending ids.
CREATE INDEX missing_ids_failures ON missing_ids (relay, state, failures);
-- An event that arrives by any path clears its id on every relay.
CREATE INDEX missing_ids_id ON missing_ids (id);

UPDATE recovery_relays SET
    pending = (SELECT count(*) FROM missing_ids m
	WHERE m.relay = recovery_relays.relay AND m.state = 'pending'),
    expired = (SELECT count(*) FROM missing_ids m
	WHERE m.relay = recovery_relays.relay AND m.state = 'expired'),
    queue_next = (SELECT coalesce(max(queue_seq) + 1, 0) FROM missing_ids m
	WHERE m.relay = recovery_relays.relay);

CREATE TRIGGER missing_ids_count_insert AFTER INSERT ON missing_ids BEGIN
	UPDATE recovery_relays SET
	    pending = pending + (NEW.state = 'pending'),
	    expired = expired + (NEW.state = 'expired')
	    WHERE relay = NEW.relay;
END;

CREATE TRIGGER missing_ids_count_delete AFTER DELETE ON missing_ids BEGIN
	UPDATE recovery_relays SET
	    pending = pending - (OLD.state = 'pending'),
	    expired = expired - (OLD.state = 'expired')
	    WHERE relay = OLD.relay;
END;

CREATE TRIGGER missing_ids_count_state AFTER UPDATE OF state ON missing_ids
    WHEN OLD.state <> NEW.state BEGIN
	UPDATE recovery_relays SET
	    pending = pending + (NEW.state = 'pending') - (OLD.state = 'pending'),
	    expired = expired + (NEW.state = 'expired') - (OLD.state = 'expired')
	    WHERE relay = NEW.relay;
END;
