#pragma once
// Shared pieces of the kernel benchmarks: length distributions and timing loops.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/device.hpp"
#include "sim/core/rng.hpp"

namespace strait::kernels::bench {

/// Sequence lengths in [1, max_len]: "fixed" (all max_len), "uniform", or "lognormal"
/// (median max_len / 4, sigma 1, clamped).
inline std::vector<std::int32_t> sample_lengths(const std::string& dist, int batch, int max_len,
                                                Rng& rng) {
  std::vector<std::int32_t> out(static_cast<std::size_t>(batch));
  for (auto& l : out) {
    double v = max_len;
    if (dist == "uniform")
      v = 1 + static_cast<double>(rng.uniform_int(static_cast<std::uint64_t>(max_len)));
    if (dist == "lognormal") v = rng.lognormal(std::log(max_len / 4.0), 1.0);
    l = static_cast<std::int32_t>(std::clamp(v, 1.0, static_cast<double>(max_len)));
  }
  return out;
}

/// Mean milliseconds per call of `fn` on the GPU (2 warm-up calls, then `iters` timed).
template <class F>
double time_gpu_ms(F&& fn, int iters = 10) {
  fn();
  fn();
  DeviceTimer timer;
  timer.start();
  for (int i = 0; i < iters; ++i) fn();
  return timer.stop_ms() / iters;
}

/// Mean milliseconds per call of `fn` on the host.
template <class F>
double time_cpu_ms(F&& fn, int iters = 3) {
  fn();
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < iters; ++i) fn();
  const auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::milli>(t1 - t0).count() / iters;
}

}  // namespace strait::kernels::bench
