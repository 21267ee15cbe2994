#!/bin/bash
# Builds the cachebox Debian package for one architecture:
#   firmware/build-deb.sh ARCH        ARCH: amd64 | arm64 | armhf
# -> out/cachebox_<version>_<ARCH>.deb
#
# The build is a Release build in build-deb-ARCH/ (ignored by git): native when
# ARCH is this machine's architecture, otherwise with toolchain/<cpu>.cmake
# against the sysroot of toolchain/make-sysroot.sh. The programs are
# installed with `cmake --install --prefix /usr` into a staging tree, the
# board's files are added (systemd unit, udev rule, default configuration as a
# conffile, USB-gadget console files), the maintainer scripts of firmware/deb/
# are copied in, and Depends is computed by dpkg-shlibdeps.
#
# This script never installs anything on this machine and never writes inside
# the source tree other than build-deb-ARCH/ and out/.
#
# Environment:
#   CACHEBOX_BOARD        board directory under board/ (default raspberrypi)
#   CACHEBOX_BOARD_DIR    the board's files from elsewhere (overrides the above)
#   CACHEBOX_DEB_FROM     an existing, built build directory of this machine's
#                         architecture to package as it is instead of building
#                         (the tests use it to save a build); native only
#   CACHEBOX_DEB_OUT      output directory (default <top>/out)
#   CACHEBOX_DEB_WORK     build directory (default <top>/build-deb-ARCH)
#   CACHEBOX_SYSROOTS     where the cross sysroots live (as in the Makefile)
#   SOURCE_DATE_EPOCH     timestamp of the packaged files (default: last commit)
set -euo pipefail

die() { echo "build-deb: $*" >&2; exit 1; }
say() { echo "build-deb: $*" >&2; }

[ $# -eq 1 ] || die "usage: $0 amd64|arm64|armhf"
arch=$1
top=$(cd "$(dirname "$0")/.." && pwd)
board=${CACHEBOX_BOARD:-raspberrypi}
boarddir=${CACHEBOX_BOARD_DIR:-$top/board/$board}
host_arch=$(dpkg --print-architecture)
sysroots=${CACHEBOX_SYSROOTS:-/var/cache/cachebox/sysroots}

case "$arch" in
amd64)	cpu=x86_64;  triplet=x86_64-linux-gnu ;;
arm64)	cpu=aarch64; triplet=aarch64-linux-gnu ;;
armhf)	cpu=armhf;   triplet=arm-linux-gnueabihf ;;
*)	die "unknown architecture '$arch' (use amd64, arm64 or armhf)" ;;
esac
cross=0
if [ "$arch" != "$host_arch" ]; then
	cross=1
	[ -f "$top/toolchain/$cpu.cmake" ] ||
		die "no toolchain file for $arch on a $host_arch machine"
	sysroot=$sysroots/$arch
fi
for tool in cmake dpkg-deb dpkg-shlibdeps readelf; do
	command -v "$tool" >/dev/null || die "$tool is missing"
done

maintainer="cachebox maintainers <maintainers@cachebox.invalid>"
work=${CACHEBOX_DEB_WORK:-$top/build-deb-$arch}
outdir=${CACHEBOX_DEB_OUT:-$top/out}
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git -C "$top" log -1 --format=%ct 2>/dev/null || date +%s)}

