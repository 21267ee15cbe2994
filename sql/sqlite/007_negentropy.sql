-- 007_negentropy.sql — when a relay's NIP-77 support was last learnt.
--
-- relays.negentropy is NULL until known, 1 once a reconciliation worked,
-- 0 after a refusal (NEG-ERR, a NOTICE, CLOSED, or no answer). A refusal
-- is tried again a day after negentropy_at (Unix seconds), so a relay that
-- gains NIP-77 support is found; the drain pages a refusing relay
-- meanwhile.
ALTER TABLE relays ADD COLUMN negentropy_at INTEGER;
