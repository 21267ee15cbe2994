#!/bin/bash
# Boots the arm64 root filesystem that `make image` produces under
# qemu-system-aarch64 and checks that it comes up as a cachebox, twice:
#   firmware/boot-test.sh [TARBALL]   (default out/cachebox-rootfs-arm64.tar.zst)
#
# The disk is the SD card image firmware/make-img.sh makes from a copy of
# the tarball (MBR, CBX_BOOT FAT, CBX_ROOT ext4), on a virtio disk of QEMU's
# "virt" board; the kernel and initramfs are the image's own Debian ones,
# from its /boot, with the root= of its cmdline.txt. User-mode networking
# forwards a host port to the status page (8080) and one to SSH (22); the
# emulated UART (ttyAMA0) is the system console, logged to a file.
#
# The test's copy, and only it, gets what the test needs to look inside:
# console.tty on the first virtio console (hvc0, a socket on the host, in
# place of the USB gadget) with the unit allowed to open it, a probe that
# runs the host's commands as root on the second one (hvc1), and a line on
# the system console when cacheboxd has stopped. The shipped image has none
# of it.
#
# First boot: systemd reaches multi-user with no failed unit; cacheboxd runs
# as user cachebox (Type=notify: ready, a STATUS= line, watchdog keep-alives
# reaching systemd) with a box key made on this boot; the status page
# answers through the forwarded port and the console on hvc0 with the same
# key; host name cachebox, avahi-daemon announcing cachebox.local, root
# locked, no SSH server and no host keys; the checkpoint process (the
# daemon's child) running as cachebox in the unit's sandbox; a daemon stopped with SIGSTOP
# (its loop no longer turning) killed by the watchdog and restarted with the
# same key; a clean shutdown (cacheboxd stopped with success, the root file
# system clean).
# Second boot, after the owner's authorized_keys was put on the boot
# partition as on a card in a PC: SSH as admin with that key (sudo works),
# passwords refused, the same box key as before, a clean shutdown over SSH.
# Each step prints how long it took; the daemon's RSS is printed as the
# board sees it (/proc) and as the status page reports it.
#
# Root only (the tarball's owners, mkfs.ext4 -d). Slow: a system emulated
# instruction by instruction; not part of CI.
#
# Environment:
#   CACHEBOX_BOOT_WORK     scratch directory (default <top>/build-boot-test)
#   CACHEBOX_BOOT_CPU      QEMU CPU (default cortex-a53, the Pi 3's and
#                          Zero 2 W's core)
#   CACHEBOX_BOOT_MEM_MB   memory (default 1024, a Pi 3's)
#   CACHEBOX_BOOT_TIMEOUT  seconds any one step may take (default 900)
set -euo pipefail

die() { echo "boot-test: $*" >&2; exit 1; }

top=$(cd "$(dirname "$0")/.." && pwd)
tarball=${1:-$top/out/cachebox-rootfs-arm64.tar.zst}
work=${CACHEBOX_BOOT_WORK:-$top/build-boot-test}

[ "$(id -u)" -eq 0 ] || die "run as root (the root filesystem's owners)"
[ -f "$tarball" ] || die "no $tarball (make image)"
for tool in qemu-system-aarch64 zstd mkfs.ext4 dumpe2fs sfdisk mkfs.vfat mcopy \
    ssh ssh-keygen curl python3; do
	command -v "$tool" >/dev/null ||
		die "$tool is missing (toolchain/install-deps.sh image)"
done

me=boot-test
# The board, its channels and the test copy (shared with powercut-test.sh).
. "$top/firmware/board.sh"

echo "boot-test: $tarball on qemu-system-aarch64 -M virt -cpu $cpu -smp 2 -m $mem"
make_test_disk

# ---- first boot --------------------------------------------------------------

echo "boot-test: first boot (no authorized_keys on the boot partition)"
boot
wait_system_up

step "cacheboxd runs as user cachebox (Type=notify, watchdog)"
pid=$(probe "systemctl show -p MainPID --value cacheboxd" || true)
ok=1
expect "user" "$(probe "ps -o user= -p $pid" || true)" cachebox || ok=0
expect "unit state" "$(unit_props cacheboxd Type ActiveState SubState NRestarts)" \
    "notify active running 0" || ok=0
