#!/usr/bin/env bash
# The console and cacheboxctl agree: a group's name lists its commands on
# both; --json anywhere on cacheboxctl's line, with the JSON itself
# unchanged; cacheboxctl --version; cacheboxctl help lists every command of
# the daemon, the console-only ones marked; every console error reads
# "error: ..."; a mistyped command is answered with the command meant;
# quit, exit and the end of input stop a daemon run with --console -;
# people see dates, sizes and durations with units, status as a summary
# of a few lines, jobs list and jobs show in words; follows is one line
# per author, --relays (or an author) for each relay.
. "$(dirname "$0")/lib.sh"

ROOT=npub180cvv07tjdrrgpa0j7j7tmnyl2yr6yr7l8j4s3evf6u64th6gkwsyjh6w6
D=$T/d
start_daemon -d "$D" --set http.listen=127.0.0.1:0 --set relays.bootstrap= \
    --set "follow.roots=$ROOT"
check "control socket up" wait_for 10 test -S "$D/cacheboxd.sock"
ctl() { cboxctl -d "$D" "$@"; }

# --- version and groups -----------------------------------------------------
out=$(cboxctl --version 2>&1 || true)
check "--version names the version" grep -Eq '^cacheboxctl [0-9]+\.[0-9]+\.[0-9]+$' <<<"$out"
out=$(ctl jobs 2>&1 || true)
check "a group's name lists its commands" grep -Eq '^  jobs list +custom jobs' <<<"$out"
check "... every one of them" test "$(grep -c "^  jobs " <<<"$out")" = 8
check "... and no other" test "$(grep -c "^  [a-z]" <<<"$out")" = 8
out=$(ctl config 2>&1 || true)
check "config lists config list, get and set" \
	test "$(grep -Eo '^  config (list|get|set)' <<<"$out" | wc -l)" = 3
rc=0; out=$(ctl jobs frobnicate 2>&1) || rc=$?
check "an unknown command of a group: usage error (2)" test "$rc" = 2
check "... that names the group" grep -q "unknown command 'jobs frobnicate' (try 'cacheboxctl jobs')" <<<"$out"
rc=0; out=$(ctl stauts 2>&1) || rc=$?
check "a mistyped command: usage error (2)" test "$rc" = 2
check "... that names the command meant" \
	grep -q "unknown command 'stauts': did you mean 'status'? (try 'cacheboxctl help')" <<<"$out"
rc=0; out=$(ctl jobs lsit 2>&1) || rc=$?
check "a mistyped command of a group names the command meant" \
	grep -q "unknown command 'jobs lsit': did you mean 'jobs list'? (try 'cacheboxctl jobs')" <<<"$out"

# --- --json anywhere, the JSON unchanged -----------------------------------
ctl key --json >"$T/k1.json"
check "key --json is JSON" jq -e '.npub | startswith("npub1")' "$T/k1.json"
cboxctl --json -d "$D" key >"$T/k2.json"
cboxctl -d "$D" --json key >"$T/k3.json"
check "--json before -d" cmp -s "$T/k1.json" "$T/k2.json"
check "--json between -d and the command" cmp -s "$T/k1.json" "$T/k3.json"
ctl config --json get log.level >"$T/g.json"
check "--json between the words of a command" jq -e '.key == "log.level" and .value == "info"' "$T/g.json"
ctl --json help >"$T/help.json"
check "help --json keeps its members" jq -e '[.commands[] | keys] | unique ==
	[["console_only","help","mutating","name","named","params","post","web"]]' "$T/help.json"
ctl status --json >"$T/st.json"
check "status --json: numbers stay numbers" jq -e '(.uptime_s | type) == "number" and
	(.rss_bytes | type) == "number" and (.store.max_bytes | type) == "number"' "$T/st.json"
ctl follows --json >"$T/f.json"
check "follows --json keeps every relay's cursors" jq -e --arg r "$ROOT" \
	'.follows[0].npub == $r and (.follows[0].relays | type) == "array" and .truncated == false' "$T/f.json"

# --- help lists every command, the console-only one marked ------------------
out=$(ctl help)
missing=0
for name in $(jq -r '.commands[].name | gsub(" "; "_")' "$T/help.json"); do
	grep -Eq "^  ${name//_/ }( |\$)" <<<"$out" || { echo "not listed: $name"; missing=1; }
done
check "help lists every command of the daemon" test "$missing" = 0
check "help has as many commands as the daemon" \
	test "$(jq '.commands | length' "$T/help.json")" -ge 30
check "admin-token set is marked console only" grep -Eq '^  admin-token set token +\[console only\]' <<<"$out"
check "setup code is marked console only" grep -Eq '^  setup code +\[console only\]' <<<"$out"
check "... and only they" test "$(grep -c 'console only' <<<"$out")" = 2
check "... each said once on its line" test "$(grep -o 'console only' <<<"$out" | wc -l)" = 2

