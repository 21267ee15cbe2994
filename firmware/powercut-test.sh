#!/bin/bash
# Pulls the plug on the arm64 image under qemu-system-aarch64, N times, in
# the middle of a drain, and checks after every cut that cachebox comes back
# whole:
#   firmware/powercut-test.sh [TARBALL]   (default out/cachebox-rootfs-arm64.tar.zst)
#
# The board is boot-test.sh's (firmware/board.sh: the SD card image made
# from a copy of the tarball, the probe on hvc1, the status page on a
# forwarded port), with two differences. Its card is served by
# firmware/powercut-nbd.py, a card with a volatile write cache: the guest's
# writes reach the image file only when it flushes, and at a cut what it
# never flushed is lost, all of it or a random half (the cuts alternate).
# And its cacheboxd has work to lose: it drains a relaysim network running
# on the host and forwards what it stores to a NIP-01 relay on the host
# (tests/integration/uplink_peer.mjs), both reached through user-mode
# networking's host address 10.0.2.2.
#
# Each cut is a SIGKILL of QEMU at a random instant: mostly while the drain
# runs (up to CACHEBOX_CUT_MAX_S seconds after the status page answered),
# one in five while the board is still booting. After each cut, on the
# card as the cut left it: the root file system's journal is replayed and
# checked by e2fsck on a scratch copy (what it had to fix is counted), the
# database and its WAL are read from it (frames the WAL held and those
# SQLite's recovery keeps), PRAGMA integrity_check is ok, no drain cursor
# points past events not in the store (tests/integration/crash_check.py),
# and the uplink's relay holds only events of the network. Then the board
# boots again from that card, and cacheboxd must come up without help: the
# status page answers with the same box key, the unit is active and was
# not restarted. After the last cut the drain runs to idle, the board is
# shut down cleanly, the store must equal relaysim's truth
# (tests/integration/drain_check.py) and the uplink's relay must hold
# exactly the stored events.
#
# Prints per cut one line, and at the end the figures: cuts, boots, time
# from power-on to the status page answering (median, max), writes lost in
# the card's cache, journal replays and e2fsck fixes, WAL frames recovered,
# events sent to the uplink more than once (the design sends again what was
# not confirmed before a cut; the relay keeps one copy).
#
# Root only; slow (minutes per cut: a system emulated instruction by
# instruction); not part of CI. Needs `make image`, node and the test peers
# (tests/install-peers.sh).
#
# Environment (and boot-test.sh's CACHEBOX_BOOT_CPU, _MEM_MB, _TIMEOUT):
#   CACHEBOX_CUTS           cuts (default 30)
#   CACHEBOX_CUT_MAX_S      latest cut after the status page answered (default 90)
#   CACHEBOX_CUT_POLICY     what the card keeps of its cache at a cut: none,
#                           random or mixed (alternating; the default)
#   CACHEBOX_CUT_SEED       seed of the cut instants and the card (default: random)
#   CACHEBOX_POWERCUT_EVENTS  notes in the relaysim dataset (default 8000)
#   CACHEBOX_POWERCUT_PACE_MS the drain's backfill.pace_ms (default 1000, as shipped)
#   CACHEBOX_POWERCUT_WORK  scratch directory (default <top>/build-powercut-test)
set -euo pipefail

die() { echo "powercut-test: $*" >&2; exit 1; }

top=$(cd "$(dirname "$0")/.." && pwd)
tarball=${1:-$top/out/cachebox-rootfs-arm64.tar.zst}
work=${CACHEBOX_POWERCUT_WORK:-$top/build-powercut-test}
cuts=${CACHEBOX_CUTS:-30}
cut_max=${CACHEBOX_CUT_MAX_S:-90}
policy=${CACHEBOX_CUT_POLICY:-mixed}
seed=${CACHEBOX_CUT_SEED:-$RANDOM}
events=${CACHEBOX_POWERCUT_EVENTS:-8000}
pace_ms=${CACHEBOX_POWERCUT_PACE_MS:-1000}
checks=$top/tests/integration
# Signed datasets are kept where the Makefile keeps them for root.
export RELAYSIM_CACHE=${RELAYSIM_CACHE:-/var/cache/cachebox/relaysim}

[ "$(id -u)" -eq 0 ] || die "run as root (the root filesystem's owners)"
[ -f "$tarball" ] || die "no $tarball (make image)"
for tool in qemu-system-aarch64 zstd mkfs.ext4 dumpe2fs e2fsck debugfs sfdisk \
    mkfs.vfat mcopy curl python3 node; do
	command -v "$tool" >/dev/null ||
		die "$tool is missing (toolchain/install-deps.sh image)"
