// CPU reference of the jagged helpers: plain loops over (sequence, position, column).

#include <algorithm>
#include <cstring>

#include "kernels/detail/backends.hpp"
#include "kernels/detail/element.hpp"

namespace strait::kernels::detail {

void lengths_to_offsets_cpu(const std::int32_t* lengths, std::int32_t* offsets, int batch) {
  offsets[0] = 0;
  for (int b = 0; b < batch; ++b) offsets[b + 1] = offsets[b] + lengths[b];
}

void jagged_to_padded_cpu(const JaggedShape& s, const void* values, const std::int32_t* offsets,
                          void* padded, float padding_value) {
  for (int b = 0; b < s.batch; ++b) {
    const int len = offsets[b + 1] - offsets[b];
    for (int i = 0; i < s.max_len; ++i) {
      const std::size_t dst = (static_cast<std::size_t>(b) * s.max_len + i) * s.dim;
      const std::size_t src = (static_cast<std::size_t>(offsets[b]) + i) * s.dim;
      for (int c = 0; c < s.dim; ++c)
        store_element(padded, s.dtype, dst + c,
                      i < len ? load_element(values, s.dtype, src + c) : padding_value);
    }
  }
}

void padded_to_jagged_cpu(const JaggedShape& s, const void* padded, const std::int32_t* offsets,
                          void* values) {
  for (int b = 0; b < s.batch; ++b) {
    const int len = offsets[b + 1] - offsets[b];
    for (int i = 0; i < len; ++i) {
      const std::size_t dst = (static_cast<std::size_t>(offsets[b]) + i) * s.dim;
      const std::size_t src = (static_cast<std::size_t>(b) * s.max_len + i) * s.dim;
      for (int c = 0; c < s.dim; ++c)
        store_element(values, s.dtype, dst + c,
                      i < s.max_len ? load_element(padded, s.dtype, src + c) : 0.0f);
    }
  }
}

void jagged_dense_elementwise_cpu(const JaggedShape& s, ElementwiseOp op, const void* values,
                                  const std::int32_t* offsets, const void* dense, void* out) {
  for (int b = 0; b < s.batch; ++b) {
    const int len = offsets[b + 1] - offsets[b];
    for (int i = 0; i < len; ++i) {
      const std::size_t jv = (static_cast<std::size_t>(offsets[b]) + i) * s.dim;
      const std::size_t dv = (static_cast<std::size_t>(b) * s.max_len + i) * s.dim;
      for (int c = 0; c < s.dim; ++c) {
        const float x = load_element(values, s.dtype, jv + c);
        // Past max_len the dense operand is absent: treated as 0 (add) or 0 (mul).
        const float y = i < s.max_len ? load_element(dense, s.dtype, dv + c) : 0.0f;
        store_element(out, s.dtype, jv + c, op == ElementwiseOp::kAdd ? x + y : x * y);
      }
    }
  }
}

}  // namespace strait::kernels::detail
