#include "cli/command.hpp"

namespace strait::cli {

const std::vector<Command>& commands() {
  static const std::vector<Command> kCommands = {
      {"simulate", "simulate a scenario: report, --json, --trace", run_simulate},
      {"collective", "simulated nccl-tests: one collective over a size sweep", run_collective},
      {"plan", "search sharding, placement and schedule: plan, TorchRec and launch plans",
       run_plan},
      {"graph", "the op graph of one rank of a training scenario, as JSON", run_graph},
      {"sweep", "what-if sweeps: many scenario variants to CSV, on cores or MPI ranks", run_sweep},
      {"calibrate",
       "measure kernels and collectives, fit profiles: run | fit | report | import-kineto",
       run_calibrate},
      {"exec", "run a scenario's op graph for real (mpirun -np RANKS; CPU): --json, --trace",
       run_exec},
      {"compare", "simulated against measured (simulate --json vs exec --json; --sim-trace ...)",
       run_compare},
  };
  return kCommands;
}

}  // namespace strait::cli
