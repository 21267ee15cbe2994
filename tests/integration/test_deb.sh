#!/usr/bin/env bash
# The Debian package of this machine's architecture, made by
# firmware/build-deb.sh from the build under test (no second build): its
# control fields, conffiles, maintainer scripts and file list, and the
# packaged programs run from an unpacked copy. Nothing is installed.
# Skips (77) without dpkg-deb/dpkg-shlibdeps, for a cross build, or on an
# architecture build-deb.sh does not package.
. "$(dirname "$0")/lib.sh"

for tool in dpkg-deb dpkg-shlibdeps readelf; do
	command -v "$tool" >/dev/null || { echo "skip: no $tool"; exit 77; }
done
[ -z "$EMU" ] || { echo "skip: a cross build is packaged by make deb-<arch>"; exit 77; }
arch=$(dpkg --print-architecture)
case "$arch" in amd64|arm64|armhf) ;; *) echo "skip: no package for $arch"; exit 77 ;; esac
board=$CACHEBOX_SRC/board/raspberrypi
[ -d "$board" ] || { echo "skip: no $board"; exit 77; }

version=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$CACHEBOX_BUILD/CMakeCache.txt")
deb=$(CACHEBOX_DEB_FROM=$CACHEBOX_BUILD CACHEBOX_DEB_WORK=$T/work CACHEBOX_DEB_OUT=$T/out \
    "$CACHEBOX_SRC/firmware/build-deb.sh" "$arch" 2>"$T/build.log") || {
	cat "$T/build.log"
	fail "build-deb.sh $arch"
	finish
}
check "package named cachebox_<version>_<arch>.deb" \
    test "$deb" = "$T/out/cachebox_${version}_$arch.deb"
check "version is the project's ($version)" test -n "$version"

# --- control fields -------------------------------------------------------
field() { dpkg-deb -f "$deb" "$1"; }
check "Package: cachebox" test "$(field Package)" = cachebox
check "Version: $version" test "$(field Version)" = "$version"
check "Architecture: $arch" test "$(field Architecture)" = "$arch"
check "Maintainer set" grep -q '<.*@.*>' <<<"$(field Maintainer)"
check "Section: net" test "$(field Section)" = net
check "Description has a synopsis and a body" test "$(field Description | wc -l)" -ge 3
depends=$(field Depends)
echo "# Depends: $depends"
for p in libc6 libmbedtls14 libmbedx509-1 libmbedcrypto7 libwslay1 libcjson1 \
    libsqlite3-0 libsecp256k1-1 libpq5 libmicrohttpd12 libc-ares2 adduser; do
	check "Depends on $p" grep -Eq "(^|, )$p( \\(|,|$)" <<<"$depends"
done
check "no -dev package in Depends" test -z "$(grep -o '[a-z0-9.+-]*-dev\b' <<<"$depends")"
check "every library dependency carries a minimal version" \
    test -z "$(tr ',' '\n' <<<"$depends" | grep '^ *lib' | grep -v '(>= ')"

# --- maintainer scripts and conffiles --------------------------------------
dpkg-deb -e "$deb" "$T/ctl"
check "conffiles: the configuration only" \
    test "$(cat "$T/ctl/conffiles")" = /etc/cachebox/cachebox.conf
units=$(cd "$board" && ls -- *.service)
for s in postinst prerm postrm; do
	check "$s is executable" test -x "$T/ctl/$s"
	check "$s parses" sh -n "$T/ctl/$s"
	check "$s has its unit names filled in" \
	    test "$(grep -c '@UNITS@' "$T/ctl/$s")" -eq 0
	for u in $units; do
		check "$s names $u" grep -q "$u" "$T/ctl/$s"
	done
done
check "postinst creates the cachebox system user" \
    grep -q 'adduser --system --group' "$T/ctl/postinst"
check "postinst makes /var/lib/cachebox 0700" grep -q 'chmod 0700 "$state"' "$T/ctl/postinst"
check "prerm stops the unit on remove" grep -q 'deb-systemd-invoke stop' "$T/ctl/prerm"

