#pragma once
// The "job" of a launch plan: what `strait exec LAUNCH.json` runs (executor/launch_input.hpp),
// written next to the launch plan by `strait plan --launch` and returned by the Python
// module's plan().

#include <map>
#include <string>

#include "sim/core/config_node.hpp"
#include "sim/workload/scenario.hpp"

namespace strait::planner {

/// The job of a launch plan in `folder`: `base`'s name, steps, seed and mode, `plan` (a plan
/// document) inline, and its cluster, model and data: the file `files` names for each
/// ("cluster", "model", "data"), relative to `folder`, or else `base.parts`' config inline;
/// `hardware` (the scenario's "hardware" block; null: none) and base's profiles folder
/// relative to `folder`. Paths are made relative through their absolute forms.
Json launch_job(const sim::workload::TrainingScenario& base, const Json& plan,
                const std::map<std::string, std::string>& files, const Json& hardware,
                const std::string& folder);

}  // namespace strait::planner
