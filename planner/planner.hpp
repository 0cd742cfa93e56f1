#pragma once
// find_plan: the fastest parallel plan for a model, its data and a cluster, within memory
// and the constraints.
//
// Search (SearchSpace) is kept apart from cost (CostModel). Three fidelities, cheapest first:
//   1. closed form   every point when the space has at most `exact_limit` points (exact),
//                    else coordinate descent from the start point: each dimension in turn,
//                    all its choices priced, the best kept, until a round changes nothing;
//                    table slices placed by the cost-balancing proposer;
//   2. best first    the references (start point, scenario plan, TorchRec-style plan) are
//                    simulated in the final mode, then, batch after batch, the candidates
//                    ranked best by their most faithful estimate so far: a candidate with
//                    only a closed form is simulated analytically first (when the final mode
//                    is flow), one with an analytical time in the final mode. Closed forms
//                    are put on the analytical scale by the median ratio of the candidates
//                    that have both, so the two rank together, while the closed form orders
//                    those candidates like the simulation (Spearman's rho >= 0.5 over at
//                    least 5; else every candidate with an analytical time comes before
//                    those with a closed form only). Each time the best final
//                    plan changes, its neighbours join the ranking: a table slice moved or
//                    swapped off the group member its simulation finds slowest, and every
//                    one-dimension change (coordinate-descent spaces only; an exact space
//                    has them all).
// The effort is counted, not timed: `evaluations` final-mode simulations (references
// included) and `analytical_per_evaluation` analytical ones for each, so the same inputs
// give the same plan on any machine, load and thread count (a batch has a fixed size;
// parallel work writes into slots by index; ties break by index). The search stops when
// the evaluations are spent, when every feasible candidate has been simulated in the final
// mode (exhausted), or at the wall-clock `budget_s`, an upper bound: reaching it is
// reported, and only then may the result depend on the machine.
// The constraints filter every candidate, the references included (Constraints::violation):
// a reference that breaks them is never priced and the outcome lists it. Candidates that do
// not fit (memory model, with the headroom) or move more cross-DC bytes than allowed are
// never simulated.

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "planner/constraints.hpp"
#include "planner/cost_model.hpp"

namespace strait::planner {

/// Where a search stands, for a progress line.
struct PlanProgress {
  const char* stage = "";  // "closed form", "analytical" or the final mode ("flow", ...)
  int scored = 0;          // closed-form estimates
  int simulated = 0;       // simulations, both modes
  int evaluations = 0;     // of which in the final mode
  int evaluation_limit = 0;
  double best_step_ms = 0;   // the best plan that fits so far, by its most faithful estimate
  const char* best_by = "";  // that estimate's stage ("" while no plan fits)
  double seconds_left = 0;   // of the wall-clock bound
};

struct PlannerOptions {
  int evaluations = 48;               // final-mode simulations, the references' included
  int analytical_per_evaluation = 8;  // analytical simulations allowed per evaluation
  double budget_s = 600;              // wall-clock upper bound, seconds
  int top = 5;                        // plans in the report
  int threads = 1;                    // oneTBB arena size (never changes the result)
  double exact_limit = 4096;          // closed form over every point up to this size
  sim::network::NetworkMode final_mode = sim::network::NetworkMode::kFlow;
  bool references = true;  // price the scenario's plan and the TorchRec-style baseline
  /// Called from the search thread after each priced batch (never from a library print).
  std::function<void(const PlanProgress& progress)> progress;
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

/// What ended the search: the evaluations spent, every feasible candidate simulated in the
/// final mode, or the wall-clock budget (the only one that depends on the machine).
enum class StopReason { kEvaluations, kExhausted, kWallClock };
/// The names reports use (sim/core/enum_names.hpp).
constexpr auto enum_names(StopReason) {
  return std::to_array<EnumName<StopReason>>({{StopReason::kEvaluations, "evaluations"},
                                              {StopReason::kExhausted, "exhausted"},
                                              {StopReason::kWallClock, "wall_clock"}});
}
inline const char* to_string(StopReason reason) { return name_of(reason); }

struct SearchStats {
  int scored = 0;               // closed-form estimates
  int space_scored = 0;         // of which points of the search space (stage 1)
  int simulated = 0;            // simulations (both modes)
  int evaluations = 0;          // of which in the final mode
  double wall_s = 0;            // not in the report: it is the one figure that varies by machine
  bool exact = false;           // every point of the space was scored
  bool budget_reached = false;  // the wall-clock budget stopped the search
  StopReason stopped_by = StopReason::kExhausted;
  double space_size = 0;
  int dimensions = 0;
  /// How well the closed form orders candidates as simulation does: Spearman's rank
  /// correlation of the objective values of every usable candidate priced both ways, both
  /// feasible (the simulation: analytical when the final mode is flow, else the final
  /// one), over `rank_pairs` such candidates; no figure below 3 pairs.
  std::optional<double> closed_form_rank_correlation;
  int rank_pairs = 0;
};

/// A reference plan the constraints exclude, and the constraint it breaks.
struct ExcludedPlan {
  std::string label;
  std::string reason;
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
  std::vector<ExcludedPlan> excluded;  // references the constraints rule out
  SearchStats stats;
};

/// Objective value of an estimate (smaller is better): step ms, or -samples/s per GPU.
double objective_value(Objective objective, const Estimate& e);

/// Runs the search. Throws ConfigError naming the constraints file and key when no plan
/// can keep the constraints (a fixed value the cluster cannot hold, a fix that contradicts
/// a forbidden sharding); expected outcomes are in PlanOutcome::status.
PlanOutcome find_plan(const PlanRequest& request, const sim::cost::CostModel& kernels,
                      const PlannerOptions& options);

/// The scenario for `plan` on the request's cluster, model and data (layout checked), for
/// the steps the planner simulates it (compared_steps).
sim::workload::TrainingScenario scenario_for(const sim::workload::TrainingScenario& base,
                                             const sim::workload::ParallelPlan& plan);

}  // namespace strait::planner
