#include "planner/plan_document.hpp"

namespace strait::planner {

using sim::workload::ShardingType;

Json table_json(const sim::workload::TableSharding& s) {
  const bool columns = s.type == ShardingType::kColumnWise || s.type == ShardingType::kGrid;
  if (!columns && s.ranks.empty() && s.hot_rows == 0) return sim::workload::to_string(s.type);
  Json j = {{"type", sim::workload::to_string(s.type)}};
  if (columns) j["column_shards"] = s.column_shards;
  if (!s.ranks.empty()) j["ranks"] = s.ranks;
  if (s.hot_rows > 0) j["hot_rows"] = s.hot_rows;
  return j;
}

void set_tables(Json& document, const sim::workload::ParallelPlan& plan,
                const sim::workload::ModelConfig& model) {
  Json& sparse = document["sparse"];
  if (!sparse.is_object()) sparse = Json::object();
  sparse.erase("default");
  Json tables = Json::object();
  for (std::size_t t = 0; t < model.tables.size(); ++t)
    tables[model.tables[t].name] = table_json(plan.sharding[t]);
  sparse["tables"] = std::move(tables);
}

sim::workload::ParallelPlan parse_plan(const Json& document, const std::string& file,
                                       const sim::workload::ModelConfig& model) {
  return sim::workload::ParallelPlan::from_config(ConfigNode(document, file), model);
}

}  // namespace strait::planner