done
[ -d "$top/tests/node_modules/ws" ] || die "no test peers (tests/install-peers.sh)"

me=powercut-test
. "$top/firmware/board.sh"
. "$top/tests/relaysim/relaysim.sh"

nbd_pid= peer_pid=
cleanup() {
	stop_board
	relaysim_stop || true
	for p in $nbd_pid $peer_pid; do
		kill "$p" 2>/dev/null && wait "$p" 2>/dev/null || true
	done
}
trap cleanup EXIT

# rnd EXPR: a number from the seeded generator (python's random, state
# kept in a file so every call draws the next one).
rnd() {
	python3 - "$work/rng.state" "$seed" "$1" <<'PY'
import os, pickle, random, sys
path, seed, expr = sys.argv[1], int(sys.argv[2]), sys.argv[3]
r = random.Random(seed)
if os.path.exists(path):
    r.setstate(pickle.load(open(path, "rb")))
print(eval(expr, {"r": r}))
pickle.dump(r.getstate(), open(path, "wb"))
PY
}

json_field() { python3 -c 'import json,sys; v=json.loads(sys.argv[1])
for k in sys.argv[2].split("."): v=v[k]
print(v)' "$1" "$2"; }
http_get() { curl -fsS --max-time 60 "$1"; }

# ---- the network on the host ---------------------------------------------

echo "powercut-test: $tarball, $cuts cuts, card policy $policy, seed $seed"
mkdir -p "$work"
rm -f "$work/rng.state"
step "relaysim and the uplink's relay on the host"
# 20 authors, 8,000 notes (CACHEBOX_POWERCUT_EVENTS) on three relays (the dataset's relay lists name
# three): a caps every answer at 300, b drops connections mid-page now and
# then; all slow per event, so the drain spans many cuts.
cat >"$work/sim.json" <<JSON
{"dataset": {"authors": 20, "events": $events, "seed": 27},
 "relays": [
  {"name": "a", "url_host": "10.0.2.2", "cap": 300,
   "subset": {"fraction": 0.7, "seed": 31}, "slow_ms": {"per_event": 2}},
  {"name": "b", "url_host": "10.0.2.2", "subset": {"fraction": 0.6, "seed": 32},
   "drop_mid_page": {"after": 120, "every": 9}, "slow_ms": {"per_event": 2}},
  {"name": "c", "url_host": "10.0.2.2", "subset": {"fraction": 0.5, "seed": 33},
   "slow_ms": {"per_event": 2}}
 ]}
JSON
relaysim_start "$work/sim.json" 600 || die "relaysim did not start"
# The guest reaches the relays as 10.0.2.2 (QEMU's user-mode networking
# takes it to the host's 127.0.0.1); the checks here ask 127.0.0.1.
sed 's#"http":"http://10\.0\.2\.2:#"http":"http://127.0.0.1:#g' "$RELAYSIM_READY" \
    >"$work/ready.host"
sim_http=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["relays"][0]["http"])' "$work/ready.host")
root_pk=$(relaysim_q root)
url_a=$(relaysim_url a) url_b=$(relaysim_url b) url_c=$(relaysim_url c)
node "$checks/uplink_peer.mjs" close-after 1000000000 >"$work/peer.ready" 2>"$work/peer.log" &
peer_pid=$!
for _ in $(seq 100); do grep -q '"ready"' "$work/peer.ready" && break; sleep 0.1; done
grep -q '"ready"' "$work/peer.ready" || die "the uplink's relay did not start"
peer_http=$(json_field "$(head -n1 "$work/peer.ready")" http)
peer_url=$(json_field "$(head -n1 "$work/peer.ready")" url)
peer_url=ws://10.0.2.2:${peer_url##*:}
http_get "$sim_http/truth?mode=match&format=json&filter=%7B%7D" |
    python3 -c 'import json,sys; print("\n".join(sorted(json.load(sys.stdin)["ids"])))' \
    >"$work/all.ids"
done_ok "$url_a $url_b $url_c, uplink $peer_url; $(wc -l <"$work/all.ids") events in the network"

# What the test copy gets besides boot-test's parts: the drain, the
# uplink and a WAL limit of 1 MiB (the drain's WAL never reaches the
# default 64, and cuts should land while the checkpoint process copies),
# in the configuration file.
add_network() {
	cat >>"$1/etc/cachebox/cachebox.conf" <<-EOF

	# power-cut test only
	relays.bootstrap = $url_a,$url_b,$url_c
	follow.roots = $root_pk
	backfill.pace_ms = $pace_ms
	uplink.url = $peer_url
	# the checkpoint process copies every MiB of WAL, so cuts land in copies
	store.checkpoint_mib = 1
	EOF
}

