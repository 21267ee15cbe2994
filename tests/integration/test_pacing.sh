#!/usr/bin/env bash
# test_pacing.sh — backfill.pace_ms is the least gap between two requests
# to one relay. With pace_ms=1200 and small pages (page_size 40), draining
# three authors takes a dozen REQs per relay over two relays; the debug log
# times every REQ sent. On each relay no two REQs are closer than the pace
# less 100 ms (the loop reads its clock once a round, so a REQ may leave a
# round's length after the time it is paced from; without pacing the gaps
# would be a few ms; a loaded machine can only widen them), while the
# two relays are worked in parallel, not one after the other: their REQs
# interleave in time. The whole history is still drained to complete.
. "$(dirname "$0")/lib.sh"
use_relaysim

cat > "$T/sim.json" <<'JSON'
{"dataset": {"authors": 3, "events": 240, "seed": 91},
 "relays": [{"name": "a", "ipv6": false}, {"name": "b", "ipv6": false}]}
JSON
relaysim_start "$T/sim.json" || { fail "relaysim starts"; finish; exit 1; }
D=$T/state
check "drains to idle with pace_ms=1200" timeout 300 "$CACHEBOXD" -d "$D" \
    --set relays.bootstrap="$(relaysim_url a),$(relaysim_url b)" \
    --set follow.roots="$(relaysim_q root)" --set backfill.pace_ms=1200 \
    --set backfill.page_size=40 --set http.listen=127.0.0.1:0 \
    --set log.level=debug --exit-when-idle 2>"$T/d.log"
python3 - "$T/d.log" "$(relaysim_url a)" "$(relaysim_url b)" >"$T/gaps" <<'PY'
import re, sys
from datetime import datetime
times = {u: [] for u in sys.argv[2:]}
for line in open(sys.argv[1]):
    m = re.match(r'(\S+Z) debug: relay (\S+): REQ ', line)
    if m and m.group(2) in times:
        times[m.group(2)].append(datetime.strptime(m.group(1),
            '%Y-%m-%dT%H:%M:%S.%fZ').timestamp())
a, b = times[sys.argv[2]], times[sys.argv[3]]
gap = lambda t: min((y - x for x, y in zip(t, t[1:])), default=0)
# Interleaved: some REQ to b falls between the first and last REQ to a.
inter = any(a[0] < x < a[-1] for x in b) if a and b else False
print(len(a), len(b), int(gap(a) * 1000), int(gap(b) * 1000), int(inter))
PY
read -r na nb ga gb inter <"$T/gaps"
echo "    REQs a $na, b $nb; least gap a $ga ms, b $gb ms; interleaved $inter"
check "a dozen or more REQs to each relay" test "$na" -ge 12 -a "$nb" -ge 12
check "no two REQs to relay a closer than 1100 ms (least $ga)" test "$ga" -ge 1100
check "no two REQs to relay b closer than 1100 ms (least $gb)" test "$gb" -ge 1100
check "the two relays are worked in parallel" test "$inter" -eq 1
check "every author drained to complete" python3 - "$D/cachebox.db" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
n, c = db.execute("SELECT count(*), sum(complete) FROM cursors").fetchone()
sys.exit(0 if n == 6 and c == 6 else 1)
PY
finish
