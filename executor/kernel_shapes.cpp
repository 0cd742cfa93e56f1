#include "executor/kernel_shapes.hpp"

#include <algorithm>
#include <cmath>
#include <unordered_set>
#include <vector>

#include "calibration/kernel_case.hpp"
#include "sim/core/rng.hpp"

namespace strait::executor {

using sim::cost::KernelKind;

std::int64_t embedding_ids(const sim::cost::KernelWork& k) {
  if (k.flops <= 0 || k.embedding_dim <= 0) return 0;
  const double per_id = k.kind == KernelKind::kEmbeddingUpdate
                            ? k.embedding_dim * (1 + 4 * k.unique_fraction)
                            : static_cast<double>(k.embedding_dim);
  return std::max<std::int64_t>(1, std::llround(k.flops / per_id));
}

std::int64_t embedding_bags(const sim::cost::KernelWork& k) {
  const auto ids = embedding_ids(k);
  if (ids == 0 || k.kind != KernelKind::kEmbeddingLookup) return ids;
  const double e = sim::cost::bytes_per_element(k.precision), d = k.embedding_dim;
  const double out_rows = (k.hbm_bytes - static_cast<double>(ids) * (d * e + 8)) / (d * e);
  return std::clamp<std::int64_t>(std::llround(out_rows), 1, ids);
}

std::int64_t embedding_unique_rows(const sim::cost::KernelWork& k) {
  const auto ids = embedding_ids(k);
  if (ids == 0) return 0;
  const double u = std::clamp(k.unique_fraction, 0.0, 1.0);
  return std::clamp<std::int64_t>(std::llround(u * static_cast<double>(ids)), 1, ids);
}

std::vector<std::int64_t> embedding_indices(std::int64_t ids, std::int64_t unique,
                                            std::int64_t rows, std::uint64_t seed) {
  std::vector<std::int64_t> out;
  if (ids <= 0 || rows <= 0) return out;
  unique = std::clamp<std::int64_t>(unique, 1, std::min(ids, rows));
  Rng rng(seed);
  // Distinct rows: Floyd's sampling of `unique` out of `rows`.
  std::unordered_set<std::int64_t> chosen;
  std::vector<std::int64_t> pool;
  for (std::int64_t j = rows - unique; j < rows; ++j) {
    auto t = static_cast<std::int64_t>(rng.uniform_int(static_cast<std::uint64_t>(j + 1)));
    if (!chosen.insert(t).second) {
      t = j;
      chosen.insert(j);
    }
    pool.push_back(t);
  }
  out.reserve(static_cast<std::size_t>(ids));
  for (std::int64_t i = 0; i < ids; ++i) out.push_back(pool[static_cast<std::size_t>(i % unique)]);
  for (std::size_t i = out.size() - 1; i > 0; --i) std::swap(out[i], out[rng.uniform_int(i + 1)]);
  return out;
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
