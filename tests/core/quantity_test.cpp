#include "sim/core/quantity.hpp"

#include <gtest/gtest.h>

namespace strait {
namespace {

TEST(ParseBandwidth, GigabitsAndGigabytesDifferByEight) {
  EXPECT_DOUBLE_EQ(*parse_bandwidth("400 Gb/s"), 50e9);
  EXPECT_DOUBLE_EQ(*parse_bandwidth("400Gbps"), 50e9);
  EXPECT_DOUBLE_EQ(*parse_bandwidth("450 GB/s"), 450e9);
  EXPECT_DOUBLE_EQ(*parse_bandwidth("1.6 Tb/s"), 200e9);
}

TEST(ParseBandwidth, RejectsMissingOrUnknownUnitAndNegatives) {
  EXPECT_FALSE(parse_bandwidth("400"));
  EXPECT_FALSE(parse_bandwidth("400 furlongs"));
  EXPECT_FALSE(parse_bandwidth("-1 GB/s"));
  EXPECT_FALSE(parse_bandwidth(""));
}

TEST(ParseDuration, ConvertsToIntegerPicoseconds) {
  EXPECT_EQ(parse_duration("2 us")->ps(), 2'000'000);
  EXPECT_EQ(parse_duration("1.5 ms")->ps(), 1'500'000'000);
  EXPECT_EQ(parse_duration("800 ns")->ps(), 800'000);
  EXPECT_EQ(parse_duration("0 s")->ps(), 0);
  EXPECT_FALSE(parse_duration("5"));
}

TEST(ParseBytes, BinaryAndDecimalPrefixes) {
  EXPECT_EQ(*parse_bytes("64 MiB"), 64 * kMiB);
  EXPECT_EQ(*parse_bytes("1 GB"), 1'000'000'000);
  EXPECT_EQ(*parse_bytes("1024"), 1024);
  EXPECT_FALSE(parse_bytes("12 parsecs"));
}

TEST(ParseSizeSuffix, FollowsNcclTestsPowersOf1024) {
  EXPECT_EQ(*parse_size_suffix("8"), 8);
  EXPECT_EQ(*parse_size_suffix("1K"), 1024);
  EXPECT_EQ(*parse_size_suffix("128M"), 128 * kMiB);
  EXPECT_EQ(*parse_size_suffix("1G"), kGiB);
}

TEST(Time, ForWorkRoundsUpToAPicosecond) {
  // 1 byte at 3 B/s = 1/3 s = 333333333333.33 ps -> 333333333334 ps.
  EXPECT_EQ(Time::for_work(1, 3).ps(), 333'333'333'334);
  // Exact divisions stay exact: 50e9 bytes at 50e9 B/s = 1 s.
  EXPECT_EQ(Time::for_work(50e9, 50e9).ps(), 1'000'000'000'000);
}

TEST(FormatBytes, UsesBinaryPrefixes) {
  EXPECT_EQ(format_bytes(512), "512 B");
  EXPECT_EQ(format_bytes(1.5 * 1024 * 1024), "1.50 MiB");
}

}  // namespace
}  // namespace strait
