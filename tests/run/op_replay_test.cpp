#include "sim/run/op_replay.hpp"

#include <gtest/gtest.h>

#include "run_test_support.hpp"

namespace strait::sim::run {
namespace {

using testing_support::bundled_cost;
using testing_support::source;
using workload::CommClass;
using workload::Op;
using workload::OpGraph;
using workload::OpKind;

constexpr auto kReplica = static_cast<std::size_t>(CommClass::kReplicaSync);
constexpr auto kDense = static_cast<std::size_t>(CommClass::kDenseSync);

Op kernel(double gflops, std::int32_t stream, std::vector<std::int32_t> deps = {}) {
  Op op;
  op.stream = stream;
  op.kernel.kind = workload::KernelKind::kElementwise;
  op.kernel.flops = gflops * 1e9;
  op.kernel.hbm_bytes = gflops * 1e9;
  op.deps = std::move(deps);
  return op;
}

Op all_reduce(CommClass c, int group, std::int32_t stream, std::vector<std::int32_t> deps) {
  Op op;
  op.kind = OpKind::kCollective;
  op.stream = stream;
  op.collective.group = group;
  op.collective.bytes = 256 << 20;
  op.collective.comm_class = c;
  op.deps = std::move(deps);
  return op;
}

// Two ranks (GPUs 0 and 1 of one host), streams compute (0), replica_comm (1) and
// dense_comm (2), groups "replica" (0) and "dp" (1), both {0, 1}.
OpGraph graph(std::vector<Op> rank0, std::vector<Op> rank1) {
  OpGraph g;
  g.streams = {"compute", "replica_comm", "dense_comm"};
  g.names = {"op"};
  g.groups = {{"replica", {0, 1}}, {"dp", {0, 1}}};
  for (auto* ops : {&rank0, &rank1}) {
    workload::RankOps r;
    r.rank = r.gpu = static_cast<int>(g.ranks.size());
    r.ops = std::move(*ops);
    g.ranks.push_back(std::move(r));
  }
  return g;
}

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
  const auto r = replay_analytical(graph({a, sync, c}, {b, sync, c}));
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
  const auto g = graph({a, sync, all_reduce(CommClass::kDenseSync, 1, 2, {0})},
                       {a, sync, b, all_reduce(CommClass::kDenseSync, 1, 2, {2})});
  // D alone: the same replica sync with nothing after it.
  const auto alone = replay_analytical(graph({a, sync}, {a, sync}));
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

// account_tail on its own: overlapping spans go to the one that ends last while it runs.
TEST(OpReplay, AccountTailBooksEachInstantToTheRunningCollectiveThatEndsLast) {
  auto us = [](double t) { return Time::from_us(t); };
  RankAccount a;
  // Tail [10, 50]: replica sync [5, 30], dense sync [20, 40]; 40-50 nothing runs.
  account_tail(a, us(10), us(50),
               {{us(5), us(30), CommClass::kReplicaSync}, {us(20), us(40), CommClass::kDenseSync}});
  EXPECT_EQ(a.exposed_comm[kReplica], us(10));  // 10-20
  EXPECT_EQ(a.exposed_comm[kDense], us(20));    // 20-40
  EXPECT_EQ(a.straggler_wait, us(10));          // 40-50
}

}  // namespace
}  // namespace strait::sim::run
