#!/usr/bin/env python3
"""Growth of strait's cost per simulated step with the GPU count (issue 9).

The hstu-16k-4dc job (four datacenters of HGX H100 hosts, its model, data and plan) at
1,024 .. 16,384 GPUs: the cluster keeps four datacenters and shrinks their hosts, the
plan's embedding groups are 256 ranks so that 1,024 GPUs (256 per datacenter) still fit.
Each size runs `strait simulate --json` once, in its own process, and the table gives
(build + replay) wall seconds per simulated step, the process's CPU seconds per step,
events per step, and the least-squares slope of log time on log GPUs (1.0 = linear).

    python3 bench/growth.py BUILD_DIR [--mode analytical|flow] [--sizes 1024,2048,...]
                            [--repeat K] [--instructions]

This VM's speed drifts by 10-30% within minutes, and a 16k run takes 30x as long as a 1k
run, so one run per size can move the exponent by +-0.1: --repeat K runs the sizes in turn
K times and keeps each size's fastest run.

--instructions also runs each size once under valgrind's callgrind (about 50x slower: some
5 minutes for the flow sizes up to 16,384) and adds the instructions per simulated step and
their exponent. That count is the same on every run and machine: it is the growth of the
work itself, apart from what reaching memory costs, which the wall time adds (a rank's
state leaves the caches between 1,024 and 16,384 GPUs). Needs valgrind.

The variant configs are written to a temporary folder and removed afterwards.
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONFIGS = os.path.join(ROOT, "configs")


def slope(xs, ys):
    """Least-squares slope of log y on log x."""
    lx = [math.log(x) for x in xs]
    ly = [math.log(y) for y in ys]
    mx, my = sum(lx) / len(lx), sum(ly) / len(ly)
    num = sum((a - mx) * (b - my) for a, b in zip(lx, ly))
    den = sum((a - mx) ** 2 for a in lx)
    return num / den


def write_variant(folder, gpus):
    """The hstu-16k-4dc scenario at `gpus` GPUs in `folder`; returns its path."""
    with open(os.path.join(CONFIGS, "clusters", "scale-across-16k-4dc.json")) as f:
        cluster = json.load(f)
    gpus_per_host = cluster["defaults"]["host"]["gpus"]
    dcs = len(cluster["datacenters"])
    hosts = gpus // (gpus_per_host * dcs)
    if hosts * gpus_per_host * dcs != gpus:
        sys.exit(f"growth: {gpus} GPUs is not {dcs} datacenters of whole {gpus_per_host}-GPU hosts")
    cluster["name"] = f"growth-{gpus}"
    for dc in cluster["datacenters"]:
        dc["hosts"] = hosts
    with open(os.path.join(CONFIGS, "plans", "hstu-16k-4dc.json")) as f:
        plan = json.load(f)
    plan["name"] = f"growth-{gpus}"
    plan["sparse"]["group_size"] = 256
    with open(os.path.join(CONFIGS, "scenarios", "hstu-16k-4dc.json")) as f:
        scenario = json.load(f)
    scenario["name"] = f"growth-{gpus}"
    scenario["cluster"] = f"cluster-{gpus}.json"
    scenario["plan"] = f"plan-{gpus}.json"
    for key in ("model", "data"):
        scenario[key] = os.path.normpath(os.path.join(CONFIGS, "scenarios", scenario[key]))
    for name, doc in ((f"cluster-{gpus}.json", cluster), (f"plan-{gpus}.json", plan),
                      (f"scenario-{gpus}.json", scenario)):
        with open(os.path.join(folder, name), "w") as f:
            json.dump(doc, f, indent=1)
    return os.path.join(folder, f"scenario-{gpus}.json")


def run_once(strait, scenario, mode, out):
    """One `strait simulate` run: (its --json result, CPU seconds, of which system, peak MiB)."""
    process = subprocess.Popen([strait, "simulate", scenario, "--mode", mode, "--json", out],
                               stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"growth: {strait} simulate {scenario} failed")
    with open(out) as f:
        result = json.load(f)
    return result, usage.ru_utime + usage.ru_stime, usage.ru_stime, usage.ru_maxrss / 1024


def instructions_of(strait, scenario, mode, folder):
    """Instructions that `strait simulate` executes on `scenario` (valgrind's callgrind)."""
    out = os.path.join(folder, "callgrind.out")
    try:
        subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", strait,
                        "simulate", scenario, "--mode", mode, "--json",
                        os.path.join(folder, "callgrind.json")],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    except FileNotFoundError:
        sys.exit("growth: --instructions needs valgrind (apt-get install valgrind)")
    except subprocess.CalledProcessError:
        sys.exit(f"growth: {strait} simulate {scenario} failed under valgrind")
    with open(out) as f:
        for line in f:
            if line.startswith(("summary:", "totals:")):
                return int(line.split()[1])
    sys.exit(f"growth: no instruction count in {out}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("build", help="build folder holding bin/strait")
    parser.add_argument("--mode", default="analytical", choices=["analytical", "flow"])
    parser.add_argument("--sizes", default="1024,2048,4096,8192,16384")
    parser.add_argument("--repeat", type=int, default=1,
                        help="runs per size, taken in turns; the table keeps each size's fastest")
    parser.add_argument("--instructions", action="store_true",
                        help="also count each size's instructions per step under callgrind")
    args = parser.parse_args()
    strait = os.path.join(args.build, "bin", "strait")
    sizes = [int(s) for s in args.sizes.split(",")]
    best = {}
    steps_of = {}
    with tempfile.TemporaryDirectory() as folder:
        scenarios = {gpus: write_variant(folder, gpus) for gpus in sizes}
        for _ in range(args.repeat):
            for gpus in sizes:
                out = os.path.join(folder, f"result-{gpus}.json")
                result, cpu, system, peak = run_once(strait, scenarios[gpus], args.mode, out)
                steps = result["steps"]
                row = (gpus, (result["build_wall_s"] + result["sim_wall_s"]) / steps, cpu / steps,
                       system / steps, result["events"] / steps, result["step_time_ms"], peak)
                if gpus not in best or row[1] < best[gpus][1]:
                    best[gpus] = row
                steps_of[gpus] = steps
        # Per step, like the times (each size's step count from its --json result).
        instructions = {gpus: instructions_of(strait, scenarios[gpus], args.mode, folder) /
                        steps_of[gpus] for gpus in sizes} if args.instructions else {}
    rows = [best[gpus] for gpus in sizes]
    print(f"# strait simulate --mode {args.mode}, hstu-16k-4dc's job at each size "
          "(sparse groups of 256), per simulated step")
    if args.repeat > 1:
        print(f"# fastest of {args.repeat} runs per size, taken in turns")
    counted = " instructions |" if instructions else ""
    # System time is mostly the kernel zeroing fresh pages: on this VM memory freed seconds
    # before goes back to the host and is slow to touch again, more so for big runs.
    print("| GPUs | build + replay wall | process CPU (system) | events | step time | peak memory |"
          f"{counted}")
    print("|---|---|---|---|---|---|" + ("---|" if instructions else ""))
    for gpus, wall, cpu, system, events, step, peak in rows:
        count = f" {instructions[gpus] / 1e9:.3f} G |" if instructions else ""
        print(f"| {gpus:,} | {wall:.2f} s | {cpu:.2f} s ({system:.2f} s) | {events / 1e6:.2f} M "
              f"| {step:.3f} ms "
              f"| {peak:.0f} MiB |{count}")
    xs = [r[0] for r in rows]
    counted = (f", instructions {slope(xs, [instructions[g] for g in xs]):.3f}"
               if instructions else "")
    print(f"\nfitted exponent: wall {slope(xs, [r[1] for r in rows]):.2f}, "
          f"CPU {slope(xs, [r[2] for r in rows]):.2f}, events {slope(xs, [r[4] for r in rows]):.2f}"
          f"{counted}")
    # Where the growth happens: the slope between each pair of neighbouring sizes (on this
    # VM the flow replay's steepest step is where its state leaves the L3 cache).
    local = [f"{a[0]:,}-{b[0]:,} {slope([a[0], b[0]], [a[1], b[1]]):.2f}"
             for a, b in zip(rows, rows[1:])]
    if local:
        print("local exponents (wall): " + ", ".join(local))


if __name__ == "__main__":
    main()
