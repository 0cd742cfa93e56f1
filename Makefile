# strait quick start. Both targets are idempotent: they install missing Debian
# packages (as root), configure, build with ccache, then run.
MAKEFLAGS += --no-print-directory
BUILD_DIR ?= build
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
BUILD_TYPE ?= Release
CMAKE_FLAGS ?=
DEMO_SCENARIO ?= configs/scenarios/hstu-3dc.json

.PHONY: all setup configure build demo test bench format clean sanitize

all: build

setup:
	@bash scripts/setup.sh

configure: setup
	@cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(CMAKE_FLAGS) >/dev/null

build: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS)

# Runs the main job on the bundled default scenario and prints its report.
demo: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS) --target strait
	@$(BUILD_DIR)/bin/strait simulate $(DEMO_SCENARIO)

# ASan + UBSan build (build-sanitize/) of strait and its tests, then the whole suite there:
# any undefined act or memory error fails the test it happens in. Left out: the README
# figures (peak memory, which ASan doubles), the installed-consumer test (a consumer would
# need ASan too) and the notebooks (jupyter runs the sweeps; minutes each under ASan).
SANITIZE_DIR ?= build-sanitize
SANITIZE_EXCLUDE ?= readme|install|notebooks
sanitize: setup
	@cmake -S . -B $(SANITIZE_DIR) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSTRAIT_SANITIZE=ON >/dev/null
	@cmake --build $(SANITIZE_DIR) -j $(JOBS)
	@cd $(SANITIZE_DIR) && ASAN_OPTIONS=detect_leaks=0:exitcode=86 \
	  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1:exitcode=87 \
	  ctest -j $(JOBS) -LE '$(SANITIZE_EXCLUDE)' --output-on-failure

# Runs the whole test suite through ctest.
test: build
	@cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS)

bench: build
	@bash bench/run.sh $(BUILD_DIR)

format:
	@git ls-files '*.cpp' '*.hpp' '*.cu' '*.cuh' | xargs clang-format -i

clean:
	@rm -rf $(BUILD_DIR)
