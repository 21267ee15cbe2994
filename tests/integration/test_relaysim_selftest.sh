#!/bin/bash
# Self-test of tests/relaysim: starts the simulator with ws and wss relays and
# a set of faults, then checks it from outside with tests/relaysim/selftest.mjs
# (NIP-01/11/42 answers, caps, truth against real answers, a reference drain
# against the pageable truth, TLS verification, the NIP-77 server and its
# knobs, partial_ids), the shell helpers of
# relaysim.sh and the signals: SIGUSR2 prints counters, SIGTERM exits 0.
# Exit 77 when node is missing; a failure when the test peers are.
. "$(dirname "$0")/lib.sh"

command -v node >/dev/null 2>&1 || { echo "node not found: skipping"; exit 77; }
tests=$CACHEBOX_TESTS
sim=$tests/relaysim
if [ ! -d "$tests/node_modules/ws" ] || [ ! -d "$tests/node_modules/nostr-wasm" ]; then
	fail "test peers not installed: run 'cd $tests && npm ci'"
	finish; exit 1
fi
. "$sim/relaysim.sh"
trap 'relaysim_cleanup; cleanup' EXIT

sh "$sim/mkcerts.sh" "$T/certs" || { fail "mkcerts.sh"; finish; exit 1; }
cat > "$T/config.json" <<JSON
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
    {"name": "untrusted", "tls": {"cert": "certs/untrusted.pem", "key": "certs/untrusted.key"}},
    {"name": "odd", "no_eose": {"every": 2}, "publish_reject": {"first": 1, "reason": "blocked: not today"}},
    {"name": "plain"},
    {"name": "paced", "default_limit": 20, "rate_limit": {"min_interval_ms": 300}},
    {"name": "neg", "negentropy": "yes", "subset": {"every": 2}, "neg_frame_limit": 4096,
     "neg_max_records": 1200, "partial_ids": {"fraction": 0.5}},
    {"name": "negdrop", "negentropy": "yes", "neg_drop": {"first": 1}, "partial_ids": {"count": 3},
     "neg_bad_hex": {"first": 1}},
    {"name": "negerr", "negentropy": "err"},
    {"name": "negnotice", "negentropy": "notice"},
    {"name": "negsilent", "negentropy": "silent"}
  ]
}
JSON

relaysim_start "$T/config.json" || { fail "relaysim starts"; finish; exit 1; }
check "selftest.mjs: every check passed" \
    node "$sim/selftest.mjs" --ready "$RELAYSIM_READY" --config "$T/config.json" \
    --certs "$T/certs"

# The shell helpers: URLs, truth through query.mjs, counters.
url=$(relaysim_url full || true)
case $url in ws://127.0.0.1:*) ok "relaysim_url gives the ws URL";;
	*) fail "relaysim_url gives the ws URL (got $url)";; esac
root=$(relaysim_q root || true)
n_http=$(relaysim_q truth match "{\"authors\":[\"$root\"]}" --relays plain | wc -l || true)
n_cli=$(node "$sim/relaysim.mjs" --config "$T/config.json" --ready "$RELAYSIM_READY" \
    --relays plain --truth "{\"authors\":[\"$root\"]}" | wc -l || true)
if [ "$n_http" -gt 0 ] && [ "$n_http" -eq "$n_cli" ]; then ok "truth over HTTP and on the command line agree ($n_http ids)"
else fail "truth over HTTP and on the command line agree ($n_http vs $n_cli)"; fi
pg_http=$(relaysim_q truth pageable "{\"authors\":[\"$root\"]}" --relays liar | wc -l || true)
pg_cli=$(node "$sim/relaysim.mjs" --config "$T/config.json" --ready "$RELAYSIM_READY" \
    --relays liar --truth-pageable "{\"authors\":[\"$root\"]}" | wc -l || true)
if [ "$pg_http" -eq "$pg_cli" ] && [ "$pg_http" -le 200 ]; then ok "pageable truth over HTTP and on the command line agree ($pg_http ids)"
else fail "pageable truth over HTTP and on the command line agree ($pg_http vs $pg_cli)"; fi
auth_ok=$(relaysim_q stats auth auth_ok || true)
[ "$auth_ok" = 1 ] && ok "relaysim_q stats reads one counter" || fail "relaysim_q stats auth auth_ok = $auth_ok"

kill -USR2 "$RELAYSIM_PID" || true
for _ in $(seq 1 50); do
	grep -q '"stats"' "$RELAYSIM_READY" && break
	sleep 0.1
done
# Not grep -q: under pipefail the first grep must not be cut off early.
if grep '"stats"' "$RELAYSIM_READY" | grep '"capped":{"connections"' >/dev/null; then
	ok "SIGUSR2 prints the counters"
else
	fail "SIGUSR2 prints the counters"
fi
if relaysim_stop; then ok "SIGTERM stops relaysim with status 0"
else fail "SIGTERM stops relaysim with status 0"; fi
if [ -s "$RELAYSIM_ERR" ]; then
	fail "relaysim wrote to stderr:"
	cat "$RELAYSIM_ERR"
fi
finish
