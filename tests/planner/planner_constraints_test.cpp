#include <gtest/gtest.h>

#include "planner/plan_document.hpp"
#include "planner_test_support.hpp"
#include "sim/workload/layout.hpp"

namespace strait::planner {
namespace {

using namespace testing_support;
using sim::workload::ShardingType;

/// The reasons the outcome gives for the references the constraints exclude.
std::string excluded(const PlanOutcome& o) {
  std::string out;
  for (const auto& x : o.excluded) out += x.label + ": " + x.reason + "\n";
  return out;
}

/// A request on three datacenters whose scenario plan has one model-parallel group over
/// all 48 GPUs (it crosses both datacenter boundaries), under `constraints`.
PlanRequest spanning_baseline(const std::string& constraints) {
  auto req = request_of(kThreeDc, kSmallDlrm, kSmallDlrmData, constraints);
  req.has_baseline = true;
  req.baseline_document = Json::parse(R"({"sparse": {"group_size": 48, "placement": "cluster",
                                          "default": "row_wise"}})");
  return req;
}

/// `c`'s verdict on a plan document for `req`'s model and cluster.
std::string violation_of(const PlanRequest& req, const Constraints& c, const std::string& doc) {
  const Json d = Json::parse(doc);
  const auto plan = parse_plan(d, "plan.json", req.base.model);
  const auto layout = sim::workload::Layout::build(req.base.cluster, plan);
  return c.violation(d, plan, layout, req.base.cluster, req.base.model);
}

// dlrm-tiny-cpu's own plan puts six of its eight tables table-wise. With table-wise
// forbidden everywhere the scenario plan is excluded (and said so), and no plan found
// has a table-wise table.
TEST(PlannerConstraints, ForbiddenShardingHoldsForTheScenarioPlanAndTheSearch) {
  const auto req =
      scenario_request("dlrm-tiny-cpu.json", R"({"forbid_sharding": {"*": ["table_wise"]}})");
  auto options = test_options();
  options.references = true;
  const auto outcome = find_plan(req, bundled_cost(), options);
  ASSERT_EQ(outcome.status, PlanStatus::kFound);
  EXPECT_NE(excluded(outcome).find("scenario plan: constraints.json: /forbid_sharding: table "),
            std::string::npos)
      << excluded(outcome);
  EXPECT_FALSE(outcome.baseline);  // never priced
  for (const auto& p : outcome.top) {
    for (const auto& s : p.plan.sharding) EXPECT_NE(s.type, ShardingType::kTableWise) << p.label;
  }
  if (outcome.torchrec) {
    for (const auto& s : outcome.torchrec->plan.sharding)
      EXPECT_NE(s.type, ShardingType::kTableWise);
  }
}

// A group of 3 cannot divide dlrm-8gpu's 8 ranks. The scenario plan (group 8) and the
// TorchRec-style plan break the fix, so nothing is left: an error naming the
// constraints file and /fix, never a plan of group size 8.
TEST(PlannerConstraints, FixedGroupSizeTheClusterCannotHoldIsAnErrorWithReferencesOn) {
  const auto req = scenario_request("dlrm-8gpu.json", R"({"fix": {"sparse": {"group_size": 3}}})");
  auto options = test_options();
  options.references = true;
  const auto msg = error_of([&] { find_plan(req, bundled_cost(), options); });
  EXPECT_NE(msg.find("constraints.json: /fix: no plan keeps these constraints"), std::string::npos)
      << msg;
  EXPECT_NE(msg.find("divides the 8 ranks"), std::string::npos) << msg;
}

