#!/bin/bash
# Self-test of tests/relaysim: starts the simulator with ws and wss relays and
# a set of faults, then checks it from outside with tests/relaysim/selftest.mjs
# (NIP-01/11/42 answers, caps, truth against real answers, a reference drain
# against the pageable truth, TLS verification). Also checks the signals:
# SIGUSR2 prints counters, SIGTERM exits 0. Exit 77 when node is missing.
set -u

command -v node >/dev/null 2>&1 || { echo "node not found: skipping"; exit 77; }
tests=${CACHEBOX_TESTS:-$(cd "$(dirname "$0")/.." && pwd)}
sim=$tests/relaysim
if [ ! -d "$tests/node_modules/ws" ] || [ ! -d "$tests/node_modules/nostr-wasm" ]; then
	echo "FAIL: test peers not installed: run 'cd $tests && npm ci'"
	exit 1
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/relaysim-selftest.XXXXXX")
pid=
cleanup() {
	if [ -n "$pid" ]; then
		kill -TERM "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	fi
	rm -rf "$work"
}
trap cleanup EXIT

sh "$sim/mkcerts.sh" "$work/certs" || { echo "FAIL: mkcerts.sh"; exit 1; }
cat > "$work/config.json" <<JSON
{
  "dataset": {"authors": 6, "events": 3000, "seed": "selftest"},
  "tls": {"cert": "certs/localhost.pem", "key": "certs/localhost.key"},
  "relays": [
    {"name": "full", "max_limit": 1000, "max_subscriptions": 10},
    {"name": "capped", "subset": {"every": 2}, "cap": 300, "nip77": true,
     "burst": {"created_at": 1700000000, "count": 350, "author": 1}},
    {"name": "auth", "auth": "required", "subset": {"authors": [0, 2]}},
    {"name": "flaky", "subset": {"any": [{"fraction": 0.5, "seed": 3}, {"kinds": [0, 3, 10002]}]},
     "drop_mid_page": {"after": 40, "every": 3}, "rate_limit": {"first": 2},
     "bad_sig": {"fraction": 0.03, "seed": 1}, "wrong_id": {"fraction": 0.03, "seed": 2},
     "malformed_json": {"every": 97}, "unrequested": {"fraction": 0.02, "seed": 4},
     "oversized_frame": {"bytes": 300000}, "slow_ms": {"per_page": 1}},
    {"name": "liar", "ignore_until": true, "cap": 200},
    {"name": "tls", "tls": true, "subset": {"created_at": [1600000000, 1800000000]}},
    {"name": "wrong", "tls": {"cert": "certs/wrongname.pem", "key": "certs/wrongname.key"}},
    {"name": "expired", "tls": {"cert": "certs/expired.pem", "key": "certs/expired.key"}},
    {"name": "untrusted", "tls": {"cert": "certs/untrusted.pem", "key": "certs/untrusted.key"}}
  ]
}
JSON

export NODE_PATH=$tests/node_modules
node "$sim/relaysim.mjs" --config "$work/config.json" > "$work/out" 2> "$work/err" &
pid=$!
for _ in $(seq 1 1200); do
	grep -q '"ready":true' "$work/out" 2>/dev/null && break
	kill -0 "$pid" 2>/dev/null || break
	sleep 0.1
done
if ! grep -q '"ready":true' "$work/out"; then
	echo "FAIL: relaysim did not start"
	cat "$work/err"
	exit 1
fi

rc=0
node "$sim/selftest.mjs" --ready "$work/out" --config "$work/config.json" \
    --certs "$work/certs" || rc=1

kill -USR2 "$pid"
for _ in $(seq 1 50); do
	grep -q '"stats"' "$work/out" && break
	sleep 0.1
done
if grep '"stats"' "$work/out" | grep -q '"capped":{"connections"'; then
	echo "ok - SIGUSR2 prints the counters"
else
	echo "not ok - SIGUSR2 prints the counters"
	rc=1
fi
kill -TERM "$pid"
wait "$pid"
st=$?
pid=
if [ "$st" -eq 0 ]; then
	echo "ok - SIGTERM stops relaysim with status 0"
else
	echo "not ok - SIGTERM stops relaysim with status 0 (got $st)"
	rc=1
fi
if [ -s "$work/err" ]; then
	echo "not ok - relaysim wrote to stderr:"
	cat "$work/err"
	rc=1
fi
exit $rc
