// planner/plan_report.hpp: per-table statistics by hand, the datacenter crossings of a
// layout, speedups, and the JSON of one plan and of a whole outcome, field by field.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "planner/plan_document.hpp"
#include "planner/plan_report.hpp"
#include "planner_test_support.hpp"
#include "sim/workload/layout.hpp"

namespace strait::planner {
namespace {

using namespace testing_support;

sim::workload::ParallelPlan plan_of(const PlanRequest& req, const std::string& doc) {
  return parse_plan(Json::parse(doc), "plan.json", req.base.model);
}

std::vector<std::string> crossings_of(const PlanRequest& req, const std::string& doc) {
  const auto plan = plan_of(req, doc);
  return datacenter_crossings(plan, sim::workload::Layout::build(req.base.cluster, plan));
}

Estimate estimate(double step_ms, double per_gpu = 0, bool fits = true) {
  Estimate e;
  e.fits = fits;
  e.step_ms = step_ms;
  e.samples_per_sec_per_gpu = per_gpu;
  return e;
}

RankedPlan ranked(const PlanRequest& req, const std::string& label, const std::string& doc,
                  double step_ms) {
  RankedPlan p;
  p.label = label;
  p.document = Json::parse(doc);
  p.plan = plan_of(req, doc);
  p.final_estimate = estimate(step_ms, 8192 / step_ms);
  return p;
}

// The plan of the next two tests on one 8-GPU host (one group of M = 8 members).
const char* kMixed = R"({"sparse": {"group_size": 8, "placement": "host", "tables": {
    "big": {"type": "column_wise", "column_shards": 2, "ranks": [5, 2]},
    "wide": {"type": "table_row_wise", "ranks": [0]},
    "mid": {"type": "table_wise", "ranks": [7]}, "tiny": "data_parallel"}}})";

TEST(PlanReport, HostSizeIsTheFirstHostsGpuCount) {
  EXPECT_EQ(host_size(request_of("hgx-h100-8.json", kSmallDlrm, kSmallDlrmData).base), 8);
  std::string four = kThreeDc;
  four.replace(four.find(R"("gpus": 8)"), 9, R"("gpus": 4)");
  EXPECT_EQ(host_size(request_of(four, kSmallDlrm, kSmallDlrmData).base), 4);
}