# Configures and builds, or takes the build directory given in CACHEBOX_DEB_FROM.
# Prints the build directory to install from.
build_tree() {
	local opts=(-G Ninja -DCMAKE_BUILD_TYPE=Release -DCACHEBOX_TESTS=OFF)
	if [ -n "${CACHEBOX_DEB_FROM:-}" ]; then
		[ "$cross" -eq 0 ] || die "CACHEBOX_DEB_FROM is for native packages only"
		[ -f "$CACHEBOX_DEB_FROM/CMakeCache.txt" ] ||
			die "$CACHEBOX_DEB_FROM is not a CMake build directory"
		# Packaged as built: this directory may be in use by running
		# tests, so it is never rebuilt from here.
		[ -x "$CACHEBOX_DEB_FROM/src/cacheboxd" ] &&
		    [ -x "$CACHEBOX_DEB_FROM/src/cacheboxctl" ] ||
			die "$CACHEBOX_DEB_FROM holds no built cacheboxd and cacheboxctl"
		echo "$CACHEBOX_DEB_FROM"
		return
	fi
	if [ "$cross" -eq 1 ]; then
		"$top/toolchain/make-sysroot.sh" "$arch" "$sysroot" >&2
		opts+=(-DCMAKE_TOOLCHAIN_FILE="$top/toolchain/$cpu.cmake"
		    -DCACHEBOX_SYSROOT="$sysroot")
	fi
	cmake -S "$top" -B "$work/build" "${opts[@]}" >&2
	cmake --build "$work/build" >&2
	echo "$work/build"
}

# Copies the board's files into the staging tree $1 and prints the names of
# its systemd units. The board's files are written for a hand install under
# /usr/local; the package puts the programs in /usr. The USB-gadget files
# (modules, modprobe options, the config.txt lines the postinst adds) go only
# into the ARM packages: on a PC there is no dwc2 to load. Missing board
# files are an error: a package without its unit or configuration is not one.
stage_board() {
	local root=$1 f name units=()
	[ -d "$boarddir" ] || die "no board directory $boarddir"
	for f in "$boarddir"/*.service; do
		[ -f "$f" ] || continue
		name=$(basename "$f")
		install -d -m 0755 "$root/lib/systemd/system"
		sed -e 's#/usr/local/#/usr/#g' \
		    -e 's#^\# /etc/systemd/system/#\# /lib/systemd/system/#' \
		    "$f" >"$root/lib/systemd/system/$name"
		chmod 0644 "$root/lib/systemd/system/$name"
		units+=("$name")
	done
	[ ${#units[@]} -gt 0 ] || die "no systemd unit (*.service) in $boarddir"
	for f in "$boarddir"/*.rules; do
		[ -f "$f" ] || continue
		install -D -m 0644 "$f" "$root/lib/udev/rules.d/$(basename "$f")"
	done
	[ -f "$boarddir/cachebox.conf" ] || die "no cachebox.conf in $boarddir"
	install -D -m 0644 "$boarddir/cachebox.conf" "$root/etc/cachebox/cachebox.conf"
	case "$arch" in
	arm64|armhf)
		stage_optional modules-load.conf usr/lib/modules-load.d/cachebox.conf
		stage_optional g_serial.conf lib/modprobe.d/cachebox-g_serial.conf
		stage_optional config.txt usr/share/cachebox/config.txt
		;;
	esac
	echo "${units[*]}"
}

# Installs the board file $1, when the board has it, as $2 in the staging tree.
stage_optional() {
	if [ -f "$boarddir/$1" ]; then
		install -D -m 0644 "$boarddir/$1" "$root/$2"
	fi
}

# Prints the Depends of the ELF files given, relative to the staging tree $1.
# A cross sysroot is unpacked without a dpkg database, so dpkg-shlibdeps is
# handed a scratch one: for each library the programs need, the package that
# ships it on this machine (same Debian release, same package name on every
# architecture), its symbols and shlibs files, and its file list moved into
# the sysroot. Each such package must also be present in the sysroot.
shlib_depends() {
	local root=$1 scratch files=()
	shift
	files=("${@/#/$root/}")
	scratch=$(mktemp -d)
	mkdir -p "$scratch/debian" "$scratch/pkg"
	printf 'Source: cachebox\n\nPackage: cachebox\nArchitecture: any\n' \
	    >"$scratch/debian/control"
	local args=(-O)
	if [ "$cross" -eq 1 ]; then
		fake_admindir "$scratch/admin" "${files[@]}"
		args+=(--admindir="$scratch/admin"
		    -l"$sysroot/lib/$triplet" -l"$sysroot/usr/lib/$triplet")
	fi
	# The C library's symbols file here lists this machine's symbol
	# versions; the target's baseline ones (GLIBC_2.17 on arm64, GLIBC_2.4
	# on armhf) are missing from it. They are the oldest version there is,
	# so the minimal version computed from the others is the right one, and
	# the warnings about them are dropped.
	(cd "$scratch" && DEB_HOST_ARCH=$arch dpkg-shlibdeps "${args[@]}" \
	    "${files[@]}" 2> >(grep -v -e 'unresolvable reference to symbol [^ ]*@GLIBC_' \
	    -e 'other similar warnings have been skipped' >&2)) |
	    sed -n 's/^shlibs:Depends=//p'
	rm -rf "$scratch"
}

# "libpq5 (>= V)", V the newest of the minimal versions libpq5's symbols
# file gives the functions src/uplink/pg.c loads (its PQ_FUNCS list).
libpq_depends() {
	local syms f v best=0
	syms=$(ls /var/lib/dpkg/info/libpq5:*.symbols 2>/dev/null | sed -n 1p)
	[ -n "$syms" ] || die "libpq5's symbols file not found (apt install libpq5)"
	for f in $(sed -n '/^#define PQ_FUNCS/,/^#define PQ_SLOT/p' \
	    "$top/src/uplink/pg.c" | sed -n 's/^[[:space:]]*X(\(PQ[A-Za-z]*\)).*/\1/p'); do
		v=$(awk -v s="$f@Base" '$1 == s { print $2 }' "$syms")
		[ -n "$v" ] || die "libpq5 has no $f"
		if dpkg --compare-versions "$v" gt "$best"; then best=$v; fi
	done
	echo "libpq5 (>= $best)"
}

