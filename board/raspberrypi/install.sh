#!/bin/sh
# Install cachebox's board files on a running Raspberry Pi OS (as root),
# after `cmake --install build --prefix /usr/local` put the binaries in
# /usr/local/bin. Safe to run again; it keeps an existing cachebox.conf.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
boot=/boot/firmware
[ -d "$boot" ] || boot=/boot

id cachebox >/dev/null 2>&1 ||
	useradd --system --home-dir /var/lib/cachebox --shell /usr/sbin/nologin cachebox

grep -q '^dtoverlay=dwc2' "$boot/config.txt" || cat "$here/config.txt" >>"$boot/config.txt"
install -m 0644 "$here/modules-load.conf" /etc/modules-load.d/cachebox.conf
install -m 0644 "$here/g_serial.conf" /etc/modprobe.d/cachebox-g_serial.conf
install -m 0644 "$here/99-cachebox-console.rules" /etc/udev/rules.d/99-cachebox-console.rules
install -d -m 0755 /etc/cachebox
[ -e /etc/cachebox/cachebox.conf ] ||
	install -m 0644 "$here/cachebox.conf" /etc/cachebox/cachebox.conf
install -m 0644 "$here/cacheboxd.service" /etc/systemd/system/cacheboxd.service
# a login getty on the gadget would fight cacheboxd for the line
systemctl mask serial-getty@ttyGS0.service >/dev/null 2>&1 || true
systemctl daemon-reload
udevadm control --reload-rules || true
/usr/local/bin/cacheboxd --check-config -c /etc/cachebox/cachebox.conf
systemctl enable cacheboxd.service
echo "installed; reboot once so dwc2 and g_serial load, then: systemctl status cacheboxd"
