#pragma once
// Helpers for the kernel tests: typed host tensors, random jagged batches, tolerances.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/types.hpp"
#include "sim/core/rng.hpp"

namespace strait::kernels::testing {

/// A host tensor of any DType, read and written as f32.
class HostTensor {
 public:
  HostTensor(DType t, std::size_t n) : dtype_(t), n_(n), bytes_(n * dtype_size(t)) {}
  DType dtype() const { return dtype_; }
  std::size_t size() const { return n_; }
  std::size_t bytes() const { return bytes_.size(); }
  void* data() { return bytes_.data(); }
  const void* data() const { return bytes_.data(); }
  std::vector<unsigned char>& raw() { return bytes_; }
  float get(std::size_t i) const {
    if (dtype_ == DType::kF32) {
      float f;
      std::memcpy(&f, &bytes_[i * 4], 4);
      return f;
    }
    std::uint16_t h;
    std::memcpy(&h, &bytes_[i * 2], 2);
    return dtype_ == DType::kF16 ? f16_to_float(h) : bf16_to_float(h);
  }
  void set(std::size_t i, float v) {
    if (dtype_ == DType::kF32) {
      std::memcpy(&bytes_[i * 4], &v, 4);
      return;
    }
    const std::uint16_t h = dtype_ == DType::kF16 ? float_to_f16(v) : float_to_bf16(v);
    std::memcpy(&bytes_[i * 2], &h, 2);
  }
  std::vector<float> to_f32() const {
    std::vector<float> out(n_);
    for (std::size_t i = 0; i < n_; ++i) out[i] = get(i);
    return out;
  }

 private:
  DType dtype_;
  std::size_t n_;
  std::vector<unsigned char> bytes_;
};

inline HostTensor random_tensor(DType t, std::size_t n, Rng& rng, float scale = 1.0f) {
  HostTensor x(t, n);
  for (std::size_t i = 0; i < n; ++i)
    x.set(i, scale * static_cast<float>(rng.uniform() * 2.0 - 1.0));
  return x;
}

inline std::vector<std::int32_t> offsets_of(const std::vector<std::int32_t>& lengths) {
  std::vector<std::int32_t> off(lengths.size() + 1, 0);
  for (std::size_t b = 0; b < lengths.size(); ++b) off[b + 1] = off[b] + lengths[b];
  return off;
}

/// Expects |a - b| <= atol + rtol * |b| elementwise (b is the reference); reports the worst.
inline void expect_close(const std::vector<float>& a, const std::vector<float>& b, float atol,
                         float rtol, const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  std::size_t worst = 0;
  float worst_excess = 0.0f;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const float excess = std::fabs(a[i] - b[i]) - (atol + rtol * std::fabs(b[i]));
    if (!(excess <= worst_excess)) {  // also catches NaN
      worst_excess = std::isnan(excess) ? INFINITY : excess;
      worst = i;
    }
  }
  EXPECT_LE(worst_excess, 0.0f) << what << ": element " << worst << " is " << a[worst]
                                << ", expected " << b[worst] << " (atol " << atol << ", rtol "
                                << rtol << ")";
}

inline float max_abs(const std::vector<float>& x) {
  float m = 0.0f;
  for (const float v : x) m = std::max(m, std::fabs(v));
  return m;
}

}  // namespace strait::kernels::testing
