#pragma once
// What `strait exec` runs: a scenario file, or a launch plan from `strait plan --launch`,
// checked against each other before anything starts.
//
//   strait exec SCENARIO.json                       the scenario as it is
//   strait exec LAUNCH.json                         the launch plan's "job" (cluster, model,
//                                                   and data files relative to the launch
//                                                   file, the plan inline, steps, seed)
//   strait exec SCENARIO.json --launch LAUNCH.json  the scenario, checked against the plan
//
// Checks (a mismatch throws ConfigError naming the launch file, the key and what differs):
//   - "fingerprint": planner::fingerprint (planner/launch_fingerprint.hpp) of the cluster,
//     model and data configs, the histogram files they name and the plan document the
//     executor is about to run must equal the launch plan's (a file edited after planning
//     changes it);
//   - "world_size" and every "process_groups" entry must be the ranks of the layout's
//     group of that name (the groups the op graph's collectives run on).
// A file is a launch plan when it has "fingerprint" and "world_size" at the top.

#include <optional>
#include <string>

#include "sim/core/config_node.hpp"
#include "sim/workload/scenario.hpp"

namespace strait::executor {

struct ExecInput {
  sim::workload::TrainingScenario scenario;
  /// The launch plan's file when one was given (checked), else empty.
  std::string launch_file;
  std::string fingerprint;  // the launch plan's, when one was given
};

/// True when `document` is a launch plan (has "fingerprint" and "world_size").
bool is_launch_plan(const ConfigNode& document);

/// Loads `path` (a scenario or a launch plan) and, when `launch_path` is set, the launch
/// plan to check the scenario against; throws ConfigError/IoError/UsageError.
ExecInput load_exec_input(const std::string& path,
                          const std::optional<std::string>& launch_path = std::nullopt);

/// Throws ConfigError naming `launch`'s file unless it was made for `scenario` with
/// `plan_document` (fingerprint, world size, process groups).
void check_launch_plan(const ConfigNode& launch, const sim::workload::TrainingScenario& scenario,
                       const Json& plan_document);

}  // namespace strait::executor
