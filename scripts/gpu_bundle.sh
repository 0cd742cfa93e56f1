#!/usr/bin/env bash
# Stages what scripts/gpu_trust_loop.sh needs on a lent GPU machine into .gpu/ (ignored by
# git; carried to the machine): strait, the GPU test binaries with their ctest files, the
# kernel benchmarks, and the Debian 12 packages of the libraries they link besides CUDA
# (Open MPI with its components and mpirun, oneTBB, Boost.Program_options, fmt, tcmalloc), unpacked
# there into a prefix of their own, never into /.
#
# Usage: scripts/gpu_bundle.sh [BUILD_DIR]   (default: build; built with CUDA for sm_90a)
set -euo pipefail
build=${1:-build}
here=$(pwd)
stage=.gpu
rm -rf "$stage/bin" "$stage/tests" "$stage/ctest"
mkdir -p "$stage/bin" "$stage/tests" "$stage/ctest" "$stage/debs"

cp "$build/bin/strait" "$build/bin/bench_hstu_attention" "$build/bin/bench_tbe" \
   "$build/bin/bench_gemm" "$stage/bin/"
cp "$build/tests/kernels_gpu_test" "$build/tests/calibration_gpu_test" \
   "$build/tests/executor_gpu_test" "$stage/tests/"

# ctest: the discovered gpu tests name their binaries under <source>/build/tests, which the
# machine's script links to .gpu/tests.
: > "$stage/ctest/CTestTestfile.cmake"
for t in kernels/kernels_gpu_test calibration/calibration_gpu_test executor/executor_gpu_test; do
  name=$(basename "$t")
  cp "$build/tests/${t}[1]_tests.cmake" "$stage/ctest/${name}_tests.cmake"
  echo "include(\"\${CMAKE_CURRENT_LIST_DIR}/${name}_tests.cmake\")" >> "$stage/ctest/CTestTestfile.cmake"
done
sed -i "s#\${CMAKE_CURRENT_LIST_DIR}#$here/.gpu/ctest#" "$stage/ctest/CTestTestfile.cmake"
echo "$here" > "$stage/source_dir"

# The Debian packages of every library the binaries and Open MPI's components load,
# except glibc and libstdc++ (the machine's are newer) and CUDA's (the machine has them).
packages=$(
  { for b in "$stage"/bin/* "$stage"/tests/*; do ldd "$b"; done
    ldd /usr/lib/x86_64-linux-gnu/openmpi/lib/openmpi3/*.so /usr/lib/x86_64-linux-gnu/pmix2/lib/pmix/*.so
  } 2>/dev/null | awk '$3 ~ /^\// {print $3}' | sort -u | grep -v cuda | xargs -n1 readlink -f |
    xargs dpkg -S 2>/dev/null | cut -d: -f1 | sort -u |
    grep -v -x -e libc6 -e libstdc++6 -e libgcc-s1 || true)
(cd "$stage/debs" && rm -f ./*.deb &&
  apt-get download $packages libnl-3-200 zlib1g openmpi-common openmpi-bin 2>&1 | tail -1)
du -sh "$stage"
