# Thin wrapper for the two README commands; the build itself is CMake.
#   make run    install missing packages, build, run cacheboxd on its defaults
#   make test   install missing packages, build, run every test
BUILD ?= build
STATE ?= state
JOBS  ?= $(shell nproc 2>/dev/null || echo 2)

.PHONY: all run test deps test-deps clean

all: deps
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
	cmake --build $(BUILD) -j $(JOBS)

deps:
	toolchain/install-deps.sh

test-deps:
	toolchain/install-deps.sh test
	cd tests && npm ci --no-audit --no-fund

run: all
	$(BUILD)/src/cacheboxd -d $(STATE)

test: test-deps
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCACHEBOX_WERROR=ON
	cmake --build $(BUILD) -j $(JOBS)
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

clean:
	rm -rf $(BUILD)
