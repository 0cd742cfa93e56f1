#!/usr/bin/env python3
"""Writes the estimated Blackwell profiles (B200, GB200) from the H100 profile (issue 38).

    python3 scripts/estimated_profiles.py          # rewrites configs/profiles/{b200,gb200}.json
    python3 scripts/estimated_profiles.py --check  # fails when they differ from what it writes

No Blackwell GPU has been calibrated here. Each profile takes its device figures (peaks,
HBM) from NVIDIA's published specifications, and its kernel tables from configs/profiles/h100-sxm.json
under one stated assumption: a kernel reaches the same fraction of its GPU's peak at the
same shape (the same libraries and kernels, built for sm_100, scale with the GPU). That
holds roughly for cuBLAS GEMMs and bandwidth-bound kernels; it is optimistic for the CUTLASS
HSTU attention kernels, which are written for Hopper (corelib/hstu/hopper) and would run an
older path on Blackwell until ported. `strait calibrate` on the GPU replaces every table.
Running it again gives the same files; ctest's estimated_profiles runs --check, so a change
to the H100 profile that is not carried over fails the suite.
"""
import copy
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROFILES = os.path.join(ROOT, "configs", "profiles")

ASSUMPTION = ("Kernel tables: configs/profiles/h100-sxm.json's, unchanged (assumed: the same "
              "kernels reach the same fraction of peak at the same shapes; optimistic for the "
              "Hopper-only CUTLASS HSTU attention kernels). Written by "
              "scripts/estimated_profiles.py.")

KEPT_FROM_H100 = "launch_overhead, nccl_sms and memory_reserved: the H100 profile's assumptions"

# Dense tensor-core peaks (no sparsity), TFLOP/s; fp32 is the CUDA-core rate.
TARGETS = {
    "b200.json": {
        "gpu_type": "B200",
        "summary": ("NVIDIA B200 in an HGX B200 board (up to 1,000 W): datasheet peaks and HBM; "
                    "kernel tables estimated from the H100 profile until calibrated."),
        "sources": [
            "NVIDIA's GB200 NVL72 / HGX B200 specifications, per GPU of an HGX B200: FP8 9, "
            "FP16/BF16 4.5, TF32 2.2 PFLOP/s with sparsity, halved for dense: fp8 4,500, "
            "bf16/fp16 2,250, tf32 1,100 TFLOP/s; FP32 75 TFLOP/s; 180 GB HBM3e at 7.7 TB/s; "
            "fifth-generation NVLink at 1.8 TB/s per GPU (900 GB/s each way)",
            "sm_count 148 (the Blackwell GPU's SMs as CUDA reports them; assumed)",
            KEPT_FROM_H100,
        ],
        "device": {"peak_tflops": {"fp32": 75, "tf32": 1100, "bf16": 2250, "fp16": 2250,
                                   "fp8": 4500},
                   "hbm_bandwidth": "7700 GB/s", "hbm_capacity": "180 GB",
                   "sm_count": 148},
    },
    "gb200.json": {
        "gpu_type": "GB200",
        "summary": ("A Blackwell GPU of a GB200 superchip (GB200 NVL72 rack, up to 1,200 W): "
                    "datasheet peaks and HBM; kernel tables estimated from the H100 profile "
                    "until calibrated."),
        "sources": [
            "NVIDIA's GB200 NVL72 specifications (72 GPUs): FP8 720 PFLOP/s with sparsity in "
            "all; per GPU FP8 10, FP16/BF16 5, TF32 2.5 PFLOP/s with sparsity, halved for "
            "dense: fp8 5,000, bf16/fp16 2,500, tf32 1,250 TFLOP/s; FP32 80 TFLOP/s; 186 GB "
            "HBM3e at 8 TB/s; NVLink 130 TB/s in all (1.8 TB/s per GPU, 900 GB/s each way)",
            "sm_count 148, as the B200 (assumed)",
            KEPT_FROM_H100,
        ],
        "device": {"peak_tflops": {"fp32": 80, "tf32": 1250, "bf16": 2500, "fp16": 2500,
                                   "fp8": 5000},
                   "hbm_bandwidth": "8000 GB/s", "hbm_capacity": "186 GB",
                   "sm_count": 148},
    },
}


def mark_kernels(kernels):
    """The H100 kernel tables with every implementation's provenance saying where they are from."""
    out = copy.deepcopy(kernels)
    for family in out.values():
        entries = family.get("implementations", [family])
        for entry in entries:
            if "provenance" in entry:
                entry["provenance"] = "Estimated from the H100 profile's: " + entry["provenance"]
    return out


def main():
    check = sys.argv[1:] == ["--check"]
    if sys.argv[1:] and not check:
        sys.exit("usage: estimated_profiles.py [--check]")
    with open(os.path.join(PROFILES, "h100-sxm.json")) as f:
        h100 = json.load(f)
    stale = []
    for name, target in TARGETS.items():
        device = dict(h100["device"])
        device.update(target["device"])
        profile = {
            "gpu_type": target["gpu_type"],
            "provenance": {"status": "estimated", "summary": target["summary"] + " " + ASSUMPTION,
                           "sources": target["sources"]},
            "device": device,
            "kernels": mark_kernels(h100["kernels"]),
        }
        path = os.path.join(PROFILES, name)
        text = json.dumps(profile, indent=1) + "\n"
        if check:
            with open(path) as f:
                if f.read() != text:
                    stale.append(os.path.relpath(path, ROOT))
            continue
        with open(path, "w") as f:
            f.write(text)
        print(f"wrote {os.path.relpath(path, ROOT)}")
    if stale:
        sys.exit(f"estimated_profiles: {', '.join(stale)} differ from what "
                 "scripts/estimated_profiles.py writes (from the H100 profile): run it")


if __name__ == "__main__":
    main()
