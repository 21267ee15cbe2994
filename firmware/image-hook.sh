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
	first_run_mdns "$root"
	first_run_ssh "$root"
	first_run_issue "$root"

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

# Host name, mounts by label, DHCP on the wired port, and root locked: no
# password, so no login as root anywhere. The box's own console (USB) needs
# no login; a shell is reached over SSH with the owner's key only
# (first_run_ssh).
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
	LABEL=$boot_label	/boot/firmware	vfat	ro,noatime,umask=0022	0 2
	EOF
	# The boot partition is read-only in use: FAT has no journal, and a
	# power cut while it is mounted read-write leaves it dirty. dpkg, whose
	# kernel and firmware hooks write it, gets it read-write for its run.
	cat >"$root/etc/apt/apt.conf.d/80cachebox-boot-rw" <<-'EOF'
	// cachebox: /boot/firmware is mounted read-only; dpkg's hooks write it.
	DPkg::Pre-Invoke { "mount -o remount,rw /boot/firmware 2>/dev/null || true"; };
	DPkg::Post-Invoke { "mount -o remount,ro /boot/firmware 2>/dev/null || true"; };
	EOF
	cat >"$root/etc/systemd/network/20-wired.network" <<-EOF
	[Match]
	Type=ether

	[Network]
	DHCP=yes
	EOF
	chroot "$root" systemctl enable systemd-networkd.service
	chroot "$root" usermod -p '!' root
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

# cachebox.local: avahi-daemon announces the host name over mDNS (its
# package enables it). systemd-resolved would answer mDNS on the same port;
# it is told not to, so one stack answers.
first_run_mdns() {
	local root=$1
	mkdir -p "$root/etc/systemd/resolved.conf.d"
	cat >"$root/etc/systemd/resolved.conf.d/cachebox.conf" <<-'EOF'
	# avahi-daemon answers mDNS (cachebox.local); resolved stays out of it.
	[Resolve]
	MulticastDNS=no
	EOF
	# (The link points into the new root by an absolute path: -L, not -e.)
	[ -L "$root/etc/systemd/system/multi-user.target.wants/avahi-daemon.service" ] ||
		die "avahi-daemon is not enabled"
}

# The first-run setup code on the login screens (HDMI and serial). While
# no admin token is set, cacheboxd keeps the code in its state directory
# (setup-code.issue, 0600: root and cachebox read it) and empties the file
# once a token is set; agetty shows the files of /etc/issue.d above its
# prompt, and a path unit makes it redraw a prompt already on screen when
# the file changes.
first_run_issue() {
	local root=$1
	mkdir -p "$root/etc/issue.d"
	ln -sf /var/lib/cachebox/setup-code.issue \
	    "$root/etc/issue.d/cachebox-setup.issue"
	cat >"$root/etc/systemd/system/cachebox-issue.path" <<-'EOF'
	[Unit]
	Description=Watch cachebox's setup code for the login screen

	[Path]
	PathChanged=/var/lib/cachebox/setup-code.issue

	[Install]
	WantedBy=multi-user.target
	EOF
	cat >"$root/etc/systemd/system/cachebox-issue.service" <<-'EOF'
	[Unit]
	Description=Show cachebox's new setup code on the login prompts

	[Service]
	Type=oneshot
	ExecStart=/sbin/agetty --reload
	EOF
	chroot "$root" systemctl enable cachebox-issue.path >/dev/null
	[ -e "$root/etc/issue" ] || die "/etc/issue is missing: agetty would skip /etc/issue.d"
}

