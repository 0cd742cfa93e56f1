// ReplayGraph (the compact form the replay reads) against the whole OpGraph it comes from:
// every op's shared fields through its rank's shape, every rank's kernel costs, collective
// bytes, groups and send rows at its offsets; and replays of the two forms (the compact
// graph streamed from the builder, as run_training builds it, and the one converted from a
// whole OpGraph) give every rank the same account. The bundled tiny and 8-GPU scenarios.

#include "sim/run/replay_graph.hpp"

#include <gtest/gtest.h>

#include "run_test_support.hpp"
#include "sim/run/op_replay.hpp"
#include "sim/workload/op_graph_builder.hpp"

namespace strait::sim::run {
namespace {

using testing_support::bundled_cost;
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

void expect_same_accounts(const ReplayResult& a, const ReplayResult& b) {
  ASSERT_EQ(a.ranks.size(), b.ranks.size());
  EXPECT_EQ(a.step_end, b.step_end);
  EXPECT_EQ(a.drain_end, b.drain_end);
  EXPECT_EQ(a.events, b.events);
  for (std::size_t r = 0; r < a.ranks.size(); ++r) {
    EXPECT_EQ(a.ranks[r].compute, b.ranks[r].compute) << "rank " << r;
    EXPECT_EQ(a.ranks[r].straggler_wait, b.ranks[r].straggler_wait) << "rank " << r;
    EXPECT_EQ(a.ranks[r].bubble, b.ranks[r].bubble) << "rank " << r;
    EXPECT_EQ(a.ranks[r].exposed_comm, b.ranks[r].exposed_comm) << "rank " << r;
    EXPECT_EQ(a.ranks[r].end, b.ranks[r].end) << "rank " << r;
    EXPECT_EQ(a.ranks[r].flops, b.ranks[r].flops) << "rank " << r;
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
  }
}

INSTANTIATE_TEST_SUITE_P(BundledScenarios, ReplayGraphOf,
                         ::testing::Values("hstu-tiny-cpu.json", "hstu-tiny-cpu-4.json",
                                           "dlrm-tiny-cpu-4.json", "dlrm-8gpu.json"));

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
