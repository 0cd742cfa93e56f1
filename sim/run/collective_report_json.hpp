#pragma once
// The JSON form of a collective scenario's result: what `strait simulate --json` writes for a
// scenario with a "collectives" list. Times in us (makespan in ms), traffic in bytes.

#include <nlohmann/json.hpp>

#include "sim/run/collective_scenario.hpp"

namespace strait::sim::run {

/// The result of `scenario` run in `mode` as a JSON object (keys documented in cli/README.md).
nlohmann::json collective_report_json(const CollectiveScenario& scenario,
                                      const ScenarioResult& result, network::NetworkMode mode);

}  // namespace strait::sim::run
