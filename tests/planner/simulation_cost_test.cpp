// planner/detail/simulation_cost.hpp (and the cost_model.hpp functions simulation_cost.cpp
// defines): usable memory per GPU, the cost models by name, the steps a candidate is
// simulated for, and an estimate that is the simulation's own steady mean.

#include <gtest/gtest.h>

#include <string>

#include "planner/detail/simulation_cost.hpp"
#include "planner/plan_document.hpp"
#include "planner_test_support.hpp"
#include "sim/run/training_run.hpp"

namespace strait::planner {
namespace {

using namespace testing_support;
using sim::network::NetworkMode;

sim::workload::ParallelPlan plan_of(const PlanRequest& req, const std::string& doc) {
  return parse_plan(Json::parse(doc), "plan.json", req.base.model);
}

/// Two datacenters of one single-GPU host each: an A100 (81,920 MiB) in "a", an H100
/// (81,559 MiB) in "h", 100 Gb/s and 5 ms apart.
const char* kA100ThenH100 = R"({"name": "a100-h100",
  "defaults": {"host": {"gpus": 1, "gpu_type": "H100-SXM",
                        "nvlink": {"bandwidth": "450 GB/s", "latency": "1 us"},
                        "nics": 1, "nic": {"bandwidth": "400 Gb/s", "latency": "1 us"},
                        "pcie": {"bandwidth": "64 GB/s", "latency": "0.5 us"}},
               "network": {"hosts_per_leaf": 16, "link_latency": "1 us"}},
  "datacenters": [{"name": "a", "hosts": 1, "host": {"gpu_type": "A100-SXM"}},
                  {"name": "h", "hosts": 1}],
  "cross_dc": [{"between": ["a", "h"], "bandwidth": "100 Gb/s", "latency": "5 ms", "count": 1}]})";

// Capacity - 2 GiB reserved, the smallest over the plan's ranks: the H100's where the plan
// runs on both GPUs, the A100's where it runs on the first only.
TEST(SimulationCost, MemoryCapacityIsTheSmallestUsableGpuOfThePlan) {
  const auto req = request_of(kA100ThenH100, kSmallDlrm, kSmallDlrmData);
  EXPECT_EQ(memory_capacity(req.base, bundled_cost()), 81559.0 * kMiB - 2.0 * kGiB);
  const auto first = scenario_for(req.base, plan_of(req, R"({"ranks": 1})"));
  EXPECT_EQ(memory_capacity(first, bundled_cost()), 81920.0 * kMiB - 2.0 * kGiB);
}

TEST(SimulationCost, CostModelsAreNamedByTheirStage) {
  EXPECT_EQ(std::string(make_closed_form_cost(bundled_cost())->name()), "closed_form");
  EXPECT_EQ(std::string(make_simulation_cost(bundled_cost(), NetworkMode::kAnalytical)->name()),
            "analytical");
  EXPECT_EQ(std::string(make_simulation_cost(bundled_cost(), NetworkMode::kFlow)->name()), "flow");
  EXPECT_EQ(std::string(detail::FlowSimulationCost(bundled_cost()).name()), "flow");
}

// warm-up (replica_sync_staleness, at least 1) + drain (pipeline_depth - 1) + 2 steady
// steps, or the scenario's steps when more.
TEST(SimulationCost, ComparedStepsLeaveTwoSteadySteps) {
  const auto req = request_of(kThreeDc, kSmallDlrm, kSmallDlrmData);
  EXPECT_EQ(compared_steps(1, plan_of(req, "{}")), 1 + 0 + 2);
  EXPECT_EQ(compared_steps(1, plan_of(req, R"({"schedule": {"pipeline_depth": 2}})")), 1 + 1 + 2);
  EXPECT_EQ(compared_steps(1, plan_of(req, R"({"sparse": {"group_size": 8, "placement": "host",
      "replica_sync_staleness": 4}, "schedule": {"pipeline_depth": 3}})")),
            4 + 2 + 2);
  EXPECT_EQ(compared_steps(10, plan_of(req, R"({"schedule": {"pipeline_depth": 3}})")), 10);
}

// The estimate is the run of compared_steps: a 1-step scenario of depth 2 is simulated for
// 4 steps, and its figures are that run's: the steady mean, samples/s, and per GPU an
// eighth; one datacenter, nothing crosses.
TEST(SimulationCost, AnEstimateIsTheSimulationsSteadyMean) {
  const auto req = request_of("hgx-h100-8.json", kSmallDlrm, kSmallDlrmData);
  auto sc = req.base;
  sc.plan = plan_of(req, R"({"schedule": {"pipeline_depth": 2}})");
  for (const auto mode : {NetworkMode::kAnalytical, NetworkMode::kFlow}) {
    const auto e = make_simulation_cost(bundled_cost(), mode)->estimate(sc);
    ASSERT_TRUE(e.fits);
    ASSERT_TRUE(e.report);
    EXPECT_EQ(e.report->steps, 4);
    auto longer = sc;
    longer.steps = 4;
    sim::run::TrainingRunOptions options;
    options.mode = mode;
    const auto run = sim::run::run_training(longer, bundled_cost(), options);
    EXPECT_EQ(e.step_ms, run.stats.mean_ms);
    EXPECT_EQ(run.stats.warmup_steps, 1);
    EXPECT_EQ(run.stats.drain_steps, 1);
    EXPECT_EQ(e.samples_per_sec, run.samples_per_sec);
    EXPECT_DOUBLE_EQ(e.samples_per_sec_per_gpu, run.samples_per_sec / 8);
    EXPECT_EQ(e.cross_dc_bytes, 0.0);
    EXPECT_EQ(e.memory_capacity, 81559.0 * kMiB - 2.0 * kGiB);
  }
}

// Two datacenters of one GPU, every table data-parallel: each step all-reduces all
// gradients, P = 6,201,000 x 64 x 4 + 39,489 x 4 = 1,587,613,956 B, between the two:
// 2P bytes a step on the long-haul link, in either mode.
TEST(SimulationCost, CrossDatacenterBytesArePerStep) {
  const auto req = request_of(kA100ThenH100, kSmallDlrm, kSmallDlrmData);
  const auto sc =
      scenario_for(req.base, plan_of(req, R"({"sparse": {"default": "data_parallel"}})"));
  for (const auto mode : {NetworkMode::kAnalytical, NetworkMode::kFlow}) {
    const auto e = make_simulation_cost(bundled_cost(), mode)->estimate(sc);
    ASSERT_TRUE(e.fits);
    EXPECT_EQ(e.report->steps, 3);
    EXPECT_EQ(e.cross_dc_bytes, 2.0 * 1587613956.0) << name_of(mode);
  }
}

// 102.4 GB of one data-parallel table: the memory model says no, nothing is simulated.
TEST(SimulationCost, APlanThatDoesNotFitIsNotSimulated) {
  std::string model = kSmallDlrm;
  model.replace(model.find("4000000"), 7, "400000000");
  const auto req = request_of("hgx-h100-8.json", model, kSmallDlrmData);
  const auto sc =
      scenario_for(req.base, plan_of(req, R"({"sparse": {"tables": {"big": "data_parallel"}}})"));
  const auto e = make_simulation_cost(bundled_cost(), NetworkMode::kFlow)->estimate(sc);
  EXPECT_FALSE(e.fits);
  EXPECT_FALSE(e.report);
  EXPECT_EQ(e.step_ms, 0.0);
  EXPECT_GT(e.memory.excess, 0.0);
  EXPECT_GT(e.memory.total, 102.4e9);
}

}  // namespace
}  // namespace strait::planner
