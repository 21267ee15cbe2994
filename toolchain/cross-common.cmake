# Shared part of the cross toolchain files (aarch64.cmake, armhf.cmake): Debian's
# cross gcc, a Debian sysroot made by toolchain/make-sysroot.sh, pkg-config and
# every find_* call confined to that sysroot, and qemu-user as the emulator so
# ctest runs the cross-built tests on this machine.
# The including file sets CACHEBOX_CROSS_ARCH (Debian architecture),
# CACHEBOX_CROSS_TRIPLET (GNU triplet), CACHEBOX_CROSS_QEMU (qemu-user program),
# CMAKE_SYSTEM_PROCESSOR and CACHEBOX_CROSS_CFLAGS.
# It must never look at the build machine's own libraries or headers.
set(CMAKE_SYSTEM_NAME Linux)

if(DEFINED ENV{CACHEBOX_SYSROOTS} AND NOT "$ENV{CACHEBOX_SYSROOTS}" STREQUAL "")
  set(_cachebox_sysroots "$ENV{CACHEBOX_SYSROOTS}")
else()
  set(_cachebox_sysroots /var/cache/cachebox/sysroots)
endif()
set(CACHEBOX_SYSROOT "${_cachebox_sysroots}/${CACHEBOX_CROSS_ARCH}" CACHE PATH
  "Debian ${CACHEBOX_CROSS_ARCH} sysroot (made by toolchain/make-sysroot.sh)")
# try_compile projects re-read this file; hand them the same sysroot.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES CACHEBOX_SYSROOT)

if(NOT EXISTS "${CACHEBOX_SYSROOT}/.cachebox-sysroot.stamp")
  message(FATAL_ERROR "No ${CACHEBOX_CROSS_ARCH} sysroot at ${CACHEBOX_SYSROOT}; "
    "make one with: toolchain/make-sysroot.sh ${CACHEBOX_CROSS_ARCH} ${CACHEBOX_SYSROOT}")
endif()

set(CMAKE_C_COMPILER ${CACHEBOX_CROSS_TRIPLET}-gcc)
set(CMAKE_SYSROOT "${CACHEBOX_SYSROOT}")
set(CMAKE_FIND_ROOT_PATH "${CACHEBOX_SYSROOT}")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# Debian's cross gcc searches its own tool directory (/usr/<triplet>/lib,
# filled by libc6-dev-<arch>-cross) before the sysroot. Naming the sysroot's
# library directories first keeps the link on the sysroot's libraries, and
# -rpath-link lets ld find the libraries those libraries need (libpq ->
# libssl, ...).
set(_cachebox_libdirs
  "${CACHEBOX_SYSROOT}/usr/lib/${CACHEBOX_CROSS_TRIPLET}"
  "${CACHEBOX_SYSROOT}/lib/${CACHEBOX_CROSS_TRIPLET}")
set(_cachebox_ldflags "")
foreach(d IN LISTS _cachebox_libdirs)
  string(APPEND _cachebox_ldflags " -L${d} -Wl,-rpath-link,${d}")
endforeach()
set(CMAKE_C_FLAGS_INIT "${CACHEBOX_CROSS_CFLAGS}")
set(CMAKE_EXE_LINKER_FLAGS_INIT "${_cachebox_ldflags}")
set(CMAKE_SHARED_LINKER_FLAGS_INIT "${_cachebox_ldflags}")
set(CMAKE_MODULE_LINKER_FLAGS_INIT "${_cachebox_ldflags}")
if(EXISTS "/usr/${CACHEBOX_CROSS_TRIPLET}/include/stdio.h")
  message(WARNING "/usr/${CACHEBOX_CROSS_TRIPLET}/include holds C library headers "
    "(a libc6-dev-*-cross package); gcc reads them before the sysroot's. They "
    "come from the same Debian release, but removing that package keeps the "
    "build on the sysroot alone.")
endif()

# pkg-config reads only the sysroot's .pc files and prefixes their paths.
find_program(PKG_CONFIG_EXECUTABLE NAMES pkgconf pkg-config REQUIRED)
set(ENV{PKG_CONFIG_SYSROOT_DIR} "${CACHEBOX_SYSROOT}")
set(ENV{PKG_CONFIG_LIBDIR}
  "${CACHEBOX_SYSROOT}/usr/lib/${CACHEBOX_CROSS_TRIPLET}/pkgconfig:${CACHEBOX_SYSROOT}/usr/share/pkgconfig:${CACHEBOX_SYSROOT}/usr/lib/pkgconfig")
set(ENV{PKG_CONFIG_PATH} "")

# No binfmt here: ctest runs every cross-built test through qemu-user, which
# loads the dynamic linker and libraries from the sysroot.
find_program(CACHEBOX_QEMU ${CACHEBOX_CROSS_QEMU} REQUIRED)
set(CMAKE_CROSSCOMPILING_EMULATOR "${CACHEBOX_QEMU};-L;${CACHEBOX_SYSROOT}")
