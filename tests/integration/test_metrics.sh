#!/usr/bin/env bash
# test_metrics.sh — /metrics of a daemon that has done some of everything:
# drained four authors from relaysim (relay "a" reconciles by NIP-77 and
# sends a forged signature every 50 events), forwarded what it stored to an
# uplink (relay "up"), and answered a REQ on its own relay. Two scrapes, the
# REQ between them, each go through
#   - promtool check metrics: Prometheus's own text-format parser and
#     linter (format errors, a missing HELP, a counter without _total, a
#     gauge with it);
#   - a checker of the conventions that does not trust the linter: one HELP
#     (never the placeholder of an undescribed status field) and one TYPE
#     per family, before its samples; every sample's family typed; TYPE
#     counter exactly when the name ends in _total; the same TYPE in both
#     scrapes; no counter series lower in the second scrape, and the REQ
#     seen in it;
# and against the status document: the counters of what happened (bytes
# written among them) are not zero, values agree with the status, the write
# budget comes from the kernel's count, the forward rate stays in the status
# but not in /metrics.
. "$(dirname "$0")/lib.sh"
use_relaysim
command -v curl >/dev/null || { echo "skip: curl missing"; exit 77; }
command -v promtool >/dev/null ||
    { echo "skip: promtool missing (toolchain/install-deps.sh test installs it)"; exit 77; }

cat >"$T/sim.json" <<'JSON'
{"dataset": {"authors": 4, "events": 300, "seed": 16},
 "relays": [{"name": "a", "ipv6": false, "negentropy": "yes", "bad_sig": {"every": 50}},
            {"name": "up", "ipv6": false}]}
JSON
relaysim_start "$T/sim.json" || { fail "relaysim starts"; finish; exit 1; }
D=$T/state
mkdir -m 700 "$D"
start_daemon -d "$D" --set relays.bootstrap="$(relaysim_url a)" \
    --set follow.roots="$(relaysim_q root)" --set uplink.url="$(relaysim_url up)" \
    --set http.listen=127.0.0.1:0 --set relay.listen=127.0.0.1:0 \
    --set backfill.pace_ms=0 --set recovery.settle_s=0
check "http.port and relay.port written" \
    wait_for 20 test -s "$D/http.port" -a -s "$D/relay.port"
B="http://127.0.0.1:$(cat "$D/http.port")"
forwarded_all() {
	idle && [ "$(json_get "$T/st.json" inbox.pending)" = 0 ] &&
	    [ "$(json_get "$T/st.json" inbox.forwarded)" -gt 0 ]
}
check "drained, idle, everything forwarded" wait_for 120 forwarded_all

check "scrape 1" curl -sf -o "$T/m1" "$B/metrics"
node -e '
const WebSocket = require("ws");
const ws = new WebSocket(process.argv[1]);
const t = setTimeout(() => process.exit(1), 20000);
ws.on("open", () => ws.send(JSON.stringify(["REQ", "m", { kinds: [1], limit: 5 }])));
ws.on("message", (m) => {
	if (JSON.parse(m)[0] === "EOSE") { clearTimeout(t); ws.close(); }
});
ws.on("close", () => process.exit(0));' "ws://127.0.0.1:$(cat "$D/relay.port")" &&
    ok "a REQ answered by the box's relay" || fail "a REQ answered by the box's relay"
check "scrape 2" curl -sf -o "$T/m2" "$B/metrics"
check "status after the scrapes" st

for m in m1 m2; do
	rc=0
	promtool check metrics <"$T/$m" >"$T/$m.lint" 2>&1 || rc=$?
	sed 's/^/    /' "$T/$m.lint"
	check "promtool check metrics: $m parses, no lint problem (exit $rc)" \
	    test "$rc" -eq 0 -a ! -s "$T/$m.lint"
done

python3 - "$T/m1" "$T/m2" "$T/st.json" "$(relaysim_url a)" >"$T/checks" <<'PY' || true
import json, re, sys

