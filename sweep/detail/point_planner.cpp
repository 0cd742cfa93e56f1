#include "sweep/detail/point_planner.hpp"

#include <chrono>
#include <map>

#include <fmt/format.h>

#include "planner/planner.hpp"
#include "sim/core/units.hpp"
#include "sweep/detail/report_columns.hpp"

namespace strait::sweep::detail {
namespace {

using sim::workload::TrainingScenario;

// Column positions in plan_columns().
enum Column : std::size_t {
  kSearched,
  kFound,
  kVsBaseline,
  kBaselineStepMs,
  kSparseGroup,
  kDense,
  kCpDegree,
  kPipelineDepth,
  kTables,
  kBudgetReached,
  kWallS
};

std::string number(double v) { return format_number(Json(v)); }

// The plan a scenario runs, in a few columns: group sizes, dense mode, tables by sharding.
void summarize(const TrainingScenario& sc, std::vector<std::string>& fields) {
  const auto& plan = sc.plan;
  fields[kSparseGroup] = std::to_string(sc.layout.sparse.size);
  fields[kDense] = plan.dense == sim::workload::DenseParallelism::kDdp
                       ? name_of(plan.dense)
                       : fmt::format("{} {}", name_of(plan.dense), sc.layout.fsdp.size);
  fields[kCpDegree] = std::to_string(sc.layout.cp.size);
  fields[kPipelineDepth] = std::to_string(plan.schedule.pipeline_depth);
  std::map<int, int> by_type;  // ShardingType order
  for (const auto& t : plan.sharding) ++by_type[static_cast<int>(t.type)];
  std::string tables;
  for (const auto& [type, count] : by_type) {
    tables += fmt::format("{}{}:{}", tables.empty() ? "" : " ",
                          sim::workload::to_string(static_cast<sim::workload::ShardingType>(type)),
                          count);
  }
  fields[kTables] = tables;
}

bool priced(const planner::RankedPlan& p) {
  return p.final_estimate || p.analytical || p.closed_form;
}

std::string not_found_reason(const planner::PlanOutcome& o) {
  if (o.status == planner::PlanStatus::kConstraintUnmet)
    return fmt::format("plan search: constraint not met: {}", o.unmet);
  if (o.closest && priced(*o.closest)) {
    const auto& m = o.closest->best().memory;
    return fmt::format(
        "plan search: no plan fits in memory (the closest puts {:.2f} GiB on rank {}, {:.2f} GiB "
        "more than fits)",
        m.total / kGiB, m.rank, m.excess / kGiB);
  }
  return "plan search: no plan fits in memory";
}

}  // namespace

std::vector<std::string> plan_fields_without_search(bool searched,
                                                    const TrainingScenario* scenario) {
  std::vector<std::string> fields(plan_columns().size());
  fields[kSearched] = searched ? "true" : "false";
  if (!searched && scenario) summarize(*scenario, fields);
  return fields;
}

PlannedPoint plan_point(const PlanSearch& search, const TrainingScenario& scenario,
                        const Json& plan_document, const sim::cost::CostModel& kernels) {
  const auto start = std::chrono::steady_clock::now();
  planner::PlanRequest request;
  request.base = scenario;
  request.has_baseline = true;
  request.baseline_document = plan_document;
  request.constraints = search.constraints_file.empty()
                            ? planner::Constraints::none(scenario.model)
                            : planner::Constraints::load(search.constraints_file, scenario.model);
  planner::PlannerOptions options;
  options.evaluations = search.evaluations;
  options.budget_s = search.budget_s;
  options.top = search.top;
  options.threads = 1;
  options.final_mode = search.mode.value_or(scenario.mode);
  const auto outcome = planner::find_plan(request, kernels, options);

  PlannedPoint out;
  out.fields = plan_fields_without_search(true, nullptr);
  const bool found = outcome.status == planner::PlanStatus::kFound && !outcome.top.empty();
  out.fields[kFound] = found ? "true" : "false";
  out.fields[kBudgetReached] = outcome.stats.budget_reached ? "true" : "false";
  out.json = {{"found", found},
              {"budget_reached", outcome.stats.budget_reached},
              {"stopped_by", planner::to_string(outcome.stats.stopped_by)},
              {"scored", outcome.stats.scored},
              {"simulated", outcome.stats.simulated}};
  if (found) {
    const auto& best = outcome.top.front();
    out.scenario = planner::scenario_for(scenario, best.plan);
    summarize(*out.scenario, out.fields);
    const auto& b = outcome.baseline;
    if (b && priced(*b) && b->best().fits && b->best().step_ms > 0) {
      out.fields[kBaselineStepMs] = number(b->best().step_ms);
      out.fields[kVsBaseline] = number(best.best().step_ms / b->best().step_ms);
      out.json["baseline_step_ms"] = b->best().step_ms;
    }
    out.json["step_ms"] = best.best().step_ms;
    out.json["label"] = best.label;
    out.json["plan"] = best.document;
  } else {
    out.error = not_found_reason(outcome);
    out.json["error"] = out.error;
  }
  out.fields[kWallS] = fmt::format(
      "{:.6f}", std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  return out;
}

}  // namespace strait::sweep::detail
