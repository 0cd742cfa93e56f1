#pragma once
// The JSON form of a TrainingReport: what `strait simulate --json` writes and what each
// line of a sweep's JSON Lines file holds. Times in ms, memory in GiB, traffic in bytes.

#include <nlohmann/json.hpp>

#include "sim/run/training_run.hpp"

namespace strait::sim::run {

/// The report as a JSON object (keys documented in cli/README.md and sweep/README.md).
nlohmann::json training_report_json(const TrainingReport& report);

/// "steady_state": {"steady", "warmup_steps", "drain_steps", "all_steps_mean_ms"}: which
/// steps the step-time statistics cover (the executor's result writes the same block).
nlohmann::json steady_state_json(const StepStatistics& stats);

}  // namespace strait::sim::run
