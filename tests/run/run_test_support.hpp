#pragma once
// Helpers for run-layer tests: training scenarios from inline JSON on bundled clusters,
// the bundled calibration profiles, hand-made kernel ops, and replays compared figure by
// figure.

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sim/core/config_node.hpp"
#include "sim/cost/cost_model.hpp"
#include "sim/run/op_replay.hpp"
#include "sim/workload/op_graph.hpp"
#include "sim/workload/scenario.hpp"

namespace strait::sim::run::testing_support {

inline std::string source(const std::string& path) {
  return std::string(STRAIT_SOURCE_DIR) + "/" + path;
}

inline workload::TrainingScenario scenario_of(const std::string& cluster, const std::string& model,
                                              const std::string& data, const std::string& plan,
                                              int steps = 1, std::uint64_t seed = 7) {
  auto m = workload::ModelConfig::from_config(ConfigNode(Json::parse(model), "model.json"));
  auto d = workload::DataConfig::from_config(ConfigNode(Json::parse(data), "data.json"), m);
  auto p = workload::ParallelPlan::from_config(ConfigNode(Json::parse(plan), "plan.json"), m);
  return workload::TrainingScenario::from_parts(
      topology::Cluster::load(source("configs/clusters/" + cluster)), std::move(m), std::move(d),
      std::move(p), steps, seed);
}

inline const cost::CostModel& bundled_cost() {
  static const cost::CostModel model(cost::load_profile_dir(source("configs/profiles")));
  return model;
}

/// An elementwise kernel of `gflops` GFLOP and as many GB of HBM traffic on `stream`.
inline workload::Op kernel(double gflops, std::int32_t stream, std::vector<std::int32_t> deps = {},
                           int step = 0) {
  workload::Op op;
  op.stream = stream;
  op.step = step;
  op.kernel.kind = workload::KernelKind::kElementwise;
  op.kernel.flops = gflops * 1e9;
  op.kernel.hbm_bytes = gflops * 1e9;
  op.deps.assign(deps.begin(), deps.end());
  return op;
}

/// An all-reduce of 256 MiB of class `c` on `group` and `stream`, after `deps`.
inline workload::Op all_reduce(workload::CommClass c, int group, std::int32_t stream,
                               std::vector<std::int32_t> deps) {
  workload::Op op;
  op.kind = workload::OpKind::kCollective;
  op.stream = stream;
  op.collective.group = group;
  op.collective.bytes = 256 << 20;
  op.collective.comm_class = c;
  op.deps.assign(deps.begin(), deps.end());
  return op;
}

// Two ranks (GPUs 0 and 1 of one host), streams compute (0), replica_comm (1) and
// dense_comm (2), groups "replica" (0) and "dp" (1), both {0, 1}.
inline workload::OpGraph two_rank_graph(std::vector<workload::Op> rank0,
                                        std::vector<workload::Op> rank1) {
  workload::OpGraph g;
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

/// Two replays that must agree: their step ends, drain end, events, and every rank's
/// account.
inline void expect_same_accounts(const ReplayResult& a, const ReplayResult& b) {
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

}  // namespace strait::sim::run::testing_support
