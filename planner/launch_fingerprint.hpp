#pragma once
// The launch plan's fingerprint: which inputs a launch plan was made for. `strait plan`
// writes it and `strait exec` recomputes it from the job's files before it runs, both with
// this function, so any edit to an input after planning is caught.
//
//   "fnv1a64:" + 16 hex digits, FNV-1a (64 bit) over, in order:
//     the cluster, model and data configs as the scenario read them (its `parts`), each
//     as canonical JSON (nlohmann objects are sorted maps, so dump() orders keys);
//     every empirical histogram file the data config names (sim/workload/distribution.hpp),
//     as canonical JSON;
//     the plan document.
// Whitespace, key order and file names do not change it; any value does. A scenario built
// from parts already parsed (TrainingScenario::from_parts) keeps no configs: its fingerprint
// covers the plan document only.

#include <string>

#include "sim/core/config_node.hpp"
#include "sim/workload/scenario.hpp"

namespace strait::planner {

/// The fingerprint of `scenario`'s cluster, model and data configs and `document` (the plan
/// the job runs). Throws IoError/ConfigError when a histogram file cannot be read.
std::string fingerprint(const sim::workload::TrainingScenario& scenario, const Json& document);

}  // namespace strait::planner
