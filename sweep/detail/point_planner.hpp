#pragma once
// plan_point: the sweep's "plan_search" at one point. Runs the planner (planner.hpp) on the
// point's cluster, model and data with the point's plan as the baseline, on one thread (so
// the result does not depend on how many points run at once), and returns the point's
// scenario with the best plan found plus the plan columns of its row. A search that finds
// nothing (no plan fits, a constraint unmet) is an outcome with its reason, not an
// exception. The search's effort is its evaluations (PlanSearch), so the result is the same
// on any machine unless the wall-clock bound stops it (plan_budget_reached).

#include <optional>
#include <string>
#include <vector>

#include "sim/cost/cost_model.hpp"
#include "sim/workload/scenario.hpp"
#include "sweep/sweep_spec.hpp"

namespace strait::sweep::detail {

struct PlannedPoint {
  std::optional<sim::workload::TrainingScenario> scenario;  // with the best plan; none: not found
  std::vector<std::string> fields;                          // plan_columns() order
  Json json;                                                // "plan_search" of the JSON line
  std::string error;                                        // why nothing was found
};

/// Searches a plan for `scenario` whose plan file, after the point's edits, is
/// `plan_document`. Throws ConfigError for a constraints file the point's model rejects.
PlannedPoint plan_point(const PlanSearch& search, const sim::workload::TrainingScenario& scenario,
                        const Json& plan_document, const sim::cost::CostModel& kernels);

/// The plan columns of a point that runs its own plan (`searched` false), or of one whose
/// search failed before it could report (only plan_searched is set).
std::vector<std::string> plan_fields_without_search(
    bool searched, const sim::workload::TrainingScenario* scenario);

}  // namespace strait::sweep::detail
