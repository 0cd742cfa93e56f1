#pragma once
// CPU work helpers shared by the CPU benchmark backend (calibration/detail/cpu_kernels.cpp)
// and the executor's CPU backend (executor/), so both run exactly the same code for a
// family: random f32 inputs, embedding tables on huge pages, a linear layer's backward, the
// dense Adam step.

#include <sys/mman.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <vector>

#include "sim/core/rng.hpp"

namespace strait::calibration {

/// `n` floats uniform in [-scale/2, scale/2), deterministic for `seed`.
inline std::vector<float> random_floats(std::size_t n, std::uint64_t seed, float scale = 1.0f) {
  Rng rng(seed);
  std::vector<float> v(n);
  for (float& x : v) x = scale * static_cast<float>(rng.uniform() - 0.5);
  return v;
}

/// An f32 array on transparent huge pages where the kernel grants them (madvise): random row
/// reads over tables of hundreds of MiB are bound by TLB misses on 4 KiB pages, and whether
/// an allocation happened to get huge pages made lookups vary by 30-50% from run to run.
/// Production embedding tables live on huge pages; the executor allocates them the same way.
struct HugePageFloats {
  explicit HugePageFloats(std::size_t n) : size(n) {
    constexpr std::size_t kHuge = std::size_t{2} << 20;
    const std::size_t bytes = (n * sizeof(float) + kHuge - 1) / kHuge * kHuge;
    data = static_cast<float*>(std::aligned_alloc(kHuge, bytes));
    if (data == nullptr) throw std::bad_alloc();
    madvise(data, bytes, MADV_HUGEPAGE);
  }
  ~HugePageFloats() { std::free(data); }
  HugePageFloats(const HugePageFloats&) = delete;
  HugePageFloats& operator=(const HugePageFloats&) = delete;
  float* data = nullptr;
  std::size_t size = 0;
};

/// A linear layer's backward (the gemm_backward family) for Eigen matrices, forward
/// out[m x n] = a[m x k] b[k x n]: the input gradient da = dout b^T and the weight gradient
/// db = a^T dout.
template <class Matrix>
void gemm_backward(const Matrix& a, const Matrix& b, const Matrix& dout, Matrix& da, Matrix& db) {
  da.noalias() = dout * b.transpose();
  db.noalias() = a.transpose() * dout;
}

/// One Adam step (lr 1e-3, betas 0.9/0.999, eps 1e-8) over `n` fp32 parameters; `step`
/// counts from 1 (bias correction). 10 flops per parameter, as the cost model counts it.
inline void adam_step(float* p, const float* g, float* m, float* v, std::size_t n, int step) {
  constexpr float kLr = 1e-3f, kB1 = 0.9f, kB2 = 0.999f, kEps = 1e-8f;
  const float c1 = 1.0f - std::pow(kB1, static_cast<float>(step));
  const float c2 = 1.0f - std::pow(kB2, static_cast<float>(step));
  for (std::size_t i = 0; i < n; ++i) {
    m[i] = kB1 * m[i] + (1 - kB1) * g[i];
    v[i] = kB2 * v[i] + (1 - kB2) * g[i] * g[i];
    p[i] -= kLr * (m[i] / c1) / (std::sqrt(v[i] / c2) + kEps);
  }
}

}  // namespace strait::calibration
