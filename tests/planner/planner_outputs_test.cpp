#include <gtest/gtest.h>

#include "planner/plan_document.hpp"
#include "planner/torchrec_plan.hpp"
#include "planner_test_support.hpp"
#include "sim/run/training_run.hpp"

namespace strait::planner {
namespace {

using namespace testing_support;
using sim::workload::ShardingType;

const char* kFixedDense = R"({"fix": {"dense": {"parallelism": "ddp"},
    "schedule": {"pipeline_depth": 2, "priorities": {"embedding": 0, "dense": 1}}}})";

// The plan document the planner reports, read back as a plan file and simulated the way
// `strait simulate --plan` does, gives the reported step time exactly.
TEST(PlannerOutputs, PlanDocumentReproducesTheReportedStepTime) {
  const auto req = request_of("hgx-h100-8.json", kSmallDlrm, kSmallDlrmData, kFixedDense, 2);
  auto options = test_options();
  options.final_mode = sim::network::NetworkMode::kFlow;
  const auto outcome = find_plan(req, bundled_cost(), options);
  ASSERT_EQ(outcome.status, PlanStatus::kFound);
  const auto& best = outcome.top.front();
  const auto reread = parse_plan(Json::parse(best.document.dump(2)), "plan.json", req.base.model);
  sim::run::TrainingRunOptions run;
  run.mode = sim::network::NetworkMode::kFlow;
  const auto report = sim::run::run_training(scenario_for(req.base, reread), bundled_cost(), run);
  EXPECT_EQ(report.stats.mean_ms, best.final_estimate->step_ms);
}

// TorchRec form: a 4M x 64 table column-split in two on ranks 5 and 2 is two shards of
// 4,000,000 x 32 at column offsets 0 and 32; reading the file back gives the same sharding.
TEST(PlannerOutputs, TorchRecPlanRoundTrips) {
  const auto req = request_of("hgx-h100-8.json", kSmallDlrm, kSmallDlrmData);
  const TableCosts costs(req.base, bundled_cost());
  auto plan = req.base.plan;
  plan.sharding[0] = {ShardingType::kColumnWise, 2, {5, 2}};
  plan.sharding[1] = {ShardingType::kTableRowWise, 1, {0}};
  plan.sharding[2] = {ShardingType::kTableWise, 1, {3}};
  plan.sharding[3] = {ShardingType::kDataParallel, 1, {}};
  const Json tr = torchrec_plan_json(plan, req.base, costs);
  const auto& big = tr["plan"]["embedding_bag_collection"]["big"];
  EXPECT_EQ(big["sharding_type"], "column_wise");
  EXPECT_EQ(big["shards"][1]["shard_offsets"], Json::parse("[0, 32]"));
  EXPECT_EQ(big["shards"][1]["shard_sizes"], Json::parse("[4000000, 32]"));
  EXPECT_EQ(big["shards"][1]["placement"], "rank:2/cuda:2");
  EXPECT_EQ(tr["plan"]["embedding_bag_collection"]["wide"]["shards"].size(), 8u);
  EXPECT_EQ(tr["strait"]["group_size"], 8);
  const auto back = parse_torchrec_plan(ConfigNode(tr, "sharding.json"), req.base.model);
  for (std::size_t t = 0; t < 4; ++t) {
    EXPECT_EQ(back.sharding[t].type, plan.sharding[t].type) << t;
    EXPECT_EQ(back.sharding[t].ranks, plan.sharding[t].ranks) << t;
    EXPECT_EQ(back.sharding[t].column_shards, plan.sharding[t].column_shards) << t;
  }
}

}  // namespace
}  // namespace strait::planner
