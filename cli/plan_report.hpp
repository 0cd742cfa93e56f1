#pragma once
// The text report of `strait plan`: top plans side by side, against the scenario's plan
// and the TorchRec-style baseline, which dimensions cross datacenters, per-table stats.

#include <ostream>

#include "planner/plan_report.hpp"
#include "planner/planner.hpp"

namespace strait::cli {

void print_plan_report(std::ostream& out, const planner::PlanOutcome& outcome,
                       const planner::PlanRequest& request, const planner::TableCosts& costs);

}  // namespace strait::cli
