#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "planner/plan_document.hpp"
#include "planner/plan_report.hpp"
#include "planner/search_space.hpp"
#include "planner/table_placement.hpp"
#include "planner_test_support.hpp"
#include "sim/core/statistics.hpp"
#include "sim/workload/layout.hpp"
#include "sim/workload/memory_model.hpp"

namespace strait::planner {
namespace {

using namespace testing_support;

// Everything but the table shardings is fixed; table_row_wise and grid are forbidden, so
// each of the 4 tables takes row_wise, table_wise, data_parallel or column_wise x2:
// 4^4 = 256 points on one 8-GPU host.
const char* kTablesOnly = R"({
  "fix": {"dense": {"parallelism": "ddp", "bucket_size": "25 MiB"},
          "sparse": {"replica_sync_every": 1, "replica_sync_staleness": 1},
          "schedule": {"pipeline_depth": 2, "priorities": {"embedding": 0, "dense": 1},
                       "sm_free_comm": false}},
  "forbid_sharding": {"*": ["table_row_wise", "grid"]},
  "objective": "step_time"})";

/// Analytical step time of every point of the space, built as the planner builds them.
double exhaustive_best(const PlanRequest& req, const TableCosts& costs) {
  const SearchSpace space(req.base.cluster, req.base.layout.world, req.base.model, req.constraints,
                          nullptr);
  const auto sim = make_simulation_cost(bundled_cost(), sim::network::NetworkMode::kAnalytical);
  const auto& dims = space.dimensions();
  std::vector<int> point(dims.size(), 0);
  double best = std::numeric_limits<double>::infinity();
  for (;;) {
    Json doc = space.compose(point);
    auto plan = parse_plan(doc, "<exhaustive>", req.base.model);
    const auto layout = sim::workload::Layout::build(req.base.cluster, plan);
    place_tables(plan, costs, layout.sparse.size, 8, layout.cp.size);
    const auto e = sim->estimate(scenario_for(req.base, plan));
    if (e.fits) best = std::min(best, e.step_ms);
    std::size_t d = 0;
    while (d < dims.size() && ++point[d] == static_cast<int>(dims[d].choices.size()))
      point[d++] = 0;
    if (d == dims.size()) break;
  }
  return best;
}

// Small instance (8 GPUs, 4 tables): coordinate descent on the closed form, then the best
// four in analytical simulation, finds the analytical optimum of exhaustive enumeration.
TEST(Planner, BestEqualsExhaustiveEnumerationOnASmallInstance) {
  const auto req = request_of("hgx-h100-8.json", kSmallDlrm, kSmallDlrmData, kTablesOnly);
  const TableCosts costs(req.base, bundled_cost());
  auto options = test_options();
  options.exact_limit = 0;  // force the greedy search
  const auto outcome = find_plan(req, bundled_cost(), options);
  ASSERT_EQ(outcome.status, PlanStatus::kFound);
  EXPECT_FALSE(outcome.stats.exact);
  EXPECT_DOUBLE_EQ(outcome.top.front().best().step_ms, exhaustive_best(req, costs));
}

// Under the exact limit the planner scores every point itself.
TEST(Planner, SmallSpacesAreEnumeratedExactly) {
  const auto req = request_of("hgx-h100-8.json", kSmallDlrm, kSmallDlrmData, kTablesOnly);
  auto options = test_options();
  options.exact_limit = 1e6;
  const auto outcome = find_plan(req, bundled_cost(), options);
  EXPECT_TRUE(outcome.stats.exact);
  EXPECT_EQ(outcome.stats.space_size, 256);
  EXPECT_EQ(outcome.stats.space_scored, 256);
  // Beyond the space only the references (off here) and the final placement moves.
  EXPECT_GE(outcome.stats.scored, outcome.stats.space_scored);
}

// Same inputs and thread count (2): the same plan, byte for byte.
TEST(Planner, IsDeterministicForAThreadCount) {
  const auto req = request_of("hgx-h100-8.json", kSmallDlrm, kSmallDlrmData, kTablesOnly);
  auto options = test_options();
  options.threads = 2;
  const auto a = find_plan(req, bundled_cost(), options);
  const auto b = find_plan(req, bundled_cost(), options);
  ASSERT_EQ(a.status, PlanStatus::kFound);
  EXPECT_EQ(a.top.front().document.dump(), b.top.front().document.dump());
  EXPECT_EQ(a.top.front().best().step_ms, b.top.front().best().step_ms);
}

