#!/usr/bin/env bash
# Runs every benchmark built in BUILD_DIR (default: build) and prints their tables.
set -euo pipefail
build=${1:-build}
cd "$(dirname "$0")/.."
echo "# machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
for b in engine_bench collective_bench scenario_bench sweep_bench planner_bench bench_hstu_attention bench_tbe; do
  if [ -x "$build/bin/$b" ]; then
    echo
    echo "## $b"
    "$build/bin/$b"
  fi
done
