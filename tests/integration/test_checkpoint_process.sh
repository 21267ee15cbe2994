#!/usr/bin/env bash
# The checkpoint process (src/store/ckpt_proc.c) on the real cacheboxd: it
# runs as the daemon's child; SIGKILLed, it is reaped, the daemon keeps
# answering and starts another; it exits with the daemon's clean stop, and
# dies with the daemon when the daemon is SIGKILLed. That it copies the
# WAL and lets it restart is test_store_ckpt_proc's; here, that the
# daemon's limit is store.checkpoint_mib (an import past 1 MiB is copied
# by the process, the same import under the default 64 MiB not at all).
. "$(dirname "$0")/lib.sh"

D=$T/state
# child: the pid of the daemon's child that is the checkpoint process.
child() {
	local p
	for p in $(cat /proc/"$DPID"/task/*/children 2>/dev/null); do
		if tr '\0' ' ' </proc/"$p"/cmdline 2>/dev/null |
		    grep -q -- '--checkpoint-process'; then
			echo "$p"
			return 0
		fi
	done
	return 1
}
gone() { ! kill -0 "$1" 2>/dev/null; }
field_is() { [ "$(status "$1")" = "$2" ]; }

start_daemon -d "$D" --set relays.bootstrap= --set http.listen=127.0.0.1:0
check "control socket appears" wait_for 30 test -S "$D/cacheboxd.sock"
check "checkpoint process running" wait_for 30 child
c1=$(child)
check "status: the process is up" wait_for 30 field_is checkpoint.process true
check "status: started once" field_is checkpoint.process_starts 1

kill -KILL "$c1"
check "status: its death seen" wait_for 30 field_is checkpoint.process_deaths 1
check "another started" wait_for 30 field_is checkpoint.process_starts 2
check "status: the process is up again" field_is checkpoint.process true
c2=$(child) || c2=
check "a new pid" test -n "$c2" -a "$c2" != "$c1"
check "the killed one reaped" gone "$c1"
check "the daemon still answers" wait_for 10 st
check "the daemon is alive" kill -0 "$DPID"

kill -TERM "$DPID"; wait "$DPID"; rc=$?
check "clean stop exits 0" test "$rc" = 0
check "the process exits with the daemon" wait_for 10 gone "$c2"

start_daemon -d "$D" --set relays.bootstrap= --set http.listen=127.0.0.1:0
check "checkpoint process running again" wait_for 30 child
c3=$(child)
kill -KILL "$DPID"; wait "$DPID" 2>/dev/null || true
check "the process dies with a killed daemon" wait_for 10 gone "$c3"
check "the database opens sound" python3 -c "
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
sys.exit(c.execute('PRAGMA integrity_check').fetchone()[0] != 'ok')" "$D/cachebox.db"

# store.checkpoint_mib: the WAL size the daemon copies at. An import of
# 3,000 events (several MiB of WAL) with 1 MiB: the checkpoint process
# copies and the loop never does; with the default 64 MiB, no copy at all.
at_least() { [ "$(status "$1")" -ge "$2" ]; }
G=$T/gen
mkdir -m 700 "$G"
$EMU "$CACHEBOX_BUILD/tests/integration/prog_relayd" gen "$G" 3000 7 20 >/dev/null
cboxctl -d "$G" export "$T/ev.jsonl" 2>/dev/null
for mib in 1 64; do
	D=$T/lim$mib
	start_daemon -d "$D" --set relays.bootstrap= --set http.listen=127.0.0.1:0 \
	    --set store.checkpoint_mib=$mib
	check "checkpoint_mib $mib: control socket appears" \
	    wait_for 30 test -S "$D/cacheboxd.sock"
	cboxctl -d "$D" import "$T/ev.jsonl" >"$T/import.out" 2>&1 || true
	check "checkpoint_mib $mib: the import stored 3000" \
	    grep -q 'stored: 3000' "$T/import.out"
	if [ $mib = 1 ]; then
		check "checkpoint_mib 1: the checkpoint process copied" \
		    wait_for 30 at_least checkpoint.completions 1
	else
		check "checkpoint_mib 64: nothing copied" \
		    field_is checkpoint.completions 0
	fi
	check "checkpoint_mib $mib: the loop copied nothing" \
	    field_is checkpoint.catch_ups 0
	stop_daemon
done
finish