// Per table, in a group of 8 with 1,024 samples a replica (fp32, 8-byte ids):
//   big, column_wise x2 on members 5 and 2: each slice has w = 32 and all A = 8 x 20,480
//     = 163,840 ids: HBM 163,840 x (136 + 384) = 85,196,800 B, network 1,310,720 +
//     2 x 8 x 1,024 x 128 = 3,407,872 B; lookup = 2 slices; 4,000,000 x 32 x 4 =
//     512,000,000 B a holder; input 163,840 x 8 = 1,310,720 B, output and gradients
//     8 x 1,024 x 64 x 4 = 2,097,152 B.
//   wide, table_row_wise from member 0: its host block, members 0-7, an eighth of the rows
//     each (2,000,000 / 8 x 64 x 4 = 64,000,000 B); input 8 x 51,200 x 8 = 3,276,800 B.
//   mid, table_wise on member 7: 200,000 x 64 x 4 = 51,200,000 B; input 327,680 B.
//   tiny, data_parallel: every member, its own lookup (a group of 1), 256,000 B, nothing
//     moved over the group.
TEST(PlanReport, TableStatsByHand) {
  const auto req = request_of("hgx-h100-8.json", kSmallDlrm, kSmallDlrmData);
  const TableCosts costs(req.base, bundled_cost());
  const auto plan = plan_of(req, kMixed);
  const auto stats =
      table_stats(plan, sim::workload::Layout::build(req.base.cluster, plan), costs, 8);
  ASSERT_EQ(stats.size(), 4u);
  const auto& big = stats[0];
  EXPECT_EQ(big.table, "big");
  EXPECT_EQ(big.sharding, "column_wise x2");
  EXPECT_EQ(big.members, (std::vector<int>{5, 2}));
  EXPECT_FALSE(big.all_members);
  EXPECT_DOUBLE_EQ(big.lookup_ms, 2 * (85196800.0 / 3350e9 + 3407872.0 / 50e9) * 1e3);
  EXPECT_EQ(big.bytes_per_member, 512000000.0);
  EXPECT_EQ(big.input_bytes, 1310720.0);
  EXPECT_EQ(big.output_bytes, 2097152.0);
  EXPECT_EQ(big.grad_bytes, 2097152.0);

  const auto& wide = stats[1];
  EXPECT_EQ(wide.sharding, "table_row_wise");
  EXPECT_EQ(wide.members, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_DOUBLE_EQ(wide.lookup_ms, costs.slice_seconds(1, 1, 1, 8, 1) * 1e3);
  EXPECT_EQ(wide.bytes_per_member, 64000000.0);
  EXPECT_EQ(wide.input_bytes, 3276800.0);
  EXPECT_EQ(wide.output_bytes, 2097152.0);

  const auto& mid = stats[2];
  EXPECT_EQ(mid.sharding, "table_wise");
  EXPECT_EQ(mid.members, (std::vector<int>{7}));
  EXPECT_EQ(mid.bytes_per_member, 51200000.0);
  EXPECT_EQ(mid.input_bytes, 327680.0);

  const auto& tiny = stats[3];
  EXPECT_EQ(tiny.sharding, "data_parallel");
  EXPECT_TRUE(tiny.all_members);
  EXPECT_TRUE(tiny.members.empty());
  EXPECT_DOUBLE_EQ(tiny.lookup_ms, costs.slice_seconds(3, 1, 1, 1, 1) * 1e3);
  EXPECT_EQ(tiny.bytes_per_member, 256000.0);
  EXPECT_EQ(tiny.input_bytes + tiny.output_bytes + tiny.grad_bytes, 0.0);
}

// A group of 4 on an 8-GPU host: the shard map's host block is the whole group
// (host_block_size(8, 4) = 4), so wide's rows lie on members 0-3, a quarter each
// (2,000,000 / 4 x 64 x 4 = 128,000,000 B).
TEST(PlanReport, HostBlockOfAGroupSmallerThanItsHostIsTheGroup) {
  const auto req = request_of("hgx-h100-8.json", kSmallDlrm, kSmallDlrmData);
  const TableCosts costs(req.base, bundled_cost());
  const auto plan = plan_of(req, R"({"sparse": {"group_size": 4, "placement": "host",
      "tables": {"wide": {"type": "table_row_wise", "ranks": [0]}}}})");
  const auto stats =
      table_stats(plan, sim::workload::Layout::build(req.base.cluster, plan), costs, 8);
  EXPECT_EQ(stats[1].sharding, "table_row_wise");
  EXPECT_EQ(stats[1].members, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(stats[1].bytes_per_member, 128000000.0);
}

// Row-wise over the 8 members: 8 shards of an eighth of the rows each, on every member.
TEST(PlanReport, RowWiseTablesAreOnEveryMember) {
  const auto req = request_of("hgx-h100-8.json", kSmallDlrm, kSmallDlrmData);
  const TableCosts costs(req.base, bundled_cost());
  const auto plan = plan_of(req, "{}");
  const auto stats =
      table_stats(plan, sim::workload::Layout::build(req.base.cluster, plan), costs, 8);
  EXPECT_EQ(stats[0].sharding, "row_wise");
  EXPECT_TRUE(stats[0].all_members);
  EXPECT_DOUBLE_EQ(stats[0].lookup_ms, 8 * costs.slice_seconds(0, 1, 0.125, 8, 1) * 1e3);
  EXPECT_EQ(stats[0].bytes_per_member, 4000000.0 / 8 * 64 * 4);
  EXPECT_EQ(stats[0].input_bytes, 1310720.0);
}

