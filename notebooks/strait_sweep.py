"""What the notebooks share: the sweep's CSV (the sweep is run when it is missing), the
breakdown terms, and figures shown inline under a Jupyter kernel and written as PNGs.

Environment (scripts/figures.sh and the notebook tests set the first two):
  STRAIT_SWEEP_CSV    the CSV to read (default results/NAME.csv in the repository)
  STRAIT_FIGURES_DIR  where PNGs go (default results/figures in the repository)
  STRAIT              the strait binary that runs a missing sweep (default build/bin/strait)
  STRAIT_THREADS      its --threads (default: all cores)
"""

import os
import subprocess
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


def run_sweep(name, csv):
    """Runs configs/sweeps/NAME.json into CSV (and its JSON Lines file beside it)."""
    strait = Path(os.environ.get("STRAIT", ROOT / "build" / "bin" / "strait"))
    if not strait.exists():
        raise FileNotFoundError(f"{csv} is missing and {strait} is not built to run the sweep (make build)")
    command = [str(strait), "sweep", str(ROOT / "configs" / "sweeps" / f"{name}.json"), "--csv", str(csv)]
    if os.environ.get("STRAIT_THREADS"):
        command += ["--threads", os.environ["STRAIT_THREADS"]]
    print(f"{csv} is missing: running", " ".join(command[1:]))
    csv.parent.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"strait sweep failed:\n{done.stderr}")
    print(done.stdout.strip())


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
