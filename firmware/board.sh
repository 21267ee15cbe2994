# firmware/board.sh: the emulated board that firmware/boot-test.sh and
# firmware/powercut-test.sh share, sourced by both (it starts nothing by
# itself). It holds the step report, the channels into the board (the probe
# on hvc1, the console on hvc0), the test's additions to its copy of the root
# filesystem, the SD card image made from that copy, and QEMU started and
# stopped. The caller sets, before sourcing it:
#   me        the script's name, for its messages
#   top       the top of the tree
#   tarball   the root filesystem tarball of `make image`
#   work      the scratch directory
# and may set board_drive (QEMU's -drive for the SD card; default the raw
# image file $disk) before each boot. It must define die().

# QEMU's CPU and memory in MiB, and the seconds any one step may take: the
# same settings (CACHEBOX_BOOT_CPU, _MEM_MB, _TIMEOUT) for both tests.
cpu=${CACHEBOX_BOOT_CPU:-cortex-a53}
mem=${CACHEBOX_BOOT_MEM_MB:-1024}
limit=${CACHEBOX_BOOT_TIMEOUT:-900}

# ---- reporting ---------------------------------------------------------

fails=0
t_begin=$(date +%s.%N)
t_boot=$t_begin
t_step=$t_begin
since() { python3 -c "import sys; print('%.1f' % (float(sys.argv[2]) - float(sys.argv[1])))" "$1" "$(date +%s.%N)"; }
# step NAME: a step begins now.
step() { step_name=$1; t_step=$(date +%s.%N); }
# done_ok [DETAIL], done_fail DETAIL: the step's verdict, its duration and
# the time since the emulated board was powered on.
done_ok() {
	printf 'ok   %-58s %7ss  (boot +%ss)%s\n' "$step_name" "$(since "$t_step")" \
	    "$(since "$t_boot")" "${1:+  $1}"
}
done_fail() {
	fails=$((fails + 1))
	printf 'FAIL %-58s %7ss  (boot +%ss)  %s\n' "$step_name" "$(since "$t_step")" \
	    "$(since "$t_boot")" "$1"
}
# expect NAME ACTUAL WANTED: a check within a step, printed on its own line.
expect() {
	if [ "$2" = "$3" ]; then
		printf '       %-50s %s\n' "$1" "$2"
		return 0
	fi
	printf '       %-50s %s  (wanted %s)\n' "$1" "$2" "$3"
	return 1
}

# ---- talking to the board ------------------------------------------------

# talk SOCKET TIMEOUT SEND PATTERN: connect to a QEMU chardev socket, send
# SEND, read until the Python regular expression PATTERN matches what came
# back (carriage returns dropped); print it. Fails on a timeout.
talk() {
	python3 - "$@" <<'PY'
import re, socket, sys, time
path, timeout, send, pattern = sys.argv[1], float(sys.argv[2]), sys.argv[3], sys.argv[4]
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(path)
s.sendall(send.encode())
got, end = b"", time.time() + timeout
while time.time() < end:
    s.settimeout(max(0.05, end - time.time()))
    try:
        chunk = s.recv(65536)
    except socket.timeout:
        break
    if not chunk:
        break
    got += chunk
    text = got.decode("utf-8", "replace").replace("\r", "")
    m = re.search(pattern, text, re.S)
    if m:
        print(m.group(1) if m.groups() else m.group(0), end="")
        sys.exit(0)
sys.stdout.write(got.decode("utf-8", "replace"))
sys.exit(1)
PY
}

