#include <gtest/gtest.h>

#include "planner/plan_document.hpp"
#include "planner/torchrec_plan.hpp"
#include "planner_test_support.hpp"
#include "sim/workload/sharding.hpp"

namespace strait::planner {
namespace {

using namespace testing_support;

TEST(PlannerErrors, UnknownConstraintKeyNamesFileAndKey) {
  const auto msg = error_of([] {
    request_of("hgx-h100-8.json", kSmallDlrm, kSmallDlrmData, R"({"memory_headrom": "1 GiB"})");
  });
  EXPECT_NE(msg.find("constraints.json"), std::string::npos) << msg;
  EXPECT_NE(msg.find("memory_headrom"), std::string::npos) << msg;
  EXPECT_NE(msg.find("memory_headroom"), std::string::npos) << msg;  // the suggestion
}

TEST(PlannerErrors, UnknownTableNameNamesThePointer) {
  const auto msg = error_of([] {
    request_of("hgx-h100-8.json", kSmallDlrm, kSmallDlrmData,
               R"({"forbid_sharding": {"bigg": ["grid"]}})");
  });
  EXPECT_NE(msg.find("/forbid_sharding"), std::string::npos) << msg;
  EXPECT_NE(msg.find("bigg"), std::string::npos) << msg;
}

TEST(PlannerErrors, ForbiddingEveryShardingTypeIsUnsatisfiable) {
  const auto msg = error_of([] {
    request_of("hgx-h100-8.json", kSmallDlrm, kSmallDlrmData,
               R"({"forbid_sharding": {"tiny": ["data_parallel", "table_wise", "row_wise",
                   "column_wise", "table_row_wise", "grid"]}})");
  });
  EXPECT_NE(msg.find("constraints.json: /forbid_sharding"), std::string::npos) << msg;
  EXPECT_NE(msg.find("\"tiny\""), std::string::npos) << msg;
}

// A fixed group of 3 ranks cannot divide 8 GPUs: no candidate can be built.
TEST(PlannerErrors, FixedValueTheClusterCannotHoldIsAConfigError) {
  const auto req = request_of("hgx-h100-8.json", kSmallDlrm, kSmallDlrmData,
                              R"({"fix": {"sparse": {"group_size": 3}}})");
  const auto msg = error_of([&] { find_plan(req, bundled_cost(), test_options()); });
  EXPECT_NE(msg.find("constraints.json: /fix"), std::string::npos) << msg;
  EXPECT_NE(msg.find("divides the 8 ranks"), std::string::npos) << msg;
}

// 79 GiB of headroom on an 80 GB GPU: nothing fits; the outcome names the closest plan's
// rank, shortfall and binding term (a return value, not an exception).
TEST(PlannerErrors, NothingFitsIsAnOutcomeWithTheClosestCandidate) {
  const auto req = request_of("hgx-h100-8.json", kSmallDlrm, kSmallDlrmData,
                              R"({"memory_headroom": "79 GiB",
                                  "fix": {"schedule": {"pipeline_depth": 1}}})");
  const auto outcome = find_plan(req, bundled_cost(), test_options());
  EXPECT_EQ(outcome.status, PlanStatus::kNothingFits);
  ASSERT_TRUE(outcome.closest);
  const auto& m = outcome.closest->best().memory;
  EXPECT_GT(m.excess, 0);
  EXPECT_FALSE(m.dominant.empty());
  EXPECT_TRUE(outcome.top.empty());
}

// On three datacenters the dense gradients must cross them every step: a zero byte limit
// cannot be met.
TEST(PlannerErrors, CrossDatacenterLimitThatCannotBeMetIsReported) {
  const auto req = request_of(kThreeDc, kSmallDlrm, kSmallDlrmData,
                              R"({"max_cross_dc_bytes_per_step": 0,
                                  "fix": {"schedule": {"pipeline_depth": 1}}})");
  const auto outcome = find_plan(req, bundled_cost(), test_options());
  EXPECT_EQ(outcome.status, PlanStatus::kConstraintUnmet);
  EXPECT_NE(outcome.unmet.find("constraints.json: /max_cross_dc_bytes_per_step"), std::string::npos)
      << outcome.unmet;
}

TEST(PlannerErrors, TorchRecPlanWithUnknownTable) {
  const auto req = request_of("hgx-h100-8.json", kSmallDlrm, kSmallDlrmData);
  const Json tr = Json::parse(
      R"({"plan": {"ebc": {"bgi": {"sharding_type": "row_wise", "ranks": [0], "shards": []}}}})");
  const auto msg =
      error_of([&] { parse_torchrec_plan(ConfigNode(tr, "sharding.json"), req.base.model); });
  EXPECT_NE(msg.find("sharding.json: /plan/ebc/bgi"), std::string::npos) << msg;
  EXPECT_NE(msg.find("did you mean \"big\""), std::string::npos) << msg;
}

TEST(PlannerErrors, ExplicitRankOutsideTheGroup) {
  const auto req = request_of("hgx-h100-8.json", kSmallDlrm, kSmallDlrmData);
  const auto plan = parse_plan(Json::parse(R"({"sparse": {"group_size": 4, "placement": "host",
                      "tables": {"mid": {"type": "table_wise", "ranks": [6]}}}})"),
                               "plan.json", req.base.model);
  const auto msg = error_of([&] { sim::workload::ShardMap::build(req.base.model, plan, 4, 8); });
  EXPECT_NE(msg.find("plan.json: /sparse/tables/mid/ranks/0"), std::string::npos) << msg;
}

}  // namespace
}  // namespace strait::planner
