#!/usr/bin/env python3
"""Compares two strait binaries on one scenario, running them at the same time.

On a shared VM the speed of a core drifts by 10-30% from one minute to the next, so two
binaries timed one after the other differ by more than most optimisations change. Run
side by side, one pinned to each of two cores, both see the same drift: their ratio is
steady to about 2%. Each round swaps the cores; the table gives each binary's CPU seconds
per round and the ratio B / A, and the last line their geometric mean (the cores of a VM
differ too, by up to ~10%: with as many rounds on each core their bias cancels). The two binaries'
`--json` results must agree (wall times aside), else it says so and exits non-zero.

    python3 bench/side_by_side.py BIN_A BIN_B SCENARIO [--mode flow] [--rounds 4]

Both share the machine's L3 cache and memory bandwidth, so absolute times run above those
of a binary alone; compare ratios, and take absolute figures from bench/growth.py.

--apart runs them one after the other instead, on core 0, A first in odd rounds and B first
in even ones. Use it for changes to how memory is reached (prefetching, layout): side by
side each binary has half the L3, which a change of that kind can help or hurt unlike a run
alone (a prefetch change measured 0.91 side by side and 1.01 apart at 16,384 GPUs). Apart,
the VM's drift stays in each pair's ratio (0.8-1.2 per pair at 16k): take many rounds.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

WALL_KEYS = ("build_wall_s", "sim_wall_s")


def start(binary, core, scenario, mode, out):
    """Starts `binary simulate` pinned to `core`; returns the process."""
    command = ["taskset", "-c", str(core), binary, "simulate", scenario, "--mode", mode,
               "--json", out]
    return subprocess.Popen(command, stdout=subprocess.DEVNULL)


def cpu_seconds(pid):
    """Waits for `pid`; returns its user + system CPU seconds, failing on a non-zero exit."""
    _, status, usage = os.wait4(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"side_by_side: process {pid} failed")
    return usage.ru_utime + usage.ru_stime


def result(path):
    with open(path) as f:
        doc = json.load(f)
    for key in WALL_KEYS:
        doc.pop(key, None)
    return doc


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("a", help="binary A (the baseline)")
    parser.add_argument("b", help="binary B")
    parser.add_argument("scenario")
    parser.add_argument("--mode", default="flow", choices=["analytical", "flow"])
    parser.add_argument("--rounds", type=int, default=4, help="an even number")
    parser.add_argument("--apart", action="store_true",
                        help="one after the other on core 0, not at the same time")
    args = parser.parse_args()
    if args.rounds < 2 or args.rounds % 2 != 0:
        sys.exit("side_by_side: --rounds must be even (each binary as often on each core)")
    if (os.cpu_count() or 1) < 2:
        sys.exit("side_by_side: needs two cores")
    ratios = []
    how = "one after the other" if args.apart else "at the same time"
    print(f"# {args.scenario}, --mode {args.mode}: CPU seconds, A and B {how}")
    print("| round | A core | A | B | B / A |")
    print("|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as folder:
        out_a, out_b = os.path.join(folder, "a.json"), os.path.join(folder, "b.json")
        for k in range(args.rounds):
            core_a, core_b = (0, 1) if k % 2 == 0 else (1, 0)
            if args.apart:
                core_a = core_b = 0
                runs = [("a", args.a, out_a), ("b", args.b, out_b)]
                times = {}
                for label, binary, out in runs if k % 2 == 0 else reversed(runs):
                    process = start(binary, 0, args.scenario, args.mode, out)
                    times[label] = cpu_seconds(process.pid)
                    process.returncode = 0  # reaped by os.wait4
                ta, tb = times["a"], times["b"]
            else:
                pa = start(args.a, core_a, args.scenario, args.mode, out_a)
                pb = start(args.b, core_b, args.scenario, args.mode, out_b)
                ta, tb = cpu_seconds(pa.pid), cpu_seconds(pb.pid)
                pa.returncode = pb.returncode = 0  # reaped by os.wait4
            if result(out_a) != result(out_b):
                sys.exit("side_by_side: A and B give different results")
            ratios.append(tb / ta)
            print(f"| {k + 1} | {core_a} | {ta:.2f} s | {tb:.2f} s | {tb / ta:.3f} |")
    print(f"\nB / A, geometric mean: {statistics.geometric_mean(ratios):.3f} (results identical)")


if __name__ == "__main__":
    main()