LABEL = r'[a-zA-Z_][a-zA-Z0-9_]*="(?:\\.|[^"\\])*"'
SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{' + LABEL + r'(?:,' + LABEL +
                    r')*\})? (\S+)$')

def parse(path):
    """families: name -> {help, type, samples: {labels: value}}; problems"""
    fam, problems, current = {}, [], None
    for n, line in enumerate(open(path).read().splitlines(), 1):
        if line.startswith('# HELP ') or line.startswith('# TYPE '):
            _, what, name, text = (line.split(' ', 3) + [''])[:4]
            f = fam.setdefault(name, {'help': None, 'type': None, 'samples': {}})
            key = what.lower()
            if f[key] is not None:
                problems.append(f'{path}:{n}: second {what} for {name}')
            if f['samples']:
                problems.append(f'{path}:{n}: {what} of {name} after its samples')
            f[key] = text
            current = name
            continue
        if line.startswith('#') or not line:
            continue
        m = SAMPLE.match(line)
        if not m:
            problems.append(f'{path}:{n}: not a sample line: {line}')
            continue
        name, labels, value = m.group(1), m.group(2) or '', m.group(3)
        if name not in fam or fam[name]['type'] is None:
            problems.append(f'{path}:{n}: sample of a family without TYPE: {name}')
            continue
        if name != current:
            problems.append(f'{path}:{n}: {name} apart from its HELP/TYPE')
        if labels in fam[name]['samples']:
            problems.append(f'{path}:{n}: series twice: {name}{labels}')
        fam[name]['samples'][labels] = float(value)
    return fam, problems

m1, p1 = parse(sys.argv[1])
m2, p2 = parse(sys.argv[2])
st = json.load(open(sys.argv[3]))

def result(desc, problems):
    print(('ok' if not problems else 'FAIL') + ' ' + desc)
    for p in problems[:20]:
        print('    ' + p)

result('both scrapes parse: one HELP and TYPE per family, before its samples', p1 + p2)
bad = []
for scrape, fam in (('m1', m1), ('m2', m2)):
    for name, f in fam.items():
        if not name.startswith('cachebox_'):
            bad.append(f'{scrape}: {name} not prefixed cachebox_')
        if not f['help'] or 'not described' in f['help']:
            bad.append(f'{scrape}: {name} has no real HELP: {f["help"]!r}')
        if f['type'] not in ('counter', 'gauge'):
            bad.append(f'{scrape}: {name} TYPE {f["type"]!r}')
        if not f['samples']:
            bad.append(f'{scrape}: {name} has no sample')
result('every metric has a real HELP, a TYPE (counter or gauge) and samples', bad)
result('every counter ends in _total', [n for s in (m1, m2) for n, f in s.items()
                                        if f['type'] == 'counter' and not n.endswith('_total')])
result('no gauge ends in _total', [n for s in (m1, m2) for n, f in s.items()
                                   if f['type'] == 'gauge' and n.endswith('_total')])
result('the same families with the same TYPE in both scrapes',
       [f'{n}: {m1.get(n, {}).get("type")} then {m2.get(n, {}).get("type")}'
        for n in set(m1) | set(m2) if m1.get(n, {}).get('type') != m2.get(n, {}).get('type')])
down = []
for n, f in m1.items():
    if f['type'] != 'counter':
        continue
    for labels, v in f['samples'].items():
        w = m2.get(n, {'samples': {}})['samples'].get(labels)
        if w is None or w < v:
            down.append(f'{n}{labels}: {v} then {w}')
result('no counter series decreases or disappears between the scrapes', down)

def val(fam, name, labels=''):
    return fam.get(name, {'samples': {}})['samples'].get(labels)

before, after = (val(m, 'cachebox_relay_endpoint_reqs_total') for m in (m1, m2))
result('the REQ between the scrapes is counted (reqs_total 0, then 1 or more)',
       [] if before == 0 and after and after >= 1 else [f'{before} then {after}'])
zero = [n for n in ('cachebox_ingest_received_total', 'cachebox_ingest_stored_total',
                    'cachebox_ingest_duplicates_total', 'cachebox_ingest_invalid_total',
                    'cachebox_ingest_sig_checks_total', 'cachebox_ingest_transactions_total',
                    'cachebox_negentropy_steps_total', 'cachebox_negentropy_sessions_total',
                    'cachebox_negentropy_sent_bytes_total', 'cachebox_uplink_forwarded_total',
                    'cachebox_inbox_forwarded_total', 'cachebox_http_accepted_total',
                    'cachebox_relay_endpoint_events_sent_total',
                    'cachebox_relay_endpoint_sent_bytes_total',
                    'cachebox_written_bytes_total')
        if not val(m2, n)]
relay_a = '{url="%s",role="bootstrap"}' % sys.argv[4]
if not val(m2, 'cachebox_relay_events_total', relay_a):
    zero.append('cachebox_relay_events_total' + relay_a)
result('what happened is counted (no zero counter among them)', zero)
want = {('cachebox_store_events', ''): st['store']['events'],
        ('cachebox_ingest_stored_total', ''): st['ingest']['stored'],
        ('cachebox_ingest_invalid_total', ''): st['ingest']['invalid'],
        ('cachebox_inbox_forwarded_total', ''): st['inbox']['forwarded'],
        ('cachebox_uplink_forwarded_total', ''): st['uplink']['forwarded_session'],
        ('cachebox_backfill_authors', '{state="complete"}'): st['backfill']['authors_complete'],
        ('cachebox_backfill_authors', '{state="incomplete"}'): st['backfill']['authors_incomplete'],
        ('cachebox_backfill_authors', '{state="draining"}'): st['backfill']['authors_draining']}
result('values agree with the status document',
       [f'{n}{l} {val(m2, n, l)} != {v}' for (n, l), v in want.items() if val(m2, n, l) != v])
total = sum(m2.get('cachebox_backfill_authors', {'samples': {}})['samples'].values())
result(f'sum of cachebox_backfill_authors is authors_total ({st["backfill"]["authors_total"]})',
       [] if total == st['backfill']['authors_total'] > 0 else [f'sum {total}'])
w = st.get('writes', {})
per = val(m2, 'cachebox_written_bytes_per_stored_event')
result('the write budget: writes.bytes from the kernel (source proc), '
       'bytes per stored event in both',
       [] if w.get('source') == 'proc' and w.get('bytes', 0) > 0 and
       w.get('bytes_per_stored_event', 0) > 0 and per and per > 0
       else [f'status writes {w}, metric per event {per}'])
result('the forward rate: in the status, not in /metrics',
       [] if 'forward_rate' in st['uplink'] and not any('forward_rate' in n for n in m2)
       else ['forward_rate missing from the status, or exported'])
PY
while read -r line; do
	case $line in
	"ok "*) ok "${line#ok }" ;;
	"FAIL "*) fail "${line#FAIL }" ;;
	*) echo "        $line" ;;
	esac
done <"$T/checks"
check "the checker ran to its end" test "$(grep -c '^\(ok\|FAIL\) ' "$T/checks")" -eq 12

stop_daemon
finish
