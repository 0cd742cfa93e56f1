// planner/detail/closed_form_cost.hpp: the per-rank closed form checked term by term on
// plans where the terms can be read off: one rank (kernels only), two ranks in two
// datacenters (one all-reduce, fully exposed, its cross-datacenter bytes by hand), a plan
// that does not fit, and the bounds SM stealing and pipelining keep.

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "planner/detail/closed_form_cost.hpp"
#include "planner/plan_document.hpp"
#include "planner_test_support.hpp"
#include "sim/engine/simulator.hpp"
#include "sim/network/network.hpp"
#include "sim/workload/batch_cache.hpp"
#include "sim/workload/memory_model.hpp"
#include "sim/workload/op_graph_builder.hpp"

namespace strait::planner {
namespace {

using namespace testing_support;
using sim::workload::OpKind;
using sim::workload::StepPhase;

/// Per rank: forward, backward and optimizer kernel seconds of one step at roofline.
struct Compute {
  double fwd = 0, bwd = 0, opt = 0;
  double total() const { return fwd + bwd + opt; }
};

std::vector<Compute> kernel_seconds(const sim::workload::OpGraph& graph,
                                    const sim::workload::TrainingScenario& sc) {
  std::vector<Compute> out;
  for (const auto& r : graph.ranks) {
    const auto& profile = bundled_cost().profile(sc.cluster.gpu(r.gpu).type);
    Compute c;
    for (const auto& op : r.ops) {
      if (op.kind != OpKind::kKernel) continue;
      const double t = sim::cost::CostModel::cost(op.kernel, profile).duration().to_s();
      (op.phase == StepPhase::kOptimizer  ? c.opt
       : op.phase == StepPhase::kBackward ? c.bwd
                                          : c.fwd) += t;
    }
    out.push_back(c);
  }
  return out;
}

sim::workload::TrainingScenario scenario(const PlanRequest& req, const std::string& doc) {
  return scenario_for(req.base, parse_plan(Json::parse(doc), "plan.json", req.base.model));
}

Estimate closed_form(const sim::workload::TrainingScenario& sc) {
  return detail::ClosedFormCost(bundled_cost()).estimate(sc);
}

// One rank of the HGX host: no collective at all, so the step is the rank's kernels,
// forward + backward + optimizer, each at its roofline duration; 1,024 samples a step.
TEST(ClosedFormCost, OneRankStepIsItsKernelTime) {
  const auto req = request_of("hgx-h100-8.json", kSmallDlrm, kSmallDlrmData);
  const auto sc = scenario(req, R"({"ranks": 1})");
  const auto graph = sim::workload::build_op_graph(sc, {.steps = 1});
  ASSERT_EQ(graph.ranks.size(), 1u);
  for (const auto& op : graph.ranks[0].ops) EXPECT_NE(op.kind, OpKind::kCollective);
  const auto compute = kernel_seconds(graph, sc)[0];
  EXPECT_GT(compute.fwd, 0);
  EXPECT_GT(compute.bwd, 0);
  EXPECT_GT(compute.opt, 0);
  const auto e = closed_form(sc);
  EXPECT_EQ(detail::ClosedFormCost(bundled_cost()).name(), std::string("closed_form"));
  ASSERT_TRUE(e.fits);
  EXPECT_DOUBLE_EQ(e.step_ms, compute.total() * 1e3);
  EXPECT_DOUBLE_EQ(e.samples_per_sec, 1024 / compute.total());
  EXPECT_DOUBLE_EQ(e.samples_per_sec_per_gpu, 1024 / compute.total());
  EXPECT_EQ(e.cross_dc_bytes, 0.0);
  EXPECT_EQ(e.memory_capacity, 81559.0 * kMiB - 2.0 * kGiB);
  const auto memory = sim::workload::memory_per_rank(sc).fits(e.memory_capacity);
  EXPECT_EQ(e.memory.total, memory.total);
  EXPECT_EQ(e.memory.dominant, memory.dominant);
  // SM-free communication changes nothing where nothing communicates.
  auto sm_free = sc;
  sm_free.plan.schedule.sm_free = true;
  EXPECT_EQ(closed_form(sm_free).step_ms, e.step_ms);
}

// Two datacenters of one single-GPU host each, 100 Gb/s and 5 ms apart; every table
// data-parallel, DDP, depth 1. The one collective is the all-reduce of every gradient:
//   tables 6,201,000 rows x 64 x 4 B = 1,587,456,000 B, plus the dense part's 39,489
//   parameters x 4 B (bottom 13 x 256 + 256 + 256 x 64 + 64 = 20,032; top (64 + 10
//   pairs) x 256 + 256 + 256 + 1 = 19,457) = 157,956 B: P = 1,587,613,956 B.
// It is one bucket: exposed max(c / 1, c - B) = c, nothing hidden, nothing stolen, so the
// step is F + B + O + c, c the all-reduce alone on the analytical network. Between two
// ranks each sends half of P in the reduce-scatter and half in the all-gather: 2P bytes
// cross the long-haul link.
TEST(ClosedFormCost, OneAllReduceAcrossDatacentersIsFullyExposed) {
  const std::string cluster = R"({"name": "two-dc-1gpu",
    "defaults": {"host": {"gpus": 1, "gpu_type": "H100-SXM",
                          "nvlink": {"bandwidth": "450 GB/s", "latency": "1 us"},
                          "nics": 1, "nic": {"bandwidth": "400 Gb/s", "latency": "1 us"},
                          "pcie": {"bandwidth": "64 GB/s", "latency": "0.5 us"}},
                 "network": {"hosts_per_leaf": 16, "link_latency": "1 us"}},
    "datacenters": [{"name": "a", "hosts": 1}, {"name": "b", "hosts": 1}],
    "cross_dc": [{"between": ["a", "b"], "bandwidth": "100 Gb/s", "latency": "5 ms",
                  "count": 1}]})";
  const auto req = request_of(cluster, kSmallDlrm, kSmallDlrmData);
  const auto sc = scenario(req, R"({"sparse": {"default": "data_parallel"}})");
  const auto graph = sim::workload::build_op_graph(sc, {.steps = 1});
  ASSERT_EQ(graph.ranks.size(), 2u);
  std::vector<sim::workload::CollectiveCall> calls;
  for (const auto& op : graph.ranks[0].ops) {
    if (op.kind == OpKind::kCollective) calls.push_back(op.collective);
  }
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].op, sim::network::CollectiveOp::kAllReduce);
  EXPECT_EQ(calls[0].comm_class, sim::workload::CommClass::kDenseSync);
  const Bytes p = 6201000LL * 64 * 4 + 39489LL * 4;
  EXPECT_EQ(calls[0].bytes, p);

  sim::engine::Simulator simulator;
  sim::network::NetworkOptions options;
  options.mode = sim::network::NetworkMode::kAnalytical;
  auto network = sim::network::make_network(simulator, sc.cluster, options);
  sim::network::CollectiveSpec spec;
  spec.op = calls[0].op;
  spec.algorithm = calls[0].algorithm;
  spec.bytes = calls[0].bytes;
  spec.gpus = {0, 1};
  Time done;
  network->start_collective(spec, [&] { done = simulator.now(); });
  simulator.run();
  const double c = done.to_s();
  EXPECT_GT(c, 2 * (static_cast<double>(p) / 2) / 12.5e9);  // two halves on 12.5 GB/s

  const auto compute = kernel_seconds(graph, sc);
  const double slowest = std::max(compute[0].total(), compute[1].total());
  const auto e = closed_form(sc);
  ASSERT_TRUE(e.fits);
  EXPECT_DOUBLE_EQ(e.step_ms, (slowest + c) * 1e3);
  EXPECT_EQ(e.cross_dc_bytes, 2.0 * static_cast<double>(p));
  EXPECT_DOUBLE_EQ(e.samples_per_sec, 2048 / (slowest + c));
  EXPECT_DOUBLE_EQ(e.samples_per_sec_per_gpu, 1024 / (slowest + c));
}

