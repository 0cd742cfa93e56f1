#pragma once
// Host-side element access by DType for the CPU references (f32 math on any storage).

#include <cstddef>
#include <cstdint>

#include "kernels/types.hpp"

namespace strait::kernels::detail {

inline float load_element(const void* base, DType t, std::size_t i) {
  switch (t) {
    case DType::kF32:
      return static_cast<const float*>(base)[i];
    case DType::kF16:
      return f16_to_float(static_cast<const std::uint16_t*>(base)[i]);
    case DType::kBF16:
      return bf16_to_float(static_cast<const std::uint16_t*>(base)[i]);
  }
  return 0.0f;
}

inline void store_element(void* base, DType t, std::size_t i, float v) {
  switch (t) {
    case DType::kF32:
      static_cast<float*>(base)[i] = v;
      break;
    case DType::kF16:
      static_cast<std::uint16_t*>(base)[i] = float_to_f16(v);
      break;
    case DType::kBF16:
      static_cast<std::uint16_t*>(base)[i] = float_to_bf16(v);
      break;
  }
}

}  // namespace strait::kernels::detail
