#include "executor/kernel_shapes.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "calibration/kernel_case.hpp"
#include "sim/core/error.hpp"
#include "sim/core/rng.hpp"
#include "sim/workload/unique_rows.hpp"

namespace strait::executor {

using sim::cost::KernelKind;

int gemm_runs(const sim::cost::KernelWork& k) {
  const bool backward = k.kind == KernelKind::kGemmBackward;
  const double one = (backward ? 4.0 : 2.0) * static_cast<double>(k.m) * static_cast<double>(k.n) *
                     static_cast<double>(k.k);
  const double runs = one > 0 ? k.flops / one : 0;
  if (runs < 0.5 || std::abs(runs - std::round(runs)) > 1e-6 * runs)
    throw Error(fmt::format(
        "strait exec: a {} op of {} x {} x {} with {} flops is not a whole number of {}",
        to_string(k.kind), k.m, k.n, k.k, k.flops,
        backward ? "input and weight gradient pairs" : "GEMMs"));
  return static_cast<int>(std::lround(runs));
}

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

double embedding_id_skew(const sim::cost::KernelWork& k, std::int64_t rows) {
  const auto ids = static_cast<double>(embedding_ids(k));
  if (ids <= 0 || rows <= 0) return 0;
  const double target = std::clamp(k.unique_fraction, 0.0, 1.0) * ids;
  const auto unique = [&](double s) {
    return sim::workload::expected_unique_rows(static_cast<double>(rows), ids, s);
  };
  if (unique(0) <= target) return 0;
  double lo = 0, hi = 1;
  while (unique(hi) > target && hi < 64) hi *= 2;
  while (hi - lo > 1e-6) {
    const double mid = (lo + hi) / 2;
    (unique(mid) > target ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

std::vector<std::int64_t> embedding_rows(const calibration::RowSampler& rows, std::int64_t ids,
                                         int run, std::int64_t step, int dim) {
  Rng rng(7 + 1'000'003ULL * static_cast<std::uint64_t>(run) +
          1'009ULL * static_cast<std::uint64_t>(step) + static_cast<std::uint64_t>(dim));
  std::vector<std::int64_t> out(static_cast<std::size_t>(std::max<std::int64_t>(ids, 0)));
  for (auto& row : out) row = rows(rng);
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
