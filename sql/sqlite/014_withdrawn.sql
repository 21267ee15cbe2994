-- 014_withdrawn.sql — what authors withdrew, so the box keeps to it.
--
-- The box stores an event only as its author wants it kept (NIP-01
-- replaceable and addressable versions, NIP-09 deletions, NIP-40 expiry,
-- NIP-62 requests to vanish; docs/ARCHITECTURE.md §5a). These tables hold
-- what that takes beside the events themselves:
--
-- withdrawn       one row per event id the box will not keep: a version a
--                 newer one superseded, an event its author deleted, one
--                 that expired or was vanished, and the ids a deletion
--                 names that the box has not seen (then pubkey is the
--                 deleter's and created_at, kind are NULL until the event
--                 itself comes and is refused). A row whose created_at is
--                 known was made from a verified event: the drain, NIP-77,
--                 recovery and jobs never fetch that id again. Bounded
--                 (STORE_WITHDRAWN_MAX rows), the oldest `at` evicted.
-- withdrawn_key   a floor under a replaceable or addressable key
--                 (pubkey, kind, d): every version that is not newer than
--                 (until, until_id) in NIP-01's order is refused. A
--                 deletion of the address (kind:pubkey:d) sets it to its
--                 own second and the lowest id (the whole second goes); a
--                 version withdrawn for another reason (deleted by id,
--                 expired) sets it to itself, so an older version that
--                 comes later does not take its place.
-- vanished        NIP-62: every event of pubkey up to `until` is gone and
--                 refused, but the request itself (`id`); purged is 1 once
--                 the stored ones were all removed.
-- roots_history   the superseded versions of the roots' own kinds 0, 3 and
--                 10002, kept aside (not served as current), the newest
--                 ROOTS_HISTORY_KEEP per root and kind.
--
-- events.expires_at is the NIP-40 expiration of an event that has one
-- (NULL: never); the partial index lets the sweeper find the next one.
--
-- A store made before this migration is brought to the rules once, in
-- steps on the loop, from rowid meta.rules_fill_next up to
-- meta.rules_fill_end (both rows deleted when done), as the tag index was.

ALTER TABLE events ADD COLUMN expires_at INTEGER;
CREATE INDEX events_expiring ON events (expires_at)
    WHERE expires_at IS NOT NULL;

CREATE TABLE withdrawn (
	id		BLOB	NOT NULL CHECK (length(id) = 32),
	pubkey		BLOB	NOT NULL CHECK (length(pubkey) = 32),
	created_at	INTEGER,
	kind		INTEGER,
	why		INTEGER	NOT NULL,	-- enum store_withdrawn_why
	at		INTEGER	NOT NULL,	-- wall seconds it was withdrawn
	PRIMARY KEY (id, pubkey)
) STRICT, WITHOUT ROWID;
CREATE INDEX withdrawn_at ON withdrawn (at, id);

CREATE TABLE withdrawn_key (
	pubkey		BLOB	NOT NULL CHECK (length(pubkey) = 32),
	kind		INTEGER	NOT NULL,
	d		TEXT	NOT NULL,
	until		INTEGER	NOT NULL,
	until_id	BLOB	NOT NULL CHECK (length(until_id) = 32),
	why		INTEGER	NOT NULL,	-- enum store_withdrawn_why
	PRIMARY KEY (pubkey, kind, d)
) STRICT, WITHOUT ROWID;

CREATE TABLE vanished (
	pubkey		BLOB	PRIMARY KEY CHECK (length(pubkey) = 32),
	until		INTEGER	NOT NULL,
	id		BLOB	NOT NULL CHECK (length(id) = 32),
	purged		INTEGER	NOT NULL DEFAULT 0
) STRICT, WITHOUT ROWID;

CREATE TABLE roots_history (
	pubkey		BLOB	NOT NULL CHECK (length(pubkey) = 32),
	kind		INTEGER	NOT NULL,
	created_at	INTEGER	NOT NULL,
	id		BLOB	NOT NULL CHECK (length(id) = 32),
	json		TEXT	NOT NULL,
	PRIMARY KEY (pubkey, kind, created_at, id)
) STRICT, WITHOUT ROWID;

INSERT INTO meta (key, value)
    SELECT 'rules_fill_next', 1 WHERE EXISTS (SELECT 1 FROM events);
INSERT INTO meta (key, value)
    SELECT 'rules_fill_end', (SELECT max(rowid) FROM events)
    WHERE EXISTS (SELECT 1 FROM events);
