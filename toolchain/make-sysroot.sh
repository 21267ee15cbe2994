#!/bin/bash
# Builds a Debian sysroot for cross-compiling cachebox: libc6-dev and every
# -dev package cachebox links, for one foreign architecture, unpacked (not
# installed: no maintainer script runs) with mmdebstrap --variant=extract.
#
#   toolchain/make-sysroot.sh ARCH [OUTDIR]
#     ARCH    arm64 | armhf
#     OUTDIR  default: ${CACHEBOX_SYSROOTS:-/var/cache/cachebox/sysroots}/ARCH
#
# The archive and suite come from this machine's own apt sources
# (/etc/apt/sources.list, /etc/apt/sources.list.d/*.list and *.sources):
# the Debian entries for the host's release, its -updates and its -security
# suite. This script never names a mirror itself. CACHEBOX_APT_ETC points it
# at another apt configuration directory (default /etc/apt). An entry whose
# Signed-By holds an inline key is taken for a third-party archive.
#
# Idempotent: a finished sysroot carries a stamp holding a hash of what it
# was made from (package list, architecture, suite); when the stamp matches
# and the sysroot still checks out, nothing is done. A sysroot is built in a
# scratch directory beside OUTDIR and moved into place only once verified,
# so an interrupted run never leaves a half sysroot that looks complete.
# Sysroots are build caches: they must never be committed.
set -euo pipefail

# Bump when the way a sysroot is made changes, so old caches are rebuilt.
format=1
packages=(
	libc6-dev
	libmbedtls-dev libwslay-dev libcjson-dev libsqlite3-dev
	libsecp256k1-dev libpq-dev libmicrohttpd-dev libc-ares-dev
	libcmocka-dev
)
apt_etc=${CACHEBOX_APT_ETC:-/etc/apt}

die() { echo "make-sysroot: $*" >&2; exit 1; }
say() { echo "make-sysroot: $*" >&2; }

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
	die "usage: $0 arm64|armhf [OUTDIR]"
fi
arch=$1
case "$arch" in
arm64)	triplet=aarch64-linux-gnu; interp=lib/ld-linux-aarch64.so.1 ;;
armhf)	triplet=arm-linux-gnueabihf; interp=lib/ld-linux-armhf.so.3 ;;
*)	die "unknown architecture '$arch' (use arm64 or armhf)" ;;
esac
out=${2:-${CACHEBOX_SYSROOTS:-/var/cache/cachebox/sysroots}/$arch}
out=${out%/}
stampfile=.cachebox-sysroot.stamp

codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
[ -n "$codename" ] || die "no VERSION_CODENAME in /etc/os-release"

# Prints the apt sources of this machine as "URI SUITE COMPONENTS|SIGNED-BY|ARCHES"
# lines, one per URI and suite, from both the one-line and the deb822 format.
# Disabled entries, deb-src entries and commented lines are left out.
list_sources() {
	local files=() f
	[ -f "$apt_etc/sources.list" ] && files+=("$apt_etc/sources.list")
	for f in "$apt_etc"/sources.list.d/*.list; do
		[ -f "$f" ] && files+=("$f")
	done
	if [ ${#files[@]} -gt 0 ]; then
		awk '
		{ sub(/#.*/, "") }
		$1 != "deb" { next }
		{
			opts = ""; signed = ""; arches = ""; i = 2
			if ($2 ~ /^\[/) {
				while (i <= NF) {
					opts = opts " " $i
					if ($i ~ /\]$/) { i++; break }
					i++
				}
				gsub(/[\[\]]/, "", opts)
				n = split(opts, o, " ")
				for (k = 1; k <= n; k++) {
					if (o[k] ~ /^signed-by=/) signed = substr(o[k], 11)
					if (o[k] ~ /^arch=/) arches = substr(o[k], 6)
				}
			}
			uri = $i; suite = $(i + 1); comps = ""
			for (k = i + 2; k <= NF; k++) comps = comps " " $k
			gsub(/,/, " ", arches)
			if (uri != "" && suite != "")
				print uri " " suite comps "|" signed "|" arches
		}' "${files[@]}"
	fi
	for f in "$apt_etc"/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		awk '
		function flush(   nu, ns, u, s, a, b) {
			if (types ~ /(^| )deb( |$)/ && tolower(enabled) != "no") {
				nu = split(uris, a, " "); ns = split(suites, b, " ")
				for (u = 1; u <= nu; u++)
					for (s = 1; s <= ns; s++)
						print a[u] " " b[s] " " comps "|" signed "|" arches
			}
			types = uris = suites = comps = signed = arches = enabled = key = ""
		}
		/^#/ { next }
		/^[ \t]*$/ { flush(); next }
		/^[ \t]/ { if (key == "signed-by") signed = "inline"; next }
		{
			key = tolower(substr($0, 1, index($0, ":") - 1))
			val = substr($0, index($0, ":") + 1)
			gsub(/^[ \t]+|[ \t]+$/, "", val)
			if (key == "types") types = val
			else if (key == "uris") uris = val
			else if (key == "suites") suites = val
			else if (key == "components") comps = val
			else if (key == "enabled") enabled = val
			else if (key == "architectures") arches = val
			else if (key == "signed-by") signed = (val ~ /^\// ? val : "inline")
		}
		END { flush() }' "$f"
	done
}

