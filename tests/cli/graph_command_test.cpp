// strait graph: the op graph of one rank of a training scenario, printed as JSON.

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "strait_process.hpp"

namespace strait::cli::testing {
namespace {

constexpr const char* kScenario = "configs/scenarios/dlrm-8gpu.json";

TEST(CliGraph, PrintsTheOpsOfOneRankAsJson) {
  const auto run = run_strait({"graph", kScenario, "--rank", "3"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto json = nlohmann::json::parse(run.out, nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(json.is_discarded()) << "stdout is not JSON:\n" << run.out.substr(0, 2000);
  ASSERT_TRUE(json.is_object());
  EXPECT_EQ(json.value("rank", -1), 3);
  ASSERT_TRUE(json.contains("ops") && json["ops"].is_array());
  EXPECT_FALSE(json["ops"].empty());
}

TEST(CliGraph, RankOutOfRangeIsBadInput) {
  const auto run = run_strait({"graph", kScenario, "--rank", "99"});
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_EQ(run.err, "strait: error: rank 99 is out of range: the graph has ranks 0..7\n");
  EXPECT_EQ(run.out, "");
}

}  // namespace
}  // namespace strait::cli::testing
