#pragma once
// Jagged tensor helpers (FBGEMM's jagged ops, one jagged dimension): values
// [total, dim] with int32 offsets [batch + 1]; the padded form is [batch, max_len, dim].
// Sequences longer than max_len are truncated when padding, like FBGEMM.

#include <cstdint>

#include "kernels/types.hpp"

namespace strait::kernels {

struct JaggedShape {
  int batch = 0;
  int max_len = 0;
  int dim = 0;
  std::int64_t total = 0;  // rows of the jagged values
  DType dtype = DType::kF32;
};

enum class ElementwiseOp : std::uint8_t { kAdd, kMul };

/// offsets[0] = 0, offsets[b + 1] = offsets[b] + lengths[b]; offsets has batch + 1 entries.
void lengths_to_offsets(Device device, const std::int32_t* lengths, std::int32_t* offsets,
                        int batch, void* stream = nullptr);
/// values -> padded; positions past a sequence's length get `padding_value`.
void jagged_to_padded(Device device, const JaggedShape& shape, const void* values,
                      const std::int32_t* offsets, void* padded, float padding_value = 0.0f,
                      void* stream = nullptr);
/// padded -> values (positions past max_len, if any, become zero).
void padded_to_jagged(Device device, const JaggedShape& shape, const void* padded,
                      const std::int32_t* offsets, void* values, void* stream = nullptr);
/// out = values OP dense at the same (b, position, d), computed in f32; out is jagged.
void jagged_dense_elementwise(Device device, const JaggedShape& shape, ElementwiseOp op,
                              const void* values, const std::int32_t* offsets, const void* dense,
                              void* out, void* stream = nullptr);

}  // namespace strait::kernels