# --- human output: dates, sizes, durations ------------------------------------
# status: a summary of a dozen lines, one per part, not the document.
out=$(ctl status)
check "status: what the box does, with its uptime" grep -Eq '^cachebox [0-9.]+, up [0-9]+s: (idle|working)' <<<"$out"
check "status: sizes with units" grep -Eq '^store     0 events, 0 B of 4 GiB$' <<<"$out"
check "status: memory against its budget" grep -Eq '^memory    [0-9.]+ MiB of 16 MiB$' <<<"$out"
check "status: the backfill in words" grep -q '^backfill  0 of 1 author complete, 1 incomplete$' <<<"$out"
check "status: no key dump" bash -c "! grep -Eq '^ *(rss_bytes|cut_invalid|\[0\]):' <<<'$out'"
check "status: a short summary ($(wc -l <<<"$out") lines)" test "$(wc -l <<<"$out")" -le 16
ctl jobs new label=t kinds=1 since=2024-01-01 relay_mode=custom relays=ws://127.0.0.1:9 >/dev/null
out=$(ctl jobs show 1)
check "jobs show: the job in words" grep -Eq '^job 1 "t": (pending|running)$' <<<"$out"
check "times as dates (since)" grep -Eq '^window    since 2024-01-01 00:00:00 UTC, until ' <<<"$out"
check "times as dates (created) and a time never set reads -" \
	grep -Eq '^created   [0-9]{4}-[0-9]{2}-[0-9]{2} [0-9:]{8} UTC by ctl; started .*; completed -$' <<<"$out"
out=$(ctl jobs list)
check "jobs list: a line per job" grep -Eq '^   1  (pending|running) +0/1 batches +0 events  t: kinds:1 since 2024-01-01$' <<<"$out"
ctl jobs show 1 --json >"$T/j.json"
check "jobs show --json keeps Unix seconds" jq -e '.filter.since == 1704067200 and (.created_at | type) == "number"' "$T/j.json"

# --- follows: one line per author -------------------------------------------
out=$(ctl follows)
check "follows: a count first" grep -q '^1 author: 0 complete, 0 draining, 1 incomplete' <<<"$out"
check "follows: one line for the author" grep -Eq "^$ROOT  incomplete  relays 0/0  events 0  root" <<<"$out"
check "follows: two lines in all" test "$(wc -l <<<"$out")" = 2
out=$(ctl follows --relays)
check "follows --relays: the detail" grep -q "^    relays:" <<<"$out"
out=$(ctl follows "$ROOT")
check "follows AUTHOR: the detail" grep -q "^    relays_incomplete: 0" <<<"$out"
rc=0; out=$(ctl status --relays 2>&1) || rc=$?
check "--relays elsewhere is a usage error" test "$rc" = 2
check "... that says so" grep -q -- "--relays is an option of follows only" <<<"$out"
stop_daemon

# --- the console on stdin -------------------------------------------------------
# Every error reads "error: ..."; a group lists; --json and --relays as on
# cacheboxctl; quit stops the daemon and what follows it is not run.
printf '%s\n' relays 'relays frobnicate' frobnicate 'config get' 'config get no.such' \
    '"open' 'status --relays' 'key --json' 'follows' 'jobs lsit' quit key >"$T/in"
# The state directory of the daemon above: the root is in its follow set.
rc=0; timeout 20 "$CACHEBOXD" -d "$D" --console - --set http.listen=127.0.0.1:0 \
    --set relays.bootstrap= --set "follow.roots=$ROOT" <"$T/in" >"$T/c.out" 2>"$T/c.log" || rc=$?
check "quit stops a daemon run with --console - (exit 0)" test "$rc" = 0
check "... and says so in the log" grep -q 'console: quit on stdin: shutting down' "$T/c.log"
check "console: a group lists" grep -Eq '^cachebox>   relays list +relays configured' "$T/c.out"
check "console: unknown command of a group" grep -q "^cachebox> error: unknown command 'relays frobnicate' (try 'relays')$" "$T/c.out"
check "console: unknown command" grep -q "^cachebox> error: unknown command 'frobnicate' (try 'help')$" "$T/c.out"
check "console: a missing argument" grep -q '^cachebox> error: config get: missing key$' "$T/c.out"
check "console: a refusal" grep -q "^cachebox> error: unknown key 'no.such'$" "$T/c.out"
check "console: an unclosed quote" grep -q '^cachebox> error: unclosed quote$' "$T/c.out"
check "console: a wrong flag" grep -q '^cachebox> error: --relays is an option of follows only$' "$T/c.out"
check "console: --json" grep -q '^	"npub":	"npub1' "$T/c.out"
check "console: follows one line per author" grep -q "^$ROOT  incomplete  relays 0/0" "$T/c.out"
check "console: a mistyped command names the command meant" \
	grep -q "^cachebox> error: unknown command 'jobs lsit': did you mean 'jobs list'? (try 'jobs')$" "$T/c.out"
check "console: seven errors" test "$(grep -c '^cachebox> error: ' "$T/c.out")" = 7
check "console: nothing after quit ran" test "$(grep -c '^cachebox> ' "$T/c.out")" = 11

printf 'log level\nexit\nkey\n' | timeout 20 "$CACHEBOXD" -d "$T/c" --console - \
    --set http.listen=127.0.0.1:0 --set relays.bootstrap= >"$T/e.out" 2>/dev/null && rc=0 || rc=$?
check "exit stops it too" test "$rc" = 0
check "... after the line before it" grep -q '^cachebox> level: info$' "$T/e.out"
check "... and before the line after" test "$(grep -c npub "$T/e.out")" = 0

# The end of input stops it: no --exit-when-idle, relays to wait for.
printf 'log level\n' | timeout 20 "$CACHEBOXD" -d "$T/c" --console - \
    --set http.listen=127.0.0.1:0 --set relays.bootstrap=ws://127.0.0.1:9 \
    >"$T/eof.out" 2>"$T/eof.log" && rc=0 || rc=$?
check "end of input stops --console - (exit 0, not the timeout)" test "$rc" = 0
check "... after answering" grep -q '^cachebox> level: info$' "$T/eof.out"
check "... and says so in the log" grep -q 'console: end of input on stdin: shutting down' "$T/eof.log"
finish
