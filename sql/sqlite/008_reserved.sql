-- 008_reserved.sql — number 008 belongs to a migration written on another
-- branch (custom jobs) at the same time as 009. This placeholder keeps the
-- numbering without gaps (store.c refuses gaps) until both branches meet;
-- the merge replaces this file with that branch's 008. It changes nothing.
SELECT 1;
