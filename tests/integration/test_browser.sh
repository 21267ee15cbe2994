#!/usr/bin/env bash
# The status page in a real browser: headless chromium (Debian's package,
# driven by playwright-core) loads the page from a cacheboxd fed by
# relaysim and checks it shows the live /api/status values, that a
# mutating form needs the admin token, that a custom job made from a preset
# shows its dry run and its progress to 100 % and another is cancelled from
# the jobs table, and saves a screenshot to
# $CACHEBOX_BUILD/screenshots/status.png.
. "$(dirname "$0")/lib.sh"
. "$CACHEBOX_TESTS/relaysim/relaysim.sh"

[ -x /usr/bin/chromium ] || { echo "skip: /usr/bin/chromium missing (install-deps.sh test)"; exit 77; }
[ -d "$CACHEBOX_TESTS/node_modules/playwright-core" ] ||
	{ echo "skip: playwright-core missing (cd tests && npm ci)"; exit 77; }
[ -z "$EMU" ] || { echo "skip: not under an emulator"; exit 77; }
trap 'relaysim_cleanup; cleanup' EXIT

cat >"$T/sim.json" <<'JSON'
{
  "dataset": {"authors": 12, "events": 1500, "seed": "browser"},
  "relays": [
    {"name": "main", "max_limit": 200},
    {"name": "half", "subset": {"any": [{"fraction": 0.5, "seed": 3}, {"kinds": [0, 3, 10002]}]}},
    {"name": "mute", "silent": {}}
  ]
}
JSON
relaysim_start "$T/sim.json" || exit 1
root=$(json_get "$RELAYSIM_READY" dataset.root)
url_main=$(json_get "$RELAYSIM_READY" relays.0.url)
url_mute=$(json_get "$RELAYSIM_READY" relays.2.url)

TOKEN=browser-test-token-0123
start_daemon -d "$T/d" --set http.listen=127.0.0.1:0 --set "admin.token=$TOKEN" \
	--set relay.listen=127.0.0.1:0 --set "relays.bootstrap=$url_main" --set "follow.roots=$root" \
	--set backfill.pace_ms=0
check "http.port written" wait_for 10 test -s "$T/d/http.port"
base="http://127.0.0.1:$(cat "$T/d/http.port")"

mkdir -p "$CACHEBOX_BUILD/screenshots"
if (cd "$CACHEBOX_TESTS" && node integration/browser_check.mjs "$base" "$TOKEN" \
    "$CACHEBOX_BUILD/screenshots/status.png" "$T/chromium-profile" "$url_mute"); then
	ok "browser checks"
else
	fail "browser checks"
	tail -20 "$T/d.log"
fi
check "screenshot is a PNG" bash -c "file '$CACHEBOX_BUILD/screenshots/status.png' | grep -q PNG"
finish
