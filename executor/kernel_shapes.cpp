#include "executor/kernel_shapes.hpp"

#include <algorithm>
#include <vector>

#include "calibration/kernel_case.hpp"
#include "sim/core/rng.hpp"
#include "sim/workload/unique_rows.hpp"

namespace strait::executor {

int gemm_runs(const sim::cost::KernelWork& k) { return sim::cost::gemm_shape(k).count; }

std::int64_t embedding_ids(const sim::cost::KernelWork& k) {
  return static_cast<std::int64_t>(sim::cost::embedding_shape(k).ids);
}

std::int64_t embedding_bags(const sim::cost::KernelWork& k) {
  return static_cast<std::int64_t>(sim::cost::embedding_shape(k).out_rows);
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

}  // namespace strait::executor
