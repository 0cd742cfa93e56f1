#include "calibration/detail/table_fit.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace strait::calibration::detail {
namespace {

constexpr double kMinEfficiency = 1e-6;

std::vector<double> choose_knots(std::vector<double> log_keys, int max_knots) {
  std::sort(log_keys.begin(), log_keys.end());
  std::vector<double> distinct;
  for (double k : log_keys) {
    if (distinct.empty() || k - distinct.back() > 1e-9) distinct.push_back(k);
  }
  if (static_cast<int>(distinct.size()) <= max_knots) return distinct;
  std::vector<double> knots;
  for (int i = 0; i < max_knots; ++i) {
    const double q = static_cast<double>(i) / (max_knots - 1);
    knots.push_back(distinct[static_cast<std::size_t>(
        std::lround(q * static_cast<double>(distinct.size() - 1)))]);
  }
  knots.erase(std::unique(knots.begin(), knots.end()), knots.end());
  return knots;
}

// Row of interpolation weights of `x` over `knots` (linear between, clamped outside).
Eigen::RowVectorXd interpolation_row(const std::vector<double>& knots, double x) {
  Eigen::RowVectorXd row = Eigen::RowVectorXd::Zero(static_cast<Eigen::Index>(knots.size()));
  if (knots.size() == 1 || x <= knots.front()) {
    row(0) = 1;
    return row;
  }
  if (x >= knots.back()) {
    row(static_cast<Eigen::Index>(knots.size() - 1)) = 1;
    return row;
  }
  const auto hi =
      static_cast<Eigen::Index>(std::upper_bound(knots.begin(), knots.end(), x) - knots.begin());
  const double t = (x - knots[static_cast<std::size_t>(hi - 1)]) /
                   (knots[static_cast<std::size_t>(hi)] - knots[static_cast<std::size_t>(hi - 1)]);
  row(hi - 1) = 1 - t;
  row(hi) = t;
  return row;
}

}  // namespace

Eigen::VectorXd nonnegative_least_squares(const Eigen::MatrixXd& a, const Eigen::VectorXd& b,
                                          const std::vector<bool>& constrained) {
  const Eigen::Index n = a.cols();
  // Passive set P: variables solved freely; the rest are held at zero. Free variables are
  // always passive.
  std::vector<bool> passive(static_cast<std::size_t>(n));
  for (Eigen::Index j = 0; j < n; ++j)
    passive[static_cast<std::size_t>(j)] = !constrained[static_cast<std::size_t>(j)];
  Eigen::VectorXd x = Eigen::VectorXd::Zero(n);
  const auto solve_passive = [&]() {
    std::vector<Eigen::Index> cols;
    for (Eigen::Index j = 0; j < n; ++j) {
      if (passive[static_cast<std::size_t>(j)]) cols.push_back(j);
    }
    Eigen::VectorXd z = Eigen::VectorXd::Zero(n);
    if (cols.empty()) return z;
    Eigen::MatrixXd sub(a.rows(), static_cast<Eigen::Index>(cols.size()));
    for (std::size_t i = 0; i < cols.size(); ++i)
      sub.col(static_cast<Eigen::Index>(i)) = a.col(cols[i]);
    const Eigen::VectorXd s = sub.colPivHouseholderQr().solve(b);
    for (std::size_t i = 0; i < cols.size(); ++i) z(cols[i]) = s(static_cast<Eigen::Index>(i));
    return z;
  };
  x = solve_passive();
  // Free variables start solved; make the start feasible by dropping constrained ones.
  for (int outer = 0; outer < 3 * n + 10; ++outer) {
    const Eigen::VectorXd w = a.transpose() * (b - a * x);
    Eigen::Index best = -1;
    double best_w = 1e-12 * (1 + w.cwiseAbs().maxCoeff());
    for (Eigen::Index j = 0; j < n; ++j) {
      if (!passive[static_cast<std::size_t>(j)] && w(j) > best_w) {
        best_w = w(j);
        best = j;
      }
    }
    if (best < 0) break;
    passive[static_cast<std::size_t>(best)] = true;
    for (int inner = 0; inner < 3 * n + 10; ++inner) {
      const Eigen::VectorXd z = solve_passive();
      bool feasible = true;
      double alpha = 1;
      for (Eigen::Index j = 0; j < n; ++j) {
        if (constrained[static_cast<std::size_t>(j)] && passive[static_cast<std::size_t>(j)] &&
            z(j) <= 0) {
          feasible = false;
          const double denom = x(j) - z(j);
          if (denom > 0) alpha = std::min(alpha, x(j) / denom);
        }
      }
      if (feasible) {
        x = z;
        break;
      }
      x += alpha * (z - x);
      for (Eigen::Index j = 0; j < n; ++j) {
        if (constrained[static_cast<std::size_t>(j)] && passive[static_cast<std::size_t>(j)] &&
            x(j) <= 1e-15) {
          passive[static_cast<std::size_t>(j)] = false;
          x(j) = 0;
        }
      }
    }
  }
  return x;
}

sim::cost::EfficiencyTable fit_table(const std::vector<ObservedEfficiency>& observed, bool monotone,
                                     int max_knots) {
  if (observed.empty()) throw std::invalid_argument("fit_table: no observations");
  std::vector<double> logs;
  logs.reserve(observed.size());
  for (const auto& o : observed) logs.push_back(std::log2(o.key));
  const std::vector<double> knots = choose_knots(logs, max_knots);
  const auto m = static_cast<Eigen::Index>(observed.size());
  const auto k = static_cast<Eigen::Index>(knots.size());
  // Rows scaled by 1 / observed efficiency: the residual is the relative error.
  Eigen::MatrixXd interp(m, k);
  Eigen::VectorXd b(m);
  for (Eigen::Index i = 0; i < m; ++i) {
    const auto& o = observed[static_cast<std::size_t>(i)];
    interp.row(i) =
        interpolation_row(knots, logs[static_cast<std::size_t>(i)]) * (o.weight / o.efficiency);
    b(i) = o.weight;
  }
  Eigen::VectorXd values;
  if (monotone) {
    // values = T d with d_0 >= 0 the first knot's value and d_j >= 0 the rises after it.
    Eigen::MatrixXd t = Eigen::MatrixXd::Zero(k, k);
    for (Eigen::Index r = 0; r < k; ++r) t.row(r).head(r + 1).setOnes();
    const Eigen::VectorXd d = nonnegative_least_squares(
        interp * t, b, std::vector<bool>(static_cast<std::size_t>(k), true));
    values = t * d;
  } else {
    values = interp.colPivHouseholderQr().solve(b);
  }
  std::vector<sim::cost::EfficiencyTable::Point> points;
  for (Eigen::Index j = 0; j < k; ++j) {
    points.push_back({std::exp2(knots[static_cast<std::size_t>(j)]),
                      std::clamp(values(j), kMinEfficiency, 1.0)});
  }
  return sim::cost::EfficiencyTable(std::move(points));
}

}  // namespace strait::calibration::detail
