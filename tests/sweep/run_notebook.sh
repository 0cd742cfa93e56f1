#!/usr/bin/env bash
# run_notebook.sh STRAIT NAME FIGURE...: runs the small sweep tests/sweep/notebook_sweeps/NAME.json,
# executes notebooks/NAME.ipynb headless on its CSV (jupyter nbconvert --execute), and checks
# that every FIGURE was written as a PNG. Exits 77 (ctest: skipped) when jupyter is absent.
set -euo pipefail
strait=$1
name=$2
shift 2
root=$(cd "$(dirname "$0")/../.." && pwd)

# Debian's jupyter runs the python3 kernel with /usr/bin/python3, where pandas and matplotlib live.
jupyter=$(PATH=/usr/bin:$PATH command -v jupyter || true)
if [ -z "$jupyter" ] || ! "$jupyter" nbconvert --version >/dev/null 2>&1; then
  echo "jupyter nbconvert is not installed (scripts/setup.sh installs it): notebook $name skipped"
  exit 77
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/strait-notebook-$name.XXXXXX")
trap 'rm -rf "$work"' EXIT
"$strait" sweep "$root/tests/sweep/notebook_sweeps/$name.json" --threads 2 --csv "$work/$name.csv"
STRAIT_SWEEP_CSV="$work/$name.csv" STRAIT_FIGURES_DIR="$work/figures" PYDEVD_DISABLE_FILE_VALIDATION=1 \
  "$jupyter" nbconvert --to notebook --execute "$root/notebooks/$name.ipynb" \
  --output-dir "$work" --ExecutePreprocessor.timeout=300

status=0
for figure in "$@"; do
  path="$work/figures/$figure"
  if [ ! -s "$path" ] || [ "$(head -c 4 "$path" | tail -c 3)" != "PNG" ]; then
    echo "notebook $name did not write the figure $figure" >&2
    status=1
  else
    echo "figure $figure: $(stat -c %s "$path") bytes"
  fi
done
exit $status
