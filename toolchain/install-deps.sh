#!/bin/sh
# Install what building and testing cachebox needs on Debian 12, as root.
# Idempotent: packages already present are not touched, and apt is not
# called at all when nothing is missing.
#   toolchain/install-deps.sh          build dependencies only
#   toolchain/install-deps.sh test     plus test dependencies (node peers, postgres,
#                                      clang and its libFuzzer runtime, chromium,
#                                      prometheus for promtool, which checks /metrics)
#   toolchain/install-deps.sh cross    plus cross compilers, mmdebstrap and qemu-user
#   toolchain/install-deps.sh image    plus what firmware/build-image.sh and
#                                      firmware/boot-test.sh run (mmdebstrap,
#                                      qemu-user, zstd, arch-test, the SD card
#                                      tools, qemu-system-aarch64, ssh, curl)
# Sets combine: toolchain/install-deps.sh test cross
set -eu

build_pkgs="build-essential cmake ninja-build pkg-config ca-certificates
libmbedtls-dev libwslay-dev libcjson-dev libsqlite3-dev libsecp256k1-dev
libpq-dev libmicrohttpd-dev libc-ares-dev libcmocka-dev"
test_pkgs="nodejs npm clang libclang-rt-14-dev postgresql sqlite3 openssl
curl python3 procps chromium prometheus"
# No libc6-dev-<arch>-cross: the C library comes from the sysroot that
# toolchain/make-sysroot.sh builds with every other -dev package, and Debian's
# cross gcc would read the cross libc headers ahead of the sysroot's.
# mmdebstrap needs gpg and the archive keyring (it only recommends gpg).
cross_pkgs="mmdebstrap gpg debian-archive-keyring qemu-user-static
gcc-aarch64-linux-gnu gcc-arm-linux-gnueabihf"
# qemu-system-arm is Debian's package of qemu-system-aarch64; the boot test
# uses only virtio-mmio devices, so none of its recommended firmware is needed.
image_pkgs="mmdebstrap gpg debian-archive-keyring qemu-user-static zstd
arch-test fdisk dosfstools mtools e2fsprogs qemu-system-arm openssh-client
curl python3"

want="$build_pkgs"
for extra in "$@"; do
	case "$extra" in
	test)	want="$want $test_pkgs" ;;
	cross)	want="$want $cross_pkgs" ;;
	image)	want="$want $image_pkgs" ;;
	*)	echo "install-deps: unknown set '$extra' (use: test, cross, image)" >&2; exit 2 ;;
	esac
done

missing=""
for p in $want; do
	# nodejs may come from outside Debian (it is on the build machines); any
	# working node >= 20 with npm will do.
	case "$p" in
	nodejs|npm) command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 && continue ;;
	esac
	status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	[ "$status" = "install ok installed" ] || missing="$missing $p"
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: missing packages:$missing (run as root to install them)" >&2
	exit 1
fi
echo "install-deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
# shellcheck disable=SC2086
apt-get install -y -q --no-install-recommends $missing
# The prometheus package is here for promtool alone: its server (and the
# node exporter it recommends, not installed) has no business listening on
# a development machine, so where systemd runs it is stopped and disabled.
case " $missing " in
*" prometheus "*)
	if [ -d /run/systemd/system ] && command -v systemctl >/dev/null 2>&1; then
		systemctl disable --now prometheus.service >/dev/null 2>&1 || true
	fi ;;
esac