// Context parallelism of degree 16 placed in a host of 8 GPUs cannot be laid out.
TEST(PlannerConstraints, FixedContextParallelDegreeLargerThanAHostIsAnError) {
  const char* model = R"({"name": "h", "embedding": {"tables": [
      {"name": "item", "rows": 100000, "dim": 64, "pooling": "sequence"}]},
    "dense": {"hstu": {"layers": 2, "model_dim": 64, "heads": 2, "head_dim": 32,
                       "linear_dim": 32, "negatives": 16}}})";
  const char* data = R"({"name": "d", "batch_size": {"per_rank": 8},
    "sequence_length": {"distribution": "fixed", "value": 512}, "max_length": 512})";
  const auto req =
      request_of("hgx-h100-8.json", model, data,
                 R"({"fix": {"context_parallel": {"degree": 16, "placement": "host"}}})");
  auto options = test_options();
  options.references = true;
  const auto msg = error_of([&] { find_plan(req, bundled_cost(), options); });
  EXPECT_NE(msg.find("constraints.json: /fix: no plan keeps these constraints"), std::string::npos)
      << msg;
}

// A fixed pipeline depth of 3 on dlrm-8gpu (whose plan has 2): the scenario plan is
// excluded naming the key, and every plan found has depth 3.
TEST(PlannerConstraints, FixedScheduleExcludesAScenarioPlanThatDiffers) {
  const auto req =
      scenario_request("dlrm-8gpu.json", R"({"fix": {"schedule": {"pipeline_depth": 3}}})");
  auto options = test_options();
  options.references = true;
  options.evaluations = 4;
  const auto outcome = find_plan(req, bundled_cost(), options);
  ASSERT_EQ(outcome.status, PlanStatus::kFound);
  EXPECT_NE(excluded(outcome).find(
                "scenario plan: constraints.json: /fix/schedule/pipeline_depth: expected 3, the "
                "plan has 2"),
            std::string::npos)
      << excluded(outcome);
  for (const auto& p : outcome.top) EXPECT_EQ(p.plan.schedule.pipeline_depth, 3) << p.label;
}

// Three datacenters of 16 GPUs. A scenario plan whose model-parallel group is the whole
// cluster crosses them; with no dimension allowed to span datacenters it is excluded
// and the plans found keep every group inside one.
TEST(PlannerConstraints, GroupsThatMayNotSpanDatacentersExcludeAReferenceThatDoes) {
  const auto req = spanning_baseline(R"({"may_span_datacenters": [],
                                         "fix": {"schedule": {"pipeline_depth": 1}}})");
  auto options = test_options();
  options.references = true;
  const auto outcome = find_plan(req, bundled_cost(), options);
  ASSERT_EQ(outcome.status, PlanStatus::kFound);
  EXPECT_NE(excluded(outcome).find("/may_span_datacenters: the sparse model-parallel group of "
                                   "48 ranks crosses a datacenter boundary"),
            std::string::npos)
      << excluded(outcome);
  for (const auto& p : outcome.top) {
    const auto layout = sim::workload::Layout::build(req.base.cluster, p.plan);
    EXPECT_LE(layout.sparse.size, 16) << p.label;
    if (p.plan.dense == sim::workload::DenseParallelism::kFsdp) {
      EXPECT_LE(layout.fsdp.size, 16);
    }
  }
}

// Memory headroom and a cross-datacenter byte cap judge the references as they judge the
// search: on three datacenters, a scenario plan whose model-parallel group spans all of
// them moves its all-to-alls across the long-haul links; under a cap of 1 GiB per step it
// may be priced but never wins, and the plan found keeps the cap and the headroom.
TEST(PlannerConstraints, HeadroomAndCrossDatacenterCapJudgeTheReferencesToo) {
  const auto req = spanning_baseline(
      R"({"max_cross_dc_bytes_per_step": "1 GiB", "memory_headroom": "60 GiB",
          "fix": {"schedule": {"pipeline_depth": 1}}})");
  auto options = test_options();
  options.references = true;
  const auto outcome = find_plan(req, bundled_cost(), options);
  ASSERT_EQ(outcome.status, PlanStatus::kFound);
  ASSERT_TRUE(outcome.baseline);
  EXPECT_GT(outcome.baseline->best().cross_dc_bytes, 1.0 * static_cast<double>(kGiB));
  for (const auto& p : outcome.top) {
    EXPECT_LE(p.best().cross_dc_bytes, 1.0 * static_cast<double>(kGiB)) << p.label;
    EXPECT_LE(p.best().memory.total, p.best().memory_capacity - 60.0 * static_cast<double>(kGiB))
        << p.label;
  }
}

