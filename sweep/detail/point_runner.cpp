#include "sweep/detail/point_runner.hpp"

#include <chrono>

#include <fmt/format.h>

#include "sim/core/error.hpp"
#include "sim/cost/profile_set.hpp"
#include "sim/run/training_report_json.hpp"
#include "sim/run/training_run.hpp"
#include "sim/workload/scenario.hpp"
#include "sweep/detail/point_planner.hpp"
#include "sweep/detail/report_columns.hpp"

namespace strait::sweep::detail {
namespace {

using sim::workload::TrainingScenario;

// The point's scenario; `plan_document` receives the edited plan file (the planner's
// baseline).
TrainingScenario build_scenario(const SweepSpec& spec, const Point& point, Json& plan_document) {
  const auto configs = point_configs(spec, point.edits);
  plan_document = configs.parts.plan.json();
  return TrainingScenario::from_config(configs.scenario, configs.parts);
}

// A point whose plan search found nothing: its row is an error row.
class PlanNotFound : public Error {
 public:
  using Error::Error;
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

EditedScenario point_configs(const SweepSpec& spec, const std::vector<Edit>& edits) {
  return edit_scenario(spec.scenario(), spec.part_files(), edits);
}

PointRunner::PointRunner(const SweepSpec& spec, std::string default_profiles_dir,
                         bool reuse_expansions)
    : spec_(spec),
      default_profiles_dir_(std::move(default_profiles_dir)),
      reuse_expansions_(reuse_expansions) {}

sim::run::TrainingReport PointRunner::simulate(const Point& point, const TrainingScenario& scenario,
                                               const sim::cost::CostModel& cost) const {
  // A searched plan is the point's own.
  if (!reuse_expansions_ || point.plan_search) return sim::run::run_training(scenario, cost, {});
  const auto expansion = expansions_.get(ExpansionCache::key(point.edits), [&] {
    return sim::run::expand_training(scenario, cost, {});
  });
  return sim::run::run_training(*expansion, scenario, cost, {});
}

std::shared_ptr<const sim::cost::CostModel> PointRunner::cost_model(const std::string& dir) const {
  std::lock_guard lock(mutex_);
  auto& slot = costs_[dir];
  if (!slot) slot = std::make_shared<const sim::cost::CostModel>(sim::cost::load_profile_dir(dir));
  return slot;
}

PointOutcome PointRunner::run(std::size_t index) const {
  const auto start = std::chrono::steady_clock::now();
  const Point& point = spec_.points().at(index);
  PointOutcome out;
  out.index = index;
  std::vector<std::string> fields = {std::to_string(index)};
  Json axes = Json::object();
  for (std::size_t k = 0; k < point.values.size(); ++k) {
    fields.push_back(format_axis_value(point.values[k]));
    axes[spec_.axis_names()[k]] = point.values[k];
  }
  Json line = {{"point", index}, {"axes", axes}};
  const bool with_plan = spec_.plan_search().has_value();
  std::vector<std::string> plan_fields;
  if (with_plan) plan_fields = plan_fields_without_search(point.plan_search, nullptr);
  std::string error;
  try {
    Json plan_document;
    auto scenario = build_scenario(spec_, point, plan_document);
    const auto cost =
        cost_model(scenario.profiles_dir.empty() ? default_profiles_dir_ : scenario.profiles_dir);
    if (point.plan_search) {
      auto planned = plan_point(*spec_.plan_search(), scenario, plan_document, *cost);
      plan_fields = std::move(planned.fields);
      line["plan_search"] = std::move(planned.json);
      if (!planned.scenario) throw PlanNotFound(planned.error);
      scenario = std::move(*planned.scenario);
    } else if (with_plan) {
      plan_fields = plan_fields_without_search(false, &scenario);
    }
    const auto report = simulate(point, scenario, *cost);
    line["result"] = sim::run::training_report_json(report);
    const auto results = result_fields(line["result"]);
    fields.insert(fields.end(), results.begin(), results.end());
  } catch (const Error& e) {
    error = e.what();
  } catch (const std::bad_alloc&) {
    error = "out of memory";
  } catch (const std::exception& e) {
    error = fmt::format("internal error: {}", e.what());
  }
  if (!error.empty()) {
    // One row is one line: the resume reader splits the file at line breaks.
    for (char& c : error) c = c == '\n' || c == '\r' ? ' ' : c;
    out.failed = true;
    fields.resize(1 + point.values.size() + result_columns().size());
    line["error"] = error;
  }
  fields.insert(fields.end(), plan_fields.begin(), plan_fields.end());
  fields.push_back(fmt::format("{:.6f}", seconds_since(start)));
  fields.push_back(error);
  out.csv_row = csv_line(fields) + "\n";
  out.json_line = line.dump() + "\n";
  return out;
}

}  // namespace strait::sweep::detail
