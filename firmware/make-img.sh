#!/bin/bash
# Turns a root filesystem directory made by build-image.sh into an SD card
# image, without loop devices or mounts (so it works in a container):
#   firmware/make-img.sh ROOTFS IMAGE SIZE_MB BOOT_MB
# The image has an MBR (every Pi's boot ROM reads it) with two partitions:
#   1  FAT32, BOOT_MB MiB from 4 MiB on, label CBX_BOOT: ROOTFS/boot/firmware
#   2  ext4, the rest, label CBX_ROOT: ROOTFS without /boot/firmware's files
# Each file system is made in its own file (mkfs.vfat + mtools, mkfs.ext4 -d)
# and copied into place. ROOTFS is left as it was found.
set -euo pipefail

die() { echo "make-img: $*" >&2; exit 1; }

[ $# -eq 4 ] || die "usage: $0 ROOTFS IMAGE SIZE_MB BOOT_MB"
rootfs=$1 image=$2 size_mb=$3 boot_mb=$4
start_mb=4
root_mb=$((size_mb - start_mb - boot_mb))
[ -d "$rootfs/boot/firmware" ] || die "$rootfs has no /boot/firmware"
[ "$root_mb" -ge 512 ] || die "an image of $size_mb MiB leaves too little for the root"
for tool in sfdisk mkfs.vfat mcopy mkfs.ext4; do
	command -v "$tool" >/dev/null ||
		die "$tool is missing (apt-get install fdisk dosfstools mtools e2fsprogs)"
done

scratch=$(mktemp -d "$(dirname "$image")/.make-img.XXXXXX")
held=$scratch/firmware
# Moves /boot/firmware's files back into ROOTFS once the root is made.
put_back() {
	if [ -d "$held" ]; then
		find "$held" -mindepth 1 -maxdepth 1 -exec mv -t "$rootfs/boot/firmware" {} +
		rmdir "$held"
	fi
}
trap 'put_back; rm -rf "$scratch"' EXIT

# The boot partition: FAT32 with the firmware, kernel, initramfs, configs.
boot_img=$scratch/boot.img
mkfs.vfat -F 32 -n CBX_BOOT -C "$boot_img" $((boot_mb * 1024)) >/dev/null
mcopy -s -p -i "$boot_img" "$rootfs"/boot/firmware/* ::/

# The root partition, with /boot/firmware left empty as a mount point.
mkdir "$held"
find "$rootfs/boot/firmware" -mindepth 1 -maxdepth 1 -exec mv -t "$held" {} +
root_img=$scratch/root.img
mkfs.ext4 -q -L CBX_ROOT -d "$rootfs" -E root_owner=0:0 "$root_img" "${root_mb}M" >/dev/null
put_back

rm -f "$image"
truncate -s "${size_mb}M" "$image"
sfdisk -q "$image" <<EOF
label: dos
start=${start_mb}MiB, size=${boot_mb}MiB, type=c, bootable
start=$((start_mb + boot_mb))MiB, type=83
EOF
dd if="$boot_img" of="$image" bs=1M seek="$start_mb" conv=notrunc,sparse status=none
dd if="$root_img" of="$image" bs=1M seek=$((start_mb + boot_mb)) conv=notrunc,sparse status=none
rm -rf "$scratch"
trap - EXIT
