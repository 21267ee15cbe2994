-- 015_events_packed.sql — events kept in their compact form
-- (docs/ARCHITECTURE.md section 5; nostr/event_pack.h, store/rowjson.c).
--
-- A row's JSON held its id, public key and signature as 64 + 64 + 128 hex
-- characters, beside the binary id and pubkey columns: about 1.35 bytes of
-- row per byte of JSON, and WAL writes every row twice. packed holds the
-- JSON without the three (the signature as its 64 bytes, the id and
-- public key read back from the row's own columns), a form byte first;
-- decoding gives back the same bytes. A row written from now on has
-- packed set and json = '' (json stays NOT NULL: SQLite cannot drop the
-- constraint without copying the table).
--
-- Rows stored before keep their text and a NULL packed; every reader
-- goes through one accessor that takes either (store_row_json). They are
-- converted in the background from the loop, a few hundred per step, from
-- the oldest rowid up to the newest one at migration time, the position
-- in meta (pack_next, pack_end) committed with each step, so the store is
-- never paused for it and a crash repeats at most one step. Adding the
-- column is a change of the schema alone: no row is copied here.
--
-- event_totals.bytes stays the bytes of JSON the rows serve. The delete
-- trigger computes them from the stored size: length(packed) plus a
-- constant per form (191 for the store's own layout, 179 with offsets,
-- -1 for verbatim), or the text's length for a row not yet converted.
-- STORE_ROW_JSON_BYTES in store/rowjson.h is the same expression.

ALTER TABLE events ADD COLUMN packed BLOB;

DROP TRIGGER events_totals_delete;
CREATE TRIGGER events_totals_delete AFTER DELETE ON events BEGIN
	UPDATE event_totals SET count = count - 1,
	    bytes = bytes - (CASE WHEN OLD.packed IS NULL THEN
	    length(CAST(OLD.json AS BLOB)) ELSE length(OLD.packed) +
	    CASE substr(OLD.packed, 1, 1) WHEN x'01' THEN 191
	    WHEN x'02' THEN 179 ELSE -1 END END) WHERE id = 1;
END;

INSERT INTO meta (key, value)
    SELECT 'pack_next', 1 WHERE EXISTS (SELECT 1 FROM events);
INSERT INTO meta (key, value)
    SELECT 'pack_end', (SELECT max(rowid) FROM events)
    WHERE EXISTS (SELECT 1 FROM events);
