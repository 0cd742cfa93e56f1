"""What the notebooks share: the sweep's CSV (the sweep is run when it is missing), the
breakdown terms, and figures shown inline under a Jupyter kernel and written as PNGs.

A missing CSV is made with the Python module (strait.sweep), installed or built in
build/python.

Environment (scripts/figures.sh and the notebook tests set the first two):
  STRAIT_SWEEP_CSV    the CSV to read (default results/NAME.csv in the repository)
  STRAIT_FIGURES_DIR  where PNGs go (default results/figures in the repository)
  STRAIT_THREADS      the threads a missing sweep runs on (default: all cores)
"""

import json
import os
import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "results"
FIGURES = Path(os.environ.get("STRAIT_FIGURES_DIR", RESULTS / "figures"))


def _use_inline_backend():
    """Under a Jupyter kernel (a notebook, or nbconvert --execute) figures show inline."""
    try:
        from IPython import get_ipython
    except ImportError:
        return
    shell = get_ipython()
    if shell is not None and getattr(shell, "kernel", None) is not None:
        shell.run_line_magic("matplotlib", "inline")


_use_inline_backend()


def _strait_module():
    """The Python module strait: installed, or the build tree's (build/python, make build)."""
    try:
        import strait
    except ImportError:
        built = ROOT / "build" / "python"
        if not (built / "strait").exists():
            raise ImportError("the Python module strait is neither installed nor built in "
                              f"{built} (make build)") from None
        sys.path.insert(0, str(built))
        import strait
    return strait


def run_sweep(name, csv):
    """Runs configs/sweeps/NAME.json with the Python module (strait.sweep, as `strait sweep`
    does) into CSV, and its JSON Lines file beside it."""
    strait = _strait_module()
    threads = int(os.environ.get("STRAIT_THREADS", "0"))
    print(f"{csv} is missing: running the sweep {name} on {threads or 'all'} threads")
    result = strait.sweep(ROOT / "configs" / "sweeps" / f"{name}.json", threads=threads)
    csv.parent.mkdir(parents=True, exist_ok=True)
    csv.write_text(result.csv, encoding="utf-8")
    with open(csv.with_suffix(".jsonl"), "w", encoding="utf-8") as jsonl:
        for row in result.rows:
            jsonl.write(json.dumps(row) + "\n")
    print(f"{result.points} points, {result.failed} failed: wrote {csv}")


def load_sweep(name):
    """The sweep's rows: (every row, the rows that ran). Prints the points that failed."""
    given = os.environ.get("STRAIT_SWEEP_CSV")
    csv = Path(given) if given else RESULTS / f"{name}.csv"
    if not csv.exists():
        if given:
            raise FileNotFoundError(f"STRAIT_SWEEP_CSV={given}: no such file")
        run_sweep(name, csv)
    runs = pd.read_csv(csv)
    failed = runs[runs["error"].notna()]
    print(f"{csv.name}: {len(runs)} points, {len(failed)} failed")
    if len(failed):
        print(failed[["point", "error"]].to_string(index=False))
    return runs, runs[runs["error"].isna()].copy()


def breakdown_terms(runs):
    """The terms of a step (average rank, ms per step): compute, exposed communication by
    purpose, straggler wait, bubble. strait averages them over every simulated step, warm-up
    and drain included, so they add up to the mean of all steps, not to step_time_ms (the
    mean of the steady steps)."""
    exposed = [c for c in runs.columns if c.startswith("exposed_") and c.endswith("_ms")]
    return ["compute_ms"] + exposed + ["straggler_wait_ms", "bubble_ms"]


def label(term):
    """A breakdown column's name for a legend: exposed_dense_sync_ms -> exposed dense sync."""
    return term.removesuffix("_ms").replace("_", " ")


def save(fig, name):
    """Writes a figure as a PNG into FIGURES and says where."""
    FIGURES.mkdir(parents=True, exist_ok=True)
    path = FIGURES / name
    fig.savefig(path, dpi=120, bbox_inches="tight")
    print("wrote", path)
