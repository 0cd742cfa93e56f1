#include "planner/torchrec_plan.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "planner/plan_document.hpp"
#include "sim/core/error.hpp"

namespace strait::planner {
namespace {

using sim::workload::ShardingType;

const char* torchrec_name(ShardingType t) {
  return t == ShardingType::kGrid ? "grid_shard" : sim::workload::to_string(t);
}

struct ShardOut {
  std::int64_t row0, col0, rows, cols;
  int rank;
};

}  // namespace

Json torchrec_plan_json(const sim::workload::ParallelPlan& plan,
                        const sim::workload::TrainingScenario& sc, const TableCosts& costs) {
  const auto& model = sc.model;
  const int M = sc.layout.sparse.size;
  const int host =
      sc.cluster.hosts().empty() ? 1 : static_cast<int>(sc.cluster.hosts().front().gpus.size());
  const int block = M % host == 0 ? std::min(host, M) : 1;
  Json modules = Json::object();
  Json estimates = Json::object();
  for (std::size_t t = 0; t < model.tables.size(); ++t) {
    const auto& tb = model.tables[t];
    const auto& s = plan.sharding[t];
    if (s.hot_rows > 0) {
      throw Error(fmt::format(
          "TorchRec plan: table \"{}\" keeps {} hot rows data-parallel (hybrid embedding), "
          "which a TorchRec ShardingPlan cannot express",
          tb.name, s.hot_rows));
    }
    std::vector<ShardOut> shards;
    auto row_blocks = [&](int first, int n, std::int64_t col0, std::int64_t cols) {
      const std::int64_t per = (tb.rows + n - 1) / n;
      for (int i = 0; i < n; ++i) {
        const std::int64_t r0 = std::min<std::int64_t>(tb.rows, per * i);
        shards.push_back({r0, col0, std::min<std::int64_t>(per, tb.rows - r0), cols, first + i});
      }
    };
    const std::int64_t width = tb.dim / std::max(1, s.column_shards);
    switch (s.type) {
      case ShardingType::kDataParallel:
        break;
      case ShardingType::kTableWise:
        shards.push_back({0, 0, tb.rows, tb.dim, s.ranks.empty() ? 0 : s.ranks[0]});
        break;
      case ShardingType::kRowWise:
        row_blocks(0, M, 0, tb.dim);
        break;
      case ShardingType::kColumnWise:
        for (int c = 0; c < s.column_shards; ++c)
          shards.push_back({0, c * width, tb.rows, width,
                            s.ranks.empty() ? c % M : s.ranks[static_cast<std::size_t>(c)]});
        break;
      case ShardingType::kTableRowWise:
        row_blocks(s.ranks.empty() ? 0 : s.ranks[0], block, 0, tb.dim);
        break;
      case ShardingType::kGrid:
        for (int c = 0; c < s.column_shards; ++c)
          row_blocks(s.ranks.empty() ? 0 : s.ranks[static_cast<std::size_t>(c)], block, c * width,
                     width);
        break;
    }
    std::vector<int> ranks;
    Json shard_list = Json::array();
    for (const auto& x : shards) {
      ranks.push_back(x.rank);
      shard_list.push_back({{"shard_offsets", {x.row0, x.col0}},
                            {"shard_sizes", {x.rows, x.cols}},
                            {"placement", fmt::format("rank:{}/cuda:{}", x.rank,
                                                      sc.cluster.gpu(x.rank).local_index)}});
    }
    if (s.type == ShardingType::kDataParallel) {
      for (int r = 0; r < M; ++r) ranks.push_back(r);
    }
    const char* module = tb.pooling == sim::workload::Pooling::kSequence
                             ? "embedding_collection"
                             : "embedding_bag_collection";
    modules[module][tb.name] = {
        {"sharding_type", torchrec_name(s.type)},
        {"compute_kernel", s.type == ShardingType::kDataParallel ? "dense" : "fused"},
        {"ranks", ranks},
        {"shards", shard_list}};
    const double f = s.type == ShardingType::kColumnWise || s.type == ShardingType::kGrid
                         ? 1.0 / s.column_shards
                         : 1.0;
    const double r = s.type == ShardingType::kRowWise        ? 1.0 / M
                     : s.type == ShardingType::kTableRowWise ? 1.0 / block
                     : s.type == ShardingType::kGrid         ? 1.0 / block
                                                             : 1.0;
    const int cp = sc.layout.cp.size;
    estimates[tb.name] = {
        {"shard_lookup_ms", costs.slice_seconds(static_cast<int>(t), f, r, M, cp) * 1e3},
        {"shard_weight_bytes", costs.slice_bytes(static_cast<int>(t), f, r)}};
  }
  Json dcs = Json::array();
  for (const auto& d : sc.cluster.datacenters()) dcs.push_back(d.name);
  return {{"plan", modules},
          {"strait",
           {{"note",
             "what TorchRec's plan form drops: the model-parallel group (ranks above are "
             "those of group 0; every group repeats them), and strait's estimates"},
            {"group_size", M},
            {"replicas", sc.layout.world / M},
            {"world_size", sc.layout.world},
            {"topology",
             {{"cluster", sc.cluster.name()},
              {"gpus", sc.cluster.gpu_count()},
              {"gpus_per_host", host},
              {"hosts", sc.cluster.hosts().size()},
              {"datacenters", dcs}}},
            {"estimates", estimates}}}};
}

TorchRecPlan read_torchrec_plan(const std::string& path, const sim::workload::ModelConfig& model) {
  return parse_torchrec_plan(load_config(path), model);
}

TorchRecPlan parse_torchrec_plan(const ConfigNode& node, const sim::workload::ModelConfig& model) {
  node.allow_only({"plan", "strait"});
  TorchRecPlan out;
  if (auto s = node.find("strait"); s && s->has("group_size"))
    out.group_size = static_cast<int>(s->positive_integer("group_size"));
  out.sharding.assign(model.tables.size(), {});
  std::vector<bool> seen(model.tables.size(), false);
  const auto plan = node.at("plan");
  for (const auto& module_name : plan.keys()) {
    const auto module = plan.at(module_name);
    for (const auto& table : module.keys()) {
      const auto entry = module.at(table);
      const int t = model.table_index(table);
      if (t < 0) {
        const std::string hint = closest_match(table, model.table_names());
        entry.fail(fmt::format("unknown table \"{}\"{}; expected a table of model '{}'", table,
                               hint.empty() ? "" : fmt::format(" (did you mean \"{}\"?)", hint),
                               model.name));
      }
      if (seen[static_cast<std::size_t>(t)]) entry.fail("table listed twice");
      seen[static_cast<std::size_t>(t)] = true;
      entry.allow_only({"sharding_type", "compute_kernel", "ranks", "shards", "sharding_spec"});
      const std::string type =
          entry.choice("sharding_type", {"data_parallel", "table_wise", "row_wise", "column_wise",
                                         "table_row_wise", "grid_shard"});
      auto& s = out.sharding[static_cast<std::size_t>(t)];
      // Shards by column offset: (column offset -> smallest rank holding it).
      std::map<std::int64_t, int> columns;
      if (auto shards = entry.find("shards")) {
        for (const auto& sh : shards->elements()) {
          sh.allow_only({"shard_offsets", "shard_sizes", "placement"});
          const auto offsets = sh.at("shard_offsets");
          if (offsets.size() != 2) offsets.fail("expected [row offset, column offset]");
          const std::string place = sh.string("placement");
          int rank = -1;
          if (std::sscanf(place.c_str(), "rank:%d/", &rank) != 1 || rank < 0)
            sh.at("placement").fail("expected \"rank:R/cuda:L\"");
          const auto col = offsets.at(1).as_integer();
          auto [it, added] = columns.emplace(col, rank);
          if (!added) it->second = std::min(it->second, rank);
        }
      }
      auto need_shards = [&] {
        if (columns.empty()) entry.fail(fmt::format("expected shards for {} sharding", type));
      };
      if (type == "data_parallel") {
        s.type = ShardingType::kDataParallel;
      } else if (type == "row_wise") {
        s.type = ShardingType::kRowWise;
      } else if (type == "table_wise" || type == "table_row_wise") {
        s.type = type == "table_wise" ? ShardingType::kTableWise : ShardingType::kTableRowWise;
        need_shards();
        s.ranks = {columns.begin()->second};
      } else {
        s.type = type == "column_wise" ? ShardingType::kColumnWise : ShardingType::kGrid;
        need_shards();
        s.column_shards = static_cast<int>(columns.size());
        for (const auto& [col, rank] : columns) s.ranks.push_back(rank);
      }
    }
  }
  for (std::size_t t = 0; t < model.tables.size(); ++t) {
    if (!seen[t])
      plan.fail(fmt::format("expected every model table; \"{}\" is missing", model.tables[t].name));
  }
  return out;
}

sim::workload::ParallelPlan apply_torchrec_plan(Json& document,
                                                const sim::workload::ParallelPlan& plan,
                                                const TorchRecPlan& torchrec,
                                                const sim::workload::ModelConfig& model) {
  sim::workload::ParallelPlan out = plan;
  out.sharding = torchrec.sharding;
  Json& sparse = document["sparse"];
  if (!sparse.is_object()) sparse = Json::object();
  if (torchrec.group_size > 0) {
    sparse["group_size"] = torchrec.group_size;
  } else {
    sparse.erase("group_size");
    sparse.erase("placement");
    sparse.erase("replica_sync_every");
    sparse.erase("replica_sync_staleness");
  }
  set_tables(document, out, model);
  return parse_plan(document, out.file.empty() ? "<torchrec plan>" : out.file, model);
}

}  // namespace strait::planner
