#!/bin/bash
# mmdebstrap hooks of firmware/build-image.sh; $2 is the new root filesystem.
#   image-hook.sh setup ROOT            before any package is unpacked
#   image-hook.sh essential ROOT        after the essential packages
#   image-hook.sh customize ROOT DEB    after all packages are installed
# Programs inside ROOT run under chroot (arm64 through qemu's binfmt entry);
# nothing here touches the machine that builds the image.
set -euo pipefail

die() { echo "image-hook: $*" >&2; exit 1; }

# Labels the partitions carry; make-img.sh writes the same ones.
root_label=CBX_ROOT
boot_label=CBX_BOOT

# raspi-firmware's kernel hook refuses to run without its mount point.
setup() {
	mkdir -p "$1/boot/firmware"
}

# Under emulation one initramfs takes half an hour, and every package
# configured after the kernel would ask for it again: update-initramfs does
# nothing until customize() runs it once.
essential() {
	chroot "$1" dpkg-divert --quiet --local --rename --add /usr/sbin/update-initramfs
	printf '#!/bin/sh\n# image build: the initramfs is made once, at the end\nexit 0\n' \
	    >"$1/usr/sbin/update-initramfs"
	chmod 0755 "$1/usr/sbin/update-initramfs"
}

customize() {
	local root=$1 deb=$2 kver saved=0
	system_files "$root"
	first_boot_grow "$root"

	# cachebox through apt, so its dependencies come from the archive and
	# its postinst runs as on a board.
	# systemd-resolved has pointed /etc/resolv.conf at its own stub, which
	# does not run in a chroot; apt gets the build machine's for the while.
	cp "$deb" "$root/tmp/cachebox.deb"
	if [ -e "$root/etc/resolv.conf" ] || [ -L "$root/etc/resolv.conf" ]; then
		mv "$root/etc/resolv.conf" "$root/etc/resolv.conf.image"
		saved=1
	fi
	cp /etc/resolv.conf "$root/etc/resolv.conf"
	chroot "$root" env DEBIAN_FRONTEND=noninteractive \
	    apt-get install -y --no-install-recommends /tmp/cachebox.deb
	rm -f "$root/etc/resolv.conf" "$root/tmp/cachebox.deb"
	if [ "$saved" -eq 1 ]; then
		mv "$root/etc/resolv.conf.image" "$root/etc/resolv.conf"
	fi

	# raspi-firmware's kernel hook probes the machine it runs on unless
	# told; in a chroot that is the build machine. Told: the root by label,
	# the consoles (the UART of a Pi 3/4, then the screen, which gets the
	# emergency shell), and no CMA pool (none is needed without a display
	# driver, and the 64 MiB default it would pick keeps a Pi 4 from
	# booting). Then the hook writes /boot/firmware anew: kernel,
	# initramfs, cmdline.txt, config.txt with cachebox's lines from
	# /etc/default/raspi-firmware-custom.
	set_default "$root" ROOTPART "LABEL=$root_label"
	set_default "$root" CONSOLES '"ttyS1,115200 tty0"'
	set_default "$root" CMA 0
	rm -f "$root/usr/sbin/update-initramfs"
	chroot "$root" dpkg-divert --quiet --local --rename --remove /usr/sbin/update-initramfs
	chroot "$root" update-initramfs -c -k all
	for kver in $(ls "$root/lib/modules"); do
		chroot "$root" /etc/kernel/postinst.d/z50-raspi-firmware "$kver"
	done
	: >"$root/etc/machine-id"	# each box makes its own on first boot
}

# Sets KEY=VALUE ($2, $3) in ROOT's /etc/default/raspi-firmware, in place of
# the commented default when there is one.
set_default() {
	local file=$1/etc/default/raspi-firmware
	if grep -q "^#\?$2=" "$file"; then
		sed -i "0,/^#\?$2=.*/s||$2=$3|" "$file"
	else
		echo "$2=$3" >>"$file"
	fi
}

# Host name, mounts by label, DHCP on the wired port, and a root account
# without a password for the local console only (no SSH server is installed;
# physical access is the box's root of trust, as for its own console).
system_files() {
	local root=$1
	echo cachebox >"$root/etc/hostname"
	cat >"$root/etc/hosts" <<-EOF
	127.0.0.1	localhost
	127.0.1.1	cachebox
	::1		localhost ip6-localhost ip6-loopback
	EOF
	cat >"$root/etc/fstab" <<-EOF
	LABEL=$root_label	/		ext4	rw,noatime,errors=remount-ro	0 1
	LABEL=$boot_label	/boot/firmware	vfat	rw,noatime,umask=0022	0 2
	EOF
	cat >"$root/etc/systemd/network/20-wired.network" <<-EOF
	[Match]
	Type=ether

	[Network]
	DHCP=yes
	EOF
	chroot "$root" systemctl enable systemd-networkd.service
	chroot "$root" passwd -d root >/dev/null
}

# A card is larger than the image: on first boot, grow the root partition
# and its file system to the whole card, once.
first_boot_grow() {
	local root=$1
	cat >"$root/usr/local/sbin/cachebox-growroot" <<-'EOF'
	#!/bin/sh
	# Grows the root partition and its ext4 file system to the end of the card.
	set -eu
	part=$(findmnt -n -o SOURCE /)
	disk=/dev/$(lsblk -n -o PKNAME "$part")
	num=$(cat "/sys/class/block/$(basename "$part")/partition")
	growpart "$disk" "$num" || [ $? -eq 1 ]	# 1: nothing to grow
	resize2fs "$part"
	EOF
	chmod 0755 "$root/usr/local/sbin/cachebox-growroot"
	cat >"$root/etc/systemd/system/cachebox-growroot.service" <<-'EOF'
	[Unit]
	Description=Grow the root file system to the whole card (first boot)
	DefaultDependencies=no
	After=local-fs.target
	Before=cacheboxd.service
	ConditionPathExists=!/var/lib/cachebox-growroot.done

	[Service]
	Type=oneshot
	ExecStart=/usr/local/sbin/cachebox-growroot
	ExecStartPost=/usr/bin/touch /var/lib/cachebox-growroot.done

	[Install]
	WantedBy=multi-user.target
	EOF
	chroot "$root" systemctl enable cachebox-growroot.service
}

case "${1:-}" in
setup)		[ $# -eq 2 ] || die "usage: $0 setup ROOT"; setup "$2" ;;
essential)	[ $# -eq 2 ] || die "usage: $0 essential ROOT"; essential "$2" ;;
customize)	[ $# -eq 3 ] || die "usage: $0 customize ROOT DEB"; customize "$2" "$3" ;;
*)		die "usage: $0 setup|essential|customize ROOT [DEB]" ;;
esac
