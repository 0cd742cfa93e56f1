#!/usr/bin/env bash
# scripts/figures.sh [--reuse] [NOTEBOOK...]: regenerates the pictures README.md and the docs show.
#
# For each notebook (default: every notebook in notebooks/), runs its sweep
# configs/sweeps/NOTEBOOK.json into results/NOTEBOOK.csv (and .jsonl), executes
# notebooks/NOTEBOOK.ipynb headless on it (Debian's jupyter nbconvert --execute; the executed
# copy, figures inline, goes to results/notebooks/), which writes its PNGs to results/figures/,
# then copies the pictures the READMEs show into docs/ (PICTURES below).
#
#   --reuse            keep a sweep's CSV where it exists instead of running the sweep again
#   STRAIT=PATH        the strait binary (default build/bin/strait; make build)
#   STRAIT_THREADS=N   the sweeps' --threads (default: all cores)
#
# Every sweep together takes about 8 minutes on 2 cores (hstu-3dc-wan about 6 of them).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

# Pictures shown by README.md and the docs: FIGURE (as a notebook writes it):FILE.
PICTURES=(
  "hstu-3dc-wan-step-time.png:docs/sweep-hstu-3dc-wan.png"
  "hstu-attention-window.png:docs/sweep-hstu-attention-window.png"
)

reuse=0
notebooks=()
for arg in "$@"; do
  case $arg in
    --reuse) reuse=1 ;;
    -h | --help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "figures.sh: unknown option $arg" >&2; exit 2 ;;
    *) notebooks+=("$arg") ;;
  esac
done
if [ ${#notebooks[@]} -eq 0 ]; then
  for path in notebooks/*.ipynb; do notebooks+=("$(basename "$path" .ipynb)"); done
fi

strait=${STRAIT:-build/bin/strait}
if [ ! -x "$strait" ]; then
  echo "figures.sh: $strait is not built (make build)" >&2
  exit 1
fi
# Debian's jupyter runs the python3 kernel with /usr/bin/python3, where pandas and matplotlib live.
jupyter=$(PATH=/usr/bin:$PATH command -v jupyter || true)
if [ -z "$jupyter" ] || ! "$jupyter" nbconvert --version >/dev/null 2>&1; then
  echo "figures.sh: jupyter nbconvert is not installed (scripts/setup.sh installs it)" >&2
  exit 1
fi
# debugpy's note on Python 3.11's frozen modules, printed by every kernel start.
export PYDEVD_DISABLE_FILE_VALIDATION=1
threads=()
if [ -n "${STRAIT_THREADS:-}" ]; then threads=(--threads "$STRAIT_THREADS"); fi

mkdir -p results/figures results/notebooks
for name in "${notebooks[@]}"; do
  for path in "configs/sweeps/$name.json" "notebooks/$name.ipynb"; do
    if [ ! -f "$path" ]; then
      echo "figures.sh: no $path" >&2
      exit 2
    fi
  done
  csv=results/$name.csv
  if [ "$reuse" = 1 ] && [ -s "$csv" ]; then
    echo "== $name: reusing $csv"
  else
    echo "== $name: strait sweep configs/sweeps/$name.json"
    start=$(date +%s)
    "$strait" sweep "configs/sweeps/$name.json" "${threads[@]}" --csv "$csv" --jsonl "results/$name.jsonl" \
      </dev/null
    echo "   $(($(date +%s) - start)) s"
  fi
  echo "== $name: jupyter nbconvert --execute notebooks/$name.ipynb"
  STRAIT_SWEEP_CSV="$root/$csv" STRAIT_FIGURES_DIR="$root/results/figures" \
    "$jupyter" nbconvert --to notebook --execute "notebooks/$name.ipynb" --output-dir results/notebooks \
    --ExecutePreprocessor.timeout=600
done

for picture in "${PICTURES[@]}"; do
  figure=${picture%%:*}
  file=${picture#*:}
  for name in "${notebooks[@]}"; do
    if [[ $figure == "$name"-* ]]; then
      cp "results/figures/$figure" "$file"
      echo "copied results/figures/$figure to $file"
    fi
  done
done