echo "powercut-test: qemu-system-aarch64 -M virt -cpu $cpu -smp 2 -m $mem"
make_test_disk add_network
python3 "$top/firmware/powercut-nbd.py" --image "$disk" --socket "$work/nbd.sock" \
    --policy "$policy" --seed "$seed" >"$work/nbd.log" 2>"$work/nbd.err" &
nbd_pid=$!
for _ in $(seq 100); do grep -q '"ready"' "$work/nbd.log" && break; sleep 0.1; done
grep -q '"ready"' "$work/nbd.log" || die "the card's NBD server did not start"
board_drive="file=nbd+unix:///sd?socket=$work/nbd.sock,format=raw,if=none,id=sd,cache=writeback"

# ---- one boot ----------------------------------------------------------------

# status_field FIELD: one field of the status page's document.
status_field() {
	curl -fsS --max-time 20 "http://127.0.0.1:$http_port/api/status" |
	    python3 -c 'import json,sys; v=json.load(sys.stdin)
for k in sys.argv[1].split("."): v=v[k]
print(json.dumps(v) if isinstance(v,(bool,dict,list)) or v is None else v)' "$1"
}
# Bounded by a few seconds: before the guest's network is up, QEMU takes
# the connection and the request would wait, so a cut meant for the boot
# would come late.
status_answers() { curl -fsS --max-time 3 -o /dev/null "http://127.0.0.1:$http_port/api/status"; }

# Figures, one value per line in files under $work/fig.
fig() { echo "$2" >>"$work/fig/$1"; }
rm -rf "$work/fig"
mkdir "$work/fig"
npub=
boots=0

# boot_to_ready DEADLINE: power on; wait for the status page until DEADLINE
# seconds after power-on (0: until $limit). Sets ready_s (empty when the
# deadline came first).
boot_to_ready() {
	local deadline=$1 end
	boot
	boots=$((boots + 1))
	ready_s=
	[ "$deadline" = 0 ] && deadline=$limit
	end=$(python3 -c "print($(date +%s.%N) + $deadline)")
	while kill -0 "$qemu_pid" 2>/dev/null; do
		if python3 -c "import sys,time; sys.exit(time.time() < $end)"; then
			return 0
		fi
		if status_answers 2>/dev/null; then
			ready_s=$(since "$t_boot")
			return 0
		fi
		sleep 0.5
	done
	return 1
}

# after_ready: the checks of a board that came up: the same box key, the
# unit active and never restarted, what the boot repaired.
after_ready() {
	local ok=1 key st repairs
	key=$(status_field npub || true)
	if [ -z "$npub" ]; then npub=$key; fi
	expect "box key" "$key" "$npub" || ok=0
	wait_until 300 probe_there || { done_fail "no probe"; return; }
	st=$(unit_props cacheboxd ActiveState SubState NRestarts)
	expect "cacheboxd" "$st" "active running 0" || ok=0
	repairs=$(probe "journalctl -b -k -o cat | grep -E 'EXT4-fs .*(recovery complete|orphan|error|replay)' | sort | uniq -c | tr -s ' ' | tr '\n' ';'" || true)
	printf '       %-50s %s\n' "kernel on the root file system" "${repairs:-nothing}"
	case $repairs in *"recovery complete"*) fig guest_recoveries 1 ;; esac
	fsck=$(probe "journalctl -b -o cat -t systemd-fsck | tr '\n' ';'" || true)
	[ -z "$fsck" ] || printf '       %-50s %s\n' "systemd-fsck" "$fsck"
	[ "$ok" -eq 1 ] && done_ok "ready after ${ready_s}s, stored $(status_field ingest.stored || echo ?)" ||
		done_fail "see above"
}

# ---- the card after a cut ------------------------------------------------------

