// ReplayGraph (the compact form the replay reads) against the whole OpGraph it comes from:
// every op's shared fields (its call number on its group too) through its rank's shape,
// every rank's kernel costs, collective bytes, groups and send rows at its offsets; and
// replays of the two forms (the compact graph streamed from the builder, as run_training
// builds it, and the one converted from a whole OpGraph) give every rank the same account.
// The bundled tiny and 8-GPU scenarios.

#include "sim/run/replay_graph.hpp"

#include <gtest/gtest.h>

#include "run_test_support.hpp"
#include "sim/run/op_replay.hpp"
#include "sim/workload/collective_calls.hpp"
#include "sim/workload/op_graph_builder.hpp"

namespace strait::sim::run {
namespace {

using testing_support::bundled_cost;
using testing_support::expect_same_accounts;
using testing_support::kernel;
using testing_support::source;
using workload::OpKind;

void expect_same_graph(const workload::OpGraph& whole, const ReplayGraph& compact,
                       const topology::Cluster& cluster) {
  ASSERT_EQ(compact.ranks().size(), whole.ranks.size());
  std::size_t ops = 0;
  for (std::size_t r = 0; r < whole.ranks.size(); ++r) {
    const auto& ro = whole.ranks[r];
    const auto& rr = compact.ranks()[r];
    EXPECT_EQ(rr.gpu, ro.gpu);
    EXPECT_EQ(rr.samples, ro.samples);
    ASSERT_GE(rr.shape, 0);
    const OpShape& shape = compact.shape(rr);
    ASSERT_EQ(shape.ops(), ro.ops.size()) << "rank " << r;
    ops += ro.ops.size();
    const auto& profile = bundled_cost().profile(cluster.gpu(ro.gpu).type);
    const auto calls = workload::call_numbers(ro.ops);
    double flops = 0;
    for (std::size_t i = 0; i < ro.ops.size(); ++i) {
      const auto& op = ro.ops[i];
      ASSERT_EQ(shape.kind[i], op.kind);
      EXPECT_EQ(shape.name[i], op.name);
      EXPECT_EQ(shape.stream[i], op.stream);
      EXPECT_EQ(shape.step[i], op.step);
      const std::vector<std::int32_t> deps(op.deps.begin(), op.deps.end());
      const std::vector<std::int32_t> shared(shape.deps.begin() + shape.dep_offsets[i],
                                             shape.deps.begin() + shape.dep_offsets[i + 1]);
      EXPECT_EQ(shared, deps);
      const auto slot = shape.slot[i];
      if (op.kind == OpKind::kKernel) {
        const auto c = cost::CostModel::cost(op.kernel, profile);
        if (compact.mode() == network::NetworkMode::kAnalytical) {
          EXPECT_EQ(compact.kernel_duration(rr, slot), c.duration());
        } else {
          EXPECT_EQ(compact.flow_kernel(rr, slot).compute_seconds, c.compute_seconds);
          EXPECT_EQ(compact.flow_kernel(rr, slot).memory_seconds, c.memory_seconds);
          EXPECT_EQ(compact.flow_kernel(rr, slot).launch_overhead, c.launch_overhead);
        }
        flops += op.kernel.flops;
      } else {
        const auto& cs = shape.collectives[static_cast<std::size_t>(slot)];
        EXPECT_EQ(cs.op, op.collective.op);
        EXPECT_EQ(cs.comm_class, op.collective.comm_class);
        EXPECT_EQ(cs.priority, op.collective.priority);
        EXPECT_EQ(cs.call, calls[i]);
        EXPECT_EQ(compact.collective_bytes(rr, slot), op.collective.bytes);
        EXPECT_EQ(compact.collective_group(rr, slot), op.collective.group);
        if (cs.op == network::CollectiveOp::kAllToAllV) {
          EXPECT_EQ(compact.send_row(rr, cs.row).bytes(), op.collective.send_row.bytes());
        }
      }
    }
    EXPECT_EQ(rr.flops, flops);
  }
  EXPECT_EQ(compact.total_ops(), ops);
}

// A rank whose kernels all equal those of the last rank added with its shape (the other
// rank of a context-parallel pair) shares that rank's costs; one whose kernels differ, or
// the first of a shape, stores its own. Another shape in between does not break sharing.
TEST(ReplayGraph, RanksWithEqualKernelsShareTheirCosts) {
  for (auto mode : {network::NetworkMode::kAnalytical, network::NetworkMode::kFlow}) {
    SCOPED_TRACE(network::to_string(mode));
    ReplayGraph g(mode);
    const auto& profile = bundled_cost().profile("H100-SXM");
    workload::RankOps a;
    a.ops = {kernel(1, 0), kernel(2, 0, {0})};
    workload::RankOps other;
    other.ops = {kernel(1, 0)};
    workload::RankOps differs = a;
    differs.ops[1].kernel.flops *= 2;
    g.add_rank(0, a, profile, false);
    g.add_rank(1, a, profile, false);
    EXPECT_EQ(g.kernel_costs(), 2u);
    g.add_rank(2, other, profile, false);
    EXPECT_EQ(g.kernel_costs(), 3u);
    g.add_rank(3, a, profile, false);
    EXPECT_EQ(g.kernel_costs(), 3u);
    g.add_rank(4, differs, profile, false);
    EXPECT_EQ(g.kernel_costs(), 5u);
    const auto& ranks = g.ranks();
    EXPECT_EQ(ranks[1].kernel_base, ranks[0].kernel_base);
    EXPECT_EQ(ranks[3].kernel_base, ranks[0].kernel_base);
    EXPECT_NE(ranks[4].kernel_base, ranks[0].kernel_base);
    for (int r : {1, 3, 4}) {
      const auto& ops = r == 4 ? differs.ops : a.ops;
      const auto& rank = ranks[static_cast<std::size_t>(r)];
      EXPECT_EQ(rank.flops, ops[0].kernel.flops + ops[1].kernel.flops);
      for (std::int32_t k = 0; k < 2; ++k) {
        const auto c = cost::CostModel::cost(ops[static_cast<std::size_t>(k)].kernel, profile);
        if (mode == network::NetworkMode::kAnalytical) {
          EXPECT_EQ(g.kernel_duration(rank, k), c.duration());
        } else {
          EXPECT_EQ(g.flow_kernel(rank, k).compute_seconds, c.compute_seconds);
          EXPECT_EQ(g.flow_kernel(rank, k).memory_seconds, c.memory_seconds);
        }
      }
    }
  }
}

class ReplayGraphOf : public ::testing::TestWithParam<const char*> {};

TEST_P(ReplayGraphOf, HoldsEveryOpOfTheWholeGraphAndReplaysAlike) {
  const auto sc =
      workload::TrainingScenario::load(source(std::string("configs/scenarios/") + GetParam()));
  const auto whole = workload::build_op_graph(sc);
  for (auto mode : {network::NetworkMode::kAnalytical, network::NetworkMode::kFlow}) {
    SCOPED_TRACE(network::to_string(mode));
    ReplayOptions options;
    options.mode = mode;
    ReplayGraph streamed(mode);
    const auto header = workload::build_op_graph(sc, {}, [&](const workload::RankOps& rank) {
      streamed.add_rank(rank.rank, rank, bundled_cost().profile(sc.cluster.gpu(rank.gpu).type),
                        false);
    });
    streamed.finish(header);
    expect_same_graph(whole, streamed, sc.cluster);
    // Ranks of one role share a shape: fewer shapes than ranks once there are several.
    if (whole.ranks.size() >= 8) {
      EXPECT_LT(streamed.shape_count(), whole.ranks.size());
    }
    const auto from_whole = replay(whole, sc.cluster, bundled_cost(), options);
    const auto from_stream = replay(streamed, sc.cluster, bundled_cost(), options);
    expect_same_accounts(from_whole, from_stream);
    EXPECT_EQ(from_stream.kernels, from_whole.kernels);
    // Runs of kernels merged (run_training's graph when untraced, where no rank progresses
    // collectives on the host: not the CPU scenarios): fewer ops kept, the same replay.
    if (mode != network::NetworkMode::kAnalytical ||
        with_host_progress(options, sc.cluster, bundled_cost()).host_progress)
      continue;
    ReplayGraph merged(mode, true);
    const auto header2 = workload::build_op_graph(sc, {}, [&](const workload::RankOps& rank) {
      merged.add_rank(rank.rank, rank, bundled_cost().profile(sc.cluster.gpu(rank.gpu).type),
                      false);
    });
    merged.finish(header2);
    EXPECT_EQ(merged.total_ops(), streamed.total_ops());
    EXPECT_LT(merged.replay_ops(), streamed.replay_ops());
    const auto from_merged = replay(merged, sc.cluster, bundled_cost(), options);
    expect_same_accounts(from_whole, from_merged);
    EXPECT_EQ(from_merged.kernels, from_whole.kernels);
  }
}

INSTANTIATE_TEST_SUITE_P(BundledScenarios, ReplayGraphOf,
                         ::testing::Values("hstu-tiny-cpu.json", "hstu-tiny-cpu-4.json",
                                           "dlrm-tiny-cpu-4.json", "dlrm-8gpu.json"));

// Streams compute (0) and comm (1), one rank:
//   0 A, 1 B <- A, 2 all_reduce <- B (comm), 3 C, 4 D <- C, 5 E (step 1), 6 F <- E, 5 (comm).
// A merges into B (B's only dependency, nothing else waits on A); B does not merge into C
// (the all_reduce waits on B); C into D; D not into E (another step); E not into F (F is
// on another stream). Kept: AB, all_reduce, CD, E, F at indices 0-4; F depends on E.
TEST(ReplayGraph, MergesAKernelIntoTheNextOnlyWhenNothingElseWaitsOnIt) {
  workload::RankOps ro;
  ro.ops = {kernel(1, 0),        kernel(2, 0, {0}),   {}, kernel(3, 0), kernel(4, 0, {3}),
            kernel(5, 0, {}, 1), kernel(6, 1, {5}, 1)};
  ro.ops[2].kind = OpKind::kCollective;
  ro.ops[2].stream = 1;
  ro.ops[2].deps = {1};
  const auto& profile = bundled_cost().profile("H100-SXM");
  ReplayGraph g(network::NetworkMode::kAnalytical, true);
  g.add_rank(0, ro, profile, false);
  EXPECT_EQ(g.total_ops(), 7u);
  EXPECT_EQ(g.replay_ops(), 5u);
  const auto& rr = g.ranks()[0];
  const OpShape& s = g.shape(rr);
  ASSERT_EQ(s.ops(), 5u);
  EXPECT_EQ(s.runs, (std::vector<std::int32_t>{2, 1, 2, 1, 1}));
  EXPECT_EQ(s.kernels, 4);
  EXPECT_EQ(std::vector<std::int32_t>(s.deps.begin() + s.dep_offsets[1],
                                      s.deps.begin() + s.dep_offsets[2]),
            std::vector<std::int32_t>{0});
  EXPECT_EQ(std::vector<std::int32_t>(s.deps.begin() + s.dep_offsets[4],
                                      s.deps.begin() + s.dep_offsets[5]),
            std::vector<std::int32_t>{3});
  EXPECT_EQ(s.dep_offsets[1], 0);                 // AB depends on nothing, like A
  EXPECT_EQ(s.dep_offsets[3], s.dep_offsets[2]);  // nor CD, like C
  const auto d = [&](std::size_t i) {
    return cost::CostModel::cost(ro.ops[i].kernel, profile).duration();
  };
  EXPECT_EQ(g.kernel_duration(rr, 0), d(0) + d(1));
  EXPECT_EQ(g.kernel_duration(rr, 1), d(3) + d(4));
  EXPECT_EQ(g.kernel_duration(rr, 2), d(5));
  EXPECT_EQ(g.kernel_duration(rr, 3), d(6));
  // Flow mode keeps every kernel: a merged graph is for the analytical replay only.
  EXPECT_THROW(ReplayGraph(network::NetworkMode::kFlow, true), Error);
}

TEST(ReplayGraph, RefusesAGraphCostedForTheOtherMode) {
  const auto sc = workload::TrainingScenario::load(source("configs/scenarios/dlrm-8gpu.json"));
  const auto whole = workload::build_op_graph(sc);
  ReplayOptions flow;
  flow.mode = network::NetworkMode::kFlow;
  const auto graph = replay_graph(whole, sc.cluster, bundled_cost(), flow);
  ReplayOptions analytical;
  analytical.mode = network::NetworkMode::kAnalytical;
  EXPECT_THROW(replay(graph, sc.cluster, bundled_cost(), analytical), Error);
}

}  // namespace
}  // namespace strait::sim::run
