#include "executor/kernel_shapes.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "calibration/kernel_case.hpp"

namespace strait::executor {

using sim::cost::KernelKind;

std::int64_t embedding_ids(const sim::cost::KernelWork& k) {
  if (k.flops <= 0 || k.embedding_dim <= 0) return 0;
  const double per_id = k.kind == KernelKind::kEmbeddingUpdate
                            ? k.embedding_dim * (1 + 4 * k.unique_fraction)
                            : static_cast<double>(k.embedding_dim);
  return std::max<std::int64_t>(1, std::llround(k.flops / per_id));
}

double attention_flops(const sim::cost::KernelWork& k, const AttentionBatch& b) {
  const KernelKind forward = sim::cost::forward_kind(k.kind);
  const bool padded = forward == KernelKind::kPaddedAttention;
  const bool backward = k.kind != forward;
  return calibration::attention_case(padded, backward,
                                     std::vector<int>(static_cast<std::size_t>(b.batch), b.length),
                                     k.heads, k.head_dim, sim::cost::Precision::kFp32)
      .flops;
}

AttentionBatch attention_batch(const sim::cost::KernelWork& k) {
  AttentionBatch b;
  b.length = std::max(1, static_cast<int>(std::lround(k.mean_length)));
  b.batch = 1;
  const double one = attention_flops(k, b);
  if (one > 0) b.batch = std::max(1, static_cast<int>(std::lround(k.flops / one)));
  return b;
}

std::int64_t elementwise_copy_bytes(const sim::cost::KernelWork& k) {
  return std::max<std::int64_t>(0, std::llround(k.hbm_bytes / 2));
}

std::int64_t optimizer_params(const sim::cost::KernelWork& k) {
  return std::max<std::int64_t>(0, std::llround(k.flops / 10));
}

}  // namespace strait::executor
