// cuBLAS GEMM and copy-bandwidth benchmark: the measurements behind the GEMM and
// elementwise efficiency tables of configs/profiles/h100-sxm.json.
// GEMM: bf16 in, f32 accumulate, bf16 out (cublasGemmEx, CUBLAS_COMPUTE_32F), on square
// sizes and the bundled models' dense shapes; TFLOP/s = 2 m n k / t, efficiency against
// the profile's dense bf16 peak. Copy: cudaMemcpy device-to-device, bytes read + written.
// Needs a CUDA device; without one it says so and exits 0 (nothing to measure).

#include <cstdio>
#include <exception>
#include <stdexcept>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include "bench/kernels/bench_util.hpp"

namespace strait::kernels::bench {
namespace {

constexpr double kPeakBf16Tflops = 989.4;  // configs/profiles/h100-sxm.json, dense

void check(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(fmt::format("{}: cuBLAS status {}", what, static_cast<int>(s)));
}

struct Shape {
  long m, n, k;
  const char* what;
};

void run_gemm(cublasHandle_t h, const Shape& s) {
  DeviceBuffer a(static_cast<std::size_t>(s.m * s.k) * 2),
      b(static_cast<std::size_t>(s.k * s.n) * 2), c(static_cast<std::size_t>(s.m * s.n) * 2);
  a.zero();
  b.zero();
  const float one = 1.0f, zero = 0.0f;
  // Column-major C[m x n] = A[m x k] B[k x n].
  auto gemm = [&] {
    check(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(s.m), static_cast<int>(s.n),
                       static_cast<int>(s.k), &one, a.data(), CUDA_R_16BF, static_cast<int>(s.m),
                       b.data(), CUDA_R_16BF, static_cast<int>(s.k), &zero, c.data(), CUDA_R_16BF,
                       static_cast<int>(s.m), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
          "cublasGemmEx");
  };
  const double ms = time_gpu_ms(gemm, 20);
  const double tflops = 2.0 * static_cast<double>(s.m) * s.n * s.k / (ms * 1e9);
  const double cube = std::cbrt(static_cast<double>(s.m) * s.n * s.k);
  fmt::print("  {:>6} {:>6} {:>6} {:>8.0f} {:>10.4f} {:>8.1f} {:>6.3f}  {}\n", s.m, s.n, s.k, cube,
             ms, tflops, tflops / kPeakBf16Tflops, s.what);
}

void run_copy(std::size_t bytes) {
  DeviceBuffer src(bytes), dst(bytes);
  src.zero();
  const double ms = time_gpu_ms([&] { cuda_copy_device_to_device(dst.data(), src.data(), bytes); },
                                bytes < (std::size_t{1} << 24) ? 200 : 20);
  const double gbs = 2.0 * static_cast<double>(bytes) / (ms * 1e6);
  fmt::print("  {:>12} {:>10.4f} {:>9.1f} {:>6.3f}\n", 2 * bytes, ms, gbs, gbs / 3350.0);
}

}  // namespace
}  // namespace strait::kernels::bench

int main() {
  using namespace strait::kernels;
  using namespace strait::kernels::bench;
  try {
    fmt::print("# strait bench: cuBLAS bf16 GEMM and device copy bandwidth\n");
    if (cuda_device_count() == 0) {
      fmt::print("# no CUDA device found: nothing to measure\n");
      return 0;
    }
    fmt::print("# device: {}\n#\n", cuda_device_name());
    cublasHandle_t h = nullptr;
    check(cublasCreate(&h), "cublasCreate");
    fmt::print("# {:>6} {:>6} {:>6} {:>8} {:>10} {:>8} {:>6}  {}\n", "m", "n", "k", "mnk^1/3", "ms",
               "TFLOP/s", "eff", "shape");
    const Shape shapes[] = {
        {128, 128, 128, "square"},       {256, 256, 256, "square"},
        {512, 512, 512, "square"},       {1024, 1024, 1024, "square"},
        {2048, 2048, 2048, "square"},    {4096, 4096, 4096, "square"},
        {8192, 8192, 8192, "square"},    {16384, 16384, 16384, "square"},
        {65536, 512, 512, "hstu proj"},  {65536, 2048, 512, "hstu uvqk"},
        {65536, 512, 1536, "hstu out"},  {8192, 1024, 1024, "dlrm mlp"},
        {8192, 256, 1024, "dlrm mlp"},   {8192, 1024, 3456, "dlrm inter"},
        {131072, 512, 2048, "hstu big"}, {16384, 4096, 4096, "big"},
    };
    for (const auto& s : shapes) run_gemm(h, s);
    cublasDestroy(h);
    fmt::print("#\n# {:>12} {:>10} {:>9} {:>6}\n", "hbm_bytes", "ms", "GB/s", "eff");
    for (std::size_t bytes = std::size_t{1} << 15; bytes <= (std::size_t{1} << 31); bytes <<= 2)
      run_copy(bytes);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_gemm: %s\n", e.what());
    return 1;
  }
  return 0;
}