# probe COMMAND: run a shell command as root on the board (through the
# test copy's probe on hvc1); its output on stdout, its exit status.
# PROBE_WAIT is how long its answer may take (a line sent before the probe
# reads hvc1 is lost: asking whether it is there uses a short one).
probe_n=0
PROBE_WAIT=120
probe() {
	local out st
	probe_n=$((probe_n + 1))
	out=$(talk "$work/probe.sock" "$PROBE_WAIT" \
	    "echo @@begin-$probe_n; { $1; } 2>&1; echo \"@@end-$probe_n \$?\""$'\n' \
	    "@@begin-$probe_n\n(.*@@end-$probe_n \d+)\n") || return 99
	st=${out##*@@end-$probe_n }
	out=${out%@@end-$probe_n *}
	printf '%s' "$out"
	return "$st"
}

# wait_until SECONDS COMMAND...: retry until the command succeeds; fails
# when QEMU is gone or the time is up.
wait_until() {
	local end=$((SECONDS + $1)); shift
	until "$@" >/dev/null 2>&1; do
		kill -0 "$qemu_pid" 2>/dev/null || return 1
		[ $SECONDS -ge $end ] && return 1
		sleep 1
	done
}

# ---- the test's copy of the root filesystem -----------------------------

# What the test needs inside the board; only in its copy (see the top).
add_test_parts() {
	local r=$1
	sed -i 's|^console\.tty *=.*|console.tty = /dev/hvc0|' "$r/etc/cachebox/cachebox.conf"
	grep -qx 'console.tty = /dev/hvc0' "$r/etc/cachebox/cachebox.conf" ||
		die "cannot point console.tty at /dev/hvc0 in the test copy"
	mkdir -p "$r/etc/systemd/system/cacheboxd.service.d"
	cat >"$r/etc/systemd/system/cacheboxd.service.d/boot-test.conf" <<-'EOF'
	# boot test only: the console on the first virtio console, and a word
	# on the system console once the daemon has stopped.
	[Service]
	DeviceAllow=/dev/hvc0 rw
	DeviceAllow=/dev/console w
	ExecStopPost=+/bin/sh -c 'echo "boot-test: cacheboxd stopped: $$SERVICE_RESULT $$EXIT_CODE $$EXIT_STATUS" >/dev/console'
	EOF
	echo 'KERNEL=="hvc0", GROUP="cachebox", MODE="0660"' \
	    >"$r/etc/udev/rules.d/99-boot-test-hvc0.rules"
	ln -sf /dev/null "$r/etc/systemd/system/serial-getty@hvc0.service"
	ln -sf /dev/null "$r/etc/systemd/system/serial-getty@hvc1.service"
	cat >"$r/usr/local/sbin/boot-test-probe" <<-'EOF'
	#!/bin/sh
	# boot test only: every line read on /dev/hvc1 is run as a root shell command.
	stty -F /dev/hvc1 -echo -onlcr
	exec </dev/hvc1 >/dev/hvc1 2>&1
	while IFS= read -r line; do sh -c "$line" </dev/null; done
	EOF
	chmod 0755 "$r/usr/local/sbin/boot-test-probe"
	cat >"$r/etc/systemd/system/boot-test-probe.service" <<-'EOF'
	[Unit]
	Description=boot test probe on hvc1 (test copy only)
	Requires=dev-hvc1.device
	After=dev-hvc1.device

	[Service]
	ExecStart=/usr/local/sbin/boot-test-probe
	Restart=always
	EOF
	ln -sf /etc/systemd/system/boot-test-probe.service \
	    "$r/etc/systemd/system/multi-user.target.wants/boot-test-probe.service"
}

# ---- the emulated board ---------------------------------------------------

# boot: power the board on; QEMU's pid in qemu_pid, the console in serial.log.
boot() {
	rm -f "$work"/{console,probe}.sock
	: >"$work/serial.log"
	qemu-system-aarch64 -M virt -cpu "$cpu" -smp 2 -m "$mem" \
	    -display none -no-reboot -nodefaults \
	    -kernel "$kernel" -initrd "$initrd" -append "$cmdline" \
	    -drive "${board_drive:-file=$disk,format=raw,if=none,id=sd}" \
	    -device virtio-blk-device,drive=sd \
	    -netdev "user,id=lan,hostfwd=tcp:127.0.0.1:$http_port-:8080,hostfwd=tcp:127.0.0.1:$ssh_port-:22" \
	    -device virtio-net-device,netdev=lan \
	    -chardev "file,id=uart,path=$work/serial.log" -serial chardev:uart \
	    -device virtio-serial-device \
	    -chardev "socket,id=con,path=$work/console.sock,server=on,wait=off" \
	    -device virtconsole,chardev=con \
	    -chardev "socket,id=probe,path=$work/probe.sock,server=on,wait=off" \
	    -device virtconsole,chardev=probe \
	    >"$work/qemu.log" 2>&1 &
	qemu_pid=$!
	t_boot=$(date +%s.%N)
}

# A board that did not get there: what it said last, then stop it.
post_mortem() {
	echo "---- last lines of the system console ----"
	tail -n 40 "$work/serial.log" | tr -d '\r' || true
	echo "---- qemu ----"
	cat "$work/qemu.log" || true
	if [ -S "$work/probe.sock" ]; then
		echo "---- failed units, cacheboxd's journal ----"
		probe "systemctl --failed --no-pager; journalctl -b --no-pager -n 30 -u cacheboxd" || true
	fi
}

stop_board() {
	if [ -n "${qemu_pid:-}" ] && kill -0 "$qemu_pid" 2>/dev/null; then
		kill "$qemu_pid" 2>/dev/null || true
		wait "$qemu_pid" 2>/dev/null || true
	fi
	qemu_pid=
}
trap stop_board EXIT

# fatal_step DETAIL: a step the rest depends on failed.
fatal_step() {
	done_fail "$1"
	post_mortem
	stop_board
	echo "$me: FAILED ($fails)"
	exit 1
}

# Until the system is up: the kernel, the probe, multi-user.
wait_system_up() {
	step "kernel starts (system console)"
	wait_until "$limit" grep -q 'Linux version' "$work/serial.log" ||
		fatal_step "no kernel message on ttyAMA0"
	done_ok "$(grep -m1 -o 'Linux version [^ ]*' "$work/serial.log")"

	step "userspace: the probe answers on hvc1"
	wait_until "$limit" probe_there || fatal_step "no answer on hvc1"
	done_ok

	step "systemd reaches multi-user, no unit failed"
	wait_until "$limit" system_settled || fatal_step "still starting"
	state=$(probe "systemctl is-system-running" || true)
	if [ "$state" = running ] &&
	    [ "$(probe "systemctl is-active multi-user.target" || true)" = active ]; then
		done_ok "$state"
		printf '       %s\n' "$(probe "systemd-analyze time | head -n1" || true)"
	else
		done_fail "system is $state: $(probe "systemctl --failed --no-legend --plain | cut -d' ' -f1 | tr '\n' ' '" || true)"
	fi
}

# unit_props UNIT PROPERTY...: the values, in the order asked, one line.
unit_props() {
	local u=$1 p v out=""
	shift
	for p in "$@"; do
		v=$(probe "systemctl show -p $p --value $u" || true)
		out="$out${out:+ }$v"
	done
	printf '%s' "$out"
}

probe_there() { PROBE_WAIT=5 probe true; }

system_settled() {
	local s
	s=$(probe "systemctl is-system-running") || true
	[ "$s" != initializing ] && [ "$s" != starting ] && [ -n "$s" ]
}

# wait_off: the board powers itself off; checks QEMU's exit and the disk.
wait_off() {
	local rc=0 end=$((SECONDS + limit))
	while kill -0 "$qemu_pid" 2>/dev/null && [ $SECONDS -lt $end ]; do
		sleep 1
	done
	kill -0 "$qemu_pid" 2>/dev/null && fatal_step "still running after ${limit}s"
	wait "$qemu_pid" || rc=$?
	qemu_pid=
	local ok=1 said fs
	expect "QEMU exit status" "$rc" 0 || ok=0
	said=$(grep -a -o 'boot-test: cacheboxd stopped: .*' "$work/serial.log" | tr -d '\r' | tail -n1 || true)
	expect "cacheboxd stopped" "${said#boot-test: cacheboxd stopped: }" "success exited 0" || ok=0
	expect "kernel says" "$(grep -a -o 'reboot: Power down' "$work/serial.log" | tail -n1 || true)" \
	    "reboot: Power down" || ok=0
	fs=$(dumpe2fs -h "$disk?offset=$root_offset" 2>/dev/null |
	    sed -n 's/^Filesystem state: *//p')
	expect "root file system state" "$fs" clean || ok=0
	if dumpe2fs -h "$disk?offset=$root_offset" 2>/dev/null |
	    grep -q '^Filesystem features:.*needs_recovery'; then
		expect "root file system journal" "needs recovery" "clean" || ok=0
	fi
	if [ "$ok" -eq 1 ]; then done_ok; else done_fail "not a clean shutdown"; fi
}

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# ---- preparation -----------------------------------------------------------

# make_test_disk [HOOK]: extract the tarball into a scratch copy, add the
# test's parts (and whatever HOOK ROOTFS adds), and make the SD card image
# $disk from it; sets kernel, initrd, cmdline, boot_offset, root_offset,
# http_port and ssh_port.
make_test_disk() {
	local hook=${1:-}
	step "prepare the test copy and its SD card image"
	mkdir -p "$work"
	rootfs=$work/rootfs
	disk=$work/sdcard.img
	if grep -q " $rootfs/" /proc/mounts; then
		die "file systems are mounted under $rootfs; unmount them first"
	fi
	rm -rf --one-file-system "$rootfs" "$disk"
	mkdir "$rootfs"
	tar -C "$rootfs" --zstd --numeric-owner --xattrs --acls -xpf "$tarball"
	[ ! -e "$rootfs/var/lib/cachebox/box.key" ] || die "the image holds a box key"
	kver=$(ls "$rootfs/lib/modules" | sort -V | tail -n1)
	kernel=$work/vmlinuz-$kver
	initrd=$work/initrd.img-$kver
	cp "$rootfs/boot/vmlinuz-$kver" "$kernel" || die "no /boot/vmlinuz-$kver in the image"
	cp "$rootfs/boot/initrd.img-$kver" "$initrd" || die "no /boot/initrd.img-$kver in the image"
	# The Pi's command line, with the virt board's UART as the console.
	cmdline=$(tr -s ' \n' '  ' <"$rootfs/boot/firmware/cmdline.txt" |
	    sed -e 's/console=[^ ]*//g' -e 's/  */ /g' -e 's/^ //' -e 's/ $//')
	cmdline="$cmdline console=ttyAMA0 panic=-1"
	case $cmdline in *root=*) ;; *) die "cmdline.txt names no root= ($cmdline)" ;; esac
	add_test_parts "$rootfs"
	[ -z "$hook" ] || "$hook" "$rootfs"
	"$top/firmware/make-img.sh" "$rootfs" "$disk" 2048 256
	rm -rf --one-file-system "$rootfs"
	boot_offset=$(sfdisk -J "$disk" | python3 -c 'import json,sys; print(json.load(sys.stdin)["partitiontable"]["partitions"][0]["start"] * 512)')
	root_offset=$(sfdisk -J "$disk" | python3 -c 'import json,sys; print(json.load(sys.stdin)["partitiontable"]["partitions"][1]["start"] * 512)')
	http_port=$(free_port)
	ssh_port=$(free_port)
	done_ok "kernel $kver; $cmdline"
}
