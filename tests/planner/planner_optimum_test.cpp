// The planner against the optimum of small spaces, found by brute force.
//
// Each case lists its axes as plan-file fragments; this file composes every combination
// itself (no planner search code), simulates each plan in flow mode over the steps the
// planner compares plans on, and takes the fastest. The planner then searches the same
// space (the constraints pin every other dimension and forbid the sharding types the
// case leaves out) with its default effort, and its plan must be within 0.5% of that
// optimum. Slice owners are left to the simulator's default placement here and to the
// planner's cost-balancing placement there, so the planner may also beat the optimum.

#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include <tbb/parallel_for.h>

#include "planner/plan_document.hpp"
#include "planner_test_support.hpp"

namespace strait::planner {
namespace {

using namespace testing_support;

struct Axis {
  std::vector<std::vector<std::pair<std::string, Json>>> choices;  // pointer -> value
};

Axis axis(const std::string& pointer, std::vector<Json> values) {
  Axis a;
  for (auto& v : values) a.choices.push_back({{pointer, std::move(v)}});
  return a;
}

/// Every plan document of the product of `axes` over `base`.
std::vector<Json> every_plan(const Json& base, const std::vector<Axis>& axes) {
  std::vector<Json> out;
  std::vector<std::size_t> at(axes.size(), 0);
  for (;;) {
    Json doc = base;
    for (std::size_t a = 0; a < axes.size(); ++a) {
      for (const auto& [ptr, v] : axes[a].choices[at[a]]) {
        if (!v.is_null()) doc[Json::json_pointer(ptr)] = v;
      }
    }
    out.push_back(std::move(doc));
    std::size_t a = 0;
    while (a < axes.size() && ++at[a] == axes[a].choices.size()) at[a++] = 0;
    if (a == axes.size()) return out;
  }
}

struct Optimum {
  double step_ms = std::numeric_limits<double>::infinity();
  std::size_t plans = 0, feasible = 0;
  std::string document;
};

/// The fastest feasible plan of `documents` in flow mode (steady step time).
Optimum brute_force(const PlanRequest& req, const std::vector<Json>& documents) {
  const auto flow = make_simulation_cost(bundled_cost(), sim::network::NetworkMode::kFlow);
  std::vector<double> ms(documents.size(), std::numeric_limits<double>::infinity());
  tbb::parallel_for(std::size_t{0}, documents.size(), [&](std::size_t i) {
    try {
      const auto plan = parse_plan(documents[i], "<brute force>", req.base.model);
      const auto e = flow->estimate(scenario_for(req.base, plan));
      if (e.fits) ms[i] = e.step_ms;
    } catch (const ConfigError&) {  // a combination the cluster cannot lay out
    }
  });
  Optimum best;
  best.plans = documents.size();
  for (std::size_t i = 0; i < ms.size(); ++i) {
    if (ms[i] < std::numeric_limits<double>::infinity()) ++best.feasible;
    if (ms[i] < best.step_ms) best.step_ms = ms[i], best.document = documents[i].dump();
  }
  return best;
}

/// The planner's best steady step time in flow mode with its default effort.
PlanOutcome plan_it(const PlanRequest& req) {
  PlannerOptions options;  // defaults: the evaluations a user gets
  options.final_mode = sim::network::NetworkMode::kFlow;
  options.references = false;
  options.threads = 2;
  return find_plan(req, bundled_cost(), options);
}

void expect_near_optimum(const PlanRequest& req, const Optimum& optimum) {
  const auto outcome = plan_it(req);
  ASSERT_EQ(outcome.status, PlanStatus::kFound);
  const double found = outcome.top.front().best().step_ms;
  EXPECT_LE(found, optimum.step_ms * 1.005)
      << "planner " << outcome.top.front().label << " " << outcome.top.front().document.dump()
      << "\noptimum " << optimum.document;
  std::printf(
      "  %zu plans (%zu feasible): optimum %.4f ms, planner %.4f ms (%+.2f%%), "
      "%d evaluations, %d simulations\n",
      optimum.plans, optimum.feasible, optimum.step_ms, found, 100 * (found / optimum.step_ms - 1),
      outcome.stats.evaluations, outcome.stats.simulated);
}

// DLRM on one 8-GPU host: four tables, each row-wise, table-wise, data-parallel,
// column-wise in two or table-row-wise (5^4), times pipeline depth 1-3 and SM-free
// communication on or off: 3,750 plans.
TEST(PlannerOptimum, DlrmOnOneHostWithinHalfAPercentOfTheOptimum) {
  const auto req = request_of("hgx-h100-8.json", kSmallDlrm, kSmallDlrmData, R"({
    "fix": {"dense": {"parallelism": "ddp", "bucket_size": "25 MiB"},
            "schedule": {"priorities": {"embedding": 0, "dense": 1}}},
    "forbid_sharding": {"*": ["grid"]},
    "objective": "step_time"})");
  const Json base = Json::parse(R"({"dense": {"parallelism": "ddp", "bucket_size": "25 MiB"},
    "sparse": {"group_size": 8, "placement": "host"},
    "schedule": {"priorities": {"embedding": 0, "dense": 1}}})");
  std::vector<Axis> axes;
  for (const char* t : {"big", "wide", "mid", "tiny"}) {
    axes.push_back(axis(std::string("/sparse/tables/") + t,
                        {"row_wise", "table_wise", "data_parallel", "table_row_wise",
                         Json{{"type", "column_wise"}, {"column_shards", 2}}}));
  }
  axes.push_back(axis("/schedule/pipeline_depth", {1, 2, 3}));
  axes.push_back(axis("/schedule/sm_free_comm", {false, true}));
  const auto docs = every_plan(base, axes);
  ASSERT_EQ(docs.size(), 3750u);
  expect_near_optimum(req, brute_force(req, docs));
}

