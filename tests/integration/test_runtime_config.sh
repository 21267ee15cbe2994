#!/usr/bin/env bash
# test_runtime_config.sh — a box started with no roots begins following as
# soon as a root is added at run time (the command table → configuration →
# follow graph → drain), and keys changed at run time take effect at once.
. "$(dirname "$0")/lib.sh"
command -v node >/dev/null && [ -d "$CACHEBOX_TESTS/node_modules/ws" ] || exit 77
command -v python3 >/dev/null || exit 77
. "$CACHEBOX_TESTS/relaysim/relaysim.sh"
trap 'relaysim_stop >/dev/null 2>&1; cleanup' EXIT

cat > "$T/sim.json" <<'JSON'
{"dataset": {"authors": 6, "events": 1200, "seed": 33},
 "relays": [{"name": "boot", "max_limit": 500}]}
JSON
relaysim_start "$T/sim.json" || { fail "relaysim starts"; finish; exit 1; }
ROOT=$(relaysim_q root)
D=$T/state
start_daemon -d "$D" --set relays.bootstrap="$(relaysim_url boot)" \
    --set backfill.pace_ms=0 --set http.listen=127.0.0.1:0
check "daemon up" wait_for 10 cboxctl -d "$D" status

status() { cboxctl -d "$D" status --json >"$T/s.json" && json_get "$T/s.json" "$1"; }
check "no roots: nothing followed" test "$(status backfill.authors_total)" = 0
check "no roots: idle" test "$(status idle)" = true

check "roots add at run time" cboxctl -d "$D" roots add "$ROOT"
all_done() {
	[ "$(status backfill.authors_total)" = 6 ] &&
	[ "$(status backfill.authors_complete)" = 6 ] && [ "$(status idle)" = true ]
}
check "the new root's follows are drained to complete" wait_for 60 all_done
check "the store holds the whole dataset" test "$(status store.events)" -ge 1200

check "log level changes at once" cboxctl -d "$D" config set log.level debug
cboxctl -d "$D" log level --json >"$T/lvl.json"
check "the running log level is debug" test "$(json_get "$T/lvl.json" level)" = debug

check "roots remove at run time" cboxctl -d "$D" roots remove "$ROOT"
unfollowed() { [ "$(status backfill.authors_total)" = 0 ]; }
check "removing the root marks its follows stale" wait_for 30 unfollowed

kill -TERM "$DPID"; wait "$DPID"; rc=$?
check "clean exit" test "$rc" -eq 0
finish
