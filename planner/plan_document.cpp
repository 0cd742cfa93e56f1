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

Json plan_summary(const sim::workload::ParallelPlan& plan, const sim::workload::Layout& layout,
                  const sim::workload::ModelConfig& model) {
  using sim::workload::to_string;
  const auto group = [](int size, sim::workload::PlacementLevel level) {
    return Json{{"group_size", size}, {"placement", size > 1 ? to_string(level) : "none"}};
  };
  Json dense = {{"parallelism", name_of(plan.dense)}};
  if (plan.dense == sim::workload::DenseParallelism::kDdp) {
    dense["bucket_size"] = plan.bucket_size;
    if (plan.grad_sync != sim::workload::GradSync::kBuckets)
      dense["grad_sync"] = name_of(plan.grad_sync);
    if (plan.grad_comm_precision) dense["comm_precision"] = to_string(*plan.grad_comm_precision);
  } else {
    dense.update(group(layout.fsdp.size, plan.fsdp.level));
  }
  Json cp = group(layout.cp.size, plan.cp.level);
  cp["degree"] = plan.cp_degree;
  cp["mode"] = name_of(plan.cp_mode);
  Json sparse = group(layout.sparse.size, plan.sparse.level);
  sparse["replica_sync_every"] = plan.replica_sync_every;
  sparse["replica_sync_staleness"] = plan.replica_sync_staleness;
  const auto precision = [](const auto& p) { return p ? Json(to_string(*p)) : Json("weights"); };
  sparse["comm_precision"] = {{"forward", precision(plan.comm_precision.forward)},
                              {"backward", precision(plan.comm_precision.backward)}};
  Json tables = Json::object();
  for (std::size_t t = 0; t < model.tables.size(); ++t) {
    const auto& s = plan.sharding[t];
    tables[model.tables[t].name] = {
        {"type", to_string(s.type)}, {"column_shards", s.column_shards}, {"hot_rows", s.hot_rows}};
  }
  sparse["tables"] = std::move(tables);
  const auto& s = plan.schedule;
  Json priorities = Json::array();
  for (int p : s.priority) priorities.push_back(p);
  return {{"ranks", layout.world},
          {"dense", std::move(dense)},
          {"context_parallel", std::move(cp)},
          {"sparse", std::move(sparse)},
          {"moe", group(layout.expert.size, plan.expert.level)},
          {"schedule",
           {{"pipeline_depth", s.pipeline_depth},
            {"pipelined", name_of(s.pipelined)},
            {"priorities", std::move(priorities)},
            {"sm_free_comm", s.sm_free},
            {"cross_dc_sync", name_of(s.cross_dc)},
            {"load_balance",
             {{"method", name_of(s.balance)}, {"scope", to_string(s.balance_scope)}}}}}};
}

sim::workload::ParallelPlan parse_plan(const Json& document, const std::string& file,
                                       const sim::workload::ModelConfig& model) {
  return sim::workload::ParallelPlan::from_config(ConfigNode(document, file), model);
}

}  // namespace strait::planner
