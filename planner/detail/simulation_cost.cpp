#include "planner/detail/simulation_cost.hpp"

#include <algorithm>
#include <optional>

#include "planner/detail/closed_form_cost.hpp"

namespace strait::planner {

double memory_capacity(const sim::workload::TrainingScenario& scenario,
                       const sim::cost::CostModel& kernels) {
  double capacity = 0;
  for (int r = 0; r < scenario.layout.world; ++r) {
    const auto& d = kernels.device(scenario.cluster.gpu(r).type);
    const double usable = static_cast<double>(d.hbm_capacity - d.memory_reserved);
    capacity = capacity == 0 ? usable : std::min(capacity, usable);
  }
  return capacity;
}

std::unique_ptr<CostModel> make_closed_form_cost(
    const sim::cost::CostModel& kernels, std::shared_ptr<sim::workload::BatchCache> batches) {
  return std::make_unique<detail::ClosedFormCost>(kernels, std::move(batches));
}

std::unique_ptr<CostModel> make_simulation_cost(
    const sim::cost::CostModel& kernels, sim::network::NetworkMode mode,
    std::shared_ptr<sim::workload::BatchCache> batches) {
  if (mode == sim::network::NetworkMode::kFlow)
    return std::make_unique<detail::FlowSimulationCost>(kernels, std::move(batches));
  return std::make_unique<detail::AnalyticalSimulationCost>(kernels, std::move(batches));
}

int compared_steps(int scenario_steps, const sim::workload::ParallelPlan& plan) {
  constexpr int kSteadySteps = 2;  // steady steps a plan is compared on, at least
  return std::max(scenario_steps, sim::run::steady_state(plan).steps_for(kSteadySteps));
}

namespace detail {

Estimate SimulationCost::estimate(const sim::workload::TrainingScenario& scenario) const {
  // One expansion per candidate: its memory report decides whether the plan fits, and the
  // replay reuses its op graph. Both cover the steps the plan is compared on.
  const int steps = compared_steps(scenario.steps, scenario.plan);
  std::optional<sim::workload::TrainingScenario> longer;
  if (steps != scenario.steps) {
    longer = scenario;
    longer->steps = steps;
  }
  const auto& run = longer ? *longer : scenario;
  sim::run::TrainingRunOptions options;
  options.mode = mode_;
  options.batches = batches_.get();
  const auto expansion = sim::run::expand_training(run, kernels_, options);
  Estimate e;
  e.memory_capacity = memory_capacity(scenario, kernels_);
  e.memory = expansion.memory.fits(e.memory_capacity);
  e.fits = e.memory.fits;
  if (!e.fits) return e;
  auto report = sim::run::run_training(expansion, run, kernels_, options);
  e.step_ms = report.stats.mean_ms;
  e.samples_per_sec = report.samples_per_sec;
  e.samples_per_sec_per_gpu = report.samples_per_sec / std::max(1, scenario.layout.world);
  e.cross_dc_bytes =
      report.traffic.bytes(sim::topology::LinkClass::kCrossDc) / std::max(1, report.steps);
  e.report = std::move(report);
  return e;
}

}  // namespace detail
}  // namespace strait::planner
