#pragma once
// SimulationCost: a candidate priced by simulating its whole scenario (sim/run), in the
// analytical or the flow network mode. The memory model runs first; a candidate that does
// not fit is not simulated.

#include <memory>
#include <utility>

#include "planner/cost_model.hpp"

namespace strait::planner::detail {

class SimulationCost : public CostModel {
 public:
  Estimate estimate(const sim::workload::TrainingScenario& scenario) const override;

 protected:
  SimulationCost(const sim::cost::CostModel& kernels, sim::network::NetworkMode mode,
                 std::shared_ptr<sim::workload::BatchCache> batches)
      : kernels_(kernels), mode_(mode), batches_(std::move(batches)) {}

 private:
  const sim::cost::CostModel& kernels_;
  sim::network::NetworkMode mode_;
  std::shared_ptr<sim::workload::BatchCache> batches_;  // null: sampled per run
};

/// Analytical mode: each collective alone on an idle network, kernels at their roofline.
class AnalyticalSimulationCost final : public SimulationCost {
 public:
  explicit AnalyticalSimulationCost(const sim::cost::CostModel& kernels,
                                    std::shared_ptr<sim::workload::BatchCache> batches = nullptr)
      : SimulationCost(kernels, sim::network::NetworkMode::kAnalytical, std::move(batches)) {}
  const char* name() const override { return name_of(sim::network::NetworkMode::kAnalytical); }
};

/// Flow mode: flows share links, kernels share SMs and HBM (the reference).
class FlowSimulationCost final : public SimulationCost {
 public:
  explicit FlowSimulationCost(const sim::cost::CostModel& kernels,
                              std::shared_ptr<sim::workload::BatchCache> batches = nullptr)
      : SimulationCost(kernels, sim::network::NetworkMode::kFlow, std::move(batches)) {}
  const char* name() const override { return name_of(sim::network::NetworkMode::kFlow); }
};

}  // namespace strait::planner::detail
