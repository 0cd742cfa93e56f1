#!/usr/bin/env python3
"""strait against published training figures (bench/README.md, "Published training figures").

Runs the bundled scenarios that reproduce a published run's shape and prints strait's
figure next to the published one. The published figures below are data read from their
sources (MLPerf Training result logs, a public HSTU measurement); how each was derived is
in bench/README.md.

usage: bench/published.py [BUILD_DIR]   (default: build)
"""

import collections
import json
import os
import subprocess
import sys
import tempfile

# name, scenario, published ms, what the figure is, source
MLPERF = [
    ("DLRM-DCNv2, 8 H100 (1 DGX H100), batch 55,296", "dlrm-mlperf-8", 3.62,
     "mlcommons/training_results_v3.1 NVIDIA 1x8x6912 result logs (median interval)"),
    ("DLRM-DCNv2, 64 H100 (8 DGX H100), batch 135,168", "dlrm-mlperf-64", 2.489,
     "mlcommons/training_results_v3.1 NVIDIA eos_n8_ngc23.09_merlin_hugectr result_0"),
    ("DLRM-DCNv2, 128 H100 (16 DGX H100), batch 135,168", "dlrm-mlperf-128", 1.937,
     "mlcommons/training_results_v3.1 NVIDIA eos_n16_ngc23.09_merlin_hugectr result_0"),
]
HSTU = ("dlrm_v3 HSTU stack, 5 layers, forward, 1 H100, ~99k tokens", "hstu-dlrm-v3-1gpu", 9.30,
        "meta-recsys/generative-recommenders#530 (Triton kernels, BF16)")


def run(strait, scenario, extra):
    path = os.path.join("configs", "scenarios", scenario + ".json")
    subprocess.run([strait, "simulate", path] + extra, check=True, stdout=subprocess.DEVNULL)


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    strait = os.path.join(build, "bin", "strait")
    print("| run | published ms | strait ms | error | strait MFU | source |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for name, scenario, published, source in MLPERF:
            out = os.path.join(tmp, scenario + ".json")
            run(strait, scenario, ["--json", out])
            result = json.load(open(out))
            # Steady state: the mean over the steady steps (the first fills the pipeline with
            # the next batch's lookups, the last drains it); the scenarios run three of them.
            if not result["steady_state"]["steady"]:
                sys.exit(f"{scenario}: no steady step; give it more steps")
            ms = result["step_time_ms"]
            print(f"| {name} | {published:.3f} | {ms:.3f} | {100 * (ms / published - 1):+.0f}% "
                  f"| {100 * result['mfu']:.1f}% | {source} |")
        name, scenario, published, source = HSTU
        trace = os.path.join(tmp, scenario + ".trace.json")
        run(strait, scenario, ["--trace", trace, "--json", os.path.join(tmp, "h.json")])
        steps = json.load(open(os.path.join(tmp, "h.json")))["steps"]
        events = json.load(open(trace))
        events = events["traceEvents"] if isinstance(events, dict) else events
        per_kernel = collections.defaultdict(float)
        for e in events:
            n = e.get("name", "")
            if e.get("ph") == "X" and n.startswith("hstu.") and not n.endswith("_bwd"):
                per_kernel[n.split("/")[1]] += e["dur"] / 1000 / steps
        ms = sum(per_kernel.values())
        print(f"| {name} | {published:.2f} | {ms:.2f} | {100 * (ms / published - 1):+.0f}% | - "
              f"| {source} |")
        print()
        print("strait's HSTU forward by kernel (ms): " +
              ", ".join(f"{k} {v:.2f}" for k, v in sorted(per_kernel.items(), key=lambda x: -x[1])))


if __name__ == "__main__":
    main()
