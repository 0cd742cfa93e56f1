#pragma once
// find_plan: the fastest parallel plan for a model, its data and a cluster, within memory.
//
// Search (SearchSpace) is kept apart from cost (CostModel), staged and anytime:
//   1. closed form   every point when the space has at most `exact_limit` points (exact),
//                    else coordinate descent from the baseline: each dimension in turn,
//                    all its choices priced in parallel, the best kept, until a round
//                    changes nothing; table slices placed by the cost-balancing proposer;
//   2. analytical    the best `analytical_k` feasible candidates simulated;
//   3. final mode    the best `top` of those simulated in the final mode (flow by default);
//                    the start point, the scenario's own plan and the TorchRec-style
//                    baseline always (they are candidates too, so the plan found is never
//                    slower than them in the final mode);
//   4. local search  from the best final plan, each step simulated in the final mode: a
//                    table slice moved or swapped off the group member the simulation finds
//                    slowest (placement_moves), and the one-dimension neighbours the closed
//                    form ranks best; until a round finds nothing better or the budget ends.
// Candidates that do not fit (memory model, with the headroom) or move more cross-DC bytes
// than allowed are dropped before any simulation. The budget is checked between
// candidates; when it runs out the best found so far is kept (at least one candidate
// reaches the final stage). Deterministic for given inputs, threads and an unexhausted
// budget: parallel work writes into slots by index and every tie breaks by index.

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "planner/constraints.hpp"
#include "planner/cost_model.hpp"

namespace strait::planner {

struct PlannerOptions {
  double budget_s = 60;
  int top = 5;           // plans in the final stage and the report
  int threads = 1;       // oneTBB arena size
  int analytical_k = 8;  // candidates of stage 2
  double exact_limit = 256;
  sim::network::NetworkMode final_mode = sim::network::NetworkMode::kFlow;
  bool references = true;  // price the scenario's plan and the TorchRec-style baseline
  /// Called from the search thread after each priced batch (never from a library print).
  std::function<void(int scored, double best, double seconds_left)> progress;
};

struct PlanRequest {
  /// Cluster, model, data, steps, seed, hardware and profiles; its plan is the baseline
  /// when `has_baseline`.
  sim::workload::TrainingScenario base;
  bool has_baseline = false;
  Json baseline_document;  // the baseline plan file as written (null when none)
  Constraints constraints;
};

/// One priced plan.
struct RankedPlan {
  std::string label;  // how it differs from the start point
  Json document;      // the plan file
  sim::workload::ParallelPlan plan;
  std::optional<Estimate> closed_form, analytical, final_estimate;
  /// The best stage's estimate (final, else analytical, else closed form).
  const Estimate& best() const;
};

struct SearchStats {
  int scored = 0;        // closed-form estimates
  int space_scored = 0;  // of which points of the search space (stage 1)
  int simulated = 0;     // simulations (both modes)
  double wall_s = 0;
  bool exact = false;  // every point of the space was scored
  bool budget_reached = false;
  double space_size = 0;
  int dimensions = 0;
};

enum class PlanStatus { kFound, kNothingFits, kConstraintUnmet };

struct PlanOutcome {
  PlanStatus status = PlanStatus::kFound;
  Objective objective = Objective::kSamplesPerSecPerGpu;
  sim::network::NetworkMode final_mode = sim::network::NetworkMode::kFlow;
  std::vector<RankedPlan> top;         // best first (final stage)
  std::optional<RankedPlan> baseline;  // the scenario's plan as written
  std::optional<RankedPlan> torchrec;  // the TorchRec-style baseline
  std::optional<RankedPlan> closest;   // nothing fits / constraint unmet: the nearest miss
  std::string unmet;                   // which constraint, with file and pointer
  SearchStats stats;
};

/// Objective value of an estimate (smaller is better): step ms, or -samples/s per GPU.
double objective_value(Objective objective, const Estimate& e);

/// Runs the staged search. Throws ConfigError for constraints that no plan can take (a
/// fixed value the cluster cannot hold); expected outcomes are in PlanOutcome::status.
PlanOutcome find_plan(const PlanRequest& request, const sim::cost::CostModel& kernels,
                      const PlannerOptions& options);

/// The scenario for `plan` on the request's cluster, model and data (layout checked).
sim::workload::TrainingScenario scenario_for(const sim::workload::TrainingScenario& base,
                                             const sim::workload::ParallelPlan& plan);

}  // namespace strait::planner
