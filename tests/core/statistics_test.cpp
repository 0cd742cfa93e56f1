#include "sim/core/statistics.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <utility>
#include <vector>

namespace strait {
namespace {

// Five values 10, 20, 30, 40, 50 (given out of order): the p-quantile sits at position
// p * 4 among them sorted, linear in between: p50 = 30, p25 = 20, p90 at 3.6 = 40 + 0.6 * 10
// = 46, p0 = 10, p100 = 50.
TEST(Percentile, InterpolatesLinearlyBetweenOrderStatistics) {
  const std::vector<double> v = {50, 10, 40, 30, 20};
  EXPECT_DOUBLE_EQ(percentile(v, 0.5), 30);
  EXPECT_DOUBLE_EQ(percentile(v, 0.25), 20);
  EXPECT_DOUBLE_EQ(percentile(v, 0.9), 46);
  EXPECT_DOUBLE_EQ(percentile(v, 0), 10);
  EXPECT_DOUBLE_EQ(percentile(v, 1), 50);
}

// One value is every quantile; no value gives 0.
TEST(Percentile, OfOneValueIsThatValueAndOfNoneIsZero) {
  EXPECT_DOUBLE_EQ(percentile({7}, 0.99), 7);
  EXPECT_DOUBLE_EQ(percentile({}, 0.5), 0);
}

// Five pairs in the same order on both sides (x 1..5, y 10, 20, 40, 80, 160): every rank
// difference is 0, so rho = 1; with y reversed the ranks are 6 - i, so rho = -1. Only the
// order counts, not the values.
TEST(SpearmanRankCorrelation, IsOneForTheSameOrderAndMinusOneForTheReversed) {
  const std::vector<std::pair<double, double>> same = {
      {3, 40}, {1, 10}, {5, 160}, {2, 20}, {4, 80}};
  const std::vector<std::pair<double, double>> reversed = {
      {3, 40}, {1, 160}, {5, 10}, {2, 80}, {4, 20}};
  EXPECT_DOUBLE_EQ(spearman_rank_correlation(same).value(), 1);
  EXPECT_DOUBLE_EQ(spearman_rank_correlation(reversed).value(), -1);
}

// x = 1, 2, 2, 3 and y = 1, 3, 2, 4. The tied 2s share ranks 2 and 3: x ranks 1, 2.5, 2.5,
// 4; y ranks 1, 3, 2, 4. Both have mean 2.5, so the deviations are x: -1.5, 0, 0, 1.5 and
// y: -1.5, 0.5, -0.5, 1.5. Sum of products 2.25 + 0 + 0 + 2.25 = 4.5; sums of squares
// 4.5 and 5. rho = 4.5 / sqrt(4.5 x 5) = sqrt(0.9) = 0.94868. (The no-ties shortcut
// 1 - 6 x 0.5 / 60 would say 0.95.)
TEST(SpearmanRankCorrelation, TiesShareTheirAverageRank) {
  const std::vector<std::pair<double, double>> pairs = {{1, 1}, {2, 3}, {2, 2}, {3, 4}};
  EXPECT_DOUBLE_EQ(spearman_rank_correlation(pairs).value(), std::sqrt(0.9));
}

// Two pairs always order alike or oppositely (rho +-1 says nothing), and a constant side
// has no order: no figure in either case. Three pairs are enough: 1, 2, 3 against 2, 1, 3
// gives rank deviations -1, 0, 1 and 0, -1, 1, so rho = 1 / sqrt(2 x 2) = 0.5.
TEST(SpearmanRankCorrelation, HasNoFigureBelowThreePairsOrForAConstantSide) {
  EXPECT_FALSE(spearman_rank_correlation({}).has_value());
  EXPECT_FALSE(spearman_rank_correlation({{1, 2}, {2, 1}}).has_value());
  EXPECT_FALSE(spearman_rank_correlation({{1, 5}, {2, 5}, {3, 5}}).has_value());
  EXPECT_DOUBLE_EQ(spearman_rank_correlation({{1, 2}, {2, 1}, {3, 3}}).value(), 0.5);
}

}  // namespace
}  // namespace strait
