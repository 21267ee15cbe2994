-- 010_relay.sql — the box as a relay on the LAN (ARCHITECTURE.md §7a;
-- src/serve, src/store/scan.c, src/store/tags.c).
--
-- 1. events.source gains 'client' and 'import': an event a client of the
--    box's own relay sent (relay.accept), or one `cacheboxctl import` read
--    from a file, is stored and forwarded like any other, and says where
--    it came from. CHECK constraints cannot be altered in place, so
--    the table is rebuilt as 003 did (rowids kept: the tag index below and
--    the inbox refer to rows by them; foreign keys are off around
--    migrations and PRAGMA foreign_key_check runs before the commit).
--    On a large store this copies every row once: about 20 s per million
--    events on a laptop, minutes on an SD card, once.
-- 2. event_tags: the single-letter tag index NIP-01 "#x" filters need. One
--    row per distinct (letter, first value) of an event, in the order a
--    query reads them: by letter and value, newest first within. A value
--    that is 64 lowercase hex digits (event ids, public keys: nearly all
--    "e" and "p" tags) is kept as its 32 bytes, anything else as text, and
--    a query converts its values the same way (store/tags.c). ev is the
--    events rowid (8 bytes at most, against 32 for an id); a row whose
--    event is gone could point at a rowid used again, so retention deletes
--    an event's rows exactly (it reads the event's tags first) and a query
--    joins on created_at as well.
--    Measured cost (tests/bench/ingest, tests/bench/relay_serve.sh): see
--    docs/ARCHITECTURE.md section 5.
-- 3. Events stored before this migration get their tag rows from a
--    background fill on the loop, in small steps (store_tags_fill_step),
--    from the oldest rowid up to the newest one at migration time;
--    ingest writes the rows of every new event itself. Until the fill is
--    done, queries read "#x" conditions from the events themselves
--    (slower, never wrong). meta.tags_fill_next is the next rowid to read,
--    meta.tags_fill_end the last; both rows are deleted when it is done.

CREATE TABLE events_new (
	id		BLOB	PRIMARY KEY CHECK (length(id) = 32),
	pubkey		BLOB	NOT NULL CHECK (length(pubkey) = 32),
	kind		INTEGER	NOT NULL CHECK (kind BETWEEN 0 AND 65535),
	created_at	INTEGER	NOT NULL,
	source		TEXT	NOT NULL CHECK (source = 'live' OR
	    source = 'backfill' OR source = 'job' OR source = 'recovery' OR
	    source = 'client' OR source = 'import'),
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

-- The same indexes as 003 and 009 made, and 003's delete trigger.
CREATE INDEX events_pubkey_time ON events (pubkey, created_at, kind);
CREATE INDEX events_replaceable ON events (pubkey, kind, created_at)
    WHERE kind = 0 OR kind = 3 OR (kind >= 10000 AND kind < 20000) OR
    (kind >= 30000 AND kind < 40000);
CREATE INDEX events_time_id ON events (created_at, id);
CREATE TRIGGER events_totals_delete AFTER DELETE ON events BEGIN
	UPDATE event_totals SET count = count - 1,
	    bytes = bytes - length(CAST(OLD.json AS BLOB)) WHERE id = 1;
END;

CREATE TABLE event_tags (
	name		INTEGER	NOT NULL CHECK (name BETWEEN 65 AND 122),
	value		ANY	NOT NULL,
	created_at	INTEGER	NOT NULL,
	ev		INTEGER	NOT NULL,	-- events.rowid
	PRIMARY KEY (name, value, created_at, ev)
) STRICT, WITHOUT ROWID;

INSERT INTO meta (key, value)
    SELECT 'tags_fill_next', 1 WHERE EXISTS (SELECT 1 FROM events);
INSERT INTO meta (key, value)
    SELECT 'tags_fill_end', (SELECT max(rowid) FROM events)
    WHERE EXISTS (SELECT 1 FROM events);