# SSH stays off unless the owner puts an authorized_keys file on the boot
# partition (/boot/firmware, the FAT partition any computer can write; the
# Raspberry Pi OS way of turning SSH on). At each boot where the file is
# there, cachebox-ssh-keys installs it for the user "admin" (made on first
# use, no password, sudo without one: the key is the credential) and makes
# the host keys this box has never had; then sshd starts, keys only. The
# host keys openssh-server made while the image was built are deleted: two
# boxes must never share them.
first_run_ssh() {
	local root=$1
	rm -f "$root"/etc/ssh/ssh_host_*
	chroot "$root" systemctl disable ssh.socket >/dev/null 2>&1 || true
	cat >"$root/etc/ssh/sshd_config.d/cachebox.conf" <<-'EOF'
	# cachebox: keys only, installed from the boot partition's authorized_keys.
	PasswordAuthentication no
	KbdInteractiveAuthentication no
	PermitRootLogin no
	AuthenticationMethods publickey
	EOF
	cat >"$root/usr/local/sbin/cachebox-ssh-keys" <<-'EOF'
	#!/bin/sh
	# Installs /boot/firmware/authorized_keys for the user admin and makes
	# the SSH host keys if this box has none yet. A file that is not a list
	# of public keys is refused, and SSH stays off.
	set -eu
	src=/boot/firmware/authorized_keys
	user=admin
	keys=$(mktemp)
	trap 'rm -f "$keys"' EXIT
	tr -d '\r' <"$src" >"$keys"	# written on Windows, perhaps
	if ! ssh-keygen -l -f "$keys" >/dev/null 2>&1; then
		echo "cachebox-ssh-keys: $src holds no public key; SSH stays off" >&2
		exit 1
	fi
	if ! id "$user" >/dev/null 2>&1; then
		adduser --quiet --disabled-password --gecos "cachebox owner" "$user"
		adduser --quiet "$user" sudo
	fi
	home=$(getent passwd "$user" | cut -d: -f6)
	install -d -m 0700 -o "$user" -g "$user" "$home/.ssh"
	install -m 0600 -o "$user" -g "$user" "$keys" "$home/.ssh/authorized_keys"
	ssh-keygen -A
	echo "cachebox-ssh-keys: $(grep -c . "$keys") key(s) from $src installed for $user"
	EOF
	chmod 0755 "$root/usr/local/sbin/cachebox-ssh-keys"
	cat >"$root/etc/systemd/system/cachebox-ssh-keys.service" <<-'EOF'
	[Unit]
	Description=Install the owner's SSH keys from the boot partition
	Documentation=file:/usr/share/doc/cachebox/FIRMWARE.md
	RequiresMountsFor=/boot/firmware
	ConditionPathExists=/boot/firmware/authorized_keys
	Before=ssh.service

	[Service]
	Type=oneshot
	ExecStart=/usr/local/sbin/cachebox-ssh-keys
	EOF
	mkdir -p "$root/etc/systemd/system/ssh.service.d"
	cat >"$root/etc/systemd/system/ssh.service.d/cachebox.conf" <<-'EOF'
	# cachebox: sshd runs only while the boot partition holds authorized_keys.
	[Unit]
	RequiresMountsFor=/boot/firmware
	ConditionPathExists=/boot/firmware/authorized_keys
	Requires=cachebox-ssh-keys.service
	After=cachebox-ssh-keys.service
	EOF
	printf '%s\n' '# cachebox: the owner, who logs in with a key only' \
	    'admin ALL=(ALL:ALL) NOPASSWD: ALL' >"$root/etc/sudoers.d/cachebox-admin"
	chmod 0440 "$root/etc/sudoers.d/cachebox-admin"
	chroot "$root" visudo -c -q -f /etc/sudoers.d/cachebox-admin ||
		die "sudoers file refused"
	chroot "$root" systemctl enable ssh.service >/dev/null
}

case "${1:-}" in
setup)		[ $# -eq 2 ] || die "usage: $0 setup ROOT"; setup "$2" ;;
essential)	[ $# -eq 2 ] || die "usage: $0 essential ROOT"; essential "$2" ;;
customize)	[ $# -eq 3 ] || die "usage: $0 customize ROOT DEB"; customize "$2" "$3" ;;
*)		die "usage: $0 setup|essential|customize ROOT [DEB]" ;;
esac
