-- 002_source_class.sql — every source the box stores from may be
-- forwarded: besides what it fetched (live, backfill, job, recovery), an
-- event a client of the box's own relay published (client) and a line of
-- `cacheboxctl import` (import). 001 allowed only the first four, so such
-- an event made its whole batch fail. Idempotent, like 001.
ALTER TABLE caching_event_inbox
    DROP CONSTRAINT IF EXISTS caching_event_inbox_source_class_check;
ALTER TABLE caching_event_inbox
    ADD CONSTRAINT caching_event_inbox_source_class_check
    CHECK (source_class IN ('live', 'backfill', 'job', 'recovery', 'client',
    'import'));
