# Cross toolchain for 64-bit ARM boards (Debian arm64): Debian's
# aarch64-linux-gnu-gcc with the arm64 sysroot from toolchain/make-sysroot.sh,
# tests run under qemu-aarch64-static.
#   cmake -S . -B build-aarch64 -G Ninja -DCMAKE_TOOLCHAIN_FILE=toolchain/aarch64.cmake
set(CACHEBOX_CROSS_ARCH arm64)
set(CACHEBOX_CROSS_TRIPLET aarch64-linux-gnu)
set(CACHEBOX_CROSS_QEMU qemu-aarch64-static)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CACHEBOX_CROSS_CFLAGS "")
include(${CMAKE_CURRENT_LIST_DIR}/cross-common.cmake)
