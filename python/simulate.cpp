// simulate(): what `strait simulate SCENARIO --json` computes, as a dict: a training
// scenario through run_training and training_report_json, a collectives scenario through
// run_collective_scenario and collective_report_json (cli/simulate_command.cpp). The run
// releases the GIL, so Python threads simulate side by side.

#include <optional>

#include <pybind11/stl.h>

#include "python/bindings.hpp"
#include "python/json_value.hpp"
#include "python/scenario_handle.hpp"
#include "sim/run/collective_report_json.hpp"
#include "sim/run/training_report_json.hpp"
#include "sim/run/training_run.hpp"

namespace strait::python {
namespace {

using sim::network::NetworkMode;

std::optional<NetworkMode> network_mode(const std::optional<std::string>& mode) {
  if (!mode) return std::nullopt;
  return enum_argument<NetworkMode>("simulate", "mode", *mode);
}

Json simulate_training(const ScenarioHandle& handle, std::optional<NetworkMode> mode,
                       std::optional<int> steps, const std::string& profiles) {
  std::vector<sweep::Edit> extra;
  if (steps) extra.push_back({"scenario", "/steps", *steps});
  const auto scenario = handle.training(extra);
  const auto cost = sim::run::load_cost_model(scenario, profiles);
  sim::run::TrainingRunOptions options;
  options.mode = mode;
  return sim::run::training_report_json(sim::run::run_training(scenario, cost, options));
}

Json simulate_collectives(const ScenarioHandle& handle, std::optional<NetworkMode> mode) {
  const auto scenario = handle.collective();
  sim::run::RunOptions options;
  options.mode = mode;
  const auto result = sim::run::run_collective_scenario(scenario, options);
  return sim::run::collective_report_json(scenario, result, mode.value_or(scenario.mode));
}

py::object simulate(const ScenarioHandle& scenario, const std::optional<std::string>& mode,
                    std::optional<int> steps, const std::optional<std::string>& profiles) {
  const auto network = network_mode(mode);
  if (steps && scenario.collectives())
    throw py::value_error("simulate: steps: a collectives scenario has no steps");
  // The run reads a copy: another thread may override the scenario meanwhile.
  // NOLINTNEXTLINE(performance-unnecessary-copy-initialization): read without the GIL
  const ScenarioHandle copy = scenario;
  const std::string profiles_dir = profiles.value_or(default_profiles_dir());
  Json result;
  {
    py::gil_scoped_release release;
    result = copy.collectives() ? simulate_collectives(copy, network)
                                : simulate_training(copy, network, steps, profiles_dir);
  }
  return to_python(result);
}

}  // namespace

void bind_simulate(py::module_& m) {
  m.def("simulate", &simulate, py::arg("scenario"), py::kw_only(), py::arg("mode") = py::none(),
        py::arg("steps") = py::none(), py::arg("profiles") = py::none());
}

}  // namespace strait::python