# card_check WHAT: replay and check the root file system on a scratch copy
# of the card as it is now, then the database on it.
card_check() {
	local what=$1 rc=0 fsck_out fixes cc
	rm -f "$work/root.img"
	dd if="$disk" of="$work/root.img" bs=4M iflag=skip_bytes skip="$root_offset" \
	    conv=sparse status=none
	fsck_out=$(e2fsck -fy "$work/root.img" 2>&1) || rc=$?
	# Fixes past the replay; the free block and inode counters, which ext4
	# does not journal, are put right after every crash and not counted.
	fixes=$(awk '/count wrong/ { skip = 1; next }
	    /\? yes/ { if (!skip) n++; skip = 0 } END { print n + 0 }' <<<"$fsck_out")
	grep -q 'recovering journal' <<<"$fsck_out" && fig journal_replays 1
	fig fsck_fixes "$fixes"
	if [ "$fixes" -gt 0 ]; then
		grep -E '\? yes' <<<"$fsck_out" | sort | uniq -c | sed 's/^/         e2fsck: /' | head -n 8
	fi
	local ok=1
	expect "e2fsck exit status (0 clean, 1 fixed)" "$([ $rc -le 1 ] && echo "<= 1" || echo "$rc")" "<= 1" || ok=0
	rm -rf "$work/db"
	mkdir "$work/db"
	debugfs -R "dump /var/lib/cachebox/cachebox.db $work/db/cachebox.db" "$work/root.img" >/dev/null 2>&1 || true
	debugfs -R "dump /var/lib/cachebox/cachebox.db-wal $work/db/cachebox.db-wal" "$work/root.img" >/dev/null 2>&1 || true
	rm -f "$work/root.img"
	if [ ! -s "$work/db/cachebox.db" ]; then
		printf '       %-50s %s\n' "database" "not made yet"
		[ "$ok" -eq 1 ] && done_ok "$what" || done_fail "$what"
		return
	fi
	[ -s "$work/db/cachebox.db-wal" ] || rm -f "$work/db/cachebox.db-wal"
	db_line=$(python3 "$top/firmware/powercut-check.py" "$work/db/cachebox.db") || ok=0
	printf '       %-50s %s\n' "database" "$db_line"
	fig wal_frames "$(json_field "$db_line" wal_frames)"
	fig wal_committed "$(json_field "$db_line" wal_committed)"
	fig stored_at_cut "$(json_field "$db_line" events 2>/dev/null || echo 0)"
	if cc=$(python3 "$checks/crash_check.py" --ready "$work/ready.host" \
	    --db "$work/db/cachebox.db" 2>&1); then
		printf '       %-50s %s\n' "cursors (crash_check.py)" "$cc"
	else
		printf '       %-50s %s\n' "cursors (crash_check.py) FAILED" "$cc"
		ok=0
	fi
	# The uplink's relay holds only events of the network.
	http_get "$peer_http/ids" | sort >"$work/peer.ids"
	local extra
	extra=$(comm -23 "$work/peer.ids" "$work/all.ids" | wc -l)
	expect "uplink relay: events not in the network" "$extra" 0 || ok=0
	[ "$ok" -eq 1 ] && done_ok "$what" || done_fail "$what"
}

# cut: SIGKILL QEMU, then wait for the card to have dropped its cache.
cut() {
	local before
	before=$(wc -l <"$work/nbd.log")
	kill -KILL "$qemu_pid"
	wait "$qemu_pid" 2>/dev/null || true
	qemu_pid=
	for _ in $(seq 600); do
		[ "$(wc -l <"$work/nbd.log")" -gt "$before" ] && break
		sleep 0.1
	done
	cut_line=$(tail -n1 "$work/nbd.log")
	fig lost_writes "$(json_field "$cut_line" lost 2>/dev/null || echo 0)"
	fig kept_writes "$(json_field "$cut_line" kept 2>/dev/null || echo 0)"
}

# ---- the cuts ---------------------------------------------------------------------

last_ready=60
for i in $(seq 1 "$cuts"); do
	# One cut in five lands while the board boots (never the first boot,
	# which makes the box key and is the only measure of a boot's length).
	if [ "$i" -gt 1 ] && [ "$(rnd 'r.random() < 0.2')" = True ]; then
		when=$(rnd "round(r.uniform(3, $last_ready), 1)")
		echo "powercut-test: boot $((boots + 1)), cut $i at ${when}s after power-on (booting)"
		step "boot $((boots + 1)) until the cut"
		boot_to_ready "$when" || fatal_step "QEMU exited by itself"
		if [ -n "$ready_s" ]; then
			fig ready_s "$ready_s"
			after_ready
			sleep "$(python3 -c "print(max(0, $when - $ready_s))")"
		else
			done_ok "cut before the status page answered"
		fi
	else
		when=$(rnd "round(r.uniform(0, $cut_max), 1)")
		echo "powercut-test: boot $((boots + 1)), cut $i at ${when}s after ready"
		step "boot $((boots + 1)): cacheboxd comes up by itself"
		boot_to_ready 0 || fatal_step "QEMU exited by itself"
		[ -n "$ready_s" ] || fatal_step "no status page within ${limit}s"
		fig ready_s "$ready_s"
		last_ready=${ready_s%.*}
		after_ready
		sleep "$when"
	fi
	step "cut $i: SIGKILL of QEMU"
	cut
	done_ok "$(json_field "$cut_line" policy 2>/dev/null || echo "?") of the card's cache kept"
	step "cut $i: the card as the cut left it"
	printf '       %-50s %s\n' "the card's cache" "$cut_line"
	card_check "after cut $i"
done

# ---- the last boot: drain to the end ---------------------------------------------

echo "powercut-test: boot $((boots + 1)), the last: the drain runs to its end"
step "boot $((boots + 1)): cacheboxd comes up by itself"
boot_to_ready 0 || fatal_step "QEMU exited by itself"
[ -n "$ready_s" ] || fatal_step "no status page within ${limit}s"
fig ready_s "$ready_s"
after_ready

step "the drain and the uplink finish (idle)"
idle_now() { [ "$(status_field idle)" = true ] && [ "$(status_field inbox.pending)" = 0 ]; }
if wait_until "$((limit * 4))" idle_now; then
	done_ok "stored $(status_field ingest.stored), forwarded $(status_field inbox.forwarded)"
else
	done_fail "not idle: $(status_field ingest.stored || true) stored"
fi

step "clean shutdown (systemctl poweroff)"
probe "systemctl poweroff" >/dev/null || true
wait_off

step "the final store"
card_check "after the clean shutdown"
step "the final store equals relaysim's truth (drain_check.py)"
if python3 "$checks/drain_check.py" --ready "$work/ready.host" --config "$work/sim.json" \
    --db "$work/db/cachebox.db" --bootstrap a,b,c --quiet-ok >"$work/drain_check.out" 2>&1; then
	done_ok "$(tail -n1 "$work/drain_check.out")"
else
	done_fail "see below"
	sed 's/^/         /' "$work/drain_check.out" | head -n 20
fi

step "the uplink's relay holds exactly the stored events, each once"
python3 -c 'import sqlite3,sys
for (i,) in sqlite3.connect(sys.argv[1]).execute("SELECT lower(hex(id)) FROM events ORDER BY 1"): print(i)' \
    "$work/db/cachebox.db" >"$work/store.ids"
http_get "$peer_http/ids" | sort >"$work/peer.ids"
peer_stats=$(http_get "$peer_http/stats")
ok=1
expect "stored here, not on the relay" "$(comm -23 "$work/store.ids" "$work/peer.ids" | wc -l)" 0 || ok=0
expect "on the relay, not stored here" "$(comm -13 "$work/store.ids" "$work/peer.ids" | wc -l)" 0 || ok=0
printf '       %-50s %s\n' "the relay's counters" "$peer_stats"
fig resent "$(json_field "$peer_stats" duplicates)"
[ "$ok" -eq 1 ] && done_ok "$(wc -l <"$work/store.ids") events" || done_fail "see above"

# ---- figures ---------------------------------------------------------------------------

sum() { [ -f "$work/fig/$1" ] && awk '{ s += $1 } END { print s + 0 }' "$work/fig/$1" || echo 0; }
count() { [ -f "$work/fig/$1" ] && wc -l <"$work/fig/$1" || echo 0; }
echo "powercut-test: figures (seed $seed, card policy $policy)"
printf '  %-44s %s\n' "cuts" "$cuts"
printf '  %-44s %s\n' "boots" "$boots"
printf '  %-44s %s\n' "power-on to status page, s (median, max, n)" \
    "$(python3 -c 'import statistics,sys; v=[float(l) for l in open(sys.argv[1])]; print("%.1f %.1f %d" % (statistics.median(v), max(v), len(v)))' "$work/fig/ready_s")"
printf '  %-44s %s\n' "writes lost in the card's cache (kept)" "$(sum lost_writes) ($(sum kept_writes))"
printf '  %-44s %s\n' "journal replays (host e2fsck, guest kernel)" "$(count journal_replays), $(count guest_recoveries)"
printf '  %-44s %s\n' "e2fsck fixes after replay" "$(sum fsck_fixes)"
printf '  %-44s %s\n' "WAL frames at the cuts (recovered)" "$(sum wal_frames) ($(sum wal_committed))"
printf '  %-44s %s\n' "events sent to the uplink again" "$(sum resent)"
echo "powercut-test: $(since "$t_begin") s in all"
if [ "$fails" -ne 0 ]; then
	echo "powercut-test: FAILED ($fails)"
	exit 1
fi
echo "powercut-test: passed"