status_text=$(probe "systemctl show -p StatusText --value cacheboxd" || true)
printf '       %-50s %s\n' "systemd's status line" "$status_text"
[ -n "$status_text" ] || ok=0
t_exec=$(probe "systemctl show -p ExecMainStartTimestampMonotonic --value cacheboxd" || true)
t_ready=$(probe "systemctl show -p ActiveEnterTimestampMonotonic --value cacheboxd" || true)
printf '       %-50s %s s\n' "from exec to READY=1 (systemd's clock)" \
    "$(python3 -c "print('%.2f' % ((int('${t_ready:-0}') - int('${t_exec:-0}')) / 1e6))")"
wd_usec=$(probe "systemctl show -p WatchdogUSec --value cacheboxd" || true)
wd1=$(probe "systemctl show -p WatchdogTimestampMonotonic --value cacheboxd" || true)
[ "$ok" -eq 1 ] && done_ok "pid $pid" || done_fail "see above"

step "the watchdog's keep-alives reach systemd"
wd_changed() { [ "$(probe "systemctl show -p WatchdogTimestampMonotonic --value cacheboxd")" != "$wd1" ]; }
if [ -n "$wd_usec" ] && [ "$wd_usec" != 0 ] && [ "$wd_usec" != infinity ] &&
    wait_until 300 wd_changed; then
	done_ok "WatchdogSec $wd_usec; last keep-alive moved on"
else
	done_fail "WatchdogUSec '$wd_usec', the keep-alive timestamp stayed at $wd1"
fi

step "the box key was made on this first boot"
ok=1
expect "box.key owner and mode" "$(probe "stat -c '%U %a' /var/lib/cachebox/box.key" || true)" \
    "cachebox 600" || ok=0
npub=$(probe "journalctl -b -u cacheboxd -o cat | sed -n 's/.*box key \(npub1[0-9a-z]*\).*/\1/p' | head -n1" || true)
printf '       %-50s %s\n' "key in the journal" "$npub"
[ "${npub#npub1}" != "$npub" ] || ok=0
[ "$ok" -eq 1 ] && done_ok || done_fail "no fresh key"

step "the status page answers through the forwarded port"
if wait_until 120 curl -fsS -o "$work/status.json" "http://127.0.0.1:$http_port/api/status"; then
	web_npub=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["npub"])' "$work/status.json")
	web_rss=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["rss_bytes"])' "$work/status.json")
	page=$(curl -fsS -o /dev/null -w '%{http_code} %{content_type}' "http://127.0.0.1:$http_port/")
	ok=1
	expect "npub on the page" "$web_npub" "$npub" || ok=0
	expect "GET /" "${page%%;*}" "200 text/html" || ok=0
	[ "$ok" -eq 1 ] && done_ok "http://127.0.0.1:$http_port/" || done_fail "wrong answers"
else
	done_fail "no answer on 127.0.0.1:$http_port"
fi

step "the console answers a command on hvc0"
con=$(talk "$work/console.sock" 60 $'\rkey\r' 'npub: (npub1[0-9a-z]+)' || true)
if expect "key on the console" "$con" "$npub"; then done_ok; else done_fail "no key on hvc0"; fi

step "first run: cachebox.local, root locked, SSH off"
ok=1
expect "host name" "$(probe hostname || true)" cachebox || ok=0
expect "avahi-daemon" "$(probe "systemctl is-active avahi-daemon" || true)" active || ok=0
expect "avahi announces" "$(probe "journalctl -b -u avahi-daemon -o cat | grep -o 'Host name is [^ ]*' | tail -n1" || true)" \
    "Host name is cachebox.local." || ok=0
expect "root password" "$(probe "passwd -S root | cut -d' ' -f2" || true)" L || ok=0
expect "ssh.service" "$(probe "systemctl is-active ssh.service" || true)" inactive || ok=0
expect "ssh.service condition" "$(probe "systemctl show -p ConditionResult --value ssh.service" || true)" no || ok=0
expect "listening on port 22" "$(probe "ss -Htln 'sport = :22' | wc -l" || true)" 0 || ok=0
expect "SSH host keys" "$(probe "ls /etc/ssh/ssh_host_* 2>/dev/null | wc -l" || true)" 0 || ok=0
banner=$(python3 - "$ssh_port" <<'PY' || true
import socket, sys
try:
    s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
    s.settimeout(10)
    print(s.recv(64).decode("ascii", "replace").strip() or "closed")
except OSError as e:
    print("closed")
PY
)
expect "SSH through the forwarded port" "$banner" closed || ok=0
[ "$ok" -eq 1 ] && done_ok || done_fail "see above"

