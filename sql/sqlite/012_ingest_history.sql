-- 012_ingest_history.sql — events stored per bucket of time, for the page's
-- chart of the last 24 hours and 7 days, kept across restarts.
--
-- One row per bucket of INGEST_HISTORY_BUCKET_S seconds (start: Unix
-- seconds, a multiple of the bucket), written once, when the next bucket
-- begins or the daemon stops, inside the ingest batch being committed: no
-- commit of its own, at most one row written per bucket. Rows older than
-- INGEST_HISTORY_S are deleted by the same write.
CREATE TABLE ingest_history (
    start  INTEGER PRIMARY KEY,
    stored INTEGER NOT NULL
);
