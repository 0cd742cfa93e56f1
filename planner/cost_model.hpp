#pragma once
// CostModel: what the planner's search asks of a candidate plan — how fast is it, does it
// fit, how much crosses datacenters — with three answers at three prices, the way a
// database optimizer keeps its enumerator apart from its cost model:
//   closed form   per-rank estimate from the op graph of one step: kernel times from the
//                 cost model, each collective alone on the analytical network, overlap by
//                 the schedule's rules (detail/closed_form_cost.hpp); milliseconds to a
//                 second, no event simulation;
//   analytical    the whole scenario simulated with the analytical network mode;
//   flow          the whole scenario simulated with the flow network mode (the reference).
// All three run the memory model first and return an infeasible Estimate (no time) for a
// candidate that does not fit, so nothing infeasible is simulated.

#include <memory>
#include <optional>
#include <string>

#include "sim/cost/cost_model.hpp"
#include "sim/run/training_run.hpp"
#include "sim/workload/batch_cache.hpp"
#include "sim/workload/memory_model.hpp"
#include "sim/workload/scenario.hpp"

namespace strait::planner {

/// One candidate's price. Times per step in ms; bytes per step.
struct Estimate {
  bool fits = false;
  double step_ms = 0;
  double samples_per_sec = 0;
  double samples_per_sec_per_gpu = 0;
  double cross_dc_bytes = 0;                       // bytes on cross-datacenter links per step
  double memory_capacity = 0;                      // usable bytes per GPU (the smallest)
  sim::workload::MemoryFit memory;                 // the fullest rank, its excess and binding term
  std::optional<sim::run::TrainingReport> report;  // simulation stages only
};

class CostModel {
 public:
  virtual ~CostModel() = default;
  /// "closed_form", "analytical" or "flow".
  virtual const char* name() const = 0;
  /// Prices `scenario` (its plan is the candidate). Deterministic; thread-safe.
  virtual Estimate estimate(const sim::workload::TrainingScenario& scenario) const = 0;
};

/// The closed-form per-rank estimate. With `batches`, every scenario it prices draws its
/// batches from that cache: they must all share one base (sim/workload/batch_cache.hpp).
std::unique_ptr<CostModel> make_closed_form_cost(
    const sim::cost::CostModel& kernels,
    std::shared_ptr<sim::workload::BatchCache> batches = nullptr);
/// A simulation of the scenario in `mode` (analytical or flow); `batches` as above.
std::unique_ptr<CostModel> make_simulation_cost(
    const sim::cost::CostModel& kernels, sim::network::NetworkMode mode,
    std::shared_ptr<sim::workload::BatchCache> batches = nullptr);

/// Steps a candidate is simulated for: the scenario's, or more where they would not give
/// two steady steps past the plan's warm-up and drain (plans are compared on steady
/// steps, sim/run/training_run.hpp).
int compared_steps(int scenario_steps, const sim::workload::ParallelPlan& plan);

/// Usable bytes per GPU of the scenario's ranks (capacity - reserved, the smallest).
double memory_capacity(const sim::workload::TrainingScenario& scenario,
                       const sim::cost::CostModel& kernels);

}  // namespace strait::planner
