#include "sim/core/statistics.hpp"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace strait