# Succeeds when an apt source looks like a Debian archive. apt's own copy of
# the Release file decides when there is one; otherwise the keyring does.
is_debian_archive() {
	local uri=$1 suite=$2 signed=$3 base rel
	base=${uri#*://}
	base=${base#*@}
	base=${base%/}
	base=${base//\//_}
	for rel in /var/lib/apt/lists/"${base}_dists_${suite//\//_}"_{InRelease,Release}; do
		if [ -f "$rel" ]; then
			grep -q '^Origin: Debian$' "$rel"
			return
		fi
	done
	case "$signed" in
	""|*/debian-archive-*) return 0 ;;
	*) return 1 ;;
	esac
}

# Prints the one-line apt entries the sysroot is built from.
debian_entries() {
	local line where signed arches uri suite comps
	while IFS= read -r line; do
		where=${line%%|*}; line=${line#*|}
		signed=${line%%|*}; arches=${line#*|}
		read -r uri suite comps <<<"$where"
		case "$uri" in http://*|https://*|file:*) ;; *) continue ;; esac
		case "$suite" in
		"$codename"|"$codename-updates"|"$codename-security"|"$codename/updates") ;;
		*) continue ;;
		esac
		case " $comps " in *" main "*) ;; *) continue ;; esac
		if [ -n "$arches" ]; then
			case " $arches " in *" $arch "*) ;; *) continue ;; esac
		fi
		is_debian_archive "$uri" "$suite" "$signed" || continue
		if [ -n "$signed" ] && [ "$signed" != inline ] && [ -f "$signed" ]; then
			echo "deb [signed-by=$signed] $uri $suite main"
		else
			echo "deb $uri $suite main"
		fi
	done < <(list_sources) | awk '!seen[$0]++'
}

# Rewrites every absolute symlink under $1 as a relative one, so that the
# linker and qemu -L, which follow links on the host, stay inside the sysroot.
relativize_links() {
	local root=$1 link target
	while IFS= read -r -d '' link; do
		target=$(readlink "$link")
		ln -sfn "$(realpath -s -m --relative-to="$(dirname "$link")" "$root$target")" "$link"
	done < <(find "$root" -type l -lname '/*' -print0)
}