# --- file list -------------------------------------------------------------
# Every file, with its mode and owner: exactly what the package should hold.
want=$T/want.list
{
	echo "-rwxr-xr-x root/root ./usr/bin/cacheboxd"
	echo "-rwxr-xr-x root/root ./usr/bin/cacheboxctl"
	echo "-rw-r--r-- root/root ./etc/cachebox/cachebox.conf"
	for u in $units; do echo "-rw-r--r-- root/root ./lib/systemd/system/$u"; done
	for r in "$board"/*.rules; do
		echo "-rw-r--r-- root/root ./lib/udev/rules.d/$(basename "$r")"
	done
	echo "-rw-r--r-- root/root ./usr/share/doc/cachebox/README.md"
	echo "-rw-r--r-- root/root ./usr/share/doc/cachebox/FIRMWARE.md"
	echo "-rw-r--r-- root/root ./usr/share/doc/cachebox/changelog.gz"
	if [ "$arch" != amd64 ]; then
		echo "-rw-r--r-- root/root ./usr/lib/modules-load.d/cachebox.conf"
		echo "-rw-r--r-- root/root ./lib/modprobe.d/cachebox-g_serial.conf"
		echo "-rw-r--r-- root/root ./usr/share/cachebox/config.txt"
	fi
} | sort -k3 >"$want"
dpkg-deb -c "$deb" | awk '$1 !~ /^d/ { print $1, $2, $6 }' | sort -k3 >"$T/got.list"
if diff -u "$want" "$T/got.list"; then
	ok "file list, modes and owners"
else
	fail "file list, modes and owners"
fi
check "directories are root-owned 0755" \
    test -z "$(dpkg-deb -c "$deb" | awk '$1 ~ /^d/ && ($1 != "drwxr-xr-x" || $2 != "root/root")')"

# --- what is inside ----------------------------------------------------------
dpkg-deb -x "$deb" "$T/x"
for u in $units; do
	check "$u runs /usr/bin/cacheboxd" grep -q '^ExecStart=/usr/bin/cacheboxd ' "$T/x/lib/systemd/system/$u"
	check "$u has no /usr/local path" test -z "$(grep /usr/local "$T/x/lib/systemd/system/$u")"
done
# dpkg's rule: each file's size rounded up to KiB, one KiB per other entry.
kib=$(cd "$T/x" && find . -mindepth 1 \( -type f -printf '%s\n' -o -printf '1024\n' \) |
    awk '{ s += int(($1 + 1023) / 1024) } END { print s }')
check "Installed-Size is the unpacked size ($kib KiB)" test "$(field Installed-Size)" = "$kib"
check "changelog names this version" \
    grep -q "^cachebox ($version) " <(zcat "$T/x/usr/share/doc/cachebox/changelog.gz")
check "configuration is the board's" cmp -s "$board/cachebox.conf" "$T/x/etc/cachebox/cachebox.conf"
check "programs are stripped" test -z "$(readelf -S "$T/x/usr/bin/cacheboxd" | grep -F .debug_info)"
check "packaged cacheboxd --version" \
    test "$("$T/x/usr/bin/cacheboxd" --version)" = "cacheboxd $version"
check "packaged cacheboxd accepts the packaged configuration" \
    test "$("$T/x/usr/bin/cacheboxd" --check-config -c "$T/x/etc/cachebox/cachebox.conf" 2>&1)" = "configuration OK"
out=$("$T/x/usr/bin/cacheboxctl" nip19 decode \
    npub180cvv07tjdrrgpa0j7j7tmnyl2yr6yr7l8j4s3evf6u64th6gkwsyjh6w6)
check "packaged cacheboxctl decodes an npub" grep -qx \
    'pubkey 3bf0c63fcb93463407af97a5e5ee64fa883d107ef9e558472c4eb9aaaefa459d' <<<"$out"

finish
