#pragma once
// Constraints: what a user pins or forbids before the planner searches.
//
//   {"fix": {...},                          any part of a plan file (plan.hpp): "dense",
//                                           "context_parallel", "moe", "sparse" (group_size,
//                                           placement, replica_sync_every,
//                                           replica_sync_staleness, tables: {name: sharding}),
//                                           "schedule" (any of its keys); fixed keys are not
//                                           searched
//    "forbid_sharding": {"item": ["data_parallel", "table_wise"], "*": ["grid"]},
//    "memory_headroom": "4 GiB",            kept free on every GPU
//    "max_cross_dc_bytes_per_step": "2 GiB",
//    "may_span_datacenters": ["sparse", "context_parallel", "fsdp", "expert"],
//                                           group dimensions allowed to cross a datacenter
//                                           boundary (default: all)
//    "objective": "samples_per_sec_per_gpu" | "step_time"}   (default samples/s per GPU)
// Unknown keys, unknown table names and constraints no plan can meet are ConfigErrors
// naming the file and the JSON pointer. The constraints are a filter on every candidate
// the planner prices, the scenario's own plan and the TorchRec-style plan included
// (`violation`): a fixed key holds when pinning it changes nothing the plan decides
// (plan_summary), so "25 MiB" and 26214400 are one bucket size and an absent key is its
// default.

#include <optional>
#include <string>
#include <vector>

#include "sim/core/config_node.hpp"
#include "sim/core/enum_names.hpp"
#include "sim/topology/cluster.hpp"
#include "sim/workload/layout.hpp"
#include "sim/workload/model.hpp"
#include "sim/workload/plan.hpp"

namespace strait::planner {

enum class Objective { kSamplesPerSecPerGpu, kStepTime };
/// The names constraint files and reports use (sim/core/enum_names.hpp).
constexpr auto enum_names(Objective) {
  return std::to_array<EnumName<Objective>>(
      {{Objective::kSamplesPerSecPerGpu, "samples_per_sec_per_gpu"},
       {Objective::kStepTime, "step_time"}});
}
inline const char* to_string(Objective objective) { return name_of(objective); }

struct Constraints {
  std::string file;               // "" when none was given
  std::optional<ConfigNode> fix;  // plan-format object of fixed keys
  std::vector<std::vector<sim::workload::ShardingType>> forbidden;  // per model table
  double memory_headroom = 0;                                       // bytes
  double max_cross_dc_bytes = -1;                                   // per step; < 0 = no limit
  std::optional<ConfigNode> max_cross_dc_node;
  bool span_sparse = true, span_cp = true, span_fsdp = true, span_expert = true;
  Objective objective = Objective::kSamplesPerSecPerGpu;

  /// Parses a constraints file against `model` (table names). Throws ConfigError.
  static Constraints load(const std::string& path, const sim::workload::ModelConfig& model);
  static Constraints from_config(const ConfigNode& node, const sim::workload::ModelConfig& model);
  /// No constraint (every table may take every sharding type).
  static Constraints none(const sim::workload::ModelConfig& model);

  /// True when `fix` pins `section`/`key` (e.g. "schedule", "pipeline_depth"; key "" = the
  /// whole section).
  bool fixed(std::string_view section, std::string_view key = "") const;
  bool forbids(int table, sim::workload::ShardingType type) const;

  /// Why a candidate breaks these constraints, or "" when it keeps them: a key fixed to
  /// another value, a forbidden sharding, a group across datacenters that may not span
  /// them. `document` is its plan file, `plan` and `layout` what it parses and lays out
  /// to on `cluster`. The reason names this file and the constraint's pointer.
  std::string violation(const Json& document, const sim::workload::ParallelPlan& plan,
                        const sim::workload::Layout& layout, const sim::topology::Cluster& cluster,
                        const sim::workload::ModelConfig& model) const;
};

}  // namespace strait::planner
