#!/usr/bin/env bash
# Fails when a tracked C++/CUDA source differs from .clang-format's style (`make format`
# fixes it). Run by ctest as the test `format`; skipped when clang-format is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v clang-format >/dev/null 2>&1; then
  echo "clang-format not found: skipping"
  exit 77
fi
if ! git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  echo "not a git checkout: skipping"
  exit 77
fi
git ls-files '*.cpp' '*.hpp' '*.cu' '*.cuh' | xargs clang-format --dry-run -Werror
