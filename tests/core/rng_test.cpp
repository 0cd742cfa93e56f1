#include "sim/core/rng.hpp"

#include <cmath>

#include <gtest/gtest.h>

namespace strait {
namespace {

TEST(Rng, SameSeedGivesSameStream) {
  Rng a(42), b(42);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(a.next_u64(), b.next_u64());
}

TEST(Rng, ForkedStreamsDifferAndAreReproducible) {
  Rng base(7);
  Rng r1 = base.fork(1), r2 = base.fork(2), r1_again = base.fork(1);
  const auto x1 = r1.next_u64();
  EXPECT_NE(x1, r2.next_u64());
  EXPECT_EQ(x1, r1_again.next_u64());
}

TEST(Rng, UniformAndNormalHaveTheirMoments) {
  // 200k samples: the mean's standard error is ~0.0007 (uniform) and ~0.0022 (normal).
  Rng rng(1);
  const int n = 200000;
  double su = 0, sn = 0, sn2 = 0;
  for (int i = 0; i < n; ++i) {
    su += rng.uniform();
    const double z = rng.normal();
    sn += z;
    sn2 += z * z;
  }
  EXPECT_NEAR(su / n, 0.5, 0.005);
  EXPECT_NEAR(sn / n, 0.0, 0.01);
  EXPECT_NEAR(sn2 / n, 1.0, 0.02);
}

TEST(Rng, UniformIntStaysInRange) {
  Rng rng(3);
  int counts[3] = {0, 0, 0};
  for (int i = 0; i < 30000; ++i) ++counts[rng.uniform_int(3)];
  for (int c : counts) EXPECT_NEAR(c, 10000, 400);
}

}  // namespace
}  // namespace strait