// HSTU on one 8-GPU host with lognormal histories: the item table row-wise, table-wise
// or table-row-wise, the user table row-wise, table-wise or data-parallel, context
// parallelism none or 2, 4, 8 by all-gather or all-to-all, sample balancing none, greedy
// or Karmarkar-Karp, pipeline depth 1-3, SM-free communication off or on, communication
// priorities equal, embedding first or dense first: 3,402 plans.
TEST(PlannerOptimum, HstuWithContextParallelismAndBalancingWithinHalfAPercent) {
  const char* model = R"({"name": "small-hstu", "embedding": {"tables": [
      {"name": "item", "rows": 2000000, "dim": 128, "pooling": "sequence"},
      {"name": "user", "rows": 100000, "dim": 64, "pooling": "sum"}]},
    "dense": {"hstu": {"layers": 2, "model_dim": 128, "heads": 2, "head_dim": 64,
                       "linear_dim": 64, "negatives": 64}}})";
  const char* data = R"({"name": "histories", "batch_size": {"per_rank": 16},
    "sequence_length": {"distribution": "lognormal", "mean": 512, "sigma": 0.8},
    "max_length": 2048, "pooling_factors": {"user": {"distribution": "fixed", "value": 1}}})";
  const auto req = request_of("hgx-h100-8.json", model, data, R"({
    "fix": {"dense": {"parallelism": "ddp", "bucket_size": "25 MiB"}},
    "forbid_sharding": {"item": ["data_parallel", "column_wise", "grid"],
                        "user": ["table_row_wise", "column_wise", "grid"]},
    "objective": "step_time"})");
  const Json base = Json::parse(R"({"dense": {"parallelism": "ddp", "bucket_size": "25 MiB"},
    "sparse": {"group_size": 8, "placement": "host"}})");
  std::vector<Json> cp = {nullptr};
  for (int degree : {2, 4, 8}) {
    for (const char* mode : {"all_gather", "all_to_all"})
      cp.push_back({{"degree", degree}, {"mode", mode}, {"placement", "host"}});
  }
  const std::vector<Axis> axes = {
      axis("/sparse/tables/item", {"row_wise", "table_wise", "table_row_wise"}),
      axis("/sparse/tables/user", {"row_wise", "table_wise", "data_parallel"}),
      axis("/context_parallel", cp),
      axis("/schedule/load_balance", {"none", "greedy", "karmarkar_karp"}),
      axis("/schedule/pipeline_depth", {1, 2, 3}),
      axis("/schedule/sm_free_comm", {false, true}),
      axis("/schedule/priorities",
           {nullptr, Json::parse(R"({"embedding": 0, "context_parallel": 0, "dense": 1})"),
            Json::parse(R"({"dense": 0, "embedding": 1})")})};
  const auto docs = every_plan(base, axes);
  ASSERT_EQ(docs.size(), 3402u);
  expect_near_optimum(req, brute_force(req, docs));
}

// Two datacenters of one 8-GPU host each, joined by 2 x 100 Gb/s at 2 ms: the sparse
// group one host (2D sparse: replicas synced every 1, 10, 100 or 1,000 steps, staleness 1
// or 4) or both, the dense sync flat, hierarchical or overlapped, four tables row-wise,
// table-wise or data-parallel: 1,944 distinct plans.
TEST(PlannerOptimum, TwoDatacentersWithReplicaSyncWithinHalfAPercent) {
  const std::string cluster = hgx_datacenters(
      "two-dc", R"([{"name": "a", "hosts": 1}, {"name": "b", "hosts": 1}])",
      R"([{"between": ["a", "b"], "bandwidth": "100 Gb/s", "latency": "2 ms", "count": 2}])");
  const auto req = request_of(cluster, kSmallDlrm, kSmallDlrmData, R"({
    "fix": {"dense": {"parallelism": "ddp", "bucket_size": "25 MiB"},
            "schedule": {"pipeline_depth": 1, "sm_free_comm": false,
                         "priorities": {"embedding": 0, "dense": 1}}},
    "forbid_sharding": {"*": ["table_row_wise", "column_wise", "grid"]},
    "objective": "step_time"})");
  const Json base = Json::parse(R"({"dense": {"parallelism": "ddp", "bucket_size": "25 MiB"},
    "schedule": {"pipeline_depth": 1, "sm_free_comm": false,
                 "priorities": {"embedding": 0, "dense": 1}}})");
  std::vector<Json> groups;
  Axis group;
  group.choices.push_back({{"/sparse/group_size", 16}, {"/sparse/placement", "cluster"}});
  for (int every : {1, 10, 100, 1000}) {
    for (int stale : {1, 4}) {
      if (every == 1 && stale > 1) continue;
      group.choices.push_back({{"/sparse/group_size", 8},
                               {"/sparse/placement", "host"},
                               {"/sparse/replica_sync_every", every},
                               {"/sparse/replica_sync_staleness", stale}});
    }
  }
  std::vector<Axis> axes = {
      group, axis("/schedule/cross_dc_sync", {"flat", "hierarchical", "overlapped"})};
  for (const char* t : {"big", "wide", "mid", "tiny"})
    axes.push_back(
        axis(std::string("/sparse/tables/") + t, {"row_wise", "table_wise", "data_parallel"}));
  const auto docs = every_plan(base, axes);
  ASSERT_EQ(docs.size(), 1944u);
  expect_near_optimum(req, brute_force(req, docs));
}

}  // namespace
}  // namespace strait::planner
