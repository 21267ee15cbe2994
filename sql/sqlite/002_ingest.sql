-- 002_ingest.sql — maintained totals of the cache and the newest live event
-- per relay (DESIGN.md sections 3 and 4).
--
-- The status page asks for the number of events and the store's byte
-- budget asks for their size on every poll; count(*) and sum() over a
-- million rows would be a scan each time. Two rows of meta hold the
-- totals instead, kept by triggers in the same transaction as the row
-- that changes them, so they can never drift from the table, whatever
-- path inserts or deletes (ingest, retention, a future import).
-- events_bytes is the sum of the JSON's length in bytes (CAST to BLOB:
-- length() of TEXT counts characters).

INSERT OR REPLACE INTO meta (key, value)
    VALUES ('events_count', (SELECT count(*) FROM events));
INSERT OR REPLACE INTO meta (key, value)
    VALUES ('events_bytes',
    (SELECT coalesce(sum(length(CAST(json AS BLOB))), 0) FROM events));

CREATE TRIGGER events_totals_insert AFTER INSERT ON events BEGIN
	UPDATE meta SET value = value + CASE key WHEN 'events_count' THEN 1
	    ELSE length(CAST(NEW.json AS BLOB)) END
	    WHERE key IN ('events_count', 'events_bytes');
END;

CREATE TRIGGER events_totals_delete AFTER DELETE ON events BEGIN
	UPDATE meta SET value = value - CASE key WHEN 'events_count' THEN 1
	    ELSE length(CAST(OLD.json AS BLOB)) END
	    WHERE key IN ('events_count', 'events_bytes');
END;

-- relay_newest: the newest created_at of a live event seen from each relay
-- (new or already stored). The live planner subscribes with since = this
-- minus an overlap after a restart, so a reconnect catches up what it
-- missed. Written once per relay per ingest batch, never per event.
CREATE TABLE relay_newest (
	relay		TEXT	PRIMARY KEY,
	created_at	INTEGER	NOT NULL
) STRICT, WITHOUT ROWID;
