#pragma once
// Launch plan: what a job needs to start a plan.
//
//   {"world_size": W, "nodes": N,
//    "hosts": [{"hostname", "host", "datacenter", "node_rank", "first_rank", "ranks", "gpus"}],
//    "ranks": [{"rank", "host", "hostname", "local_rank", "gpu", "datacenter"}],
//    "process_groups": {"all": [...], "sparse_mp/0": [...], "sparse_mp_replica/0": [...],
//                       "cp/0", "fsdp/0", "moe_ep/0", "dense_dc/east", "dense_xdc/0", ...},
//    "env": {"system": {VAR: {"value", "reason"}},   NCCL settings the cluster file implies
//            "tuning": {VAR: {"value", "reason"}}},  overrides the plan relies on (none yet)
//    "entrypoint": "train.py --plan plan.json --launch launch.json",
//    "launch": {"torchrun": [one line per host], "srun": "...", "mpirun": "..."},
//    "launch_refused": {"srun": "why"},             a launcher that cannot place the ranks
//    "files": {"hostfile.txt": "...", ...},         files the lines read, to write beside them
//    "torchrec": {...},                             TorchRec / DDP settings of the schedule
//                                                   (torchrec_settings.hpp)
//    "notes": ["..."],                              what the program itself must do
//    "fingerprint": "fnv1a64:...",                  launch_fingerprint.hpp
//    "job": {"name", "cluster", "model", "data", "plan", "steps", "seed", "mode", ...}}
// Hosts are those of the plan's ranks (a plan may use fewer ranks than the cluster has),
// with the plan's ranks on each; hostnames are the cluster's host names with '/' turned
// into '-'. Every variable in "env" is set by every line (launch_lines.hpp), and each has
// its documented meaning as its reason. "entrypoint" is what every line runs: the user's
// training script or module and its arguments, or a command that starts Python
// (launch_lines.hpp has the forms); the default is a placeholder. The executor checks the
// fingerprint before it runs. "job" (added by `strait plan --launch`, cli/plan_command.cpp)
// is a scenario: the cluster, model and data files relative to the launch plan and the
// plan inline, so `strait exec LAUNCH.json` runs exactly what was planned.

#include <string>

#include "planner/launch_fingerprint.hpp"
#include "sim/core/config_node.hpp"
#include "sim/workload/scenario.hpp"

namespace strait::planner {

/// The entrypoint the lines run when the user names none: a placeholder for their own.
inline constexpr const char* kPlaceholderEntrypoint =
    "train.py --plan plan.json --launch launch.json";

struct LaunchOptions {
  /// What every launch line runs: "SCRIPT ARGS", "-m MODULE ARGS" or "python ... ARGS"
  /// (launch_lines.hpp).
  std::string entrypoint = kPlaceholderEntrypoint;
};

/// The launch plan of `plan` (parsed from `document`) on `scenario`'s cluster.
Json launch_plan_json(const sim::workload::ParallelPlan& plan, const Json& document,
                      const sim::workload::TrainingScenario& scenario,
                      const LaunchOptions& options = {});

}  // namespace strait::planner
