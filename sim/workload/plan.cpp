#include "sim/workload/plan.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace strait::sim::workload {
namespace {

GroupSpec parse_group(const ConfigNode& node, std::string_view size_key, PlacementLevel fallback) {
  GroupSpec g;
  g.node = node;
  if (node.has(size_key)) {
    const auto size = node.positive_integer(size_key);
    if (size > (1 << 24)) node.at(size_key).fail("expected a group size below 2^24");
    g.size = static_cast<int>(size);
  }
  g.level = read_enum_or(node, "placement", fallback);
  return g;
}

TableSharding parse_sharding(const ConfigNode& node) {
  TableSharding s;
  if (node.is_object()) {
    node.allow_only({"type", "column_shards", "ranks", "hot_rows"});
    s.type = read_enum<ShardingType>(node, "type");
    const ShardingType type = s.type;
    const bool columns = type == ShardingType::kColumnWise || type == ShardingType::kGrid;
    if (node.has("column_shards")) {
      if (!columns) {
        node.at("column_shards")
            .fail("column_shards applies to column_wise and grid sharding only");
      }
      s.column_shards = node.int_in("column_shards", 1, 1 << 16);
    } else if (columns) {
      s.column_shards = 2;
    }
    if (node.has("hot_rows")) {
      if (type == ShardingType::kDataParallel) {
        node.at("hot_rows").fail("hot_rows applies to sharded tables (not data_parallel)");
      }
      s.hot_rows = node.positive_integer("hot_rows");
    }
    if (auto ranks = node.find("ranks")) {
      if (type == ShardingType::kDataParallel || type == ShardingType::kRowWise) {
        ranks->fail("ranks applies to table_wise, column_wise, table_row_wise and grid only");
      }
      const auto slices = static_cast<std::size_t>(columns ? s.column_shards : 1);
      const auto elements = ranks->elements();
      if (type == ShardingType::kTableRowWise) {
        // One block start per host the rows span (HugeCTR's hier_auto puts a big table's
        // rows on several nodes).
        if (elements.empty()) ranks->fail("expected at least one rank (a block start per host)");
      } else if (elements.size() != slices) {
        ranks->fail(fmt::format("expected {} rank{} (one per slice), got {}", slices,
                                slices == 1 ? "" : "s", elements.size()));
      }
      for (const auto& e : elements) {
        const auto r = e.as_integer();
        if (r < 0 || r >= (1 << 24)) e.fail("expected a group member index >= 0");
        if (type == ShardingType::kTableRowWise &&
            std::find(s.ranks.begin(), s.ranks.end(), static_cast<int>(r)) != s.ranks.end())
          e.fail(fmt::format("block {} is named twice", r));
        s.ranks.push_back(static_cast<int>(r));
      }
    }
  } else {
    s.type = sharding_type(node);
    if (s.type == ShardingType::kColumnWise || s.type == ShardingType::kGrid) s.column_shards = 2;
  }
  return s;
}

void parse_sparse(const ConfigNode& node, const ModelConfig& model, ParallelPlan& p) {
  node.allow_only({"group_size", "placement", "replica_sync_every", "replica_sync_staleness",
                   "default", "tables", "comm_precision"});
  if (auto c = node.find("comm_precision")) {
    c->allow_only({"forward", "backward"});
    if (c->has("forward")) p.comm_precision.forward = precision_or(*c, "forward", Precision::kFp32);
    if (c->has("backward"))
      p.comm_precision.backward = precision_or(*c, "backward", Precision::kFp32);
  }
  p.sparse = parse_group(node, "group_size", PlacementLevel::kCluster);
  const std::int64_t every = node.integer_or("replica_sync_every", 1);
  if (every <= 0 || every > 1'000'000)
    node.at("replica_sync_every").fail("expected a step count in 1..1000000");
  p.replica_sync_every = static_cast<int>(every);
  const std::int64_t staleness = node.integer_or("replica_sync_staleness", 1);
  if (staleness <= 0 || staleness > 16)
    node.at("replica_sync_staleness").fail("expected a step count in 1..16");
  p.replica_sync_staleness = static_cast<int>(staleness);
  TableSharding fallback;
  if (node.has("default")) fallback = parse_sharding(node.at("default"));
  p.sharding.assign(model.tables.size(), fallback);
  if (auto tables = node.find("tables")) {
    tables->allow_only(model.table_names());
    for (std::size_t i = 0; i < model.tables.size(); ++i) {
      if (auto t = tables->find(model.tables[i].name)) p.sharding[i] = parse_sharding(*t);
    }
  }
  for (std::size_t i = 0; i < model.tables.size(); ++i) {
    if (p.sharding[i].hot_rows >= model.tables[i].rows) {
      const ConfigNode where = node.find("tables") && node.at("tables").has(model.tables[i].name)
                                   ? node.at("tables").at(model.tables[i].name)
                                   : node;
      where.fail(fmt::format("table \"{}\" has {} rows; hot_rows must be fewer, got {}",
                             model.tables[i].name, model.tables[i].rows, p.sharding[i].hot_rows));
    }
    if (model.tables[i].dim % p.sharding[i].column_shards != 0) {
      node.fail(fmt::format("table \"{}\" (dim {}) cannot be split into {} column shards",
                            model.tables[i].name, model.tables[i].dim,
                            p.sharding[i].column_shards));
    }
  }
}

void parse_schedule(const ConfigNode& node, ParallelPlan& p) {
  node.allow_only({"pipeline_depth", "pipelined", "priorities", "sm_free_comm", "cross_dc_sync",
                   "load_balance"});
  Schedule& s = p.schedule;
  const std::int64_t depth = node.integer_or("pipeline_depth", 1);
  if (depth < 1 || depth > 3)
    node.at("pipeline_depth").fail(fmt::format("expected 1 (none), 2 or 3, got {}", depth));
  s.pipeline_depth = static_cast<int>(depth);
  s.pipelined = read_enum_or(node, "pipelined", Pipelined::kSparseForward);
  if (auto pr = node.find("priorities")) {
    pr->allow_only({"embedding", "dense", "context_parallel", "replica_sync", "moe"});
    auto get = [&](std::string_view key) {
      const auto v = pr->integer_or(key, 0);
      if (v < 0 || v > 7)
        pr->at(key).fail(fmt::format("expected a priority class 0..7, got {}", v));
      return static_cast<int>(v);
    };
    const int emb = get("embedding");
    s.priority[static_cast<int>(CommClass::kInputDist)] = emb;
    s.priority[static_cast<int>(CommClass::kOutputDist)] = emb;
    s.priority[static_cast<int>(CommClass::kGradDist)] = emb;
    s.priority[static_cast<int>(CommClass::kDenseSync)] = get("dense");
    s.priority[static_cast<int>(CommClass::kContextParallel)] = get("context_parallel");
    s.priority[static_cast<int>(CommClass::kReplicaSync)] = get("replica_sync");
    s.priority[static_cast<int>(CommClass::kMoe)] = get("moe");
  }
  s.sm_free = node.bool_or("sm_free_comm", false);
  s.cross_dc = read_enum_or(node, "cross_dc_sync", CrossDcSync::kFlat);
  if (auto lb = node.find("load_balance")) {
    if (lb->is_object()) {
      lb->allow_only({"method", "scope"});
      s.balance = read_enum<LoadBalance>(*lb, "method");
      s.balance_scope = read_enum_or(*lb, "scope", PlacementLevel::kCluster);
    } else {
      s.balance = as_enum<LoadBalance>(*lb);
    }
  }
}

}  // namespace

