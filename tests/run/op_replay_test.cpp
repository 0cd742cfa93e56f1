#include "sim/run/op_replay.hpp"

#include <gtest/gtest.h>

#include "run_test_support.hpp"
#include "sim/workload/op_graph_builder.hpp"
#include "traces/timeline.hpp"

namespace strait::sim::run {
namespace {

using testing_support::all_reduce;
using testing_support::bundled_cost;
using testing_support::expect_same_accounts;
using testing_support::kernel;
using testing_support::source;
using testing_support::two_rank_graph;
using workload::CommClass;
using workload::Op;
using workload::OpGraph;
using workload::OpKind;

constexpr auto kReplica = static_cast<std::size_t>(CommClass::kReplicaSync);
constexpr auto kDense = static_cast<std::size_t>(CommClass::kDenseSync);

ReplayResult replay_analytical(const OpGraph& g) {
  const auto cluster = topology::Cluster::load(source("configs/clusters/hgx-h100-8.json"));
  ReplayOptions options;
  options.mode = network::NetworkMode::kAnalytical;
  return replay(g, cluster, bundled_cost(), options);
}

Time duration(const Op& op) { return bundled_cost().cost(op.kernel, "H100-SXM").duration(); }

// A 2D sparse step in miniature: each rank computes (rank 0 a short kernel A, rank 1 a
// long kernel B), issues the replica sync of its shard on its own stream, and its next
// kernel C (the embedding update) waits for the sync. Rank 1 issues the sync last, at B,
// so it starts then and ends at makespan - C: it takes D = makespan - B - C.
//   rank 0: compute A + C; straggler wait B - A (peer not there yet); exposed replica sync D.
//   rank 1: compute B + C; no straggler wait; exposed replica sync D.
TEST(OpReplay, TimeBehindAStartedReplicaSyncIsExposedReplicaSyncNotStragglerWait) {
  const Op a = kernel(1, 0), b = kernel(8, 0), c = kernel(2, 0, {1});
  const auto sync = all_reduce(CommClass::kReplicaSync, 0, 1, {0});
  const auto r = replay_analytical(two_rank_graph({a, sync, c}, {b, sync, c}));
  const Time makespan = r.step_end.at(0);
  const Time d = makespan - duration(b) - duration(c);
  ASSERT_GT(d, Time::from_us(100));  // 256 MiB over NVLink: a visible sync
  ASSERT_GT(duration(b), duration(a) + Time::from_us(100));

  const auto& r0 = r.ranks[0];
  EXPECT_EQ(r0.compute, duration(a) + duration(c));
  EXPECT_EQ(r0.straggler_wait, duration(b) - duration(a));
  EXPECT_EQ(r0.exposed_comm[kReplica], d);
  EXPECT_EQ(r0.exposed_comm_total(), d);
  EXPECT_EQ(r0.bubble, Time::zero());
  const auto& r1 = r.ranks[1];
  EXPECT_EQ(r1.compute, duration(b) + duration(c));
  EXPECT_EQ(r1.straggler_wait, Time::zero());
  EXPECT_EQ(r1.exposed_comm[kReplica], d);
  for (const auto& rank : r.ranks)
    EXPECT_EQ(rank.compute + rank.exposed_comm_total() + rank.straggler_wait + rank.bubble,
              makespan);
}

// The last step's replica sync runs after a rank's last compute op while the slowest rank
// still computes; a dense sync issued later (after that rank's long kernel) ends last.
//   rank 0: A, then replica sync (starts at A, both ranks issue it after A, takes D) and
//           the dense sync (starts when rank 1 issues it, at A + B, after the run's end).
//   rank 1: A, replica sync, B on compute, dense sync after B.
// The run ends at A + B (rank 1's last compute op). Rank 0's tail of B: the replica sync
// for D (exposed replica sync), then straggler wait B - D. Before, only the collective that
// ended last (the dense sync, not yet started) counted and the whole B was straggler wait.
TEST(OpReplay, ReplicaSyncAfterTheLastComputeOpIsExposedEvenIfAnotherSyncEndsLater) {
  const Op a = kernel(1, 0), b = kernel(64, 0, {0});
  const auto sync = all_reduce(CommClass::kReplicaSync, 0, 1, {0});
  const auto g = two_rank_graph({a, sync, all_reduce(CommClass::kDenseSync, 1, 2, {0})},
                                {a, sync, b, all_reduce(CommClass::kDenseSync, 1, 2, {2})});
  // D alone: the same replica sync with nothing after it.
  const auto alone = replay_analytical(two_rank_graph({a, sync}, {a, sync}));
  const Time d = alone.drain_end - duration(a);
  const auto r = replay_analytical(g);
  const Time makespan = r.step_end.at(0);
  ASSERT_EQ(makespan, duration(a) + duration(b));
  ASSERT_LT(d, duration(b));
  ASSERT_GT(d, Time::from_us(100));

  const auto& r0 = r.ranks[0];
  EXPECT_EQ(r0.compute, duration(a));
  EXPECT_EQ(r0.exposed_comm[kReplica], d);
  EXPECT_EQ(r0.exposed_comm[kDense], Time::zero());
  EXPECT_EQ(r0.straggler_wait, duration(b) - d);
  const auto& r1 = r.ranks[1];
  EXPECT_EQ(r1.compute, duration(a) + duration(b));
  EXPECT_EQ(r1.straggler_wait + r1.exposed_comm_total() + r1.bubble, Time::zero());
}

// The overlapped cross-datacenter sync in miniature: after kernel A both ranks issue a
// reduce-scatter R, then on the same stream an all-gather G, and kernel C waits for G.
// Both ranks issue both at once, so nobody waits for a peer: the idle time from A's end to
// C's start (R then G back to back) is all exposed dense sync. Before, the time before G
// started (while R ran) was booked as straggler wait: G had "not started yet".
TEST(OpReplay, WaitingOnACollectiveIssuedBehindTheRanksOwnCollectiveIsExposedNotStraggler) {
  const Op a = kernel(1, 0), c = kernel(2, 0, {2});
  const auto rs = all_reduce(CommClass::kDenseSync, 1, 2, {0});
  const auto ag = all_reduce(CommClass::kDenseSync, 1, 2, {1});
  const auto r = replay_analytical(two_rank_graph({a, rs, ag, c}, {a, rs, ag, c}));
  // R alone: the same collective with nothing after it.
  const auto alone = replay_analytical(two_rank_graph({a, rs}, {a, rs}));
  const Time d = alone.drain_end - duration(a);
  ASSERT_GT(d, Time::from_us(100));
  const Time makespan = r.step_end.at(0);
  ASSERT_EQ(makespan, duration(a) + d * 2 + duration(c));
  for (const auto& rank : r.ranks) {
    EXPECT_EQ(rank.compute, duration(a) + duration(c));
    EXPECT_EQ(rank.exposed_comm[kDense], d * 2);
    EXPECT_EQ(rank.straggler_wait, Time::zero());
    EXPECT_EQ(rank.bubble, Time::zero());
  }
}

// Analytical mode replays in dataflow order without the engine (op_replay.cpp, run()) but
// counts the events a time-ordered run takes, one per kernel: three kernels on each of two
// ranks (the third also waits for nothing else) are 6 events, and the step ends at their
// summed durations.
TEST(OpReplay, DataflowOrderCountsOneEventPerKernel) {
  const Op a = kernel(1, 0), b = kernel(2, 0, {0}), c = kernel(4, 0);
  const auto r = replay_analytical(two_rank_graph({a, b, c}, {a, b, c}));
  EXPECT_EQ(r.events, 6u);
  EXPECT_EQ(r.kernels, 6u);
  EXPECT_EQ(r.step_end.at(0), duration(a) + duration(b) + duration(c));
  EXPECT_EQ(r.ranks[1].compute, duration(a) + duration(b) + duration(c));
}

// Untraced analytical runs go in dataflow order, traced ones in time order on the engine
// (the timeline sees ops in the order they end): with a sync on another stream and a
// kernel waiting for a collective, they agree on every figure of every rank.
TEST(OpReplay, DataflowOrderAgreesWithTimeOrderRankByRank) {
  const Op a = kernel(1, 0), b = kernel(8, 0), c = kernel(2, 0, {2}), d = kernel(3, 0);
  const auto sync = all_reduce(CommClass::kReplicaSync, 0, 1, {1});
  const auto g = two_rank_graph({a, a, sync, c, d, a}, {b, a, sync, c, d, b});
  const auto cluster = topology::Cluster::load(source("configs/clusters/hgx-h100-8.json"));
  ReplayOptions options;
  options.mode = network::NetworkMode::kAnalytical;
  const auto dataflow = replay(g, cluster, bundled_cost(), options);
  traces::Timeline timeline;
  options.timeline = &timeline;
  const auto each = replay(g, cluster, bundled_cost(), options);
  EXPECT_EQ(dataflow.kernels, 10u);
  EXPECT_EQ(dataflow.ranks.size(), 2u);
  expect_same_accounts(dataflow, each);
}

// Every figure of two replays of one graph (solo runs against kernel by kernel).
void expect_same_replay(const ReplayResult& x, const ReplayResult& y) {
  expect_same_accounts(x, y);
  EXPECT_EQ(x.kernels, y.kernels);
  EXPECT_EQ(x.collectives, y.collectives);
  EXPECT_EQ(x.traffic.link_bytes, y.traffic.link_bytes);
  EXPECT_EQ(x.traffic.transfers, y.traffic.transfers);
}

ReplayResult replay_flow(const OpGraph& g, const topology::Cluster& cluster, bool solo_runs) {
  ReplayOptions options;
  options.mode = network::NetworkMode::kFlow;
  options.solo_runs = solo_runs;
  return replay(g, cluster, bundled_cost(), options);
}

// Flow mode advances kernels that have their GPU to themselves outside the engine (solo
// runs) and hands them back when something joins their SMs. Here rank 0's chain of eight
// kernels (ops 3-10) starts alone, is joined by the replica sync's hold when rank 1 issues
// the sync after its long kernel, goes on alone once the sync is over, and is joined again
// by the kernel that stream 2 runs after a dense sync that takes no SMs (ops 2 and 11).
// Every time, account and event count equals the replay that runs every kernel as an
// engine activity.
TEST(OpReplay, SoloRunsMatchKernelByKernelWhenHoldsAndOtherStreamsJoinThem) {
  const Op a = kernel(1, 0), b = kernel(8, 0), side = kernel(1, 2);
  const auto sync = all_reduce(CommClass::kReplicaSync, 0, 1, {0});
  auto dense = all_reduce(CommClass::kDenseSync, 1, 2, {0});
  dense.collective.bytes = 1 << 30;
  dense.collective.sm_free = true;
  std::vector<Op> rank0 = {a, sync, dense}, rank1 = {b, sync, dense};
  // Compute-bound kernels (a GEMM of 1 TFLOP reading 1 GB), which the hold slows.
  Op gemm = kernel(1, 0);
  gemm.kernel.kind = workload::KernelKind::kGemm;
  gemm.kernel.flops = 1e12;
  gemm.kernel.m = gemm.kernel.n = gemm.kernel.k = 8192;
  for (int k = 0; k < 8; ++k) {
    rank0.push_back(gemm);
    rank1.push_back(gemm);
  }
  rank0.push_back(side);
  rank1.push_back(side);
  rank0.push_back(kernel(1, 0, {11}));
  rank1.push_back(kernel(1, 0, {11}));
  const auto g = two_rank_graph(rank0, rank1);
  const auto cluster = topology::Cluster::load(source("configs/clusters/hgx-h100-8.json"));
  const auto solo = replay_flow(g, cluster, true);
  const auto each = replay_flow(g, cluster, false);
  expect_same_replay(solo, each);
  EXPECT_EQ(each.solo_kernels, 0u);
  EXPECT_GE(solo.solo_kernels, 8u);
  EXPECT_GE(solo.solo_cuts, 2u);
  // The hold slowed rank 0's chain: its compute exceeds its kernels' time alone.
  Time alone = Time::zero();
  for (std::size_t i = 0; i < rank0.size(); ++i) {
    if (rank0[i].kind == OpKind::kKernel && rank0[i].stream == 0) alone += duration(rank0[i]);
  }
  EXPECT_GT(solo.ranks[0].compute, alone);
}

// The bundled flow scenarios' graphs, replayed with and without solo runs: equal. Ranks
// that progress collectives on the host (the CPU scenarios) run every kernel apart: no solo
// runs there.
class SoloRunsOf : public ::testing::TestWithParam<const char*> {};

TEST_P(SoloRunsOf, MatchKernelByKernel) {
  const auto sc =
      workload::TrainingScenario::load(source(std::string("configs/scenarios/") + GetParam()));
  const auto g = workload::build_op_graph(sc);
  const auto solo = replay_flow(g, sc.cluster, true);
  const auto each = replay_flow(g, sc.cluster, false);
  expect_same_replay(solo, each);
  if (with_host_progress({}, sc.cluster, bundled_cost()).host_progress)
    EXPECT_EQ(solo.solo_kernels, 0u);
  else
    EXPECT_GT(solo.solo_kernels, 0u);
}

INSTANTIATE_TEST_SUITE_P(BundledScenarios, SoloRunsOf,
                         ::testing::Values("hstu-tiny-cpu.json", "hstu-tiny-cpu-4.json",
                                           "dlrm-tiny-cpu-4.json", "dlrm-8gpu.json",
                                           "dlrm-mlperf-64.json", "hstu-3dc.json"));

}  // namespace
}  // namespace strait::sim::run
