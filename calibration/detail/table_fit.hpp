#pragma once
// Least-squares fits the calibration uses (Eigen):
//   - fit_table: an efficiency table (sim/cost EfficiencyTable: linear in log2(key) between
//     knots, clamped outside) through observed efficiencies, minimising the relative error,
//     optionally non-decreasing in the key (bigger problems never run less efficiently on
//     the same kernel: GEMM, attention, embedding rows);
//   - nonnegative_least_squares: Lawson and Hanson's active-set method (1974, ch. 23), for
//     the monotone table and for the collective parameters, which are physical (>= 0).

#include <vector>

#include <Eigen/Dense>

#include "sim/cost/efficiency_table.hpp"

namespace strait::calibration::detail {

/// min ||A x - b||_2 subject to x_j >= 0 for j in `constrained` (others free).
Eigen::VectorXd nonnegative_least_squares(const Eigen::MatrixXd& a, const Eigen::VectorXd& b,
                                          const std::vector<bool>& constrained);

struct ObservedEfficiency {
  double key = 0;         // > 0
  double efficiency = 0;  // > 0 (may exceed 1 before clamping)
  double weight = 1;      // > 0: how much the observation's relative error counts
};

/// Knots at the distinct keys (at most `max_knots`, else log-spaced quantiles); values by
/// weighted least squares of relative error; clamped into [1e-6, 1].
sim::cost::EfficiencyTable fit_table(const std::vector<ObservedEfficiency>& observed, bool monotone,
                                     int max_knots = 12);

}  // namespace strait::calibration::detail
