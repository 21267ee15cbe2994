#!/usr/bin/env bash
# The status page's views in a real browser (headless chromium through
# playwright-core): a daemon drains a relaysim dataset, is stopped and
# started again, and then at 390x844 and 1280x900 each view (Summary,
# Relays, Authors, Jobs, Settings, reached from the header's links) must
# have no horizontal overflow (the page nor any box in it), no relay URL
# broken over lines, and every control on screen, of a size to use, and
# on top where it sits, and no word of a table cell or a button broken
# over lines (a second root with no profile name: "Remove" beside the
# longest text of the roots list);
# the summary about one screen tall at 1280. A job run to the end gives
# the Jobs view a row. The summary's chart of the last 24 hours shows
# the events stored before the restart (kept in the database) while the
# daemon's own count since start is 0, and its words say the daemon's
# uptime as the header does. Screenshots of each view at both widths go
# to $CACHEBOX_BUILD/screenshots/ (docs/ holds copies).
. "$(dirname "$0")/lib.sh"
use_relaysim

[ -x /usr/bin/chromium ] || { echo "skip: /usr/bin/chromium missing (install-deps.sh test)"; exit 77; }
[ -d "$CACHEBOX_TESTS/node_modules/playwright-core" ] ||
	{ echo "skip: playwright-core missing (cd tests && npm ci)"; exit 77; }
[ -z "$EMU" ] || { echo "skip: not under an emulator"; exit 77; }

cat >"$T/sim.json" <<'JSON'
{"dataset": {"authors": 6, "events": 400, "seed": "views"},
 "relays": [{"name": "main", "ipv6": false}]}
JSON
relaysim_start "$T/sim.json" || { fail "relaysim starts"; finish; exit 1; }
D=$T/state
mkdir -m 700 "$D"
TOKEN=page-views-token-0123
args=(-d "$D" --set http.listen=127.0.0.1:0 --set relay.listen=127.0.0.1:0
	--set "relays.bootstrap=$(relaysim_url main)" --set "admin.token=$TOKEN"
	--set backfill.pace_ms=0 --set recovery.settle_s=0)
start_daemon "${args[@]}"
check "http.port written" wait_for 20 test -s "$D/http.port"
check "the root is added" cboxctl -d "$D" roots add "$(relaysim_q root)"
# Idle with events stored and the followed set read: the drain is over.
settled() { idle && [ "$(json_get "$T/st.json" ingest.stored)" -gt 0 ] &&
	[ "$(json_get "$T/st.json" backfill.authors_total)" -gt 1 ]; }
check "the backfill settles" wait_for 120 settled
# A job that runs to the end, so the Jobs view has a row to judge.
check "a job is created" cboxctl -d "$D" jobs new "label=Relay lists of everyone" kinds=10002 \
	authors_source=all batch_size=2
job_ended() { cboxctl -d "$D" jobs show 1 --json >"$T/job.json" &&
	case "$(json_get "$T/job.json" status)" in complete|incomplete|failed) ;; *) return 1;; esac; }
check "the job ends" wait_for 60 job_ended
echo "# job 1: $(json_get "$T/job.json" status)"
check "settled after the job" wait_for 60 settled
before=$(json_get "$T/st.json" ingest.stored)
check "events were stored ($before)" test "$before" -gt 0

# A restart: what the chart shows of the last day must come from the store.
stop_daemon
rm -f "$D/http.port"
start_daemon "${args[@]}"
check "http.port written again" wait_for 20 test -s "$D/http.port"
check "the daemon settles again" wait_for 60 idle
check "after the restart nothing new was stored" \
	test "$(json_get "$T/st.json" ingest.stored)" = 0
check "the last 24 hours still hold the $before events" \
	test "$(json_get "$T/st.json" ingest.stored_24h)" = "$before"
base="http://127.0.0.1:$(cat "$D/http.port")"
# A root no relay has a profile of (the box's own key): its line in the
# roots list reads "no profile name yet" beside its Remove button.
check "a root with no profile is added" cboxctl -d "$D" roots add "$(json_get "$T/st.json" npub)"

mkdir -p "$CACHEBOX_BUILD/screenshots"
if (cd "$CACHEBOX_TESTS" && node integration/page_views_check.mjs "$base" "$TOKEN" \
    "$CACHEBOX_BUILD/screenshots" "$T/chromium-profile" "$before"); then
	ok "page view checks"
else
	fail "page view checks"
	tail -20 "$T/d.log"
fi
finish
