# Thin wrapper for the two README commands; the build itself is CMake.
#   make run    install missing packages, build, run cacheboxd on its defaults
#   make test   install missing packages, build, run every test
#   make demo   the daemon against a simulated relay network (no internet needed)
# and for the other builds CI runs (.ci/run), each in its own build directory:
#   make asan            ASan+UBSan build (build-asan), unit and integration tests
#   make fuzz            clang libFuzzer build (build-fuzz), each fuzzer FUZZ_SECONDS
#   make cross-aarch64   arm64 cross build (build-aarch64), unit tests under qemu
#   make cross-armhf     armhf cross build (build-armhf), unit tests under qemu
# and the packages (firmware/README.md), into out/:
#   make deb             out/cachebox_<version>_amd64.deb
#   make deb-arm64       the same for arm64 (cross), make deb-armhf for armhf
#   make image           arm64 root filesystem with cachebox (not in CI: big download)
# Cross sysroots are cached outside the tree, in $(SYSROOTS).
BUILD ?= build
STATE ?= state
JOBS  ?= $(shell nproc 2>/dev/null || echo 2)
# Signed test datasets depend only on their parameters: keep them outside the
# tree so every build directory and every fresh clone signs each one once.
RELAYSIM_CACHE ?= $(if $(filter 0,$(shell id -u)),/var/cache/cachebox/relaysim,$(CURDIR)/.relaysim-cache)
export RELAYSIM_CACHE
SYSROOTS ?= $(or $(CACHEBOX_SYSROOTS),/var/cache/cachebox/sysroots)
FUZZ_SECONDS ?= 15
WERROR ?= ON
# The gcc builds hold the -Werror line; clang's extra warnings are shown in
# the fuzz build but do not stop it unless FUZZ_WERROR=ON.
FUZZ_WERROR ?= OFF

.PHONY: all run demo test deps test-deps test-pkgs cross-deps asan fuzz cross-aarch64 cross-armhf \
	deb deb-arm64 deb-armhf image clean

all: deps
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
	cmake --build $(BUILD) -j $(JOBS)

deps:
	toolchain/install-deps.sh

test-deps: test-pkgs tests/node_modules/.installed

test-pkgs:
	toolchain/install-deps.sh test

# The Node test peers (pinned by tests/package-lock.json); a finished install
# is cached outside the tree by the lock file's hash (tests/install-peers.sh).
tests/node_modules/.installed: tests/package.json tests/package-lock.json | test-pkgs
	tests/install-peers.sh
	touch $@

run: all
	$(BUILD)/src/cacheboxd -d $(STATE)

# The offline try-out: the relay simulator with a generated network, and
# cacheboxd pointed at it (status page on 127.0.0.1:8080, token "demo").
demo: all test-deps
	tests/relaysim/demo.sh $(BUILD)

test: test-deps
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCACHEBOX_WERROR=ON
	cmake --build $(BUILD) -j $(JOBS)
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

cross-deps:
	toolchain/install-deps.sh cross

asan: test-deps
	cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug \
	    -DCACHEBOX_SANITIZE=ON -DCACHEBOX_WERROR=$(WERROR)
	cmake --build build-asan -j $(JOBS)
	UBSAN_OPTIONS=print_stacktrace=1 ctest --test-dir build-asan \
	    --output-on-failure -j $(JOBS) -L 'unit|integration' -LE nosan

fuzz: test-deps
	cmake -S . -B build-fuzz -G Ninja -DCMAKE_C_COMPILER=clang \
	    -DCACHEBOX_FUZZ=ON -DCACHEBOX_FUZZ_SECONDS=$(FUZZ_SECONDS) \
	    -DCACHEBOX_WERROR=$(FUZZ_WERROR)
	cmake --build build-fuzz -j $(JOBS)
	ctest --test-dir build-fuzz --output-on-failure -j $(JOBS) -L fuzz

# cross-<cpu>: <cpu> names the toolchain file, ARCH_<cpu> the Debian architecture.
ARCH_aarch64 = arm64
ARCH_armhf = armhf
cross-aarch64 cross-armhf: cross-%: cross-deps
	toolchain/make-sysroot.sh $(ARCH_$*) $(SYSROOTS)/$(ARCH_$*)
	cmake -S . -B build-$* -G Ninja -DCMAKE_TOOLCHAIN_FILE=toolchain/$*.cmake \
	    -DCACHEBOX_SYSROOT=$(SYSROOTS)/$(ARCH_$*) -DCACHEBOX_WERROR=$(WERROR)
	cmake --build build-$* -j $(JOBS)
	ctest --test-dir build-$* --output-on-failure -j $(JOBS) -L unit

deb: deps
	firmware/build-deb.sh amd64

deb-arm64 deb-armhf: deb-%: cross-deps
	CACHEBOX_SYSROOTS=$(SYSROOTS) firmware/build-deb.sh $*

image: deb-arm64
	toolchain/install-deps.sh image
	CACHEBOX_SYSROOTS=$(SYSROOTS) firmware/build-image.sh

clean:
	rm -rf $(BUILD) build-asan build-fuzz build-aarch64 build-armhf