// 400,000,000 x 64 fp32 = 102.4 GB in one data-parallel table cannot fit an 80 GB H100:
// no time, and the memory model's verdict (rank, total, excess) as it gives it.
TEST(ClosedFormCost, APlanThatDoesNotFitIsNotPriced) {
  std::string model = kSmallDlrm;
  model.replace(model.find("4000000"), 7, "400000000");
  const auto req = request_of("hgx-h100-8.json", model, kSmallDlrmData);
  const auto sc = scenario(req, R"({"sparse": {"tables": {"big": "data_parallel"}}})");
  const auto e = closed_form(sc);
  EXPECT_FALSE(e.fits);
  EXPECT_EQ(e.step_ms, 0.0);
  EXPECT_EQ(e.samples_per_sec, 0.0);
  const auto memory = sim::workload::memory_per_rank(sc).fits(e.memory_capacity);
  EXPECT_FALSE(memory.fits);
  EXPECT_EQ(e.memory.rank, memory.rank);
  EXPECT_EQ(e.memory.total, memory.total);
  EXPECT_GT(e.memory.excess, 102.4e9 - e.memory_capacity);
}

// Eight ranks, every table row-wise, depth 2: the all-to-alls partly hide behind the
// forward. Unless communication is SM-free, each hidden second takes comm_sm_fraction =
// 16 / 132 (the H100's NCCL SMs of its SMs) of a second of compute: the step with
// SM-free communication is shorter, by at most 16 / 132 of the slowest rank's compute.
TEST(ClosedFormCost, HiddenCommunicationStealsAtMostItsShareOfTheSms) {
  const auto req = request_of("hgx-h100-8.json", kSmallDlrm, kSmallDlrmData);
  EXPECT_DOUBLE_EQ(bundled_cost().comm_sm_fraction("H100-SXM"), 16.0 / 132);
  const auto stealing = scenario(req, R"({"schedule": {"pipeline_depth": 2}})");
  const auto sm_free =
      scenario(req, R"({"schedule": {"pipeline_depth": 2, "sm_free_comm": true}})");
  const auto graph = sim::workload::build_op_graph(stealing, {.steps = 1});
  double compute = 0;
  for (const auto& c : kernel_seconds(graph, stealing)) compute = std::max(compute, c.total());
  const double with = closed_form(stealing).step_ms, without = closed_form(sm_free).step_ms;
  EXPECT_GT(without, compute * 1e3);
  EXPECT_GT(with, without);
  EXPECT_LE(with - without, 16.0 / 132 * compute * 1e3 * (1 + 1e-12));
}