// Three datacenters joined by 100 Gb/s, 5-10 ms links: model-parallel groups that span
// datacenters put every all-to-all on the WAN; the planner keeps them inside one.
TEST(Planner, FindsTwoDimensionalSparseGroupsInsideADatacenter) {
  const char* constraints = R"({"fix": {
      "dense": {"parallelism": "ddp", "bucket_size": "25 MiB"},
      "schedule": {"pipeline_depth": 2, "sm_free_comm": false, "cross_dc_sync": "overlapped"},
      "sparse": {"tables": {"big": "row_wise", "wide": "row_wise", "mid": "row_wise",
                            "tiny": "data_parallel"}}}})";
  const auto req = request_of(kThreeDc, kSmallDlrm, kSmallDlrmData, constraints);
  const auto outcome = find_plan(req, bundled_cost(), test_options());
  ASSERT_EQ(outcome.status, PlanStatus::kFound);
  const auto& plan = outcome.top.front().plan;
  const auto layout = sim::workload::Layout::build(req.base.cluster, plan);
  EXPECT_LE(layout.sparse.size, 16);  // one datacenter holds 16 GPUs
  for (const auto& c : datacenter_crossings(plan, layout))
    EXPECT_EQ(c.find("all-to-all"), std::string::npos) << c;
}

// HSTU with 32 samples of 8,192 tokens per replica and an unfused attention kernel:
// attention scores alone are 32 x 8192^2 x 4 heads x 2 B = 16 GiB per layer, 128 GiB for
// 8 layers: no plan without context parallelism fits an 80 GB H100; with degree c each
// rank keeps 1/c of them. A fused kernel keeps no scores: the same job fits without CP.
TEST(Planner, FindsContextParallelismWhenLongSequencesDoNotFitOtherwise) {
  const std::string fused_model = R"({"name": "long-hstu",
    "embedding": {"tables": [{"name": "item", "rows": 1000000, "dim": 256, "pooling": "sequence"}]},
    "dense": {"hstu": {"layers": 8, "model_dim": 256, "heads": 4, "head_dim": 64,
                       "linear_dim": 64, "negatives": 128}}})";
  const std::string model =
      std::string(fused_model)
          .replace(fused_model.find("\"negatives\""), 0, R"("attention_kernel": "unfused", )");
  const char* data = R"({"name": "long", "batch_size": {"per_rank": 32},
    "sequence_length": {"distribution": "fixed", "value": 8192}, "max_length": 8192})";
  const char* constraints = R"({"fix": {"dense": {"parallelism": "ddp"},
      "sparse": {"group_size": 8, "placement": "host", "tables": {"item": "row_wise"}},
      "schedule": {"pipeline_depth": 1, "sm_free_comm": false, "load_balance": "none"}}})";
  auto req = request_of("hgx-h100-8.json", model, data, constraints);
  const double capacity = memory_capacity(req.base, bundled_cost());
  const auto memory = sim::workload::memory_per_rank(req.base);
  EXPECT_DOUBLE_EQ(memory.ranks[0].term("attention_scores"), 128.0 * kGiB);
  const auto no_cp = memory.fits(capacity);
  EXPECT_FALSE(no_cp.fits) << no_cp.total / (1 << 30) << " GiB, " << no_cp.dominant << " "
                           << no_cp.dominant_bytes / (1 << 30);
  const auto fused = sim::workload::memory_per_rank(
      request_of("hgx-h100-8.json", fused_model, data, constraints).base);
  EXPECT_EQ(fused.ranks[0].term("attention_scores"), 0.0);
  EXPECT_TRUE(fused.fits(capacity).fits);
  const auto outcome = find_plan(req, bundled_cost(), test_options());
  ASSERT_EQ(outcome.status, PlanStatus::kFound);
  EXPECT_GE(outcome.top.front().plan.cp_degree, 2);
  EXPECT_TRUE(outcome.top.front().best().fits);
}

