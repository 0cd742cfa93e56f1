#include "sim/cost/efficiency_table.hpp"

#include <functional>
#include <stdexcept>

#include <gtest/gtest.h>

#include "sim/core/error.hpp"

namespace strait::sim::cost {
namespace {

ConfigNode doc(const char* text) { return ConfigNode(Json::parse(text), "profile.json"); }

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

// Points (256, 0.2), (1024, 0.6), (4096, 0.8). In log2: 8, 10, 12.
//   key 512  (log2 9):  halfway from 0.2 to 0.6 -> 0.4
//   key 2048 (log2 11): halfway from 0.6 to 0.8 -> 0.7
//   key 1024 * 2^(1/2) (log2 10.5): quarter way from 0.6 to 0.8 -> 0.65
//   below 256 or key <= 0 -> 0.2; above 4096 -> 0.8.
TEST(EfficiencyTable, InterpolatesLinearlyInLog2OfTheKeyAndClampsAtTheEnds) {
  const EfficiencyTable t({{256, 0.2}, {1024, 0.6}, {4096, 0.8}});
  EXPECT_DOUBLE_EQ(t.at(256), 0.2);
  EXPECT_DOUBLE_EQ(t.at(1024), 0.6);
  EXPECT_DOUBLE_EQ(t.at(4096), 0.8);
  EXPECT_DOUBLE_EQ(t.at(512), 0.4);
  EXPECT_DOUBLE_EQ(t.at(2048), 0.7);
  EXPECT_DOUBLE_EQ(t.at_log2(10.5), 0.65);
  EXPECT_DOUBLE_EQ(t.at(16), 0.2);
  EXPECT_DOUBLE_EQ(t.at(0), 0.2);
  EXPECT_DOUBLE_EQ(t.at(-5), 0.2);
  EXPECT_DOUBLE_EQ(t.at(1e12), 0.8);
}

TEST(EfficiencyTable, ANumberIsAConstant) {
  const EfficiencyTable t = EfficiencyTable::from_config(doc("0.85"), "hbm_bytes");
  EXPECT_DOUBLE_EQ(t.at(1), 0.85);
  EXPECT_DOUBLE_EQ(t.at(1e15), 0.85);
}

TEST(EfficiencyTable, ReadsATableWhoseKeyNameMatches) {
  const EfficiencyTable t = EfficiencyTable::from_config(
      doc(R"({"key": "row_bytes", "points": [[64, 0.4], [256, 0.7]]})"), "row_bytes");
  EXPECT_DOUBLE_EQ(t.at(128), 0.55);
}

TEST(EfficiencyTable, ConfigErrorsNameThePointAndTheExpectation) {
  EXPECT_EQ(message_of([] {
              EfficiencyTable::from_config(doc(R"({"key": "mnk", "points": [[1, 0.5]]})"),
                                           "mnk_cube_root");
            }),
            "profile.json: /key: expected \"mnk_cube_root\" (the key of this table), got \"mnk\"");
  EXPECT_EQ(
      message_of([] { EfficiencyTable::from_config(doc(R"({"key": "k", "points": []})"), "k"); }),
      "profile.json: /points: expected at least one [key, efficiency] point");
  EXPECT_EQ(message_of([] {
              EfficiencyTable::from_config(doc(R"({"key": "k", "points": [[1, 0.5, 2]]})"), "k");
            }),
            "profile.json: /points/0: expected a [key, efficiency] pair");
  EXPECT_EQ(message_of([] {
              EfficiencyTable::from_config(doc(R"({"key": "k", "points": [[0, 0.5]]})"), "k");
            }),
            "profile.json: /points/0/0: expected a positive key, got 0");
  EXPECT_EQ(message_of([] { EfficiencyTable::from_config(doc(R"("high")"), "k"); }),
            "profile.json: /: expected an efficiency in (0, 1] or a table {\"key\": \"k\", "
            "\"points\": [[key, efficiency], ...]}");
}

TEST(EfficiencyTable, DirectConstructionRejectsBadPoints) {
  EXPECT_THROW(EfficiencyTable(std::vector<EfficiencyTable::Point>{}), std::invalid_argument);
  EXPECT_THROW(EfficiencyTable({{1, 0.5}, {1, 0.6}}), std::invalid_argument);
  EXPECT_THROW(EfficiencyTable({{1, 0.0}}), std::invalid_argument);
  EXPECT_THROW(EfficiencyTable({{1, 1.5}}), std::invalid_argument);
  EXPECT_THROW(EfficiencyTable({{-1, 0.5}}), std::invalid_argument);
}

}  // namespace
}  // namespace strait::sim::cost
