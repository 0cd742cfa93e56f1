#include "calibration/detail/table_fit.hpp"

#include <cmath>

#include <gtest/gtest.h>

namespace strait::calibration::detail {
namespace {

constexpr double kExact = 1e-9;

// A x = b for the line x0 + x1 t through the points t = 1, 2, 3.
Eigen::MatrixXd line_design() {
  Eigen::MatrixXd a(3, 2);
  a << 1, 1,  //
      1, 2,   //
      1, 3;
  return a;
}

// A = [[1, 0], [0, 1], [1, 1]], b = (1, 2, 3): consistent, x = (1, 2) >= 0 solves it
// exactly, so the constraints change nothing.
TEST(NonnegativeLeastSquares, KeepsAnUnconstrainedSolutionThatIsAlreadyNonNegative) {
  Eigen::MatrixXd a(3, 2);
  a << 1, 0,  //
      0, 1,   //
      1, 1;
  const Eigen::VectorXd b = Eigen::Vector3d(1, 2, 3);
  const Eigen::VectorXd x = nonnegative_least_squares(a, b, {true, true});
  EXPECT_NEAR(x(0), 1, kExact);
  EXPECT_NEAR(x(1), 2, kExact);
}

// Line through (1, 3), (2, 2), (3, 1): unconstrained x = (4, -1). With the slope >= 0 it
// is clamped to 0 and the intercept is the mean, 2 (KKT: the slope's gradient
// sum t (b - 2) = 1 - 3 = -2 < 0, so zero is optimal).
TEST(NonnegativeLeastSquares, ClampsAVariableThatWouldGoNegative) {
  const Eigen::VectorXd b = Eigen::Vector3d(3, 2, 1);
  const Eigen::VectorXd x = nonnegative_least_squares(line_design(), b, {true, true});
  EXPECT_NEAR(x(0), 2, kExact);
  EXPECT_NEAR(x(1), 0, kExact);
}

// Line through (1, -1), (2, 0), (3, 1): unconstrained x = (-2, 1).
//   intercept free, slope >= 0: the unconstrained solution, (-2, 1);
//   both >= 0: intercept 0, slope through the origin sum(t b) / sum(t^2) = 2 / 14 = 1/7.
TEST(NonnegativeLeastSquares, LeavesAFreeVariableNegative) {
  const Eigen::VectorXd b = Eigen::Vector3d(-1, 0, 1);
  const Eigen::VectorXd free = nonnegative_least_squares(line_design(), b, {false, true});
  EXPECT_NEAR(free(0), -2, kExact);
  EXPECT_NEAR(free(1), 1, kExact);
  const Eigen::VectorXd both = nonnegative_least_squares(line_design(), b, {true, true});
  EXPECT_NEAR(both(0), 0, kExact);
  EXPECT_NEAR(both(1), 1.0 / 7, kExact);
}

// Line through (1, 3), (2, 2), (3, 1) with the intercept free and the slope >= 0: the slope
// is clamped to 0 and the free intercept takes the mean, 2. With both free: (4, -1).
TEST(NonnegativeLeastSquares, SolvesTheFreeVariablesAroundAClampedOne) {
  const Eigen::VectorXd b = Eigen::Vector3d(3, 2, 1);
  const Eigen::VectorXd x = nonnegative_least_squares(line_design(), b, {false, true});
  EXPECT_NEAR(x(0), 2, kExact);
  EXPECT_NEAR(x(1), 0, kExact);
  const Eigen::VectorXd unconstrained = nonnegative_least_squares(line_design(), b, {false, false});
  EXPECT_NEAR(unconstrained(0), 4, kExact);
  EXPECT_NEAR(unconstrained(1), -1, kExact);
}

// Known table, linear in log2(key): 0.2 at 16, 0.6 at 256, 0.9 at 4096. Observed at keys
// 16, 32, 64, 128, 256, 1024, 4096: 0.2, 0.3, 0.4, 0.5, 0.6, 0.75, 0.9.
// The fit puts a knot at each of the 7 keys and passes through every observation, so at 512
// (between the knots 256 and 1024) it reads 0.675 = the known 0.6 + 1/4 * 0.3; outside the
// keys it is clamped (0.2 at 4, 0.9 at 65536). Monotone or not, the same table.
TEST(FitTable, RecoversAPiecewiseLinearInLog2TableExactly) {
  const std::vector<ObservedEfficiency> observed = {
      {16, 0.2}, {32, 0.3}, {64, 0.4}, {128, 0.5}, {256, 0.6}, {1024, 0.75}, {4096, 0.9}};
  for (bool monotone : {false, true}) {
    SCOPED_TRACE(monotone ? "monotone" : "free");
    const sim::cost::EfficiencyTable t = fit_table(observed, monotone);
    ASSERT_EQ(t.points().size(), observed.size());
    for (std::size_t i = 0; i < observed.size(); ++i) {
      EXPECT_NEAR(t.points()[i].key, observed[i].key, kExact * observed[i].key);
      EXPECT_NEAR(t.points()[i].efficiency, observed[i].efficiency, kExact);
      EXPECT_NEAR(t.at(observed[i].key), observed[i].efficiency, kExact);
    }
    EXPECT_NEAR(t.at(512), 0.675, kExact);
    EXPECT_NEAR(t.at(4), 0.2, kExact);
    EXPECT_NEAR(t.at(65536), 0.9, kExact);
  }
}

// Known table 0.1 at 2^4, 0.5 at 2^8, 0.7 at 2^12, observed at the 9 keys 2^4 .. 2^12
// (0.1, 0.2, 0.3, 0.4, 0.5, 0.55, 0.6, 0.65, 0.7). With at most 3 knots they are the
// log-spaced quantiles 0, 1/2, 1 of the keys: 2^4, 2^8, 2^12, exactly the known table's
// points, which the fit recovers.
TEST(FitTable, PlacesQuantileKnotsWhenThereAreMoreKeysThanKnots) {
  const double values[] = {0.1, 0.2, 0.3, 0.4, 0.5, 0.55, 0.6, 0.65, 0.7};
  std::vector<ObservedEfficiency> observed;
  for (int i = 0; i < 9; ++i) observed.push_back({std::exp2(4 + i), values[i]});
  const sim::cost::EfficiencyTable t = fit_table(observed, true, 3);
  ASSERT_EQ(t.points().size(), 3u);
  EXPECT_NEAR(t.points()[0].key, 16, kExact);
  EXPECT_NEAR(t.points()[1].key, 256, kExact);
  EXPECT_NEAR(t.points()[2].key, 4096, kExact);
  EXPECT_NEAR(t.points()[0].efficiency, 0.1, kExact);
  EXPECT_NEAR(t.points()[1].efficiency, 0.5, kExact);
  EXPECT_NEAR(t.points()[2].efficiency, 0.7, kExact);
  for (const auto& o : observed) EXPECT_NEAR(t.at(o.key), o.efficiency, kExact);
}

// Several observations at one key: the value c minimising sum (c / e_i - 1)^2 (relative
// error) is c = sum(1 / e_i) / sum(1 / e_i^2). For e = 0.6, 0.4: (5/3 + 5/2) /
// (25/9 + 25/4) = (25/6) / (325/36) = 6/13.
TEST(FitTable, MinimisesTheRelativeErrorOfRepeatedObservations) {
  const sim::cost::EfficiencyTable t = fit_table({{100, 0.6}, {100, 0.4}}, false);
  ASSERT_EQ(t.points().size(), 1u);
  EXPECT_NEAR(t.points()[0].efficiency, 6.0 / 13, kExact);
}

// Two keys whose efficiency falls, 0.6 at 64 then 0.4 at 128: free, the fit passes through
// both; monotone, both knots take the single value that fits both best, the 6/13 above.
TEST(FitTable, MonotoneFitFlattensAFall) {
  const std::vector<ObservedEfficiency> observed = {{64, 0.6}, {128, 0.4}};
  const sim::cost::EfficiencyTable free = fit_table(observed, false);
  EXPECT_NEAR(free.at(64), 0.6, kExact);
  EXPECT_NEAR(free.at(128), 0.4, kExact);
  const sim::cost::EfficiencyTable rising = fit_table(observed, true);
  EXPECT_NEAR(rising.at(64), 6.0 / 13, kExact);
  EXPECT_NEAR(rising.at(128), 6.0 / 13, kExact);
}

// Pool-adjacent-violators, the reference for a monotone fit with a knot at every key: with
// one observation per knot the objective sum (v_i / e_i - 1)^2 is isotonic regression of e
// with weights 1 / e_i^2, and a pooled block takes sum(1 / e_i) / sum(1 / e_i^2).
std::vector<double> isotonic_relative(const std::vector<double>& e) {
  struct Block {
    double inv = 0, inv2 = 0;
    int count = 0;
    double value() const { return inv / inv2; }
  };
  std::vector<Block> blocks;
  for (double x : e) {
    blocks.push_back({1 / x, 1 / (x * x), 1});
    while (blocks.size() > 1 && blocks[blocks.size() - 2].value() > blocks.back().value()) {
      const Block last = blocks.back();
      blocks.pop_back();
      blocks.back().inv += last.inv;
      blocks.back().inv2 += last.inv2;
      blocks.back().count += last.count;
    }
  }
  std::vector<double> out;
  for (const Block& b : blocks) out.insert(out.end(), static_cast<std::size_t>(b.count), b.value());
  return out;
}

// Noisy, non-monotone efficiencies at keys 2^0 .. 2^9, a rising trend with dips:
//   0.30 0.50 0.45 0.60 0.52 0.70 0.66 0.80 0.71 0.85.
// The monotone fit pools each dip with the point before it (pool-adjacent-violators with
// weights 1 / e^2): 0.30, 0.4724 (x2: (2 + 2.2222) / (4 + 4.9383)), 0.5543 (x2), 0.6788 (x2),
// 0.7497 (x2), 0.85; non-decreasing from knot to knot and within (0, 1].
TEST(FitTable, MonotoneFitOfNoisyDataIsNonDecreasing) {
  const std::vector<double> values = {0.30, 0.50, 0.45, 0.60, 0.52, 0.70, 0.66, 0.80, 0.71, 0.85};
  std::vector<ObservedEfficiency> observed;
  for (int i = 0; i < 10; ++i)
    observed.push_back({std::exp2(i), values[static_cast<std::size_t>(i)]});
  const sim::cost::EfficiencyTable t = fit_table(observed, true);
  const std::vector<double> expected = isotonic_relative(values);
  EXPECT_NEAR(expected[1], 4.2222222222 / 8.9382716049, 1e-9);  // the hand-computed pool
  ASSERT_EQ(t.points().size(), observed.size());
  for (std::size_t i = 0; i < t.points().size(); ++i) {
    EXPECT_NEAR(t.points()[i].efficiency, expected[i], 1e-9) << "knot " << i;
    EXPECT_GT(t.points()[i].efficiency, 0);
    EXPECT_LE(t.points()[i].efficiency, 1);
    if (i > 0) {
      EXPECT_GE(t.points()[i].efficiency, t.points()[i - 1].efficiency - 1e-12);
    }
  }
}

// Observed efficiencies above 1 (a peak set too low) are clamped to 1: a single
// observation of 1.25 gives the constant table 1.
TEST(FitTable, ClampsEfficienciesAboveOne) {
  const sim::cost::EfficiencyTable t = fit_table({{1024, 1.25}}, true);
  ASSERT_EQ(t.points().size(), 1u);
  EXPECT_DOUBLE_EQ(t.points()[0].efficiency, 1.0);
}

TEST(FitTable, RejectsAnEmptyObservationList) {
  EXPECT_THROW(fit_table({}, false), std::invalid_argument);
}

}  // namespace
}  // namespace strait::calibration::detail
