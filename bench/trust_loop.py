#!/usr/bin/env python3
"""The CPU trust loop, N times in one sitting: calibrate, fit, simulate, exec, compare.

Each repeat runs the whole loop as a new user would on this machine:

    mpirun -np 2 strait calibrate run --backend cpu --out m.json   (strait hands it to strait-mpi)
    strait calibrate fit m.json --out profiles/cpu.json
    then for each scenario:
      strait simulate SCENARIO --profiles profiles --json s.json --trace st.json
      mpirun -np 2 --bind-to core strait exec SCENARIO --json x.json --trace xt.json
      strait compare s.json x.json --sim-trace st.json --measured-trace xt.json --json c.json

and the report gives, per scenario, the step error of every repeat (simulated p50 step
against the measured p50 over the steady steps, as issue 42 quoted it: a step that the
machine stalls for tens of milliseconds moves the mean, not the p50; the mean's error and
whether the simulated mean lay inside exec's 95% interval are shown beside), its median
and spread, the kernel-family MAPE, the fit's held-out MAPE by family
and how steady the machine was (exec's count of cores that other processes kept busy, and
how much kernels varied across steps). The acceptance bar of issue 42 is printed beside:
median step error within 10%, family MAPE within 20%, every repeat within 15%.

    python3 bench/trust_loop.py [--repeats 5] [--build build] [--out DIR]

Run from the repository root on an idle machine (nothing else building or running). One
repeat takes about 3 minutes on 2 cores, most of it the calibration suite. Everything each
repeat wrote stays under --out (default: a fresh temporary folder, printed), with
summary.json holding the figures of the report.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

SCENARIOS = ["configs/scenarios/hstu-tiny-cpu.json", "configs/scenarios/dlrm-tiny-cpu.json"]
MPIRUN = ["mpirun", "--allow-run-as-root", "--oversubscribe", "-np", "2"]
BAR_MEDIAN, BAR_EACH, BAR_MAPE = 10.0, 15.0, 20.0  # percent


def run(command, log):
    """Runs `command`, appending its output to `log`; stops the loop if it fails."""
    with open(log, "a") as out:
        out.write("$ " + " ".join(command) + "\n")
        out.flush()
        done = subprocess.run(command, stdout=out, stderr=subprocess.STDOUT)
    if done.returncode != 0:
        sys.exit(f"trust_loop: '{' '.join(command)}' failed ({done.returncode}); see {log}")


def compute_by_rank(trace_file):
    """Milliseconds of kernels per rank over the run, from a strait trace (exec or simulate)."""
    comm = {"step", "input_dist", "output_dist", "grad_dist", "dense_sync", "replica_sync",
            "context_parallel", "moe"}
    totals = {}
    for e in json.load(open(trace_file))["traceEvents"]:
        if e.get("ph") != "X" or e.get("cat") in comm or "step" not in e.get("args", {}):
            continue
        totals[e["pid"]] = totals.get(e["pid"], 0.0) + e["dur"] / 1e3
    return [totals[r] for r in sorted(totals)]


def sync_loss_ms(breakdown):
    """Exposed communication, straggler wait and bubble: what synchronising costs a step."""
    return {side: sum(f[side] for f in breakdown if f["name"] != "compute")
            for side in ("simulated_ms", "measured_ms")}


def one_repeat(strait, folder, scenarios, keep_measurements):
    """One calibration and fit, then every scenario simulated, run and compared."""
    os.makedirs(os.path.join(folder, "profiles"), exist_ok=True)
    log = os.path.join(folder, "log.txt")
    measurements = os.path.join(folder, "measurements.json")
    profile = os.path.join(folder, "profiles", "cpu.json")
    start = time.perf_counter()
    if not (keep_measurements and os.path.exists(measurements)):
        run(MPIRUN + [strait, "calibrate", "run", "--backend", "cpu", "--out", measurements], log)
    run([strait, "calibrate", "fit", measurements, "--out", profile], log)
    fit = json.load(open(profile))["provenance"]["validation"]
    result = {
        "calibration_s": time.perf_counter() - start,
        "held_out_mape_percent": {f["family"]: 100 * f["held_out_mape"] for f in fit
                                  if f["held_out_records"] > 0},
        "scenarios": {},
    }
    for scenario in scenarios:
        name = os.path.splitext(os.path.basename(scenario))[0]
        path = lambda suffix: os.path.join(folder, f"{name}-{suffix}.json")
        run([strait, "simulate", scenario, "--profiles", os.path.dirname(profile),
             "--json", path("sim"), "--trace", path("sim-trace")], log)
        run(MPIRUN + ["--bind-to", "core", strait, "exec", scenario, "--json", path("exec"),
                      "--trace", path("exec-trace")], log)
        run([strait, "compare", path("sim"), path("exec"), "--sim-trace", path("sim-trace"),
             "--measured-trace", path("exec-trace"), "--json", path("compare")], log)
        compared = json.load(open(path("compare")))
        measured = json.load(open(path("exec")))
        step = {f["name"]: f for f in compared["step_time"]}
        p50, mean = step["p50"], step["mean"]
        result["scenarios"][name] = {
            "simulated_ms": p50["simulated_ms"],
            "measured_ms": p50["measured_ms"],
            "step_error_percent": 100 * (p50["simulated_ms"] / p50["measured_ms"] - 1),
            "mean_error_percent": 100 * (mean["simulated_ms"] / mean["measured_ms"] - 1),
            "in_ci95": compared.get("simulated_mean_in_ci95"),
            "family_mape_percent": compared.get("kernel_family_mape_percent"),
            "families": {f["name"]: 100 * (f["simulated_ms"] / f["measured_ms"] - 1)
                         for f in compared.get("kernel_families", []) if f["measured_ms"] > 0},
            "kernel_spread_percent": measured.get("kernel_spread_percent"),
            "sync_loss_ms": sync_loss_ms(compared["breakdown_ms"]),
            "compute_by_rank_ms": {"simulated": compute_by_rank(path("sim-trace")),
                                   "measured": compute_by_rank(path("exec-trace"))},
            "other_busy_cores": measured.get("machine", {}).get("other_busy_cores"),
        }
    return result


def spread(values):
    return f"{statistics.median(values):+.1f}% ({min(values):+.1f} .. {max(values):+.1f})"


def report(repeats, scenarios):
    names = [os.path.splitext(os.path.basename(s))[0] for s in scenarios]
    print(f"\n{len(repeats)} repeats; calibration "
          f"{statistics.median(r['calibration_s'] for r in repeats):.0f} s each (median)")
    verdicts = []
    for name in names:
        rows = [r["scenarios"][name] for r in repeats]
        errors = [row["step_error_percent"] for row in rows]
        mapes = [row["family_mape_percent"] for row in rows if row["family_mape_percent"]]
        print(f"\n{name}")
        print(f"  {'repeat':>6} {'sim p50':>10} {'meas p50':>10} {'error':>8} {'mean err':>9} "
              f"{'in CI':>6} "
              f"{'fam MAPE':>9} {'spread':>7} {'other cores':>12}")
        for k, row in enumerate(rows):
            busy = row["other_busy_cores"]
            print(f"  {k + 1:>6} {row['simulated_ms']:>8.2f}ms {row['measured_ms']:>8.2f}ms "
                  f"{row['step_error_percent']:>+7.1f}% {row['mean_error_percent']:>+8.1f}% "
                  f"{str(row['in_ci95']):>6} "
                  f"{row['family_mape_percent'] or 0:>8.1f}% "
                  f"{row['kernel_spread_percent'] or 0:>6.1f}% "
                  f"{'-' if busy is None else f'{busy:.2f}':>12}")
        print(f"  p50 step error, median (range): {spread(errors)}; mean step error "
              f"{spread([row['mean_error_percent'] for row in rows])}")
        for k, row in enumerate(rows):
            loss, ranks = row["sync_loss_ms"], row["compute_by_rank_ms"]
            print(f"  repeat {k + 1}: exposed communication + straggler wait + bubble "
                  f"{loss['simulated_ms']:.2f} ms simulated, {loss['measured_ms']:.2f} measured; "
                  f"kernels by rank (ms, whole run) simulated "
                  f"{' / '.join(f'{v:.0f}' for v in ranks['simulated'])}, measured "
                  f"{' / '.join(f'{v:.0f}' for v in ranks['measured'])}")
        if mapes:
            print(f"  family MAPE median (range): {statistics.median(mapes):.1f}% "
                  f"({min(mapes):.1f} .. {max(mapes):.1f})")
        families = sorted({f for row in rows for f in row["families"]})
        for family in families:
            values = [row["families"][family] for row in rows if family in row["families"]]
            print(f"    {family:<28} {spread(values)}")
        ok = (abs(statistics.median(errors)) <= BAR_MEDIAN
              and all(abs(e) <= BAR_EACH for e in errors)
              and bool(mapes) and statistics.median(mapes) <= BAR_MAPE)
        verdicts.append(ok)
        print(f"  bar (median error <= {BAR_MEDIAN:g}%, every repeat <= {BAR_EACH:g}%, "
              f"family MAPE <= {BAR_MAPE:g}%): {'met' if ok else 'not met'}")
    held = {}
    for r in repeats:
        for family, mape in r["held_out_mape_percent"].items():
            held.setdefault(family, []).append(mape)
    print("\nfit, held-out MAPE by family: median (range)")
    for family, values in sorted(held.items()):
        print(f"  {family:<28} {statistics.median(values):.1f}% "
              f"({min(values):.1f} .. {max(values):.1f})")
    return all(verdicts)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--build", default="build")
    parser.add_argument("--out", help="folder for every repeat's files (default: a new one)")
    parser.add_argument("--scenario", action="append", help="scenario (default: both CPU ones)")
    parser.add_argument("--keep-measurements", action="store_true",
                        help="reuse a repeat's measurements.json found under --out (only the "
                             "fit, simulation, run and comparison again)")
    args = parser.parse_args()
    strait = os.path.join(args.build, "bin", "strait")
    if not os.access(strait, os.X_OK):
        sys.exit(f"trust_loop: {strait} not found: build first (make build) or pass --build")
    scenarios = args.scenario or SCENARIOS
    out = args.out or tempfile.mkdtemp(prefix="strait-trust-loop-")
    os.makedirs(out, exist_ok=True)
    print(f"trust_loop: {args.repeats} repeats, files in {out}", flush=True)
    repeats = []
    for k in range(args.repeats):
        repeats.append(one_repeat(strait, os.path.join(out, f"repeat-{k + 1}"), scenarios,
                                  args.keep_measurements))
        errors = ", ".join(f"{n} {s['step_error_percent']:+.1f}%"
                           for n, s in repeats[-1]["scenarios"].items())
        print(f"  repeat {k + 1}: {errors}", flush=True)
        with open(os.path.join(out, "summary.json"), "w") as f:
            json.dump(repeats, f, indent=1)
    sys.exit(0 if report(repeats, scenarios) else 1)


if __name__ == "__main__":
    main()
