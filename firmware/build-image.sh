#!/bin/bash
# Builds the root filesystem of a bootable cachebox box for 64-bit Raspberry
# Pi boards (3, 4, 400, Zero 2 W; Debian's kernel), from Debian packages only:
#   firmware/build-image.sh        -> out/cachebox-rootfs-arm64.tar.zst
#   firmware/build-image.sh --img  -> also out/cachebox-arm64.img (SD card image)
#
# The root filesystem is Debian (this machine's release) with systemd,
# networkd + resolved (DHCP on the wired port), timesyncd (a Pi has no
# real-time clock; TLS and Nostr timestamps need the time), Debian's
# linux-image-arm64 and raspi-firmware (boot firmware, device trees, kernel
# and initramfs copied to /boot/firmware, config.txt and cmdline.txt written
# from /etc/default/raspi-*), and cachebox's arm64 package installed with
# apt, so its postinst (user, state directory, enabled unit, dtoverlay=dwc2)
# runs as it would on a board. The root file system is found by label:
# CBX_ROOT (ext4), the boot partition is CBX_BOOT (FAT). First run: host
# name cachebox, announced as cachebox.local by avahi-daemon; root locked;
# SSH (keys only) only when the boot partition holds authorized_keys.
#
# The archive comes from this machine's apt sources, read by the functions
# of toolchain/make-sysroot.sh (so both read them the same way), with the
# non-free-firmware component added for the boot firmware. Nothing is run on
# this machine's own system: packages are configured inside the new root
# under qemu-aarch64-static, for which a binfmt_misc entry is registered
# when missing (root only). It downloads about 100 MB: keep it out of CI.
#
# Environment:
#   CACHEBOX_IMAGE_DEB   the cachebox .deb to put in (default: build it
#                        with firmware/build-deb.sh arm64)
#   CACHEBOX_IMAGE_OUT   output directory (default <top>/out)
#   CACHEBOX_IMAGE_WORK  scratch directory (default <top>/build-image-arm64)
#   CACHEBOX_IMAGE_MB    size of the .img in MiB (default 2048; the card can
#                        be larger, the root partition grows on first boot)
#   CACHEBOX_APT_ETC     apt configuration directory (default /etc/apt)
#   CACHEBOX_IMAGE_REUSE=1  keep the root filesystem a previous run finished
#                        in the scratch directory (checks, tarball, image only)
set -euo pipefail

die() { echo "build-image: $*" >&2; exit 1; }
say() { echo "build-image: $*" >&2; }

want_img=0
case "${1:-}" in
"")	;;
--img)	want_img=1 ;;
*)	die "usage: $0 [--img]" ;;
esac

arch=arm64
top=$(cd "$(dirname "$0")/.." && pwd)
outdir=${CACHEBOX_IMAGE_OUT:-$top/out}
work=${CACHEBOX_IMAGE_WORK:-$top/build-image-$arch}
apt_etc=${CACHEBOX_APT_ETC:-/etc/apt}
img_mb=${CACHEBOX_IMAGE_MB:-2048}
boot_mb=256
tarball=$outdir/cachebox-rootfs-$arch.tar.zst
image=$outdir/cachebox-$arch.img

[ "$(id -u)" -eq 0 ] || die "run as root (mmdebstrap root mode, binfmt_misc)"
for tool in mmdebstrap zstd qemu-aarch64-static arch-test; do
	command -v "$tool" >/dev/null ||
		die "$tool is missing (apt-get install mmdebstrap zstd qemu-user-static arch-test)"
done
codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
[ -n "$codename" ] || die "no VERSION_CODENAME in /etc/os-release"

# The apt source readers of make-sysroot.sh, taken as they are: its
# functions, not its main program.
sysroot_script=$top/toolchain/make-sysroot.sh
# shellcheck source=/dev/null
source <(sed -n -e '/^list_sources() {$/,/^}$/p' \
    -e '/^is_debian_archive() {$/,/^}$/p' \
    -e '/^debian_entries() {$/,/^}$/p' "$sysroot_script")
for f in list_sources is_debian_archive debian_entries; do
	declare -F "$f" >/dev/null || die "$sysroot_script no longer defines $f()"
done

# Registers qemu-aarch64 with binfmt_misc unless arm64 programs already run,
# so that maintainer scripts inside the new root can run. The entry is the
# one qemu-user-static ships ("F": the interpreter is opened now, so it works
# inside the chroot).
ensure_binfmt() {
	local bm=/proc/sys/fs/binfmt_misc conf=/usr/lib/binfmt.d/qemu-aarch64.conf
	[ -e "$bm/qemu-aarch64" ] && return 0
	[ -f "$conf" ] || die "no $conf (package qemu-user-static)"
	if [ ! -e "$bm/register" ]; then
		mount -t binfmt_misc binfmt_misc "$bm" ||
			die "cannot mount binfmt_misc; arm64 maintainer scripts cannot run here"
	fi
	say "registering qemu-aarch64 with binfmt_misc"
	grep '^:' "$conf" >"$bm/register" || die "cannot register qemu-aarch64"
}

# Prints mmdebstrap's --aptopt arguments for the host settings that decide
# whether the archive can be reached (a proxy, an expired Release on purpose).
apt_options() {
	local opt val
	for opt in Acquire::http::Proxy Acquire::https::Proxy \
	    Acquire::Check-Valid-Until Acquire::Check-Date; do
		val=$(apt-config dump "$opt" 2>/dev/null |
		    sed -n "s/^$opt \"\\(.*\\)\";\$/\\1/p" | head -n1)
		[ -z "$val" ] || echo "--aptopt=$opt \"$val\";"
	done
}