// One datacenter: nothing crosses. Three of 16 GPUs: groups of 16 per datacenter leave the
// replica sync across them (its groups hold one member of every datacenter's group); one group of
// all 48 ranks puts the all-to-alls there, and FSDP over the world its shard group; the dense sync
// always crosses, as its mode says.
TEST(PlanReport, DatacenterCrossingsNameWhatCrossesAndHow) {
  EXPECT_TRUE(
      crossings_of(request_of("hgx-h100-8.json", kSmallDlrm, kSmallDlrmData), "{}").empty());
  const auto req = request_of(kThreeDc, kSmallDlrm, kSmallDlrmData);
  EXPECT_EQ(crossings_of(req, R"({"sparse": {"group_size": 16, "placement": "datacenter"}})"),
            (std::vector<std::string>{"embedding replica sync (every 1 steps, staleness 1)",
                                      "dense gradient sync (flat, in the step)"}));
  EXPECT_EQ(crossings_of(req, R"({"sparse": {"group_size": 8, "placement": "host",
                                             "replica_sync_every": 10, "replica_sync_staleness": 4},
                                  "schedule": {"cross_dc_sync": "hierarchical"}})"),
            (std::vector<std::string>{"embedding replica sync (every 10 steps, staleness 4)",
                                      "dense gradient sync (hierarchical, in the step)"}));
  EXPECT_EQ(
      crossings_of(req, R"({"dense": {"parallelism": "fsdp"},
                                  "schedule": {"cross_dc_sync": "overlapped"}})"),
      (std::vector<std::string>{"sparse all-to-alls (model-parallel group)", "FSDP shard group",
                                "dense gradient sync (overlapped: background, one step late)"}));
  // Groups of 24 span datacenters 0-1 and 1-2, and so do their replica groups {r, r + 24}:
  // both the all-to-alls and the replica sync cross.
  EXPECT_EQ(crossings_of(req, R"({"sparse": {"group_size": 24, "placement": "cluster"}})"),
            (std::vector<std::string>{"sparse all-to-alls (model-parallel group)",
                                      "embedding replica sync (every 1 steps, staleness 1)",
                                      "dense gradient sync (flat, in the step)"}));
}

// best / reference in the objective's direction; 0 when either does not fit.
TEST(PlanReport, SpeedupIsInTheObjectivesDirection) {
  EXPECT_DOUBLE_EQ(speedup(Objective::kStepTime, estimate(2), estimate(3)), 1.5);
  EXPECT_DOUBLE_EQ(speedup(Objective::kSamplesPerSecPerGpu, estimate(0, 300), estimate(0, 200)),
                   1.5);
  EXPECT_EQ(speedup(Objective::kStepTime, estimate(2), estimate(3, 0, false)), 0.0);
  EXPECT_EQ(speedup(Objective::kStepTime, estimate(2, 0, false), estimate(3)), 0.0);
  EXPECT_EQ(speedup(Objective::kStepTime, estimate(0), estimate(3)), 0.0);
}

// Every figure of one plan, from its best stage (the final one here); memory in GiB.
TEST(PlanReport, RankedJsonWritesTheBestStagesFigures) {
  const auto req = request_of("hgx-h100-8.json", kSmallDlrm, kSmallDlrmData);
  RankedPlan p;
  p.label = "table:big=table_wise";
  p.document = Json::parse(R"({"sparse": {"tables": {"big": "table_wise"}}})");
  p.plan = plan_of(req, p.document.dump());
  p.closed_form = estimate(3);
  p.analytical = estimate(2.5);
  Estimate e = estimate(2, 512000);
  e.samples_per_sec = 4096000;
  e.cross_dc_bytes = 0.5 * kGiB;
  e.memory_capacity = 80.0 * kGiB;
  e.memory.total = 10.0 * kGiB;
  e.memory.rank = 3;
  e.memory.dominant = "embedding_weights";
  p.final_estimate = e;
  EXPECT_EQ(ranked_json(p, req), Json::parse(R"({"label": "table:big=table_wise", "fits": true,
      "closed_form_step_ms": 3, "analytical_step_ms": 2.5, "final_step_ms": 2,
      "step_time_ms": 2, "samples_per_sec": 4096000, "samples_per_sec_per_gpu": 512000,
      "peak_memory_gib": 10, "peak_memory_rank": 3, "memory_capacity_gib": 80,
      "memory_binding_term": "embedding_weights", "cross_dc_gib_per_step": 0.5,
      "crosses_datacenters": [], "plan": {"sparse": {"tables": {"big": "table_wise"}}}})"));
}

