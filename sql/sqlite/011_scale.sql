-- 011_scale.sql — the drain's work list in an index of its own.
--
-- Each relay's drain asks for its next authors still draining (complete = 0
-- and no incomplete_reason) in pubkey order, and the loop asks whether any
-- author still drains before it calls itself idle. cursors_relay_state
-- found (relay, complete = 0) and then read past every row recorded
-- incomplete: with 5,000 followed authors all incomplete on a relay, 5 ms
-- for no row, every step and every 5 s. This partial index holds only the
-- rows still draining, so both questions cost a lookup; a query uses it
-- when its WHERE repeats the condition word for word.
CREATE INDEX cursors_todo ON cursors (relay, pubkey)
    WHERE complete = 0 AND incomplete_reason IS NULL;