if [ -n "${CACHEBOX_IMAGE_DEB:-}" ]; then
	deb=$CACHEBOX_IMAGE_DEB
else
	deb=$("$top/firmware/build-deb.sh" arm64)
fi
[ -f "$deb" ] || die "no package $deb"
[ "$(dpkg-deb -f "$deb" Architecture)" = "$arch" ] || die "$deb is not an $arch package"

mapfile -t entries < <(debian_entries | sed 's/ main$/ main non-free-firmware/')
[ ${#entries[@]} -gt 0 ] ||
	die "no enabled Debian '$codename' main entry in $apt_etc/sources.list{,.d}"
mapfile -t aptopts < <(apt_options)
ensure_binfmt

packages=(
	systemd-sysv udev kmod dbus systemd-timesyncd systemd-resolved
	iproute2 iputils-ping ca-certificates less nano procps
	linux-image-arm64 raspi-firmware firmware-brcm80211 wireless-regdb
	initramfs-tools zstd e2fsprogs dosfstools cloud-guest-utils
	avahi-daemon openssh-server sudo
)

# Runs mmdebstrap into $rootfs and marks it finished.
make_rootfs() {
	rm -f "$done_stamp"
	# A run killed halfway can leave /proc, /sys or /dev mounted in the old
	# root; deleting through those would reach this machine's own.
	if grep -q " $rootfs/" /proc/mounts; then
		die "file systems are still mounted under $rootfs; unmount them first"
	fi
	rm -rf --one-file-system "$rootfs"
	cp "$deb" "$work/cachebox.deb"
	log=$work/mmdebstrap.log
	say "building the $arch root filesystem in $rootfs (log: $log) from:"
	printf '    %s\n' "${entries[@]}" >&2
	# Hooks (image-hook.sh), in order: before any package, the boot partition's
	# mount point (raspi-firmware refuses to install without it); after the
	# essential packages, update-initramfs put aside; after all packages, the
	# system files, cachebox with apt from the local .deb, the boot settings,
	# and the one initramfs.
	if ! mmdebstrap --mode=root --variant=minbase --architectures="$arch" \
	    --include="$(IFS=,; echo "${packages[*]}")" \
	    "${aptopts[@]}" \
	    --setup-hook="\"$top/firmware/image-hook.sh\" setup \"\$1\"" \
	    --essential-hook="\"$top/firmware/image-hook.sh\" essential \"\$1\"" \
	    --customize-hook="\"$top/firmware/image-hook.sh\" customize \"\$1\" \"$work/cachebox.deb\"" \
	    "$codename" "$rootfs" "${entries[@]}" >"$log" 2>&1; then
		grep -E '^(E|W): |error' "$log" | tail -n 20 >&2
		die "mmdebstrap failed (log: $log)"
	fi
	touch "$done_stamp"
}

rootfs=$work/rootfs
done_stamp=$work/rootfs.done
mkdir -p "$work" "$outdir"
if [ "${CACHEBOX_IMAGE_REUSE:-0}" = 1 ] && [ -f "$done_stamp" ]; then
	say "reusing the root filesystem in $rootfs"
else
	make_rootfs
fi

# The root filesystem must hold what makes it a cachebox. (Links point
# into the new root by absolute paths, so they are not followed here.)
for f in usr/bin/cacheboxd usr/bin/cacheboxctl etc/cachebox/cachebox.conf \
    lib/systemd/system/cacheboxd.service \
    etc/systemd/system/multi-user.target.wants/cacheboxd.service \
    boot/firmware/config.txt boot/firmware/cmdline.txt; do
	[ -e "$rootfs/$f" ] || [ -L "$rootfs/$f" ] || die "the root filesystem lacks /$f"
done
ls "$rootfs"/boot/firmware/vmlinuz-* >/dev/null 2>&1 ||
	die "no kernel in /boot/firmware"
grep -q '^dtoverlay=dwc2' "$rootfs/boot/firmware/config.txt" ||
	die "config.txt lacks dtoverlay=dwc2"
# The first run: cachebox.local, root locked, SSH only with the owner's key
# and with host keys of the box's own.
for f in etc/systemd/system/multi-user.target.wants/avahi-daemon.service \
    etc/systemd/system/multi-user.target.wants/ssh.service \
    etc/systemd/system/ssh.service.d/cachebox.conf \
    etc/systemd/system/cachebox-ssh-keys.service \
    etc/ssh/sshd_config.d/cachebox.conf usr/local/sbin/cachebox-ssh-keys; do
	[ -e "$rootfs/$f" ] || [ -L "$rootfs/$f" ] || die "the root filesystem lacks /$f"
done
[ "$(cat "$rootfs/etc/hostname")" = cachebox ] || die "the host name is not cachebox"
grep -q '^root:[!*]' "$rootfs/etc/shadow" || die "root is not locked"
if ls "$rootfs"/etc/ssh/ssh_host_* >/dev/null 2>&1; then
	die "the image holds SSH host keys; each box must make its own"
fi

say "writing $tarball"
tar --numeric-owner --xattrs --acls -C "$rootfs" -c . |
    zstd -q -T0 -12 -f -o "$tarball"
say "$tarball ($(du -h "$tarball" | cut -f1))"

if [ "$want_img" -eq 1 ]; then
	"$top/firmware/make-img.sh" "$rootfs" "$image" "$img_mb" "$boot_mb"
	say "$image ($(du -h --apparent-size "$image" | cut -f1), $(du -h "$image" | cut -f1) on disk)"
fi
