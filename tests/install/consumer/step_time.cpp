// step_time SCENARIO: the mean step time of a bundled scenario, simulated through strait's
// installed libraries with the installed profiles (what `strait simulate --json` reports as
// step_time_ms).

#include <cstdio>
#include <string>

#include "sim/core/error.hpp"
#include "sim/run/training_run.hpp"
#include "sim/workload/scenario.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: step_time SCENARIO\n");
    return 2;
  }
  try {
    namespace run = strait::sim::run;
    const auto scenario = strait::sim::workload::TrainingScenario::load(argv[1]);
    const auto cost = run::load_cost_model(scenario, std::string(STRAIT_CONFIGS_DIR) + "/profiles");
    const auto report = run::run_training(scenario, cost, run::TrainingRunOptions{});
    std::printf("%.17g\n", report.stats.mean_ms);
    return 0;
  } catch (const strait::Error& e) {
    std::fprintf(stderr, "step_time: %s\n", e.what());
    return 1;
  }
}
