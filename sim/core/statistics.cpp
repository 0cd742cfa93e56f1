#include "sim/core/statistics.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <numeric>

namespace strait {
namespace {

/// Ranks from 1 of `values`, tied values sharing the mean of the ranks they span.
std::vector<double> average_ranks(const std::vector<double>& values) {
  std::vector<std::size_t> order(values.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return values[a] < values[b]; });
  std::vector<double> rank(values.size());
  for (std::size_t first = 0; first < order.size();) {
    std::size_t last = first;
    while (last + 1 < order.size() && values[order[last + 1]] == values[order[first]]) ++last;
    const double shared = static_cast<double>(first + last) / 2 + 1;
    for (std::size_t k = first; k <= last; ++k) rank[order[k]] = shared;
    first = last + 1;
  }
  return rank;
}

}  // namespace

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const double pos = p * static_cast<double>(values.size() - 1);
  const auto lo = static_cast<std::size_t>(pos);
  const auto hi = std::min(lo + 1, values.size() - 1);
  return values[lo] + (values[hi] - values[lo]) * (pos - static_cast<double>(lo));
}

std::optional<double> spearman_rank_correlation(
    const std::vector<std::pair<double, double>>& pairs) {
  if (pairs.size() < 3) return std::nullopt;
  std::vector<double> x, y;
  x.reserve(pairs.size());
  y.reserve(pairs.size());
  for (const auto& [a, b] : pairs) {
    x.push_back(a);
    y.push_back(b);
  }
  const auto rx = average_ranks(x), ry = average_ranks(y);
  // Average ranks keep the sum of 1..n, so both sides have the mean (n + 1) / 2.
  const double mean = static_cast<double>(pairs.size() + 1) / 2;
  double sxy = 0, sxx = 0, syy = 0;
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    sxy += (rx[i] - mean) * (ry[i] - mean);
    sxx += (rx[i] - mean) * (rx[i] - mean);
    syy += (ry[i] - mean) * (ry[i] - mean);
  }
  if (sxx == 0 || syy == 0) return std::nullopt;
  // Rounding may leave a perfect order a hair outside [-1, 1].
  return std::clamp(sxy / std::sqrt(sxx * syy), -1.0, 1.0);
}

}  // namespace strait
