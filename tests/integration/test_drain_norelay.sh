#!/usr/bin/env bash
# test_drain_norelay.sh — a followed author for whom no relay is known (no
# bootstrap relay, no relay list) has no cursor row; it counts as
# incomplete, so --exit-when-idle exits 0 promptly and the status keeps
# complete + incomplete = total once idle. Nothing here opens a socket
# other than the daemon's own loopback status port.
. "$(dirname "$0")/lib.sh"

ROOT=$(printf '7e%.0s' {1..32})
D=$T/state
ARGS=(-d "$D" --set relays.bootstrap= --set follow.roots="$ROOT"
    --set http.listen=127.0.0.1:0)
check "no relay known: --exit-when-idle exits 0" \
    timeout 30 "$CACHEBOXD" "${ARGS[@]}" --exit-when-idle 2>>"$T/d.log"
check "the log says why the author is incomplete" \
    grep -q 'no relay known for this author' "$T/d.log"

start_daemon "${ARGS[@]}"
check "a running daemon reports idle" wait_for 30 idle
check "status: 1 author, 0 complete, 1 incomplete" test \
    "$(json_get "$T/st.json" backfill.authors_total) $(json_get "$T/st.json" backfill.authors_complete) $(json_get "$T/st.json" backfill.authors_incomplete)" = "1 0 1"
cboxctl -d "$D" follows --json >"$T/f.json"
check "follows: the author is incomplete, no relay known" python3 - "$T/f.json" <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))["follows"]
assert len(a) == 1 and a[0]["state"] == "incomplete", a
assert a[0]["reason"] == "no relay known for this author" and a[0]["relays"] == [], a
PY
finish