# Succeeds when $1 holds everything a cross build and a qemu run need.
verify_sysroot() {
	local root=$1 f bad=0
	for f in usr/include/stdio.h usr/lib/$triplet/libc.so \
	    usr/lib/$triplet/crt1.o "$interp" \
	    usr/include/mbedtls/ssl.h usr/include/wslay/wslay.h \
	    usr/lib/$triplet/pkgconfig/libcjson.pc \
	    usr/lib/$triplet/pkgconfig/sqlite3.pc \
	    usr/lib/$triplet/pkgconfig/libsecp256k1.pc \
	    usr/lib/$triplet/pkgconfig/libpq.pc \
	    usr/lib/$triplet/pkgconfig/libmicrohttpd.pc \
	    usr/lib/$triplet/pkgconfig/libcares.pc \
	    usr/lib/$triplet/pkgconfig/cmocka.pc; do
		if [ ! -e "$root/$f" ]; then
			say "missing $f"
			bad=1
		fi
	done
	# Every development link must resolve, and resolve inside the sysroot.
	local real rootreal
	rootreal=$(realpath "$root")
	for f in "$root"/usr/lib/"$triplet"/*.so "$root"/lib/"$triplet"/*.so; do
		[ -L "$f" ] || continue
		real=$(realpath -e "$f" 2>/dev/null) || { say "dangling link $f"; bad=1; continue; }
		case "$real" in
		"$rootreal"/*) ;;
		*) say "link $f leaves the sysroot ($real)"; bad=1 ;;
		esac
	done
	return $bad
}

hash=$( { echo "format $format arch $arch suite $codename"
	printf '%s\n' "${packages[@]}" | sort; } | sha256sum | cut -d' ' -f1)

mkdir -p "$(dirname "$out")" 2>/dev/null ||
	die "cannot create $(dirname "$out"); set CACHEBOX_SYSROOTS to a writable directory"
# One run at a time per sysroot; a run that waited finds the work done.
exec 9>"$out.lock"
flock 9
if [ -f "$out/$stampfile" ] && [ "$(cat "$out/$stampfile")" = "$hash" ] &&
    verify_sysroot "$out"; then
	say "$arch sysroot up to date: $out"
	exit 0
fi

mapfile -t entries < <(debian_entries)
[ ${#entries[@]} -gt 0 ] ||
	die "no enabled Debian '$codename' main entry in $apt_etc/sources.list{,.d}"
printf '%s\n' "${entries[@]}" | grep -q " $codename main$" ||
	die "apt sources have no entry for the suite '$codename' itself"

# Carry over the host's apt settings that decide whether the archive can be
# reached at all (a proxy, an archive whose Release has expired on purpose).
aptopts=()
for opt in Acquire::http::Proxy Acquire::https::Proxy \
    Acquire::Check-Valid-Until Acquire::Check-Date; do
	val=$(apt-config dump "$opt" 2>/dev/null | sed -n "s/^$opt \"\\(.*\\)\";\$/\\1/p" | head -n1)
	if [ -n "$val" ]; then
		aptopts+=("--aptopt=$opt \"$val\";")
	fi
done

tmp="$out.new.$$"
log="$out.log"
trap 'rm -rf "$tmp"' EXIT

# Runs mmdebstrap into $tmp from the apt entries given as arguments. Nothing
# is run inside the sysroot, so chrootless mode needs neither chroot nor mount.
extract() {
	rm -rf "$tmp"
	say "building $arch sysroot in $out from:"
	printf '    %s\n' "$@" >&2
	mmdebstrap --variant=extract --mode=chrootless --architectures="$arch" \
	    --include="$(IFS=,; echo "${packages[*]}")" \
	    "${aptopts[@]}" "$codename" "$tmp" "$@" >"$log" 2>&1 && return 0
	grep '^E: ' "$log" | head -n 5 >&2
	return 1
}

# A mirror caught between two syncs can serve an index of the updates or
# security suite that does not match its Release file. The release suite
# alone is still a sound base for cross-compiling (the board links against
# its own libraries at run time), so fall back to it rather than fail, and
# say so; the next run with a changed package list retries the full set.
mapfile -t main_only < <(printf '%s\n' "${entries[@]}" | grep " $codename main$")
if ! extract "${entries[@]}"; then
	say "WARNING: the full set of suites failed (log: $log); retrying with '$codename' alone"
	extract "${main_only[@]}" || die "mmdebstrap failed (log: $log)"
	entries=("${main_only[@]}")
fi
relativize_links "$tmp"
verify_sysroot "$tmp" || die "the new $arch sysroot is incomplete (kept nothing)"
printf '%s\n' "${entries[@]}" >"$tmp/.cachebox-sysroot.sources"
echo "$hash" >"$tmp/$stampfile"
rm -rf "$out"
mv "$tmp" "$out"
trap - EXIT
say "$arch sysroot ready: $out ($(du -sh "$out" | cut -f1))"
