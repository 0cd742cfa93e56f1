#include "executor/launch_input.hpp"

#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "planner/launch_fingerprint.hpp"
#include "sim/core/error.hpp"

namespace strait::executor {

bool is_launch_plan(const ConfigNode& document) {
  return document.is_object() && document.has("fingerprint") && document.has("world_size");
}

void check_launch_plan(const ConfigNode& launch, const sim::workload::TrainingScenario& scenario,
                       const Json& plan_document) {
  const auto expected = launch.at("fingerprint");
  const std::string actual = planner::fingerprint(scenario, plan_document);
  if (expected.as_string() != actual) {
    expected.fail(fmt::format(
        "the launch plan was made for {} but the cluster, model, data and plan given now make "
        "{} (a file changed since `strait plan` wrote it, or this is another job's launch "
        "plan); re-run strait plan",
        expected.as_string(), actual));
  }
  const int world = scenario.layout.world;
  const auto size = launch.at("world_size");
  if (size.as_integer() != world)
    size.fail(
        fmt::format("expected {} ranks (the plan's world), got {}", world, size.as_integer()));
  std::map<std::string, std::vector<int>, std::less<>> groups;
  for (const auto& g : scenario.layout.groups) groups[g.name] = g.ranks;
  const auto listed = launch.at("process_groups");
  for (const auto& [name, ranks] : groups) {
    const auto entry = listed.find(name);
    if (!entry) {
      listed.fail(
          fmt::format("expected process group '{}' (ranks {}) that the plan's op graph "
                      "runs collectives on",
                      name, ranks));
    }
    std::vector<int> got;
    for (const auto& r : entry->elements()) got.push_back(r.as_int_in(0, 1 << 24));
    if (got != ranks)
      entry->fail(fmt::format("expected ranks {} for group '{}', got {}", ranks, name, got));
  }
}

ExecInput load_exec_input(const std::string& path, const std::optional<std::string>& launch_path) {
  const ConfigNode document = load_config(path);
  ExecInput in;
  if (is_launch_plan(document)) {
    if (launch_path)
      throw UsageError(fmt::format(
          "exec: {} is a launch plan itself; --launch checks a scenario file against one", path));
    const auto job = document.find("job");
    if (!job) {
      document.fail(
          "expected a \"job\" object (cluster, model and data files, the plan, steps, seed) as "
          "`strait plan --launch` writes it; for a launch plan without one, run `strait exec "
          "SCENARIO.json --launch " +
          path + "`");
    }
    in.scenario = sim::workload::TrainingScenario::from_config(*job);
    check_launch_plan(document, in.scenario,
                      sim::workload::TrainingScenario::resolve_parts(*job).plan.json());
    in.launch_file = path;
    in.fingerprint = document.at("fingerprint").as_string();
    return in;
  }
  in.scenario = sim::workload::TrainingScenario::from_config(document);
  if (launch_path) {
    const ConfigNode launch = load_config(*launch_path);
    if (!is_launch_plan(launch))
      launch.fail(
          "expected a launch plan (\"fingerprint\", \"world_size\") from strait plan --launch");
    check_launch_plan(launch, in.scenario,
                      sim::workload::TrainingScenario::resolve_parts(document).plan.json());
    in.launch_file = *launch_path;
    in.fingerprint = launch.at("fingerprint").as_string();
  }
  return in;
}

}  // namespace strait::executor
