-- 006_cursor_why.sql — why a cursor is incomplete, as a code.
--
-- The drain acted on the text of incomplete_reason (a prefix compared to
-- decide whether a row is due another try). Code now acts on
-- incomplete_why, and incomplete_reason stays the text people read (the
-- code's words, then any detail). The codes (src/store/cursors.h):
--   0 none, 1 same-second burst over the relay cap, 2 relay ignores until,
--   3 no answer from relay (retried later), 4 relay not dialled (outbox
--   limits; resumes when the relay is dialled again), 5 ids the relay
--   reported under recovery, 6 more events in one second than one
--   negentropy session may hold; up to 15 is room for later codes.
-- Rows an older version recorded are given the code their text names.
ALTER TABLE cursors ADD COLUMN incomplete_why INTEGER NOT NULL DEFAULT 0
    CHECK (incomplete_why BETWEEN 0 AND 15);
UPDATE cursors SET incomplete_why = CASE
	WHEN incomplete_reason LIKE 'same-second burst%' THEN 1
	WHEN incomplete_reason LIKE 'relay ignores until%' THEN 2
	WHEN incomplete_reason LIKE 'no answer from relay%' THEN 3
	WHEN incomplete_reason LIKE 'relay not dialled%' THEN 4
	ELSE 0 END
    WHERE incomplete_reason IS NOT NULL;
