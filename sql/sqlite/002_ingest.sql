-- 002_ingest.sql — maintained totals of the cache and the newest live event
-- per relay (ARCHITECTURE.md §§4, 5).
--
-- The status page asks for the number of events and the store's byte
-- budget asks for their size on every poll; count(*) and sum() over a
-- million rows would be a scan each time. One row of event_totals holds
-- both instead, kept by triggers in the same transaction as the row that
-- changes them, so it can never drift from the table, whatever path
-- inserts or deletes (ingest, retention, a future import). bytes is the
-- sum of the JSON's length in bytes (CAST to BLOB: length() of TEXT counts
-- characters).
CREATE TABLE event_totals (
	id		INTEGER	PRIMARY KEY CHECK (id = 1),
	count		INTEGER	NOT NULL,
	bytes		INTEGER	NOT NULL
) STRICT;
INSERT INTO event_totals (id, count, bytes) SELECT 1, count(*),
    coalesce(sum(length(CAST(json AS BLOB))), 0) FROM events;

CREATE TRIGGER events_totals_insert AFTER INSERT ON events BEGIN
	UPDATE event_totals SET count = count + 1,
	    bytes = bytes + length(CAST(NEW.json AS BLOB)) WHERE id = 1;
END;

CREATE TRIGGER events_totals_delete AFTER DELETE ON events BEGIN
	UPDATE event_totals SET count = count - 1,
	    bytes = bytes - length(CAST(OLD.json AS BLOB)) WHERE id = 1;
END;

-- relay_newest: the newest created_at of a live event seen from each relay
-- (new or already stored). The live planner subscribes with since = this
-- minus an overlap after a restart, so a reconnect catches up what it
-- missed. Written once per relay per ingest batch, never per event.
CREATE TABLE relay_newest (
	relay		TEXT	PRIMARY KEY,
	created_at	INTEGER	NOT NULL
) STRICT, WITHOUT ROWID;
