// plan(): what `strait plan SCENARIO` finds (cli/plan_command.cpp): the planner's report as
// `--json` writes it, and for the best plan the plan document (`--out`), the TorchRec
// sharding plan (`--torchrec`) and the launch plan (`--launch`, its job relative to the
// working directory as for `--launch -`). The search releases the GIL.

#include <filesystem>
#include <map>
#include <optional>

#include <pybind11/stl.h>

#include "planner/launch_job.hpp"
#include "planner/launch_plan.hpp"
#include "planner/plan_report.hpp"
#include "planner/planner.hpp"
#include "planner/table_placement.hpp"
#include "planner/torchrec_plan.hpp"
#include "python/bindings.hpp"
#include "python/json_value.hpp"
#include "python/scenario_handle.hpp"
#include "sim/core/error.hpp"
#include "sim/run/training_run.hpp"

namespace strait::python {
namespace {

using sim::network::NetworkMode;

struct PlanArguments {
  int evaluations = 48;
  double budget_s = 600;
  int top = 5;
  int threads = 1;
  std::optional<std::string> mode, profiles, constraints;
  std::string entrypoint, torchrec_module, torchrec_sequence_module;
};

// The CLI's ranges for its options, as ValueErrors.
planner::PlannerOptions planner_options(const PlanArguments& a, NetworkMode scenario_mode) {
  if (a.evaluations < 1 || a.evaluations > 100000)
    throw py::value_error(
        "plan: evaluations: expected a count of final-mode simulations in "
        "1..100000, got " +
        std::to_string(a.evaluations));
  if (!(a.budget_s > 0 && a.budget_s <= 1e6))
    throw py::value_error("plan: budget: expected a positive number of seconds up to 1e6");
  if (a.top < 1) throw py::value_error("plan: top: expected at least 1");
  if (a.threads < 1) throw py::value_error("plan: threads: expected at least 1");
  const NetworkMode final_mode =
      a.mode ? enum_argument<NetworkMode>("plan", "mode", *a.mode) : scenario_mode;
  if (a.entrypoint.find_first_not_of(" \t") == std::string::npos)
    throw py::value_error(
        "plan: entrypoint: expected a command such as \"train.py ARGS\" or \"python -m MODULE "
        "ARGS\", got '" +
        a.entrypoint + "'");
  planner::PlannerOptions o;
  o.evaluations = a.evaluations;
  o.budget_s = a.budget_s;
  o.top = a.top;
  o.threads = a.threads;
  o.final_mode = final_mode;
  return o;
}

// The launch plan's job: the parts the scenario reads unchanged from files by their paths,
// the others (inline or edited) inline.
Json launch_job(const ScenarioHandle& handle, const sim::workload::TrainingScenario& base,
                const Json& plan) {
  std::map<std::string, std::string> files;
  const auto& parts = *base.parts;
  if (handle.reads_file("cluster")) files["cluster"] = parts.cluster.file();
  if (handle.reads_file("model")) files["model"] = parts.model.file();
  if (handle.reads_file("data")) files["data"] = parts.data.file();
  const Json scenario = handle.scenario_document();
  const Json hardware = scenario.value("hardware", Json());
  return planner::launch_job(base, plan, files, hardware, std::filesystem::current_path().string());
}

Json plan(const ScenarioHandle& handle, const PlanArguments& a) {
  if (handle.collectives())
    throw ConfigError(handle.file(), "/collectives",
                      "expected a training scenario (model, data, plan) to plan");
  planner::PlanRequest request;
  request.base = handle.training();
  request.has_baseline = true;
  request.baseline_document = request.base.parts->plan.json();
  request.constraints = a.constraints
                            ? planner::Constraints::load(*a.constraints, request.base.model)
                            : planner::Constraints::none(request.base.model);
  const auto kernels =
      sim::run::load_cost_model(request.base, a.profiles.value_or(default_profiles_dir()));
  const auto options = planner_options(a, request.base.mode);
  const auto outcome = planner::find_plan(request, kernels, options);
  const planner::TableCosts costs(request.base, kernels);
  Json out = {{"found", outcome.status == planner::PlanStatus::kFound},
              {"report", planner::outcome_json(outcome, request, costs)},
              {"plan", nullptr},
              {"torchrec", nullptr},
              {"launch", nullptr}};
  if (outcome.status != planner::PlanStatus::kFound) return out;
  const auto& best = outcome.top.front();
  out["plan"] = best.document;
  out["torchrec"] = planner::torchrec_plan_json(best.plan, request.base, costs,
                                                {a.torchrec_module, a.torchrec_sequence_module});
  auto launch = planner::launch_plan_json(best.plan, best.document, request.base, {a.entrypoint});
  launch["job"] = launch_job(handle, request.base, best.document);
  launch["job"]["steps"] = planner::compared_steps(request.base.steps, best.plan);
  out["launch"] = std::move(launch);
  return out;
}

}  // namespace

void bind_plan(py::module_& m) {
  m.def(
      "plan",
      [](const ScenarioHandle& scenario, int evaluations, double budget, int top, int threads,
         std::optional<std::string> mode, std::optional<std::string> profiles,
         std::optional<std::string> constraints, std::string entrypoint,
         std::string torchrec_module, std::string torchrec_sequence_module) {
        const PlanArguments a{evaluations,
                              budget,
                              top,
                              threads,
                              std::move(mode),
                              std::move(profiles),
                              std::move(constraints),
                              std::move(entrypoint),
                              std::move(torchrec_module),
                              std::move(torchrec_sequence_module)};
        // NOLINTNEXTLINE(performance-unnecessary-copy-initialization): read without the GIL
        const ScenarioHandle copy = scenario;
        Json result;
        {
          py::gil_scoped_release release;
          result = plan(copy, a);
        }
        return to_python(result);
      },
      py::arg("scenario"), py::kw_only(), py::arg("evaluations") = 48, py::arg("budget") = 600.0,
      py::arg("top") = 5, py::arg("threads") = 1, py::arg("mode") = py::none(),
      py::arg("profiles") = py::none(), py::arg("constraints") = py::none(),
      py::arg("entrypoint") = planner::LaunchOptions{}.entrypoint,
      py::arg("torchrec_module") = planner::TorchRecModules{}.pooled,
      py::arg("torchrec_sequence_module") = planner::TorchRecModules{}.sequence);
}

}  // namespace strait::python
