-- 016_events_time_desc.sql — the time index in the order a relay serves
-- (docs/ARCHITECTURE.md section 5, the serve read path).
--
-- NIP-01 hands events out newest first, the lowest id first among events
-- of the same second: ORDER BY created_at DESC, id ASC. Walked backwards,
-- (created_at, id) gives created_at DESC but id DESC, so every page of a
-- query by time (store/scan.c's PLAN_TIME) went through a sorter for the
-- right part of its ORDER BY: each row, with its JSON columns, copied into
-- a temporary b-tree and out again, one sort per second of events.
-- (created_at DESC, id) walked forwards is the order itself: the page is
-- read off the index with no sort.
--
-- It replaces the old index, so an event writes no more index bytes than
-- before (the same columns, only their order). The walks oldest first in
-- (created_at, id) order, retention's and the uplink's enqueue, now read
-- it backwards, both bounds of their range still on created_at, and sort
-- the events of each second by id: a few rows, at their own pace.
-- Rebuilding the index reads every row once, when the migration runs.
DROP INDEX events_time_id;
CREATE INDEX events_time_id ON events (created_at DESC, id);
