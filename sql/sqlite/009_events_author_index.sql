-- 009_events_author_index.sql — one author's events in time order from
-- an index, for no more index bytes written per event than before.
--
-- events_pubkey_kind_time ordered an author's events by kind first. A
-- NIP-77 reconciliation reads an author's history window by window (from
-- a created_at on, in (created_at, id) order, a bounded count), so every
-- window sorted all the author's later events again: an author with
-- 1,000,000 events took 75 s of CPU (tests/bench/negentropy_windows), and
-- a query for authors by time (a REQ with authors and a limit) sorted the
-- same way.
--
-- (pubkey, created_at) answers both with a range scan; only events of the
-- same second are sorted by id (SQLite's sort of the right part of an
-- ORDER BY). kind rides along at the end (a byte or two per entry) so a
-- job resolving "every author of kind 1" still reads the index alone. Measured, for 1,000,000 events of one author and for
-- tests/bench/ingest's 20,000 events of 200 authors:
--   kept events_pubkey_kind_time                 74.6 s   4.07 MB written per 1,000 events
--   added (pubkey, created_at, id) beside it      2.3 s   5.12 MB
--   (pubkey, created_at, id) replacing it         2.4 s   4.51 MB
--   (pubkey, created_at) replacing it             7.0 s   4.05 MB
--   (pubkey, created_at, kind) replacing it       7.0 s   4.06 MB
-- The last two cost the SD card nothing; the last is the one kept. What needed kind first were the
-- replaceable lookups (an author's newest kind 0, 3, 10002...): a partial
-- index keeps those for the few events of those kinds only. A query uses
-- it only when its WHERE holds the index's condition word for word
-- (store_event_newest does; test_store_events checks both plans).
CREATE INDEX events_pubkey_time ON events (pubkey, created_at, kind);
DROP INDEX events_pubkey_kind_time;
CREATE INDEX events_replaceable ON events (pubkey, kind, created_at)
    WHERE kind = 0 OR kind = 3 OR (kind >= 10000 AND kind < 20000) OR
    (kind >= 30000 AND kind < 40000);