# Writes into $1 a dpkg database that places, for the ELF files $2..., the
# packages of their needed libraries in the sysroot (see shlib_depends).
fake_admindir() {
	local adm=$1 soname path pkg info ext
	shift
	mkdir -p "$adm/info" "$adm/updates"
	echo 1 >"$adm/info/format"	# info files named package:arch
	printf '%s\n%s\n' "$host_arch" "$arch" >"$adm/arch"
	: >"$adm/status"
	for soname in $(needed_sonames "$@"); do
		# On a merged-/usr machine both paths exist; dpkg knows one.
		pkg=""
		for path in /lib/$host_triplet/$soname /usr/lib/$host_triplet/$soname; do
			pkg=$(dpkg-query -S "$path" 2>/dev/null | sed -n '1s/[:,].*//p')
			[ -z "$pkg" ] || break
		done
		[ -n "$pkg" ] || die "$soname: no package of this machine ships it, cannot name its package"
		[ -d "$sysroot/usr/share/doc/$pkg" ] ||
			die "$soname: package $pkg is not in the $arch sysroot $sysroot"
		[ -f "$adm/info/$pkg:$arch.list" ] && continue
		dpkg-query -W -f='Package: ${Package}\nStatus: install ok installed\nPriority: optional\nSection: libs\nMaintainer: ${Maintainer}\n' "$pkg:$host_arch" >>"$adm/status"
		printf 'Architecture: %s\nMulti-Arch: same\nVersion: %s\nDescription: %s\n\n' \
		    "$arch" "$(dpkg-query -W -f='${Version}' "$pkg:$host_arch")" "$pkg" >>"$adm/status"
		info=$(dpkg-query --control-path "$pkg:$host_arch" list 2>/dev/null || true)
		info=${info%.list}
		[ -n "$info" ] || info=/var/lib/dpkg/info/$pkg:$host_arch
		[ -f "$info.list" ] || info=/var/lib/dpkg/info/$pkg
		sed -e "s#/$host_triplet\(/\|\$\)#/$triplet\1#" -e "s#^/#$sysroot/#" \
		    "$info.list" >"$adm/info/$pkg:$arch.list"
		for ext in symbols shlibs; do
			if [ -f "$info.$ext" ]; then
				cp "$info.$ext" "$adm/info/$pkg:$arch.$ext"
			fi
		done
	done
}

