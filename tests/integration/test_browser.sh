#!/usr/bin/env bash
# The status page in a real browser: headless chromium (Debian's package,
# driven by playwright-core) loads the page from a cacheboxd fed by
# relaysim and checks it shows the live /api/status values, that a
# mutating form needs the admin token, that a custom job made from a preset
# shows its dry run and its progress to 100 % and another is cancelled from
# the jobs table; that a followed author's kind 0, published through
# relaysim after the start, names that author in the paged, searchable
# author table; that the chart of events stored per minute is drawn; that
# a relay error from before its reconnect reads as past; that resetting
# everyone's backfill asks first; that the dry run's words and a job's
# grouped details are right and Delete asks first; that Download backup
# saves a copy that passes integrity_check and leaves nothing in the state
# directory; that the page has no sideways scrolling at 390x844; and saves
# screenshots to $CACHEBOX_BUILD/screenshots/.
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

# A newer profile for author 1 (followed by the root) than the dataset's,
# published before the daemon starts (its drain begins at the present): the
# page must show this name, not the dataset's.
meta=$(json_get "$RELAYSIM_READY" dataset.meta)
http_main=$(json_get "$RELAYSIM_READY" relays.0.http)
PROFILE_NAME="Browser Tester Ü"
python3 - "$meta" "$PROFILE_NAME" >"$T/profile.tmpl" <<'PY'
import json, sys, time
meta = json.load(open(sys.argv[1]))
a = next(x for x in meta["authors"] if x["index"] == 1)
print(json.dumps({"sk": a["seckey"], "kind": 0, "created_at": int(time.time()), "tags": [],
                  "content": json.dumps({"name": "tester", "display_name": sys.argv[2]})}))
PY
(cd "$CACHEBOX_TESTS" && node integration/sign_events.mjs <"$T/profile.tmpl" >"$T/profile.jsonl")
PROFILE_PK=$(json_get "$T/profile.jsonl" pubkey)
check "the new profile is published to relaysim" \
	curl -fsS -X POST --data-binary @"$T/profile.jsonl" "$http_main/publish" -o /dev/null

TOKEN=browser-test-token-0123
start_daemon -d "$T/d" --set http.listen=127.0.0.1:0 --set "admin.token=$TOKEN" \
	--set relay.listen=127.0.0.1:0 --set "relays.bootstrap=$url_main" --set backfill.pace_ms=0
check "http.port written" wait_for 10 test -s "$T/d/http.port"
# The root is added at run time (the database holds it), so the page can
# add and remove roots; a --set value would take precedence over both.
check "the root is added" cboxctl -d "$T/d" roots add "$root"
base="http://127.0.0.1:$(cat "$T/d/http.port")"

mkdir -p "$CACHEBOX_BUILD/screenshots"
if (cd "$CACHEBOX_TESTS" && PROFILE_PK="$PROFILE_PK" PROFILE_NAME="$PROFILE_NAME" \
    RELAY_HTTP="$http_main" BACKUP_OUT="$T/page-backup.db" node integration/browser_check.mjs "$base" "$TOKEN" \
    "$CACHEBOX_BUILD/screenshots/status.png" "$T/chromium-profile" "$url_mute"); then
	ok "browser checks"
else
	fail "browser checks"
	tail -20 "$T/d.log"
fi
check "screenshot is a PNG" bash -c "file '$CACHEBOX_BUILD/screenshots/status.png' | grep -q PNG"
check "the page's backup is saved" test -s "$T/page-backup.db"
check "  and passes integrity_check" test "$(python3 -c 'import sqlite3, sys
print(sqlite3.connect(sys.argv[1]).execute("pragma integrity_check").fetchone()[0])' "$T/page-backup.db" 2>&1)" = ok
check "  and holds the events" test "$(python3 -c 'import sqlite3, sys
print(sqlite3.connect(sys.argv[1]).execute("select count(*) from events").fetchone()[0])' "$T/page-backup.db" 2>&1)" -gt 0
check "  and nothing of it is left in the state directory" test -z "$(ls "$T/d" | grep backup-download)"
finish
