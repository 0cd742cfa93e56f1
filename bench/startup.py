#!/usr/bin/env python3
"""How fast strait starts: wall time and peak resident memory of short commands.

Each command runs --runs times as its own process under GNU time (Debian's `time`, which
scripts/setup.sh installs): the table gives the median and the largest wall time, and the
largest peak resident set. (A child of Python itself would report Python's resident set:
the peak survives exec.) `strait`
loads neither MPI nor CUDA nor NCCL (cli/mpi_program.hpp); strait-mpi, which runs
`exec`, `calibrate run` and MPI sweeps, loads them, and its `--version` shows what that
costs. Also `python3 -c "import strait"` with the build tree's module.

    python3 bench/startup.py [BUILD_DIR] [--runs 20]

Run from the repository root; the figures go in bench/README.md ("Start-up").
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time


def measure(command, env=None):
    """Runs `command` once; returns (wall seconds, peak resident MiB)."""
    with tempfile.NamedTemporaryFile("r") as report:
        start = time.perf_counter()
        done = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", report.name] + command,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
        wall = time.perf_counter() - start
        if done.returncode != 0:
            sys.exit(f"{' '.join(command)} failed ({done.returncode}): {done.stderr.decode()}")
        return wall, int(report.read().split()[-1]) / 1024.0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("build", nargs="?", default="build")
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    strait = os.path.join(args.build, "bin", "strait")
    strait_mpi = os.path.join(args.build, "bin", "strait-mpi")
    python_env = dict(os.environ, PYTHONPATH=os.path.join(args.build, "python"))
    commands = [
        ("strait --version", [strait, "--version"], None),
        ("strait simulate dlrm-1gpu", [strait, "simulate", "configs/scenarios/dlrm-1gpu.json"],
         None),
        ("strait simulate hstu-tiny-cpu",
         [strait, "simulate", "configs/scenarios/hstu-tiny-cpu.json"], None),
        ("strait-mpi --version (MPI, CUDA, NCCL)", [strait_mpi, "--version"], None),
        ("python3 -c 'import strait'", ["/usr/bin/python3", "-c", "import strait"], python_env),
    ]
    print(f"{'command':<42} {'median ms':>10} {'max ms':>8} {'peak RSS MiB':>13}")
    for name, command, env in commands:
        runs = [measure(command, env) for _ in range(args.runs)]
        walls = [w * 1e3 for w, _ in runs]
        rss = max(r for _, r in runs)
        print(f"{name:<42} {statistics.median(walls):>10.1f} {max(walls):>8.1f} {rss:>13.1f}")


if __name__ == "__main__":
    main()