// A simulated stage adds its run: the steps simulated (3 for depth 1: one warm-up and two
// steady), MFU, exposed communication by class, straggler wait and compute.
TEST(PlanReport, RankedJsonOfASimulationAddsItsRun) {
  const auto req = request_of("hgx-h100-8.json", kSmallDlrm, kSmallDlrmData);
  RankedPlan p;
  p.document = Json::object();
  p.plan = req.base.plan;
  p.analytical = make_simulation_cost(bundled_cost(), sim::network::NetworkMode::kAnalytical)
                     ->estimate(scenario_for(req.base, p.plan));
  ASSERT_TRUE(p.analytical->report);
  const auto& report = *p.analytical->report;
  const Json j = ranked_json(p, req);
  EXPECT_EQ(j["simulated_steps"], 3);
  EXPECT_EQ(j["step_time_ms"], report.stats.mean_ms);
  EXPECT_EQ(j["mfu"], report.mfu);
  EXPECT_EQ(j["compute_ms"], report.critical.compute.to_ms());
  EXPECT_EQ(j["straggler_wait_ms"], report.critical.straggler_wait.to_ms());
  std::vector<std::string> classes;
  for (const auto& [name, ms] : j["exposed_comm_ms"].items()) classes.push_back(name);
  EXPECT_EQ(classes,
            (std::vector<std::string>{"context_parallel", "dense_sync", "grad_dist", "input_dist",
                                      "moe", "output_dist", "replica_sync"}));
  EXPECT_EQ(
      j["exposed_comm_ms"]["input_dist"],
      report.critical.exposed_comm[static_cast<std::size_t>(sim::workload::CommClass::kInputDist)]
          .to_ms());
}

// A found outcome: the search statistics, the references and their speedups (3 / 2 and
// 4 / 2 in step time), the excluded reference, and the best plan's table statistics.
TEST(PlanReport, OutcomeJsonOfAFoundPlan) {
  const auto req = request_of("hgx-h100-8.json", kSmallDlrm, kSmallDlrmData);
  const TableCosts costs(req.base, bundled_cost());
  PlanOutcome o;
  o.status = PlanStatus::kFound;
  o.objective = Objective::kStepTime;
  o.final_mode = sim::network::NetworkMode::kAnalytical;
  o.top.push_back(ranked(req, "best", kMixed, 2));
  o.baseline = ranked(req, "scenario plan", "{}", 3);
  o.torchrec = ranked(req, "torchrec-style", "{}", 4);
  o.excluded.push_back({"start point", "constraints.json: /fix: why"});
  o.stats.dimensions = 9;
  o.stats.space_size = 69984;
  o.stats.scored = 100;
  o.stats.simulated = 10;
  o.stats.evaluations = 8;
  o.stats.stopped_by = StopReason::kEvaluations;
  o.stats.closed_form_rank_correlation = 0.75;
  o.stats.rank_pairs = 14;
  const Json j = outcome_json(o, req, costs);
  EXPECT_EQ(j["status"], "found");
  EXPECT_EQ(j["objective"], "step_time");
  EXPECT_EQ(j["final_mode"], "analytical");
  EXPECT_EQ(j["scenario"], "small-dlrm");
  EXPECT_EQ(j["cluster"], "hgx-h100-8");
  EXPECT_EQ(j["gpus"], 8);
  EXPECT_EQ(j["search"], Json::parse(R"({"dimensions": 9, "space_size": 69984, "exact": false,
      "scored_closed_form": 100, "simulated": 10, "evaluations": 8, "stopped_by": "evaluations",
      "budget_reached": false, "closed_form_rank_correlation": 0.75, "rank_pairs": 14})"));
  EXPECT_EQ(j["excluded_references"],
            Json::parse(R"([{"plan": "start point", "reason": "constraints.json: /fix: why"}])"));
  ASSERT_EQ(j["top"].size(), 1u);
  EXPECT_EQ(j["top"][0]["label"], "best");
  EXPECT_EQ(j["scenario_plan"]["step_time_ms"], 3);
  EXPECT_EQ(j["torchrec_style"]["step_time_ms"], 4);
  EXPECT_DOUBLE_EQ(j["speedup_vs_scenario_plan"].get<double>(), 1.5);
  EXPECT_DOUBLE_EQ(j["speedup_vs_torchrec_style"].get<double>(), 2.0);
  ASSERT_EQ(j["tables"].size(), 4u);
  // mid: A = 8 x 5,120 = 40,960 ids; HBM 40,960 x 1,032 = 42,270,720 B, network
  // 40,960 x 8 + 2 x 2,097,152 = 4,521,984 B.
  Json mid = j["tables"][2];
  EXPECT_DOUBLE_EQ(mid["lookup_ms"].get<double>(), (42270720.0 / 3350e9 + 4521984.0 / 50e9) * 1e3);
  mid.erase("lookup_ms");
  EXPECT_EQ(mid, Json::parse(R"({"table": "mid", "sharding": "table_wise", "members": [7],
      "input_dist_bytes": 327680, "output_dist_bytes": 2097152, "grad_dist_bytes": 2097152,
      "bytes_per_member": 51200000})"));
  EXPECT_EQ(j["tables"][3]["members"], "all");
  EXPECT_FALSE(j.contains("closest"));
  EXPECT_FALSE(j.contains("unmet"));
}