step "first run: the setup code on the login screen"
ok=1
jcode=$(probe "journalctl -b -u cacheboxd -o cat | sed -n 's/.*setup code \\([0-9A-Z-]*\\) (valid.*/\\1/p' | tail -n1" || true)
printf '       %-50s %s\n' "code in the journal" "${jcode:-none}"
[ -n "$jcode" ] || ok=0
expect "setup-code.issue owner and mode" \
    "$(probe "stat -c '%U %a' /var/lib/cachebox/setup-code.issue" || true)" "cachebox 600" || ok=0
expect "in /etc/issue.d" "$(probe "sed -n 's/^cachebox setup code: \\([0-9A-Z-]*\\).*/\\1/p' /etc/issue.d/cachebox-setup.issue" || true)" \
    "$jcode" || ok=0
expect "cachebox-issue.path" "$(probe "systemctl is-active cachebox-issue.path" || true)" active || ok=0
if [ -n "$jcode" ] && wait_until 120 grep -q "cachebox setup code: $jcode" "$work/serial.log"; then
	printf '       %-50s %s\n' "on the serial login prompt (ttyAMA0)" yes
else
	printf '       %-50s %s\n' "on the serial login prompt (ttyAMA0)" no
	ok=0
fi
[ "$ok" -eq 1 ] && done_ok || done_fail "see above"

step "the daemon's memory on the emulated board"
rss_kb=$(probe "awk '/^VmRSS:/ { print \$2 }' /proc/$pid/status" || true)
printf '       %-50s %s KiB (%s MiB)\n' "VmRSS (/proc on the board)" "$rss_kb" \
    "$(python3 -c "print('%.1f' % (int('${rss_kb:-0}') / 1024))")"
printf '       %-50s %s bytes (%s MiB)\n' "rss_bytes (status page)" "${web_rss:-?}" \
    "$(python3 -c "print('%.1f' % (int('${web_rss:-0}') / 1048576))")"
[ -n "$rss_kb" ] && done_ok || done_fail "no VmRSS"

# The WAL's checkpoint is copied by a child that is the daemon's own binary
# run again (src/store/ckpt_proc.c): the unit's sandbox must let it start.
step "the checkpoint process runs under the unit's sandbox"
ok=1
expect "status: checkpoint.process" "$(python3 -c 'import json,sys
print(str(json.load(open(sys.argv[1])).get("checkpoint", {}).get("process")).lower())' "$work/status.json")" \
    true || ok=0
child=$(probe "for p in \$(cat /proc/$pid/task/*/children); do grep -qa -- --checkpoint-process /proc/\$p/cmdline && echo \$p; done" || true)
printf '       %-50s %s\n' "its pid" "${child:-none}"
[ -n "$child" ] || ok=0
if [ -n "$child" ]; then
	expect "its user" "$(probe "stat -c %U /proc/$child" || true)" cachebox || ok=0
	crss=$(probe "awk '/^VmRSS:/ { print \$2 }' /proc/$child/status" || true)
	printf '       %-50s %s KiB\n' "its VmRSS (/proc on the board)" "${crss:-?}"
fi
[ "$ok" -eq 1 ] && done_ok || done_fail "see above"

# A loop that stops turning: SIGSTOP stops the keep-alives exactly as a
# stuck loop would (they come from a loop timer). Within WatchdogSec of the
# last one, systemd kills it (SIGABRT, with a SIGCONT to deliver it) and
# Restart=on-failure starts it again, with the same box key.
step "a stopped loop: the watchdog kills and restarts cacheboxd"
restarted() {
	[ "$(unit_props cacheboxd NRestarts ActiveState SubState)" = "1 active running" ] &&
	    [ "$(probe "systemctl show -p MainPID --value cacheboxd")" != "$pid" ]
}
probe "kill -STOP $pid" >/dev/null || true
t_stop=$(date +%s.%N)
if wait_until "$limit" restarted; then
	ok=1
	pid2=$(probe "systemctl show -p MainPID --value cacheboxd" || true)
	printf '       %-50s %s s\n' "from SIGSTOP to running again" "$(since "$t_stop")"
	expect "why it was restarted" "$(probe "journalctl -b -u cacheboxd -o cat | grep -o 'Watchdog timeout (limit [^)]*)!\\|Failed with result .watchdog.' | tr '\n' ','" || true)" \
	    "Watchdog timeout (limit 1min)!,Failed with result 'watchdog'," || ok=0
	expect "user of the new process" "$(probe "ps -o user= -p $pid2" || true)" cachebox || ok=0
	if wait_until 120 curl -fsS -o "$work/status1b.json" "http://127.0.0.1:$http_port/api/status"; then
		expect "npub on the page" "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["npub"])' "$work/status1b.json")" \
		    "$npub" || ok=0
	else
		ok=0
	fi
	pid=$pid2
	[ "$ok" -eq 1 ] && done_ok "pid $pid" || done_fail "see above"
