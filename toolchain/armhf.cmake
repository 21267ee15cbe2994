# Cross toolchain for 32-bit ARM boards (Debian armhf): ARMv7-A, hard-float
# VFPv3-D16, Thumb-2, which is Debian's armhf baseline (ARMv6 boards such as
# the first Raspberry Pi and the Pi Zero cannot run it). Debian's
# arm-linux-gnueabihf-gcc with the armhf sysroot from toolchain/make-sysroot.sh,
# tests run under qemu-arm-static.
#   cmake -S . -B build-armhf -G Ninja -DCMAKE_TOOLCHAIN_FILE=toolchain/armhf.cmake
set(CACHEBOX_CROSS_ARCH armhf)
set(CACHEBOX_CROSS_TRIPLET arm-linux-gnueabihf)
set(CACHEBOX_CROSS_QEMU qemu-arm-static)
set(CMAKE_SYSTEM_PROCESSOR armv7l)
set(CACHEBOX_CROSS_CFLAGS "-march=armv7-a+fp -mfpu=vfpv3-d16 -mfloat-abi=hard -mthumb")
include(${CMAKE_CURRENT_LIST_DIR}/cross-common.cmake)