// Nothing fits: no top plans, no tables; the closest plan and its memory in GiB (2 GiB
// short of the capacity, on rank 5, bound by 60 GiB of embedding weights).
TEST(PlanReport, OutcomeJsonWhenNothingFitsNamesTheClosestPlan) {
  const auto req = request_of("hgx-h100-8.json", kSmallDlrm, kSmallDlrmData);
  const TableCosts costs(req.base, bundled_cost());
  PlanOutcome o;
  o.status = PlanStatus::kNothingFits;
  RankedPlan closest = ranked(req, "closest", "{}", 0);
  closest.final_estimate->fits = false;
  closest.final_estimate->memory.rank = 5;
  closest.final_estimate->memory.excess = 2.0 * kGiB;
  closest.final_estimate->memory.dominant = "embedding_weights";
  closest.final_estimate->memory.dominant_bytes = 60.0 * kGiB;
  o.closest = closest;
  const Json j = outcome_json(o, req, costs);
  EXPECT_EQ(j["status"], "nothing_fits");
  EXPECT_EQ(j["objective"], "samples_per_sec_per_gpu");
  EXPECT_EQ(j["top"], Json::array());
  EXPECT_FALSE(j.contains("tables"));
  // Nothing simulated: no pairs, and the correlation is null rather than a number.
  EXPECT_EQ(j["search"]["rank_pairs"], 0);
  EXPECT_TRUE(j["search"]["closed_form_rank_correlation"].is_null());
  EXPECT_EQ(j["closest"]["label"], "closest");
  EXPECT_EQ(j["closest_memory"], Json::parse(R"({"rank": 5, "shortfall_gib": 2,
      "binding_term": "embedding_weights", "binding_term_gib": 60})"));

  PlanOutcome unmet;
  unmet.status = PlanStatus::kConstraintUnmet;
  unmet.unmet = "constraints.json: /max_cross_dc_bytes_per_step: ...";
  const Json u = outcome_json(unmet, req, costs);
  EXPECT_EQ(u["status"], "constraint_unmet");
  EXPECT_EQ(u["unmet"], "constraints.json: /max_cross_dc_bytes_per_step: ...");
}

}  // namespace
}  // namespace strait::planner