// A DLRM with a 4096-wide top MLP (~34 M parameters, 5 DDP buckets of 25 MiB), 8,192
// samples per GPU, on one host: the bucket all-reduces overlap the backward GEMMs (which
// bound the step) and take comm_sm_fraction = 16/132 of the SMs unless they run on copy
// engines.
TEST(Planner, FindsSmFreeCommunicationWhenCommunicationStealsSms) {
  ASSERT_GT(bundled_cost().comm_sm_fraction("H100-SXM"), 0);
  std::string model = kSmallDlrm;
  model.replace(model.find(R"("layers": [256, 1])"), 18, R"("layers": [4096, 4096, 4096, 1])");
  const char* constraints = R"({"fix": {
      "dense": {"parallelism": "ddp", "bucket_size": "25 MiB"},
      "sparse": {"tables": {"big": "row_wise", "wide": "row_wise", "mid": "table_wise",
                            "tiny": "data_parallel"}},
      "schedule": {"pipeline_depth": 2, "priorities": {"embedding": 0, "dense": 1}}}})";
  std::string data = kSmallDlrmData;
  data.replace(data.find(R"("per_rank": 1024)"), 16, R"("per_rank": 8192)");
  const auto req = request_of("hgx-h100-8.json", model, data, constraints);
  auto options = test_options();
  options.final_mode = sim::network::NetworkMode::kFlow;
  const auto outcome = find_plan(req, bundled_cost(), options);
  ASSERT_EQ(outcome.status, PlanStatus::kFound);
  EXPECT_TRUE(outcome.top.front().plan.schedule.sm_free);
}

/// The (closed form, `stage`) objective values of the plans among `plans` priced both ways,
/// both feasible (no cross-DC limit here, so feasible is fits).
std::vector<std::pair<double, double>> rank_pairs(const std::vector<RankedPlan>& plans,
                                                  Objective objective,
                                                  std::optional<Estimate> RankedPlan::*stage) {
  std::vector<std::pair<double, double>> pairs;
  for (const auto& p : plans) {
    const auto& sim = p.*stage;
    if (p.closed_form && sim && p.closed_form->fits && sim->fits)
      pairs.emplace_back(objective_value(objective, *p.closed_form),
                         objective_value(objective, *sim));
  }
  return pairs;
}

// dlrm-8gpu (26 tables, 8 GPUs) in analytical final mode, 8 evaluations, every final plan
// in the outcome (top 1,000): the pairs are exactly the top plans with a feasible closed
// form and final estimate, so the reported rho is recomputed from the outcome alone.
TEST(Planner, ReportsTheClosedFormsRankCorrelationAgainstTheFinalAnalyticalEstimates) {
  const auto req = scenario_request("dlrm-8gpu.json");
  auto options = test_options();
  options.references = true;
  options.top = 1000;
  const auto outcome = find_plan(req, bundled_cost(), options);
  ASSERT_EQ(outcome.status, PlanStatus::kFound);
  const auto pairs = rank_pairs(outcome.top, outcome.objective, &RankedPlan::final_estimate);
  ASSERT_GE(pairs.size(), 3u);
  EXPECT_EQ(outcome.stats.rank_pairs, static_cast<int>(pairs.size()));
  ASSERT_TRUE(outcome.stats.closed_form_rank_correlation.has_value());
  const double rho = *outcome.stats.closed_form_rank_correlation;
  EXPECT_GE(rho, -1);
  EXPECT_LE(rho, 1);
  // Sums in another order: equal up to rounding.
  EXPECT_NEAR(rho, spearman_rank_correlation(pairs).value(), 1e-12);
}

// In flow final mode the pairs are closed form against analytical; not every candidate run
// analytically is in the outcome, so the top plans and references give a lower bound, and
// the analytical runs (simulations less evaluations) an upper one.
TEST(Planner, ReportsTheClosedFormsRankCorrelationAgainstAnalyticalRunsInFlowMode) {
  const auto req = scenario_request("dlrm-8gpu.json");
  auto options = test_options();
  options.references = true;
  options.evaluations = 4;
  options.top = 1000;
  options.final_mode = sim::network::NetworkMode::kFlow;
  const auto outcome = find_plan(req, bundled_cost(), options);
  ASSERT_EQ(outcome.status, PlanStatus::kFound);
  auto seen = outcome.top;
  for (const auto& ref : {outcome.baseline, outcome.torchrec}) {
    if (ref && std::none_of(seen.begin(), seen.end(),
                            [&](const RankedPlan& p) { return p.document == ref->document; }))
      seen.push_back(*ref);
  }
  const auto known = rank_pairs(seen, outcome.objective, &RankedPlan::analytical);
  EXPECT_GE(outcome.stats.rank_pairs, std::max<int>(3, static_cast<int>(known.size())));
  EXPECT_LE(outcome.stats.rank_pairs, outcome.stats.simulated - outcome.stats.evaluations);
  ASSERT_TRUE(outcome.stats.closed_form_rank_correlation.has_value());
  EXPECT_GE(*outcome.stats.closed_form_rank_correlation, -1);
  EXPECT_LE(*outcome.stats.closed_form_rank_correlation, 1);
}

}  // namespace
}  // namespace strait::planner
