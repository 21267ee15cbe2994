-- 013_job_way.sql — which way a job batch goes on its relay.
--
-- A batch on a relay that speaks NIP-77 is reconciled window by window,
-- from the run's until down to its since, instead of paged; a relay that
-- refuses (or a second too dense for one session) pages it from where the
-- reconciliation stopped. way says which: NULL not decided yet, 'nip77'
-- reconciled, 'paging' paged. until_cursor keeps its meaning either way:
-- every event of the batch's filter newer than it has been fetched (a
-- window's cursor commits in the transaction of the window's events), so
-- a restart resumes either way from it.
ALTER TABLE job_batches ADD COLUMN way TEXT
    CHECK (way IS NULL OR way = 'nip77' OR way = 'paging');
