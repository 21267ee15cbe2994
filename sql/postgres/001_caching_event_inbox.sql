-- 001_caching_event_inbox.sql — the relay-side contract of the Postgres
-- uplink (docs/ARCHITECTURE.md §8). cachebox inserts the events it caught;
-- the relay's own inbox poller moves them into its events table, in
-- inbox_id order, and deletes (or marks) what it took.
--
-- Idempotent: every statement may run again on a database that has it,
-- so cacheboxd can apply this file on each first connect when
-- uplink.pg.create_schema = true, and an operator can apply it by hand:
--   psql "$URL" -f sql/postgres/001_caching_event_inbox.sql
--
-- Delivery is at least once: cachebox sends a batch again when it did not
-- see its COMMIT answered (power cut, connection lost, restart). The
-- unique event_id plus "ON CONFLICT (event_id) DO NOTHING" make that
-- harmless: each event is stored once however often it arrives.
--
-- Ids and keys are lowercase hex, as in the event JSON. Times named *_at
-- without a zone are Unix seconds.

CREATE TABLE IF NOT EXISTS caching_event_inbox (
	inbox_id	bigserial	PRIMARY KEY,
	event_id	text		NOT NULL UNIQUE
	    CHECK (char_length(event_id) = 64),
	pubkey		text		NOT NULL CHECK (char_length(pubkey) = 64),
	kind		integer		NOT NULL CHECK (kind BETWEEN 0 AND 65535),
	created_at	bigint		NOT NULL,
	event_json	jsonb		NOT NULL,
	source_class	text		NOT NULL
	    CHECK (source_class IN ('live', 'backfill', 'job', 'recovery')),
	source_relay	text,		-- first relay the box saw it on; NULL if none
	box_pubkey	text		NOT NULL,	-- the cachebox that caught it
	received_at	bigint		NOT NULL,	-- when the box first stored it
	inserted_at	timestamptz	NOT NULL DEFAULT now()
);

-- Every index costs each of the thousands of rows a second the box can
-- send, so there is one beyond the keys: the poller reads in inbox_id
-- order (the primary key) and looks events up by event_id (unique); lag
-- and clean-up go by arrival time. Lookups by author belong to the
-- relay's own events table, once the poller has moved the rows.
CREATE INDEX IF NOT EXISTS caching_event_inbox_inserted_at
    ON caching_event_inbox (inserted_at);
