#include "executor/measured_run.hpp"

#include <gtest/gtest.h>

namespace strait::executor {
namespace {

using sim::workload::CommClass;
using sim::workload::Op;
using sim::workload::OpGraph;
using sim::workload::OpKind;

// Two ranks, two steps, streams compute and comm, one group {0, 1}. Each rank runs
//   op 0 kernel (step 0, compute) -> op 1 all-reduce (step 0, comm, dense sync)
//   -> op 2 kernel (step 1, compute).
// Measured (us):  rank 0: op0 [0, 10]  op1 [10, 30]  op2 [30, 40]
//                 rank 1: op0 [0, 20]  op1 [20, 30]  op2 [30, 50]
// Step 0 ends at 20 (rank 1's op 0), step 1 at 50: steps of 20 and 30 us.
// The all-reduce starts when the last member issues it: at 20 (rank 1).
// Rank 0: compute 20; idle 10-30 behind op 1 = straggler wait 10 (until 20) + exposed
// dense sync 10; straggler wait 10 more after its last op (ends at 40, makespan 50).
// Rank 1: compute 40, exposed 10 (20-30), no wait.
OpGraph two_rank_graph() {
  OpGraph g;
  g.streams = {"compute", "comm"};
  g.names = {"mlp", "allreduce"};
  g.groups = {{"dp", {0, 1}}};
  g.steps = 2;
  for (int r = 0; r < 2; ++r) {
    sim::workload::RankOps rank;
    rank.rank = r;
    Op k0;
    k0.stream = 0;
    k0.kernel.flops = 100;
    Op c;
    c.kind = OpKind::kCollective;
    c.stream = 1;
    c.name = 1;
    c.deps = {0};
    c.collective.comm_class = CommClass::kDenseSync;
    c.collective.bytes = 1024;
    Op k1 = k0;
    k1.step = 1;
    k1.deps = {1};
    rank.ops = {k0, c, k1};
    g.ranks.push_back(rank);
  }
  return g;
}

MeasuredRun measured(const OpGraph& g) {
  MeasuredRun run;
  run.scenario = "two";
  run.graph = &g;
  auto us = [](double t) { return Time::from_us(t); };
  run.ranks = {{{us(0), us(10), us(30)}, {us(10), us(30), us(40)}},
               {{us(0), us(20), us(30)}, {us(20), us(30), us(50)}}};
  return run;
}

TEST(MeasuredRun, StepsEndWithTheirLastComputeOpOnAnyRank) {
  const auto g = two_rank_graph();
  const auto ends = step_ends(measured(g));
  ASSERT_EQ(ends.size(), 2u);
  EXPECT_EQ(ends[0], Time::from_us(20));
  EXPECT_EQ(ends[1], Time::from_us(50));
}

TEST(MeasuredRun, AccountsIdleComputeBehindACollectiveAsExposedCommunication) {
  const auto g = two_rank_graph();
  const auto run = measured(g);
  const auto a0 = rank_account(run, 0, Time::from_us(50));
  EXPECT_EQ(a0.compute, Time::from_us(20));
  EXPECT_EQ(a0.exposed_comm[static_cast<std::size_t>(CommClass::kDenseSync)], Time::from_us(10));
  EXPECT_EQ(a0.straggler_wait, Time::from_us(20));
  EXPECT_EQ(a0.bubble, Time::zero());
  const auto a1 = rank_account(run, 1, Time::from_us(50));
  EXPECT_EQ(a1.compute, Time::from_us(40));
  EXPECT_EQ(a1.exposed_comm[static_cast<std::size_t>(CommClass::kDenseSync)], Time::from_us(10));
  EXPECT_EQ(a1.straggler_wait, Time::zero());
}

TEST(MeasuredRun, ReportUsesTheSimulatorsJsonKeys) {
  const auto g = two_rank_graph();
  const auto j = measured_report_json(measured(g));
  EXPECT_EQ(j["steps"], 2);
  EXPECT_EQ(j["gpus"], 2);
  EXPECT_EQ(j["mode"], "measured");
  ASSERT_EQ(j["step_times_ms"].size(), 2u);
  EXPECT_DOUBLE_EQ(j["step_times_ms"][0].get<double>(), 0.020);
  EXPECT_DOUBLE_EQ(j["step_times_ms"][1].get<double>(), 0.030);
  // Step 0 warms up (the default phases: one warm-up step, no drain): the step time is
  // step 1's; every step's mean is kept apart.
  EXPECT_DOUBLE_EQ(j["step_time_ms"].get<double>(), 0.030);
  EXPECT_DOUBLE_EQ(j["steady_state"]["all_steps_mean_ms"].get<double>(), 0.025);
  EXPECT_EQ(j["steady_state"]["warmup_steps"], 1);
  EXPECT_EQ(j["critical_rank"], 1);
  // Average rank per step: compute (20 + 40) / 4 = 15 us, exposed dense sync 20 / 4 = 5,
  // straggler wait 20 / 4 = 5.
  EXPECT_DOUBLE_EQ(j["breakdown_ms"]["compute"].get<double>(), 0.015);
  EXPECT_DOUBLE_EQ(j["breakdown_ms"]["exposed_dense_sync"].get<double>(), 0.005);
  EXPECT_DOUBLE_EQ(j["breakdown_ms"]["straggler_wait"].get<double>(), 0.005);
  EXPECT_TRUE(j.contains("breakdown_critical_ms"));
  EXPECT_TRUE(j.contains("step_time_p99_ms"));
  // Per rank and step: rank 0 computes 10 us, rank 1 20 us; rank 1 tops the stragglers.
  ASSERT_EQ(j["breakdown_by_rank_ms"].size(), 2u);
  EXPECT_DOUBLE_EQ(j["breakdown_by_rank_ms"][0]["compute"].get<double>(), 0.010);
  EXPECT_DOUBLE_EQ(j["breakdown_by_rank_ms"][0]["straggler_wait"].get<double>(), 0.010);
  EXPECT_DOUBLE_EQ(j["rank_compute_ms"][1].get<double>(), 0.020);
  EXPECT_EQ(j["top_stragglers"][0]["rank"], 1);
}

TEST(MeasuredRun, CollectivesStartWhenTheLastMemberIssuesThem) {
  const auto g = two_rank_graph();
  const auto starts = collective_starts(measured(g));
  EXPECT_EQ(starts[0][1], Time::from_us(20));
  EXPECT_EQ(starts[1][1], Time::from_us(20));
  EXPECT_EQ(starts[0][0], Time::zero());  // a kernel: its own start
}

TEST(MeasuredRun, TimelineHasEveryOpOfEveryRankOnItsStreamsTrack) {
  // 3 ops per rank, and rank 0's wait for peers (10-20 us) before the all-reduce.
  const auto g = two_rank_graph();
  traces::Timeline tl;
  add_to_timeline(measured(g), tl);
  ASSERT_EQ(tl.spans().size(), 7u);
  EXPECT_EQ(tl.ranks(), (std::vector<int>{0, 1}));
  EXPECT_EQ(tl.name_of(tl.spans()[1].name), "wait for peers");
  EXPECT_EQ(tl.track_name(tl.spans()[1].track), "comm");
  EXPECT_EQ(tl.spans()[1].end, Time::from_us(20));
}

// The simulator's rule for the time after a rank's last compute op (rank_account.hpp): the
// rank's own replica sync running then is exposed replica sync, the rest straggler wait.
// Both ranks: op 0 kernel [0, 10], op 1 replica sync (comm) [10, 30]; rank 1 also runs
// op 2 kernel [10, 50] on compute. Rank 0's tail 10-50: exposed replica sync 20, straggler
// wait 20.
TEST(MeasuredRun, ReplicaSyncAfterTheLastComputeOpIsExposedAsInTheSimulator) {
  OpGraph g = two_rank_graph();
  auto us = [](double t) { return Time::from_us(t); };
  for (auto& rank : g.ranks) {
    rank.ops[1].collective.comm_class = CommClass::kReplicaSync;
    rank.ops[2].step = 0;
    rank.ops[2].deps = {0};
  }
  g.ranks[0].ops.pop_back();
  g.steps = 1;
  MeasuredRun run;
  run.graph = &g;
  run.ranks = {{{us(0), us(10)}, {us(10), us(30)}},
               {{us(0), us(10), us(10)}, {us(10), us(30), us(50)}}};
  const auto a0 = rank_account(run, 0, us(50));
  EXPECT_EQ(a0.compute, us(10));
  EXPECT_EQ(a0.exposed_comm[static_cast<std::size_t>(CommClass::kReplicaSync)], us(20));
  EXPECT_EQ(a0.straggler_wait, us(20));
  const auto a1 = rank_account(run, 1, us(50));
  EXPECT_EQ(a1.compute, us(50));
  EXPECT_EQ(a1.straggler_wait + a1.exposed_comm_total() + a1.bubble, Time::zero());
}

// One rank, one kernel "mlp" in each of 5 steps taking 100, 110, 90, 200, 100 us: its
// quartiles (linear) are 100 and 110 around a median of 100, a spread of 10%. A second
// kernel of 5 us a step is under the 10 us floor and left out.
TEST(MeasuredRun, KernelSpreadIsTheMedianOverKernelsOfTheirIqrOverTheirMedian) {
  OpGraph g;
  g.streams = {"compute"};
  g.names = {"mlp", "tiny"};
  g.steps = 5;
  sim::workload::RankOps rank;
  MeasuredRun run;
  run.graph = &g;
  run.ranks.resize(1);
  const double mlp_us[] = {100, 110, 90, 200, 100};
  double t = 0;
  for (int s = 0; s < 5; ++s) {
    for (int name = 0; name < 2; ++name) {
      Op k;
      k.step = s;
      k.name = name;
      if (!rank.ops.empty()) k.deps = {static_cast<std::int32_t>(rank.ops.size() - 1)};
      rank.ops.push_back(k);
      const double d = name == 0 ? mlp_us[s] : 5;
      run.ranks[0].start.push_back(Time::from_us(t));
      run.ranks[0].end.push_back(Time::from_us(t + d));
      t += d;
    }
  }
  g.ranks.push_back(rank);
  EXPECT_NEAR(kernel_spread_percent(run), 10.0, 1e-9);
  EXPECT_NEAR(measured_report_json(run)["kernel_spread_percent"].get<double>(), 10.0, 1e-9);
}

}  // namespace
}  // namespace strait::executor