# Prints the sonames the ELF files given need, one a line, each once.
needed_sonames() {
	readelf -d "$@" | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p' | sort -u
}

# Writes the package's changelog (gzip, as Debian keeps them): one entry for
# this version, naming the commit it was built from.
write_changelog() {
	local commit
	commit=$(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo unknown)
	{
		printf 'cachebox (%s) unstable; urgency=medium\n\n' "$version"
		printf '  * Built from commit %s.\n\n' "$commit"
		printf ' -- %s  %s\n' "$maintainer" \
		    "$(date -u -R -d "@$SOURCE_DATE_EPOCH")"
	} | gzip -9n >"$1"
	chmod 0644 "$1"
}

host_triplet=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null ||
    gcc -print-multiarch)

builddir=$(build_tree)
version=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$builddir/CMakeCache.txt")
[ -n "$version" ] || die "no project version in $builddir/CMakeCache.txt"

root=$work/root
rm -rf "$root"
mkdir -p "$root/DEBIAN"
DESTDIR=$root cmake --install "$builddir" --prefix /usr --strip >&2
for f in usr/bin/cacheboxd usr/bin/cacheboxctl; do
	[ -x "$root/$f" ] || die "the install step left no $f"
done
units=$(stage_board "$root")
install -d -m 0755 "$root/usr/share/doc/cachebox"
install -m 0644 "$top/README.md" "$root/usr/share/doc/cachebox/README.md"
install -m 0644 "$top/firmware/README.md" "$root/usr/share/doc/cachebox/FIRMWARE.md"
write_changelog "$root/usr/share/doc/cachebox/changelog.gz"
for f in postinst prerm postrm; do
	sed "s/@UNITS@/$units/g" "$top/firmware/deb/$f" >"$root/DEBIAN/$f"
	chmod 0755 "$root/DEBIAN/$f"
done
(cd "$root" && find etc -type f | sed 's|^|/|' | sort) >"$root/DEBIAN/conffiles"

depends=$(shlib_depends "$root" usr/bin/cacheboxd usr/bin/cacheboxctl)
[ -n "$depends" ] || die "dpkg-shlibdeps found no dependencies"
# libpq is loaded when a Postgres uplink starts (src/uplink/pg.c), so no
# NEEDED entry names it: a build with the driver depends on it by hand.
if grep -aq 'libpq\.so\.5' "$root/usr/bin/cacheboxd"; then
	depends="$depends, $(libpq_depends)"
fi
# Installed-Size as dpkg-gencontrol counts it: each file's size rounded up
# to KiB, one KiB for every directory or link.
size=$(cd "$root" && find . -mindepth 1 -path ./DEBIAN -prune -o \
    \( -type f -printf '%s\n' -o -printf '1024\n' \) |
    awk '{ s += int(($1 + 1023) / 1024) } END { print s }')
cat >"$root/DEBIAN/control" <<EOF
Package: cachebox
Version: $version
Architecture: $arch
Maintainer: $maintainer
Installed-Size: $size
Depends: $depends, adduser
Section: net
Priority: optional
Description: home Nostr cache for Raspberry-Pi-class boards
 cacheboxd follows the follow lists of the keys you give it, pulls the
 complete history and the live stream of every followed author from
 upstream relays into a local SQLite store, and forwards what it caught
 to your own relay (Nostr over WebSocket, or rows into PostgreSQL).
 It shows its progress on a local web page and is configured over a
 USB-serial console. cacheboxctl talks to the running daemon.
EOF

# Files belong to root in the package whoever builds it; modes are set here.
find "$root" -type d -exec chmod 0755 {} +
mkdir -p "$outdir"
deb=$outdir/cachebox_${version}_$arch.deb
dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >&2
say "$deb ($(du -h "$deb" | cut -f1))"
echo "$deb"
