#pragma once
// Statistics over samples that the simulator, the executor and calibration report alike:
// step-time percentiles, the median of repeated measurements, spreads between quartiles,
// and how far two estimates of the same things agree on their order (the planner's closed
// form against its simulations). One definition, so a simulated p99 and a measured one are
// the same statistic.

#include <optional>
#include <utility>
#include <vector>

namespace strait {

/// The p-quantile (p in [0, 1]) of `values`, linear between order statistics (the closest
/// ranks either side of p * (n - 1)); 0 if empty.
double percentile(std::vector<double> values, double p);

/// Spearman's rank correlation of finite pairs (x, y), in [-1, 1]: the Pearson correlation
/// of their ranks, tied values sharing the mean of the ranks they span (so ties are not
/// the 1 - 6 sum d^2 / (n (n^2 - 1)) shortcut, which holds without ties only). No figure
/// (nullopt) for fewer than 3 pairs, or when one side is constant: there is no order to
/// compare.
std::optional<double> spearman_rank_correlation(
    const std::vector<std::pair<double, double>>& pairs);

}  // namespace strait
