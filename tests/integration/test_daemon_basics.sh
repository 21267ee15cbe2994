#!/usr/bin/env bash
# The foundation's promises, checked on the real cacheboxd and cacheboxctl:
# first start, refusals that never touch the refused file, configuration
# checks, the control socket, run-time configuration, clean shutdown.
. "$(dirname "$0")/lib.sh"

# --- first start with nothing configured ---------------------------------
D=$T/state
check "first start exits 0 when idle" cboxd -d "$D" --exit-when-idle
check "database created" test -s "$D/cachebox.db"
check "key file is 0600" test "$(stat -c %a "$D/box.key")" = 600
check "state directory is 0700" test "$(stat -c %a "$D")" = 700
key1=$(cat "$D/box.key")
cboxd -d "$D" --exit-when-idle 2>/dev/null
check "key kept across restarts" test "$(cat "$D/box.key")" = "$key1"

# --- configuration checks -------------------------------------------------
out=$(cboxd --check-config --set no.such.key=1 2>&1) && fail "unknown key accepted" ||
	check "unknown key names the key" grep -q "no.such.key" <<<"$out"
out=$(cboxd --check-config --set backfill.page_size=0 2>&1) && fail "page_size 0 accepted" ||
	check "out-of-range names the key" grep -q "backfill.page_size" <<<"$out"
printf 'backfill.page_size = 300\nlive.enabled = maybe\n' >"$T/bad.conf"
out=$(cboxd --check-config -c "$T/bad.conf" 2>&1) && fail "bad file accepted" ||
	check "file error gives file:line and key" grep -q "bad.conf:2: live.enabled" <<<"$out"
printf '# comment\n\nbackfill.page_size = 300\n' >"$T/good.conf"
check "good file accepted" cboxd --check-config -c "$T/good.conf"

# --- refusals that leave the file alone -----------------------------------
touch "$T/plainfile"
out=$(cboxd -d "$T/plainfile/sub" --exit-when-idle 2>&1) && fail "unwritable dir accepted" ||
	check "unwritable state directory: one line" test "$(wc -l <<<"$out")" -eq 1

G=$T/garbage; mkdir -m 700 "$G"
head -c 8192 /dev/urandom >"$G/cachebox.db"; sum=$(sha256sum <"$G/cachebox.db")
out=$(cboxd -d "$G" --exit-when-idle 2>&1) && fail "garbage database accepted" || {
	check "garbage database: one line" test "$(wc -l <<<"$out")" -eq 1
	check "garbage database untouched" test "$(sha256sum <"$G/cachebox.db")" = "$sum"
}

N=$T/newer; mkdir -m 700 "$N"
cp "$D/cachebox.db" "$N/cachebox.db"
python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('PRAGMA user_version=999'); c.commit()" "$N/cachebox.db"
sum=$(sha256sum <"$N/cachebox.db")
out=$(cboxd -d "$N" --exit-when-idle 2>&1) && fail "newer database accepted" || {
	check "newer database: message says newer" grep -qi "newer" <<<"$out"
	check "newer database untouched" test "$(sha256sum <"$N/cachebox.db")" = "$sum"
}

K=$T/badkey; mkdir -m 700 "$K"; cp "$D/box.key" "$K/box.key"; chmod 644 "$K/box.key"
out=$(cboxd -d "$K" --exit-when-idle 2>&1) && fail "readable key accepted" ||
	check "group-readable key refused" grep -q "box.key" <<<"$out"

# --- the control socket -----------------------------------------------------
start_daemon -d "$D" --set log.level=debug
check "control socket appears" wait_for 10 test -S "$D/cacheboxd.sock"
check "socket is 0600" test "$(stat -c %a "$D/cacheboxd.sock")" = 600
cboxctl -d "$D" status --json >"$T/status.json"
check "status has version" test "$(json_get "$T/status.json" version)" != ""
check "status idle is a bool" grep -Eq '^(true|false)$' <<<"$(json_get "$T/status.json" idle)"
check "status store.events is 0" test "$(json_get "$T/status.json" store.events)" = 0
check "status has backfill.authors_total" test "$(json_get "$T/status.json" backfill.authors_total)" = 0
check "status relays is a list" test "$(json_get "$T/status.json" relays)" = "[]"
check "human status names the version" bash -c "'$CACHEBOXCTL' -d '$D' status | grep -Eq '^cachebox [0-9]+\.[0-9]+\.[0-9]+, up '"
check "key command shows the npub" bash -c "'$CACHEBOXCTL' -d '$D' key | grep -q 'npub1'"

out=$(cboxd -d "$D" --exit-when-idle 2>&1) && fail "second daemon accepted" ||
	check "second daemon on the same directory refused" grep -q "another cacheboxd" <<<"$out"

check "config set at run time" cboxctl -d "$D" config set backfill.page_size 250
out=$(cboxctl -d "$D" config set backfill.page_size 99999 2>&1) && fail "bad run-time value accepted" ||
	check "run-time set validated" grep -q "backfill.page_size" <<<"$out"
cboxctl -d "$D" config get backfill.page_size --json >"$T/get.json"
check "value applied" test "$(json_get "$T/get.json" value)" = 250
check "source is db" test "$(json_get "$T/get.json" source)" = database
out=$(cboxctl -d "$D" no such command 2>&1) && fail "unknown command accepted" ||
	check "unknown command refused" grep -q "unknown command" <<<"$out"

kill -TERM "$DPID"; wait "$DPID"; rc=$?
check "SIGTERM: clean exit 0" test "$rc" -eq 0
check "socket removed on exit" test ! -e "$D/cacheboxd.sock"

# --- run-time value survives a restart; --set wins over it -------------------
start_daemon -d "$D" --set log.level=debug
wait_for 10 test -S "$D/cacheboxd.sock"
cboxctl -d "$D" config get backfill.page_size --json >"$T/get2.json"
check "stored value survives restart" test "$(json_get "$T/get2.json" value)" = 250
kill -KILL "$DPID"; wait "$DPID" 2>/dev/null || true
start_daemon -d "$D" --set backfill.page_size=120
check "restart after SIGKILL (stale socket replaced)" wait_for 10 cboxctl -d "$D" status
cboxctl -d "$D" config get backfill.page_size --json >"$T/get3.json"
check "--set wins over the database" test "$(json_get "$T/get3.json" value)" = 120
check "--set source is cli" test "$(json_get "$T/get3.json" source)" = "command line"
kill -TERM "$DPID"; wait "$DPID" || true

finish
