# strait quick start. Both targets are idempotent: they install missing Debian
# packages (as root), configure, build with ccache, then run.
MAKEFLAGS += --no-print-directory
BUILD_DIR ?= build
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
BUILD_TYPE ?= Release
CMAKE_FLAGS ?=
DEMO_SCENARIO ?= configs/scenarios/hstu-3dc.json

.PHONY: all setup configure build demo test bench format clean sanitize tidy

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

# clang-tidy (the checks in .clang-tidy, every finding an error) over strait's own sources
# in $(BUILD_DIR)/compile_commands.json: no tests, benchmarks, build folders or .cu files.
# Configures first when the compilation database is missing.
TIDY_JOBS ?= 2
TIDY_DIRS ?= sim|traces|planner|calibration|kernels|executor|cli|sweep|python
TIDY_FILES ?= ^$(CURDIR)/($(TIDY_DIRS))/.*\.cpp$$
tidy:
	@test -f $(BUILD_DIR)/compile_commands.json || $(MAKE) configure
	@if command -v run-clang-tidy-14 >/dev/null 2>&1; then \
	  run-clang-tidy-14 -quiet -p $(BUILD_DIR) -j $(TIDY_JOBS) '$(TIDY_FILES)'; \
	else \
	  sed -n 's/^ *"file": "\(.*\)",\{0,1\}$$/\1/p' $(BUILD_DIR)/compile_commands.json | \
	    sort -u | grep -E '$(TIDY_FILES)' | \
	    xargs -r -n 1 -P $(TIDY_JOBS) clang-tidy-14 --quiet -p $(BUILD_DIR); \
	fi

# Runs the whole test suite through ctest.
test: build
	@cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS)

bench: build
	@bash bench/run.sh $(BUILD_DIR)

format:
	@git ls-files '*.cpp' '*.hpp' '*.cu' '*.cuh' | xargs clang-format -i

clean:
	@rm -rf $(BUILD_DIR)