ShardingType sharding_type(const ConfigNode& node) {
  const std::string v = node.as_string();
  if (const auto type = parse_enum<ShardingType>(v)) return *type;
  const std::string hint = closest_match(v, enum_name_vector<ShardingType>());
  node.fail(fmt::format("unknown sharding type \"{}\"{}; expected one of {}", v,
                        hint.empty() ? "" : fmt::format(" (did you mean \"{}\"?)", hint),
                        enum_name_list<ShardingType>()));
}

ParallelPlan ParallelPlan::load(const std::string& path, const ModelConfig& model) {
  return from_config(load_config(path), model);
}

ParallelPlan ParallelPlan::from_config(const ConfigNode& node, const ModelConfig& model) {
  node.allow_only({"name", "description", "ranks", "dense", "context_parallel", "sparse", "moe",
                   "schedule", "kernels"});
  ParallelPlan p;
  p.file = node.file();
  p.name = node.string_or("name", "plan");
  if (node.has("ranks")) {
    p.ranks = node.int_in("ranks", 1, 1 << 24);
    p.ranks_node = node.at("ranks");
  }
  if (auto d = node.find("dense")) {
    d->allow_only(
        {"parallelism", "bucket_size", "grad_sync", "comm_precision", "group_size", "placement"});
    p.dense = read_enum_or(*d, "parallelism", DenseParallelism::kDdp);
    if (d->has("bucket_size")) {
      p.bucket_size = d->bytes("bucket_size");
      // A few KiB at least: "bucket_size": 25 (bytes) made millions of buckets a step.
      if (p.bucket_size < 4 * kKiB)
        d->at("bucket_size")
            .fail(fmt::format("expected a bucket size of at least 4 KiB, got {} B", p.bucket_size));
    }
    p.grad_sync = read_enum_or(*d, "grad_sync", GradSync::kBuckets);
    if (p.dense == DenseParallelism::kFsdp && d->has("grad_sync"))
      d->at("grad_sync").fail("applies to \"parallelism\": \"ddp\" only");
    if (d->has("comm_precision"))
      p.grad_comm_precision = precision_or(*d, "comm_precision", Precision::kFp32);
    if (p.dense == DenseParallelism::kDdp && (d->has("group_size") || d->has("placement"))) {
      d->at(d->has("group_size") ? "group_size" : "placement")
          .fail("applies to \"parallelism\": \"fsdp\" only");
    }
    p.fsdp = parse_group(*d, "group_size", PlacementLevel::kCluster);
  }
  if (auto c = node.find("context_parallel")) {
    c->allow_only({"degree", "mode", "placement"});
    p.cp = parse_group(*c, "degree", PlacementLevel::kHost);
    p.cp_degree = p.cp.size == 0 ? 1 : p.cp.size;
    p.cp.size = p.cp_degree;
    p.cp_mode = read_enum_or(*c, "mode", CpMode::kAllGather);
    if (p.cp_degree > 1 && !model.has_hstu())
      c->at("degree").fail("context parallelism needs an HSTU model");
  } else {
    p.cp.size = 1;
  }
  p.sharding.assign(model.tables.size(), TableSharding{});
  if (auto s = node.find("sparse")) parse_sparse(*s, model, p);
  if (auto m = node.find("moe")) {
    m->allow_only({"expert_parallel", "placement"});
    p.expert = parse_group(*m, "expert_parallel", PlacementLevel::kHost);
    if (p.expert.size == 0) p.expert.size = 1;
    if (model.moe.layers > 0 && model.moe.experts % p.expert.size != 0) {
      m->at("expert_parallel")
          .fail(fmt::format("expected a divisor of the model's {} experts, got {}",
                            model.moe.experts, p.expert.size));
    }
  } else {
    p.expert.size = 1;
  }
  if (auto s = node.find("schedule")) parse_schedule(*s, p);
  if (auto k = node.find("kernels")) {
    if (!k->is_object()) k->fail("expected an object of kernel family -> implementation name");
    for (const std::string& family : k->keys()) {
      const auto kind = cost::parse_kernel_kind(family);
      if (!kind) {
        k->at(family).fail(
            fmt::format("\"{}\" is not a kernel family (gemm, gemm_backward, "
                        "jagged_attention, embedding_lookup, ...)",
                        family));
      }
      p.kernels[*kind] = k->string(family);
    }
  }
  return p;
}

}  // namespace strait::sim::workload
