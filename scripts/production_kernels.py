#!/usr/bin/env python3
"""Makes the H100 profile's defaults the kernels production jobs run, as implementations.

The bundled H100 profile costs what production jobs run by default. This script writes
those implementations next to strait's own benchmarked kernels
(scripts/h100_profile_from_bench.py) and makes them the families' defaults:
- jagged attention: the CUTLASS HSTU kernels, tables read from NVIDIA's published H100
  measurements;
- GEMM forward and backward: cuBLASLt as `strait calibrate` measured it in a training step's
  cache state (cold L2, forward apart from the input- and weight-gradient GEMMs), over square
  and skinny shapes, on an H200 (configs/profiles/h200-sxm.json): the same GH100 compute
  (132 SMs, the same clocks and bf16 peak) as the H100 SXM.
Each implementation names its source. Run it after the bench script; it is idempotent.

Usage: scripts/production_kernels.py configs/profiles/h100-sxm.json [configs/profiles/h200-sxm.json]
"""

import json
import sys

LENGTHS = [128, 256, 512, 1024, 2048, 4096, 8192, 16384]

# NVIDIA recsys-examples, examples/hstu/training/benchmark/figs/hstu_attn_h100_p10_heatmap.png
# (commit 43465aea): the CUTLASS HSTU attention kernels (corelib/hstu hopper, the kernels the
# HSTU training benchmark runs with --kernel_backend cutlass) on one H100 SXM5 80GB, bf16,
# causal, 4 heads, full-length (non-jagged) batches, P10 of CUDA-graph replays. MFU in % of
# 989 TFLOP/s, read from the figure's batch-32 row by head dimension. FLOPs as strait counts
# them: forward 2 x heads x L^2 x head_dim per sequence (the causal half), backward 2.5 x.
CUTLASS_HSTU_SOURCE = (
    "NVIDIA recsys-examples examples/hstu/training/benchmark/figs/hstu_attn_h100_p10_heatmap.png "
    "(commit 43465aea, benchmark_hstu_attn_mfu.py): CUTLASS HSTU attention on one H100 SXM5 "
    "80GB, bf16, causal, 4 heads, batch 32, lengths 128..16384, P10 time; MFU of 989 TFLOP/s "
    "read from the figure, backward FLOPs 2.5 x forward. Query tile forward 128 rows "
    "(corelib/hstu/hopper/utils.h get_tile_size_fwd, head dims 128 and 256), backward 64 "
    "(get_tile_size_bwd).")
CUTLASS_HSTU_MFU = {
    "jagged_attention": {
        64: [2.4, 5.5, 13.0, 21.0, 33.7, 42.0, 47.6, 48.2],
        128: [4.2, 10.3, 18.4, 33.3, 46.2, 53.4, 53.1, 56.7],
        256: [6.7, 11.3, 24.8, 41.4, 54.3, 62.9, 63.1, 64.5],
    },
    "jagged_attention_backward": {
        64: [3.2, 6.8, 13.7, 22.6, 31.8, 38.7, 40.9, 42.8],
        128: [3.9, 8.6, 16.3, 27.9, 38.8, 44.5, 47.3, 49.1],
        256: [4.6, 8.7, 16.4, 25.9, 32.4, 36.4, 38.4, 39.0],
    },
}


def cutlass_hstu(family, memory_efficiency):
    by_dim = {
        str(dim): {"key": "mean_length",
                   "points": [[n, round(mfu / 100, 4)] for n, mfu in zip(LENGTHS, row)]}
        for dim, row in CUTLASS_HSTU_MFU[family].items()
    }
    return {"implementation": "cutlass-hstu", "provenance": CUTLASS_HSTU_SOURCE,
            "compute_efficiency_by_head_dim": by_dim, "memory_efficiency": memory_efficiency,
            "tile_rows": 128 if family == "jagged_attention" else 64}


def set_default(kernels, family, implementation):
    """Puts `implementation` into `family` (replacing one of its name) as the default."""
    current = kernels[family]
    listed = current["implementations"] if "implementations" in current else [current]
    listed = [i for i in listed if i.get("implementation") != implementation["implementation"]]
    kernels[family] = {"default": implementation["implementation"],
                       "implementations": [implementation] + listed}


CUBLASLT_SOURCE = (
    "strait calibrate run --backend cuda on an NVIDIA H200 (driver 580.159.04, 2026-11-27; "
    "configs/profiles/h200-sxm.json, bench/results/h200-measurements.json): cuBLASLt bf16/fp16/"
    "fp8 GEMMs, square 256..16384 and the skinny shapes of the bundled models, timed cold (L2 "
    "flushed) as a training step meets them; the backward (input + weight gradient) apart. "
    "Transferred to the H100 SXM: the same GH100 compute (132 SMs, clocks, 989 TFLOP/s bf16); "
    "its higher HBM bandwidth matters only to GEMMs too small to be compute-bound.")


def cublaslt(family, h200):
    source = h200["kernels"][family]
    return {"implementation": "cublaslt", "provenance": CUBLASLT_SOURCE,
            "compute_efficiency": source["compute_efficiency"],
            "memory_efficiency": source["memory_efficiency"]}


def main(profile_path, h200_path):
    profile = json.load(open(profile_path))
    kernels = profile["kernels"]
    h200 = json.load(open(h200_path))
    for family in ("gemm", "gemm_backward"):
        if family not in kernels:  # the backward falls back to the forward's tables
            kernels[family] = dict(kernels["gemm"])
        set_default(kernels, family, cublaslt(family, h200))
    for family in CUTLASS_HSTU_MFU:
        current = kernels[family]
        own = current["implementations"] if "implementations" in current else [current]
        memory = next(i for i in own if i.get("implementation") == "strait")["memory_efficiency"]
        set_default(kernels, family, cutlass_hstu(family, memory))
    sources = profile["provenance"]["sources"]
    note = ("Defaults (scripts/production_kernels.py; each implementation names its source): "
            "jagged attention cutlass-hstu, the published CUTLASS HSTU kernels production HSTU "
            "jobs run; GEMMs cublaslt as calibrated in a step's cache state on an H200 (same "
            "GH100 compute). strait's own benchmarked kernels stay as implementations \"strait\" "
            "and \"cublas\" (warm square GEMMs); a plan chooses them with \"kernels\": "
            "{\"jagged_attention\": \"strait\", \"gemm\": \"cublas\", ...}")
    sources[:] = [s for s in sources if not s.startswith("Defaults (scripts/") and
                  not s.startswith("jagged_attention / jagged_attention_backward default")]
    sources.append(note)
    with open(profile_path, "w") as f:
        json.dump(profile, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2] if len(sys.argv) == 3 else "configs/profiles/h200-sxm.json")
