#pragma once
// Table-batched embeddings (TBE): lookup of many tables in one call, and the backward
// pass fused with the optimizer (FBGEMM's split_table_batched_embeddings, one dim for all
// tables).
//
// Weights of all tables are one row-major [total_rows, dim] array; table t owns rows
// [table_row_offsets[t], table_row_offsets[t + 1]). Indices (int64, rows local to their
// table) and offsets [tables * batch + 1] give the bag of (table t, sample b) as
// indices[offsets[t * batch + b] .. offsets[t * batch + b + 1]).
// Forward: kSum / kMean pooling -> output [batch, tables * dim] (f32); kNone (sequence
// embeddings) -> output [num_indices, dim] (f32). Optional per-sample weights scale
// each looked-up row (kSum / kNone). Mean of an empty bag is zero.
// Backward: the gradient of each row is summed over all its occurrences (duplicates are
// grouped: CPU by sorting, CUDA by radix sort + segments), then
//   kSgd:            w -= lr * g
//   kRowWiseAdagrad: state[row] += mean_d(g^2);  w -= lr * g / (sqrt(state[row]) + eps)
// (FBGEMM's row-wise AdaGrad, one f32 state per row, no weight decay). Rows that do not
// occur are untouched. 16-bit weights are updated in f32 and rounded to nearest.
// CUDA limits: backward needs dim <= 2048; out-of-range indices are skipped on the device
// and reported as KernelArgumentError when bounds_check is set.

#include <cstdint>

#include "kernels/types.hpp"

namespace strait::kernels {

enum class PoolingMode : std::uint8_t { kSum, kMean, kNone };
enum class EmbeddingOptimizer : std::uint8_t { kSgd, kRowWiseAdagrad };

struct TbeShape {
  int tables = 0;
  int batch = 0;
  int dim = 0;
  std::int64_t total_rows = 0;
  std::int64_t num_indices = 0;
  DType weights_dtype = DType::kF32;
  PoolingMode pooling = PoolingMode::kSum;
};

struct TbeForwardArgs {
  const void* weights = nullptr;                    // [total_rows, dim]
  const std::int64_t* table_row_offsets = nullptr;  // [tables + 1]
  const std::int64_t* indices = nullptr;            // [num_indices]
  const std::int64_t* offsets = nullptr;            // [tables * batch + 1]
  const float* per_sample_weights = nullptr;        // [num_indices] or null
  float* output = nullptr;
  bool bounds_check = true;  // CUDA: check indices on device (one extra sync)
};

struct TbeBackwardArgs {
  void* weights = nullptr;    // updated in place
  float* momentum = nullptr;  // [total_rows] for kRowWiseAdagrad
  const std::int64_t* table_row_offsets = nullptr;
  const std::int64_t* indices = nullptr;
  const std::int64_t* offsets = nullptr;
  const float* per_sample_weights = nullptr;
  const float* grad_output = nullptr;  // shaped like the forward output
  EmbeddingOptimizer optimizer = EmbeddingOptimizer::kRowWiseAdagrad;
  float learning_rate = 0.01f;
  float eps = 1e-8f;
  bool bounds_check = true;  // CUDA: report out-of-range indices (one extra sync)
};

/// Pooled or sequence lookup on `device`.
void tbe_forward(Device device, const TbeShape& shape, const TbeForwardArgs& args,
                 void* stream = nullptr);
/// Backward fused with the optimizer update.
void tbe_backward(Device device, const TbeShape& shape, const TbeBackwardArgs& args,
                  void* stream = nullptr);

}  // namespace strait::kernels