// A fixed key holds whatever its spelling: "25 MiB" and 26214400 bytes are one bucket
// size, an absent pipeline depth is its default of 1, and "/sparse/default" pins every
// table the fix does not name.
TEST(PlannerConstraints, AFixedKeyIsComparedByMeaningNotSpelling) {
  const auto req = request_of("hgx-h100-8.json", kSmallDlrm, kSmallDlrmData);
  const auto c = Constraints::from_config(
      ConfigNode(Json::parse(R"({"fix": {"dense": {"parallelism": "ddp", "bucket_size": "25 MiB"},
                                         "schedule": {"pipeline_depth": 1},
                                         "sparse": {"default": "row_wise",
                                                    "tables": {"tiny": "data_parallel"}}}})"),
                 "constraints.json"),
      req.base.model);
  EXPECT_EQ(violation_of(req, c, R"({"dense": {"parallelism": "ddp", "bucket_size": 26214400},
      "sparse": {"tables": {"big": "row_wise", "wide": "row_wise", "mid": "row_wise",
                            "tiny": "data_parallel"}}})"),
            "");
  EXPECT_EQ(violation_of(req, c, R"({"dense": {"parallelism": "ddp", "bucket_size": "100 MiB"},
      "sparse": {"default": "row_wise", "tables": {"tiny": "data_parallel"}}})"),
            "constraints.json: /fix/dense/bucket_size: expected 26214400, the plan has 104857600");
  EXPECT_EQ(violation_of(req, c, R"({"sparse": {"default": "row_wise",
      "tables": {"mid": "table_wise", "tiny": "data_parallel"}}})"),
            "constraints.json: /fix/sparse/tables/mid/type: expected \"row_wise\", the plan has "
            "\"table_wise\"");
  EXPECT_EQ(violation_of(req, c, R"({"schedule": {"pipeline_depth": 2},
      "sparse": {"default": "row_wise", "tables": {"tiny": "data_parallel"}}})"),
            "constraints.json: /fix/schedule/pipeline_depth: expected 1, the plan has 2");
}

// A fix that names a slice's owner holds only for a plan that places it there.
TEST(PlannerConstraints, FixedSliceOwnersMustMatch) {
  const auto req = request_of("hgx-h100-8.json", kSmallDlrm, kSmallDlrmData);
  const auto c = Constraints::from_config(
      ConfigNode(
          Json::parse(
              R"({"fix": {"sparse": {"tables": {"mid": {"type": "table_wise", "ranks": [3]}}}}})"),
          "constraints.json"),
      req.base.model);
  EXPECT_EQ(violation_of(
                req, c, R"({"sparse": {"tables": {"mid": {"type": "table_wise", "ranks": [3]}}}})"),
            "");
  EXPECT_EQ(
      violation_of(req, c,
                   R"({"sparse": {"tables": {"mid": {"type": "table_wise", "ranks": [5]}}}})"),
      "constraints.json: /fix/sparse/tables/mid/ranks: expected [3], the plan places it on [5]");
}

// Forbidding a sharding the fix pins leaves no plan: an error, not a silent plan.
TEST(PlannerConstraints, AFixThatContradictsAForbiddenShardingIsAnError) {
  const auto req = request_of("hgx-h100-8.json", kSmallDlrm, kSmallDlrmData,
                              R"({"fix": {"sparse": {"tables": {"mid": "table_wise"}}},
                                  "forbid_sharding": {"mid": ["table_wise"]}})");
  auto options = test_options();
  options.references = true;
  const auto msg = error_of([&] { find_plan(req, bundled_cost(), options); });
  EXPECT_NE(msg.find("constraints.json: /fix: no plan keeps these constraints"), std::string::npos)
      << msg;
  EXPECT_NE(msg.find("/forbid_sharding: table \"mid\" is table_wise"), std::string::npos) << msg;
}

}  // namespace
}  // namespace strait::planner
