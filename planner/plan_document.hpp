#pragma once
// Plan documents: the plan-file form (plan.hpp) of what the planner builds in memory.

#include "sim/core/config_node.hpp"
#include "sim/workload/layout.hpp"
#include "sim/workload/model.hpp"
#include "sim/workload/plan.hpp"

namespace strait::planner {

/// One table's entry under /sparse/tables: a type name, or an object with column_shards
/// and the explicit ranks when set.
Json table_json(const sim::workload::TableSharding& sharding);

/// Writes every table's sharding of `plan` into `document` (/sparse/tables), dropping
/// /sparse/default.
void set_tables(Json& document, const sim::workload::ParallelPlan& plan,
                const sim::workload::ModelConfig& model);

/// What a plan decides, in one canonical form whose keys follow the plan file's pointers
/// ("/sparse/group_size", "/sparse/tables/<name>/type", "/schedule/pipeline_depth", ...):
/// group sizes as `layout` resolves them, bytes as numbers, defaults written out. Two plan
/// documents that run the same job have equal summaries. Table "ranks" are left out.
Json plan_summary(const sim::workload::ParallelPlan& plan, const sim::workload::Layout& layout,
                  const sim::workload::ModelConfig& model);

/// Parses a plan document (errors name `file`).
sim::workload::ParallelPlan parse_plan(const Json& document, const std::string& file,
                                       const sim::workload::ModelConfig& model);

}  // namespace strait::planner
