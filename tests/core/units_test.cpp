#include "sim/core/units.hpp"

#include <gtest/gtest.h>

namespace strait {
namespace {

// 1 GB at 1 GB/s is 1 s = 1e12 ps; 2^60 bytes at 8 Kb/s (1e3 B/s, both within their
// config ranges) is 1.15e15 s, past the 9.2e6 s that int64 picoseconds hold: converting
// it was undefined behaviour and wrapped, now it is an error naming what to check.
TEST(Time, ADurationPastWhatSimulatedTimeHoldsIsAnError) {
  EXPECT_EQ(Time::for_work(1e9, 1e9).ps(), 1'000'000'000'000);
  EXPECT_EQ(Time::from_s(9e6).ps(), 9'000'000'000'000'000'000);
  try {
    (void)Time::for_work(1.152921504606846976e18, 1e3);
    ADD_FAILURE() << "no error";
  } catch (const TimeOverflow& e) {
    EXPECT_STREQ(e.what(),
                 "a duration of 1.15e+15 s is past what simulated time holds "
                 "(2^63 ps, about 106 days): check the sizes and rates of the run (bandwidths, "
                 "peaks, batch and table sizes)");
  }
  EXPECT_THROW((void)Time::from_s(1e300), TimeOverflow);
  EXPECT_THROW((void)Time::from_us(-1e300), TimeOverflow);
}

}  // namespace
}  // namespace strait
