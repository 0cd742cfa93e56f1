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
# NVIDIA recsys-examples' HSTU training benchmark (examples/hstu/training/benchmark/
# PERF_ANALYSIS.md, run exp4_caching_hr on 2 DGX H100): the median logged step, and rank 0's
# GPU time by category in its fastest profiled step (GEMMs: its UVQK and projection GEMMs'
# forward and backward time, 40.199 + 8.905 ms; the breakdown's GEMM rows count only time
# when no other kernel runs).
HSTU_BENCH = ("HSTU benchmark, 8 layers, 1024 / 4 x 256, 16 H100, 32 x 4,099 tokens per GPU",
              "hstu-recsys-bench", 187.01,
              "NVIDIA/recsys-examples examples/hstu/training/benchmark/PERF_ANALYSIS.md")
HSTU_BENCH_FAMILIES = [("attention", 79.900), ("GEMM", 40.199 + 8.905),
                       ("elementwise", 39.507), ("embedding", 10.643), ("exposed NCCL", 2.927)]
# Trace categories of strait's kernels by the benchmark's categories.
FAMILY_OF = {"jagged_attention": "attention", "jagged_attention_backward": "attention",
             "padded_attention": "attention", "padded_attention_backward": "attention",
             "gemm": "GEMM", "gemm_backward": "GEMM", "elementwise": "elementwise",
             "optimizer": "elementwise", "embedding_lookup": "embedding",
             "embedding_update": "embedding"}
# Whether a constant of strait was chosen from a row (issue 33 item 5): none was. The
# profile tables behind each row come from other measurements (kernel benchmarks, another
# GPU's calibration), never from these runs.
FITTED = set()


def held(scenario):
    return "fitted" if scenario in FITTED else "held out"


def run(strait, scenario, extra):
    path = os.path.join("configs", "scenarios", scenario + ".json")
    subprocess.run([strait, "simulate", path] + extra, check=True, stdout=subprocess.DEVNULL)


def hstu_bench(strait, tmp, errors):
    """Prints the HSTU benchmark row; returns strait's ms per category of HSTU_BENCH_FAMILIES."""
    name, scenario, published, source = HSTU_BENCH
    out, trace = os.path.join(tmp, "bench.json"), os.path.join(tmp, "bench.trace.json")
    run(strait, scenario, ["--json", out, "--trace", trace])
    result = json.load(open(out))
    ms = result["step_time_ms"]
    errors.append((scenario, ms / published - 1))
    print(f"| {name} | {published:.2f} | {ms:.2f} | {100 * (ms / published - 1):+.0f}% "
          f"| {100 * result['mfu']:.1f}% | {held(scenario)} | {source} |")
    events = json.load(open(trace))
    events = events["traceEvents"] if isinstance(events, dict) else events
    per = collections.defaultdict(float)
    for e in events:
        if e.get("ph") == "X" and e.get("pid") == 0 and e.get("cat") in FAMILY_OF:
            per[FAMILY_OF[e["cat"]]] += e["dur"] / 1000 / result["steps"]
    b = result["breakdown_critical_ms"]
    per["exposed NCCL"] = sum(v for k, v in b.items() if k.startswith("exposed_"))
    return [per[k] for k, _ in HSTU_BENCH_FAMILIES]


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    strait = os.path.join(build, "bin", "strait")
    print("| run | published ms | strait ms | error | strait MFU | row | source |")
    print("|---|---|---|---|---|---|---|")
    errors = []
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
            errors.append((scenario, ms / published - 1))
            print(f"| {name} | {published:.3f} | {ms:.3f} | {100 * (ms / published - 1):+.0f}% "
                  f"| {100 * result['mfu']:.1f}% | {held(scenario)} | {source} |")
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
        errors.append((scenario, ms / published - 1))
        print(f"| {name} | {published:.2f} | {ms:.2f} | {100 * (ms / published - 1):+.0f}% | - "
              f"| {held(scenario)} | {source} |")
        families = hstu_bench(strait, tmp, errors)
        print()
        for kind in ("held out", "fitted"):
            rows = [abs(e) for s, e in errors if held(s) == kind]
            print(f"{kind} rows: {len(rows)}" + (
                f", MAPE {100 * sum(rows) / len(rows):.1f}%" if rows else ""))
        print()
        print("HSTU benchmark by category, rank 0 (ms per step): " + ", ".join(
            f"{k} {v:.1f} vs {p:.1f} ({100 * (v / p - 1):+.0f}%)"
            for (k, p), v in zip(HSTU_BENCH_FAMILIES, families)))
        print("strait's HSTU forward by kernel (ms): " +
              ", ".join(f"{k} {v:.2f}" for k, v in sorted(per_kernel.items(), key=lambda x: -x[1])))


if __name__ == "__main__":
    main()
