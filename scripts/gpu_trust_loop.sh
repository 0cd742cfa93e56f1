#!/usr/bin/env bash
# The GPU trust loop on one lent GPU, in one run: the gpu tests, compute-sanitizer on the
# kernel tests, strait calibrate on the card, a profile fitted from it, strait exec of the
# one-GPU scenarios, their simulation with the fitted profile, strait compare, and the
# kernel benchmarks. Run from the repository root on the GPU machine after
# scripts/gpu_bundle.sh staged .gpu/ here (bench/README.md, "On a GPU", has the figures).
#
# Usage: scripts/gpu_trust_loop.sh OUT_DIR [SECONDS]
# Writes OUT_DIR/log.txt (the summary, as it goes) and OUT_DIR/results.tgz (every output).
# SECONDS (default 420) bounds the whole run: each step's limit is cut to what is left, and
# a step with less than 10 s left is skipped, so the outputs come back within a lease.
set -u
out=${1:?usage: scripts/gpu_trust_loop.sh OUT_DIR [SECONDS]}
deadline=$(($(date +%s) + ${2:-420}))
export PATH="$PATH:/usr/local/cuda/bin"
root=$(pwd)
work=/tmp/strait-gpu
rm -rf "$work" && mkdir -p "$work/fitted" "$work/base"
log() { echo "== $(date +%T) $*" | tee -a "$out/log.txt"; }
# step NAME SECONDS CMD...: runs CMD with a time limit, its output in $work/NAME.txt, and
# puts its rc and last lines in the log.
step() {
  local name=$1 limit=$2
  shift 2
  local left=$((deadline - $(date +%s) - 15))
  if [ "$left" -lt 10 ]; then
    log "$name: skipped, the run's time is spent"
    return 124
  fi
  [ "$left" -lt "$limit" ] && limit=$left
  log "$name (${limit} s): $*"
  timeout -k 5 "$limit" "$@" > "$work/$name.txt" 2>&1
  local rc=$?
  tail -n "${TAIL:-12}" "$work/$name.txt" | sed 's/^/   /' >> "$out/log.txt"
  log "$name rc=$rc"
  return $rc
}
finish() {
  (cd "$work" && tar czf "$out/results.tgz" .) 2>/dev/null
  log "done"
}
trap finish EXIT

# The machine: card, driver, tools.
log "machine"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv >> "$out/log.txt" 2>&1
nvcc --version 2>/dev/null | tail -1 >> "$out/log.txt"
card=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
case "$card" in
  *H200*) gpu=h200 gpu_type=H200-SXM ;;
  *) gpu=h100 gpu_type=H100-SXM ;;
esac
log "card '$card': profile ${gpu}-sxm, gpu_type $gpu_type"

# Libraries: the staged Debian packages in a prefix of their own, CUDA's from the machine.
deps=/opt/strait-deps
mkdir -p "$deps"
for d in .gpu/debs/*.deb; do dpkg -x "$d" "$deps"; done
cuda_dirs=""
for lib in libcudart.so.13 libcublas.so.13 libcublasLt.so.13 libnccl.so.2; do
  f=$(find /usr/local/cuda*/ /usr/lib/x86_64-linux-gnu /opt -name "$lib" 2>/dev/null | head -1)
  [ -n "$f" ] && cuda_dirs="$cuda_dirs:$(dirname "$f")"
  echo "   $lib: ${f:-MISSING}" >> "$out/log.txt"
done
d=$deps/usr/lib/x86_64-linux-gnu
export LD_LIBRARY_PATH="$d:$deps/lib/x86_64-linux-gnu:$d/openmpi/lib${cuda_dirs}"
# The gpu tests start `mpiexec` where this build found it (the Debian path).
[ -e /usr/bin/mpiexec ] || ln -s "$deps/usr/bin/orterun" /usr/bin/mpiexec
export OPAL_PREFIX=$deps/usr OMPI_MCA_ess_singleton_isolated=1 OMPI_MCA_pml=ob1 \
  OMPI_MCA_btl=self,vader OMPI_MCA_osc=^ucx OMPI_MCA_btl_vader_single_copy_mechanism=none