// Depth 2 hides the embedding all-to-alls behind the forward (max(0, c_in + c_out - F)
// instead of c_in + c_out): with SM-free communication (nothing stolen) it saves at most
// the forward's time, and something.
TEST(ClosedFormCost, PipeliningHidesAtMostTheForward) {
  const auto req = request_of("hgx-h100-8.json", kSmallDlrm, kSmallDlrmData);
  const auto flat = scenario(req, R"({"schedule": {"pipeline_depth": 1, "sm_free_comm": true}})");
  const auto piped = scenario(req, R"({"schedule": {"pipeline_depth": 2, "sm_free_comm": true}})");
  const auto graph = sim::workload::build_op_graph(flat, {.steps = 1});
  double fwd = 0;
  for (const auto& c : kernel_seconds(graph, flat)) fwd = std::max(fwd, c.fwd);
  const double saved = closed_form(flat).step_ms - closed_form(piped).step_ms;
  EXPECT_GT(saved, 0);
  EXPECT_LE(saved, fwd * 1e3 * (1 + 1e-12));
}

// Candidates of one base that sample alike share a sampling (sim/workload/batch_cache.hpp):
// with one cache every estimate is the same as without, to the last bit, and the cache
// drew once per sampling key (no balancing, greedy: two; group size and depth change
// nothing).
TEST(ClosedFormCost, ASharedSamplingGivesTheSameEstimates) {
  const auto req = scenario_request("hstu-recsys-bench.json");
  const std::vector<std::string> plans = {
      R"({"sparse": {"group_size": 16, "default": "row_wise"}})",
      R"({"sparse": {"group_size": 8, "placement": "host", "default": "row_wise"}})",
      R"({"sparse": {"group_size": 16, "default": "row_wise"},
          "schedule": {"load_balance": "greedy"}})",
      R"({"sparse": {"group_size": 8, "placement": "host", "default": "row_wise"},
          "schedule": {"load_balance": "greedy", "pipeline_depth": 2}})"};
  auto cache = std::make_shared<sim::workload::BatchCache>();
  const detail::ClosedFormCost shared(bundled_cost(), cache);
  for (const auto& doc : plans) {
    const auto sc = scenario(req, doc);
    const auto alone = closed_form(sc);
    const auto e = shared.estimate(sc);
    ASSERT_TRUE(alone.fits) << doc;
    EXPECT_EQ(e.step_ms, alone.step_ms) << doc;
    EXPECT_EQ(e.cross_dc_bytes, alone.cross_dc_bytes) << doc;
    EXPECT_EQ(e.memory.total, alone.memory.total) << doc;
  }
  EXPECT_EQ(cache->draws(), 2);
}

// Representative members (sim/workload/representative.hpp): one row-wise group of 16
// over two hosts, estimated from 4 evenly spaced members (0, 4, 8, 12) and the costliest
// replica's instead of all 16. The kernels of the slowest rank are built either way, and
// each built member's all-to-alls keep what it sends over NVLink and over its NIC, so the
// step is the whole group's within what the left-out members' own rows change (1%); the
// cross-datacenter bytes (none: one datacenter) stay 0.
TEST(ClosedFormCost, RepresentativeMembersStandForTheirGroup) {
  const auto req = scenario_request("hstu-recsys-bench.json");
  const auto sc = scenario(req, R"({"sparse": {"group_size": 16, "default": "row_wise"}})");
  const auto all = detail::ClosedFormCost(bundled_cost(), nullptr, 0).estimate(sc);
  const auto few = detail::ClosedFormCost(bundled_cost(), nullptr, 4).estimate(sc);
  ASSERT_TRUE(all.fits);
  ASSERT_TRUE(few.fits);
  EXPECT_NEAR(few.step_ms, all.step_ms, 0.01 * all.step_ms);
  EXPECT_EQ(few.samples_per_sec, all.step_ms / few.step_ms * all.samples_per_sec);
  EXPECT_EQ(few.cross_dc_bytes, 0.0);
}

}  // namespace
}  // namespace strait::planner
