#pragma once
// Launch plan: what a job needs to start a plan.
//
//   {"world_size": W,
//    "ranks": [{"rank", "host", "hostname", "local_rank", "gpu", "datacenter"}],
//    "process_groups": {"all": [...], "sparse_mp/0": [...], "sparse_mp_replica/0": [...],
//                       "cp/0", "fsdp/0", "moe_ep/0", "dense_dc/east", "dense_xdc/0", ...},
//    "env": {"system": {VAR: {"value", "reason"}},       interfaces, HCAs, cross-NIC
//            "tuning": {VAR: {"value", "reason"}}},      overrides the plan relies on
//    "launch": {"torchrun": [one line per node], "srun": "...", "mpirun": "..."},
//    "fingerprint": "fnv1a64:...",
//    "job": {"name", "cluster", "model", "data", "plan", "steps", "seed", "mode", ...}}
// Hostnames are the cluster's host names with '/' turned into '-'. The fingerprint is
// FNV-1a (64 bit) over the cluster (name, GPUs, hosts, link bandwidths), the model
// (tables, dense sizes), the data (batch, lengths) and the plan document; the executor
// checks it before it runs. "job" (added by `strait plan --launch`, cli/plan_command.cpp)
// is a scenario: the cluster, model and data files relative to the launch plan and the
// plan inline, so `strait exec LAUNCH.json` runs exactly what was planned.

#include <string>

#include "sim/core/config_node.hpp"
#include "sim/workload/scenario.hpp"

namespace strait::planner {

Json launch_plan_json(const sim::workload::ParallelPlan& plan, const Json& document,
                      const sim::workload::TrainingScenario& scenario);

/// The fingerprint of a cluster, model, data and plan document.
std::string fingerprint(const sim::workload::TrainingScenario& scenario, const Json& document);

}  // namespace strait::planner