# The binaries name the source directory they were built in (tests' STRAIT_SOURCE_DIR,
# strait's profiles): link it to this copy, with build/ pointing at the staged binaries.
src=$(cat .gpu/source_dir)
if [ "$src" != "$root" ]; then
  mkdir -p "$src/build"
  for e in "$root"/* "$root/.gpu"; do ln -sfn "$e" "$src/"; done
  rm -rf "$src/build" && mkdir -p "$src/build"
fi
mkdir -p "$src/build"
ln -sfn "$root/.gpu/bin" "$src/build/bin"
ln -sfn "$root/.gpu/tests" "$src/build/tests"
strait=$root/.gpu/bin/strait
step version 20 "$strait" --help

# 1. The gpu tests (ctest; the binaries themselves where ctest is missing).
if command -v ctest > /dev/null; then
  TAIL=30 step ctest_gpu 240 bash -c "cd .gpu/ctest && ctest -L gpu --output-on-failure --timeout 200"
else
  TAIL=30 step ctest_gpu 240 bash -c ".gpu/tests/kernels_gpu_test && .gpu/tests/calibration_gpu_test"
fi
# 2. Calibrate on the card, kernels only (one GPU has no collectives to time), a family
#    group at a time so that a group that fails or runs out of time costs only itself; the
#    groups' records merged and fitted against the card's datasheet profile.
groups="gemm:gemm attention:jagged_attention,padded_attention,jagged_attention_backward,padded_attention_backward
embedding:embedding_lookup,embedding_update memory:elementwise,optimizer"
for g in $groups; do
  step "calibrate_${g%%:*}" 150 "$strait" calibrate run --backend cuda --no-collectives \
    --families "${g#*:}" --out "$work/measurements-${g%%:*}.json"
done
python3 - "$work" <<'PY'
import glob, json, sys
files = sorted(glob.glob(sys.argv[1] + "/measurements-*.json"))
merged = None
for f in files:
    d = json.load(open(f))
    merged = merged or {k: v for k, v in d.items() if k != "records"} | {"records": []}
    merged["records"] += d["records"]
json.dump(merged, open(sys.argv[1] + "/measurements.json", "w"), indent=1)
print(len(files), "groups,", len(merged["records"]) if merged else 0, "records")
PY
step fit 60 "$strait" calibrate fit "$work/measurements.json" --base "configs/profiles/${gpu}-sxm.json" \
  --gpu-type "$gpu_type" --out "$work/fitted/${gpu}-sxm.json"
cp "configs/profiles/${gpu}-sxm.json" "$work/base/"
TAIL=60 step report 30 "$strait" calibrate report "$work/fitted/${gpu}-sxm.json"
cp "$work/fitted/${gpu}-sxm.json" "$out/" 2>/dev/null

# 3. Each one-GPU scenario on the card, simulated with the fitted and the bundled profile.
for s in dlrm-1gpu hstu-1gpu; do
  scenario=configs/scenarios/$s.json
  if [ "$gpu" = h200 ]; then
    scenario=configs/scenarios/$s-h200.json
    sed 's#hgx-h100-8#hgx-h200-8#' "configs/scenarios/$s.json" > "$scenario"
  fi
  step "exec_$s" 120 "$strait" exec "$scenario" --backend cuda --json "$work/$s-measured.json" \
    --trace "$work/$s-measured-trace.json"
  for p in fitted base; do
    step "simulate_${s}_$p" 60 "$strait" simulate "$scenario" --profiles "$work/$p" \
      --json "$work/$s-simulated-$p.json" --trace "$work/$s-simulated-$p-trace.json" --trace-ranks all
    TAIL=40 step "compare_${s}_$p" 60 "$strait" compare "$work/$s-simulated-$p.json" \
      "$work/$s-measured.json" --sim-trace "$work/$s-simulated-$p-trace.json" \
      --measured-trace "$work/$s-measured-trace.json" --json "$work/$s-comparison-$p.json"
  done
done

# 4. compute-sanitizer on the kernel tests, NCCL on one rank.
TAIL=30 step memcheck 240 compute-sanitizer --tool memcheck --error-exitcode 3 \
  .gpu/tests/kernels_gpu_test
step racecheck 90 compute-sanitizer --tool racecheck --error-exitcode 3 \
  .gpu/tests/kernels_gpu_test --gtest_filter='TbeGpu.*:JaggedGpu.*:HstuAttentionGpu.PaddedLayoutMatchesJaggedLayout'
step calibrate_nccl 60 "$strait" calibrate run --backend cuda --quick --families all_reduce,all_to_all \
  --max-bytes "16 MiB" --out "$work/nccl.json"

# 5. The kernel benchmarks (issue 40's before figures on this card).
TAIL=16 step bench_attention 150 .gpu/bin/bench_hstu_attention
TAIL=30 step bench_tbe 90 .gpu/bin/bench_tbe
TAIL=10 step bench_gemm 60 .gpu/bin/bench_gemm