else
	done_fail "not restarted: $(unit_props cacheboxd NRestarts ActiveState SubState Result)"
fi

step "clean shutdown (systemctl poweroff)"
probe "systemctl poweroff" >/dev/null || true
wait_off

# ---- second boot: the owner's key on the boot partition -------------------

echo "boot-test: second boot (authorized_keys on the boot partition)"
step "put authorized_keys on the boot partition"
rm -f "$work/owner_key" "$work/owner_key.pub" "$work/known_hosts"
ssh-keygen -q -t ed25519 -N '' -C boot-test-owner -f "$work/owner_key"
# Written the way a PC writes it: CRLF line ends.
sed 's/$/\r/' "$work/owner_key.pub" >"$work/authorized_keys"
mcopy -o -i "$disk@@$boot_offset" "$work/authorized_keys" ::authorized_keys
done_ok "$(ssh-keygen -l -f "$work/owner_key.pub" | cut -d' ' -f2)"

boot
wait_system_up
sshopts=(-p "$ssh_port" -o StrictHostKeyChecking=accept-new
    -o UserKnownHostsFile="$work/known_hosts" -o BatchMode=yes -o ConnectTimeout=30)

step "SSH as admin with the owner's key"
ssh_ok() { ssh "${sshopts[@]}" -i "$work/owner_key" admin@127.0.0.1 true; }
if wait_until 300 ssh_ok; then
	ok=1
	expect "id, host, sudo" "$(ssh "${sshopts[@]}" -i "$work/owner_key" admin@127.0.0.1 \
	    'echo $(id -un) $(hostname) $(sudo -n id -un)' 2>/dev/null || true)" "admin cachebox root" || ok=0
	expect "host key made on the box" "$(probe "ls /etc/ssh/ssh_host_ed25519_key.pub" || true)" \
	    /etc/ssh/ssh_host_ed25519_key.pub || ok=0
	[ "$ok" -eq 1 ] && done_ok "$(cut -d' ' -f2 "$work/known_hosts" | head -n1) host key" ||
		done_fail "see above"
else
	done_fail "no SSH login"
fi

step "SSH refuses passwords"
refusal=$(ssh "${sshopts[@]}" -o PubkeyAuthentication=no \
    -o PreferredAuthentications=password,keyboard-interactive admin@127.0.0.1 true 2>&1 || true)
refusal=$(grep -o 'Permission denied ([^)]*)' <<<"$refusal" || true)
if expect "without the key" "$refusal" "Permission denied (publickey)"; then done_ok; else done_fail "passwords offered"; fi

step "the same box key, cacheboxd running"
ok=1
if wait_until 120 curl -fsS -o "$work/status2.json" "http://127.0.0.1:$http_port/api/status"; then
	expect "npub on the page" "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["npub"])' "$work/status2.json")" \
	    "$npub" || ok=0
else
	ok=0
fi
expect "unit state" "$(unit_props cacheboxd ActiveState SubState NRestarts)" \
    "active running 0" || ok=0
expect "the first boot's end in the journal" \
    "$(probe "journalctl -b -1 -u cacheboxd -o cat | grep -o 'signal 15: shutting down\\|info: stopped\\|Deactivated successfully' | tr '\n' ','" || true)" \
    "signal 15: shutting down,info: stopped,Deactivated successfully," || ok=0
[ "$ok" -eq 1 ] && done_ok || done_fail "see above"

step "clean shutdown over SSH (sudo systemctl poweroff)"
ssh "${sshopts[@]}" -i "$work/owner_key" admin@127.0.0.1 'sudo -n systemctl poweroff' \
    >/dev/null 2>&1 || true
wait_off

echo "boot-test: $(since "$t_begin") s in all"
if [ "$fails" -ne 0 ]; then
	echo "boot-test: FAILED ($fails)"
	exit 1
fi
echo "boot-test: passed"
