// Over 400 lines: the TorchRec ShardingPlan form is written and read here, field by field, so
// the two directions stay in step.

#include "planner/torchrec_plan.hpp"

#include <algorithm>
#include <charconv>
#include <functional>
#include <map>
#include <string_view>

#include <fmt/format.h>

#include "planner/plan_document.hpp"
#include "sim/core/error.hpp"
#include "sim/workload/sharding.hpp"

namespace strait::planner {
namespace {

using sim::workload::ShardingType;

// TorchRec's names of the sharding types (its ShardingType enum's values): strait's but for
// grid, "grid_shard". Read and written through this one table.
constexpr auto kTorchRecTypes = std::to_array<EnumName<ShardingType>>({
    {ShardingType::kDataParallel, "data_parallel"},
    {ShardingType::kTableWise, "table_wise"},
    {ShardingType::kRowWise, "row_wise"},
    {ShardingType::kColumnWise, "column_wise"},
    {ShardingType::kTableRowWise, "table_row_wise"},
    {ShardingType::kGrid, "grid_shard"},
});

const char* torchrec_name(ShardingType t) { return name_of(t, kTorchRecTypes); }

// Members per host-sized block of an M-rank group, as ShardMap::build cuts them.
int host_block(const sim::topology::Cluster& cluster, int group) {
  const int host =
      cluster.hosts().empty() ? 1 : static_cast<int>(cluster.hosts().front().gpus.size());
  return sim::workload::host_block_size(host, group);
}

// TorchRec's row blocks: ceil(rows / n) rows each; offset and size of block i.
struct RowBlock {
  std::int64_t offset, size, per;
};
RowBlock row_block(std::int64_t rows, int n, int i) {
  const std::int64_t per = (rows + n - 1) / n;
  const std::int64_t offset = std::min(rows, per * i);
  return {offset, std::min(per, rows - offset), per};
}

struct ShardOut {
  std::int64_t row0, col0, rows, cols;
  int rank;
};

bool is_null(const ConfigNode& parent, std::string_view key) {
  return !parent.has(key) || parent.at(key).json().is_null();
}

std::int64_t non_negative(const ConfigNode& n) {
  const std::int64_t v = n.as_integer();
  if (v < 0) n.fail(fmt::format("expected a non-negative integer, got {}", v));
  return v;
}

// "rank:R/cuda:L" (str() of torch's _remote_device) -> R.
int placement_rank(const ConfigNode& node) {
  const std::string s = node.as_string();
  int rank = -1, local = -1;
  const char* end = s.data() + s.size();
  const auto number = [&](const char* p, int& out) {
    const auto [q, ec] = std::from_chars(p, end, out);
    return ec == std::errc() && q != p && out >= 0 ? q : nullptr;
  };
  const char* p = s.rfind("rank:", 0) == 0 ? number(s.data() + 5, rank) : nullptr;
  if (p && std::string_view(p, static_cast<std::size_t>(end - p)).rfind("/cuda:", 0) == 0)
    p = number(p + 6, local);
  else
    p = nullptr;
  if (p != end) node.fail(fmt::format("expected \"rank:R/cuda:L\" (a GPU), got \"{}\"", s));
  return rank;
}

TorchRecShard read_shard(const ConfigNode& sh) {
  sh.allow_only({"shard_offsets", "shard_sizes", "placement", "bucket_id_offset", "num_buckets"});
  for (const char* key : {"bucket_id_offset", "num_buckets"}) {
    if (!is_null(sh, key))
      sh.at(key).fail(
          "expected null: bucket-wise shards of a virtual (ZCH) table split rows by buckets, "
          "which strait does not model");
  }
  const auto pair = [&](const char* key, const char* what) {
    const auto n = sh.at(key);
    if (!n.is_array() || n.size() != 2) n.fail(fmt::format("expected {}", what));
    return std::pair{non_negative(n.at(std::size_t{0})), non_negative(n.at(std::size_t{1}))};
  };
  const auto [row0, col0] = pair("shard_offsets", "[row offset, column offset]");
  const auto [rows, cols] = pair("shard_sizes", "[rows, columns]");
  const auto placement = sh.at("placement");
  const int rank = placement_rank(placement);
  return {row0, col0, rows, cols, placement.as_string(), rank, sh};
}

// The kernels strait's cost model represents: FBGEMM's fused table-batched embeddings in
// HBM for sharded tables, a dense replica for data-parallel ones.
void check_kernel(const ConfigNode& entry, const std::string& type) {
  const auto node = entry.at("compute_kernel");
  const std::string kernel = node.as_string();
  const bool dp = parse_enum(type, kTorchRecTypes) == ShardingType::kDataParallel;
  if (kernel == (dp ? "dense" : "fused")) return;
  node.fail(fmt::format(
      "expected one of the kernels strait models: \"fused\" (sharded tables: HBM, optimizer "
      "fused into the backward) or \"dense\" (data_parallel); got \"{}\" for {}{}",
      kernel, type,
      kernel == "dense" || kernel == "fused"
          ? ""
          : " (UVM, caching, quantized, key-value and custom kernels are not modelled)"));
}

// ParameterSharding fields beyond _serialize()'s: harmless ones ignored, the others only
// when null.
void check_extra_keys(const ConfigNode& entry) {
  for (const char* key : {"cache_params", "output_dtype", "key_value_params"}) {
    if (!is_null(entry, key))
      entry.at(key).fail(
          "expected null: UVM caching, another output type or a key-value store change the "
          "lookup in ways strait does not model");
  }
}

// Shards grouped by column slice (in column order), each group in list order. Column
// slices must be of equal width dim / k and cover [0, dim) without gap or overlap; other
// types have one slice spanning every column.
std::vector<std::vector<const TorchRecShard*>> column_slices(
    const std::vector<TorchRecShard>& shards, const ConfigNode& entry, bool by_column,
    std::int64_t dim) {
  std::map<std::int64_t, std::vector<const TorchRecShard*>> by_offset;
  for (const auto& s : shards) by_offset[by_column ? s.column_offset : 0].push_back(&s);
  const auto k = static_cast<std::int64_t>(by_offset.size());
  if (dim % k != 0) {
    entry.at("shards").fail(fmt::format(
        "expected column shards of equal width dim/column_shards; {} columns do not split "
        "into {} equal slices",
        dim, k));
  }
  const std::int64_t width = dim / k;
  std::vector<std::vector<const TorchRecShard*>> out;
  for (auto& [col0, slice] : by_offset) {
    const auto j = static_cast<std::int64_t>(out.size());
    for (const TorchRecShard* s : slice) {
      if (s->column_offset != j * width)
        s->node.at("shard_offsets")
            .fail(fmt::format("expected column offset {} (slice {} of {} of {} columns)", j * width,
                              j, k, width));
      if (s->columns != width)
        s->node.at("shard_sizes")
            .fail(by_column ? fmt::format("expected column shards of equal width "
                                          "dim/column_shards = {}/{} = {} columns, got {}; "
                                          "strait models equal column slices only",
                                          dim, k, width, s->columns)
                            : fmt::format("expected {} columns (the table's dim)", dim));
    }
    out.push_back(std::move(slice));
  }
  return out;
}

// A slice's row blocks: n of ceil(rows / n) rows in list order (TorchRec's layout), on n
// distinct ranks; `aligned`: ranks b*n .. b*n+n-1 (one host block). Returns the first rank.
int check_row_blocks(const std::vector<const TorchRecShard*>& slice, std::int64_t rows,
                     bool aligned) {
  const int n = static_cast<int>(slice.size());
  int first = slice.front()->rank;
  for (const TorchRecShard* s : slice) first = std::min(first, s->rank);
  first = aligned ? first - first % n : first;
  for (int i = 0; i < n; ++i) {
    const TorchRecShard& s = *slice[static_cast<std::size_t>(i)];
    const RowBlock b = row_block(rows, n, i);
    const auto expected =
        n == 1 ? fmt::format("row offset 0 and {} rows (all of the table's rows)", rows)
               : fmt::format(
                     "row offset {} and {} rows (block {} of {}: TorchRec's "
                     "ceil({} / {}) = {} rows each)",
                     b.offset, b.size, i, n, rows, n, b.per);
    if (s.row_offset != b.offset) s.node.at("shard_offsets").fail("expected " + expected);
    if (s.rows != b.size) s.node.at("shard_sizes").fail("expected " + expected);
    for (int j = 0; j < i; ++j) {
      if (slice[static_cast<std::size_t>(j)]->rank == s.rank)
        s.node.at("placement")
            .fail(fmt::format("expected a rank holding no other block of this slice; rank {} "
                              "holds {} too",
                              s.rank, slice[static_cast<std::size_t>(j)]->node.pointer()));
    }
    if (aligned && s.rank >= first + n)
      s.node.at("placement")
          .fail(fmt::format("expected a rank of the aligned block {}..{}: a table_row_wise or "
                            "grid slice's {} row blocks sit on the {} GPUs of one host block",
                            first, first + n - 1, n, n));
  }
  return first;
}

// "ranks", unless absent or null: non-negative integers.
std::optional<std::vector<TorchRecRank>> read_ranks(const ConfigNode& entry) {
  if (is_null(entry, "ranks")) return std::nullopt;
  std::vector<TorchRecRank> out;
  for (const auto& r : entry.at("ranks").elements())
    out.push_back({static_cast<int>(non_negative(r)), r});
  return out;
}

// "enforce_hbm" or "stochastic_rounding": true or false, unset when absent or null.
std::optional<bool> read_flag(const ConfigNode& entry, std::string_view key) {
  if (const auto n = entry.find(key)) return n->as_bool();
  return std::nullopt;
}

// One table's entry on its own: keys, sharding type, kernel, shards and the ranks listed,
// as checked above.
TorchRecEntry read_entry(const std::string& module, const std::string& table,
                         const ConfigNode& entry) {
  entry.allow_only({"sharding_type", "compute_kernel", "ranks", "shards", "sharding_spec",
                    "cache_params", "enforce_hbm", "stochastic_rounding", "bounds_check_mode",
                    "output_dtype", "key_value_params"});
  std::string type = torchrec_name(read_enum(entry, "sharding_type", kTorchRecTypes));
  check_kernel(entry, type);
  check_extra_keys(entry);
  TorchRecEntry e{.module = module,
                  .table = table,
                  .sharding_type = std::move(type),
                  .compute_kernel = entry.at("compute_kernel").as_string(),
                  .enforce_hbm = read_flag(entry, "enforce_hbm"),
                  .stochastic_rounding = read_flag(entry, "stochastic_rounding"),
                  .ranks = std::nullopt,
                  .shards = {},
                  .node = entry};
  if (!is_null(entry, "shards")) {
    for (const auto& sh : entry.at("shards").elements()) e.shards.push_back(read_shard(sh));
  }
  e.ranks = read_ranks(entry);
  if (e.sharding_type == torchrec_name(ShardingType::kDataParallel)) {
    if (!e.shards.empty())
      entry.at("shards").fail(
          "expected no shards: TorchRec writes none for data_parallel (every rank holds the "
          "whole table)");
    return e;
  }
  if (e.shards.empty()) entry.fail(fmt::format("expected shards for {} sharding", e.sharding_type));
  const std::size_t listed = e.ranks ? e.ranks->size() : 0;
  if (listed > 0 && listed != e.shards.size())
    entry.at("ranks").fail(
        fmt::format("expected one rank per shard ({}), got {}", e.shards.size(), listed));
  for (std::size_t i = 0; i < listed; ++i) {
    const TorchRecRank& r = (*e.ranks)[i];
    if (r.rank != e.shards[i].rank)
      r.node.fail(fmt::format("expected {}, the rank of {}'s placement", e.shards[i].rank,
                              e.shards[i].node.pointer()));
  }
  return e;
}

// Checks a caller adds to each entry where the reader reaches it: `before` on the table's
// name ahead of the entry's own checks, `after` on the entry read.
struct EntryChecks {
  std::function<void(const std::string& table, const ConfigNode& entry)> before;
  std::function<void(const TorchRecEntry& entry)> after;
};

TorchRecFile read_file(const ConfigNode& root, const EntryChecks& checks) {
  root.allow_only({"plan", "strait"});
  TorchRecFile out;
  if (auto s = root.find("strait"); s && s->has("group_size"))
    out.group_size = s->int_in("group_size", 1, 1 << 24);
  const auto plan = root.at("plan");
  for (const auto& module_name : plan.keys()) {
    const auto module = plan.at(module_name);
    if (!module.is_object()) module.fail("expected a module's plan: an object of tables");
    out.modules.push_back(module_name);
    for (const auto& table : module.keys()) {
      const auto entry = module.at(table);
      if (checks.before) checks.before(table, entry);
      out.entries.push_back(read_entry(module_name, table, entry));
      if (checks.after) checks.after(out.entries.back());
    }
  }
  return out;
}

// The model table `table` names; fails unless the model has it and no entry before listed it.
std::size_t model_table(const std::string& table, const ConfigNode& entry,
                        const sim::workload::ModelConfig& model,
                        const std::vector<TorchRecTable>& tables) {
  const int t = model.table_index(table);
  if (t < 0) {
    const std::string hint = closest_match(table, model.table_names());
    entry.fail(fmt::format("unknown table \"{}\"{}; expected a table of model '{}'", table,
                           hint.empty() ? "" : fmt::format(" (did you mean \"{}\"?)", hint),
                           model.name));
  }
  const auto& seen = tables[static_cast<std::size_t>(t)];
  if (seen.entry) {
    entry.fail(
        fmt::format("table \"{}\" listed twice: also at {} (a table belongs to one "
                    "module)",
                    table, seen.entry->pointer()));
  }
  return static_cast<std::size_t>(t);
}

// The model's checks of an entry read above: its shards tile table `tb` as TorchRec cuts it.
TorchRecTable tile_table(const TorchRecEntry& e, const sim::workload::EmbeddingTable& tb,
                         sim::workload::TableSharding& s) {
  const auto parsed = parse_enum(e.sharding_type, kTorchRecTypes);
  if (!parsed) e.node.fail_not_one_of(e.sharding_type, enum_name_vector(kTorchRecTypes));
  const ShardingType type = *parsed;
  TorchRecTable rec;
  rec.entry = e.node;
  s.type = type;
  if (type == ShardingType::kDataParallel) {
    if (e.ranks) rec.ranks = *e.ranks;
    return rec;
  }
  for (const auto& sh : e.shards) rec.ranks.push_back({sh.rank, sh.node.at("placement")});

  const bool by_column = type == ShardingType::kColumnWise || type == ShardingType::kGrid;
  const auto slices = column_slices(e.shards, e.node, by_column, tb.dim);
  const int n = static_cast<int>(slices.front().size());
  for (const auto& slice : slices) {
    if (static_cast<int>(slice.size()) != n)
      slice.front()->node.fail(
          fmt::format("expected {} row blocks in every column slice, as in the first; got {}", n,
                      slice.size()));
  }
  const bool whole_rows = type == ShardingType::kTableWise || type == ShardingType::kColumnWise;
  if (whole_rows && n != 1)
    slices.front()[1]->node.fail(
        fmt::format("expected one shard per column slice holding all {} rows ({} sharding)",
                    tb.rows, e.sharding_type));
  const bool aligned = sim::workload::spans_host_block(type);
  std::vector<int> firsts;
  firsts.reserve(slices.size());
  for (const auto& slice : slices) firsts.push_back(check_row_blocks(slice, tb.rows, aligned));
  if (type == ShardingType::kRowWise) firsts.clear();  // every member holds a block
  if (by_column) s.column_shards = static_cast<int>(slices.size());
  s.ranks = std::move(firsts);
  if (!whole_rows) rec.row_blocks = n;
  return rec;
}

// Throws when the model's pooled or sequence tables have no module path, or share one.
void check_modules(const sim::workload::ModelConfig& model, const TorchRecModules& modules) {
  bool pooled = false, sequence = false;
  for (const auto& tb : model.tables)
    (tb.pooling == sim::workload::Pooling::kSequence ? sequence : pooled) = true;
  if ((pooled && modules.pooled.empty()) || (sequence && modules.sequence.empty()))
    throw Error("TorchRec plan: empty module path");
  if (pooled && sequence && modules.pooled == modules.sequence) {
    throw Error(fmt::format(
        "TorchRec plan: pooled and sequence tables cannot share module \"{}\" (a TorchRec "
        "module is either an EmbeddingBagCollection or an EmbeddingCollection)",
        modules.pooled));
  }
}

// Table `tb`'s shards as TorchRec cuts it, sharded as `s` over M ranks with host blocks of
// `block`; none for data_parallel. Throws for what a TorchRec plan cannot express.
std::vector<ShardOut> torchrec_shards(const sim::workload::EmbeddingTable& tb,
                                      const sim::workload::TableSharding& s, int M, int block) {
  if (s.hot_rows > 0) {
    throw Error(fmt::format(
        "TorchRec plan: table \"{}\" keeps {} hot rows data-parallel (hybrid embedding), "
        "which a TorchRec ShardingPlan cannot express",
        tb.name, s.hot_rows));
  }
  std::vector<ShardOut> shards;
  auto row_blocks = [&](int first, int n, std::int64_t col0, std::int64_t cols) {
    for (int i = 0; i < n; ++i) {
      const RowBlock b = row_block(tb.rows, n, i);
      shards.push_back({b.offset, col0, b.size, cols, first + i});
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
      if (s.ranks.size() > 1)
        throw Error(
            fmt::format("torchrec plan: table {} is table_row_wise over {} hosts; TorchRec's "
                        "table_row_wise keeps a table on one host (write it as row_wise or grid)",
                        tb.name, s.ranks.size()));
      row_blocks(s.ranks.empty() ? 0 : s.ranks[0], block, 0, tb.dim);
      break;
    case ShardingType::kGrid:
      for (int c = 0; c < s.column_shards; ++c)
        row_blocks(s.ranks.empty() ? 0 : s.ranks[static_cast<std::size_t>(c)], block, c * width,
                   width);
      break;
  }
  return shards;
}

// A table's entry of the TorchRec plan: sharding type, compute kernel, ranks and shards
// (all M ranks and no shards for data_parallel, as TorchRec writes it).
Json torchrec_entry(ShardingType type, const std::vector<ShardOut>& shards, int M,
                    const sim::topology::Cluster& cluster) {
  std::vector<int> ranks;
  Json shard_list = Json::array();
  for (const auto& x : shards) {
    ranks.push_back(x.rank);
    shard_list.push_back(
        {{"shard_offsets", {x.row0, x.col0}},
         {"shard_sizes", {x.rows, x.cols}},
         {"placement", fmt::format("rank:{}/cuda:{}", x.rank, cluster.gpu(x.rank).local_index)}});
  }
  const bool dp = type == ShardingType::kDataParallel;
  if (dp) {
    for (int r = 0; r < M; ++r) ranks.push_back(r);
  }
  Json entry = {{"sharding_type", torchrec_name(type)},
                {"compute_kernel", dp ? "dense" : "fused"},
                {"ranks", ranks}};
  if (!dp) entry["shards"] = std::move(shard_list);  // as TorchRec: none for data_parallel
  return entry;
}

// strait's estimates for table t's shards: lookup time and weight bytes of one shard.
Json shard_estimate(const TableCosts& costs, int t, const sim::workload::TableSharding& s, int M,
                    int block, int cp) {
  const double f = sim::workload::slice_column_fraction(s);
  const double r = s.type == ShardingType::kRowWise        ? 1.0 / M
                   : s.type == ShardingType::kTableRowWise ? 1.0 / block
                   : s.type == ShardingType::kGrid         ? 1.0 / block
                                                           : 1.0;
  return {{"shard_lookup_ms", costs.slice_seconds(t, f, r, M, cp) * 1e3},
          {"shard_weight_bytes", costs.slice_bytes(t, f, r)}};
}

// The "strait" block: what TorchRec's plan form drops (the group, the topology, estimates).
Json strait_block(const sim::workload::TrainingScenario& sc, Json estimates) {
  const int M = sc.layout.sparse.size;
  const int host =
      sc.cluster.hosts().empty() ? 1 : static_cast<int>(sc.cluster.hosts().front().gpus.size());
  Json dcs = Json::array();
  for (const auto& d : sc.cluster.datacenters()) dcs.push_back(d.name);
  return {{"note",
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
          {"estimates", std::move(estimates)}};
}

}  // namespace

Json torchrec_plan_json(const sim::workload::ParallelPlan& plan,
                        const sim::workload::TrainingScenario& sc, const TableCosts& costs,
                        const TorchRecModules& modules) {
  const auto& model = sc.model;
  const int M = sc.layout.sparse.size;
  const int block = host_block(sc.cluster, M);
  check_modules(model, modules);
  Json tables = Json::object();
  Json estimates = Json::object();
  for (std::size_t t = 0; t < model.tables.size(); ++t) {
    const auto& tb = model.tables[t];
    const auto& s = plan.sharding[t];
    const std::string& module =
        tb.pooling == sim::workload::Pooling::kSequence ? modules.sequence : modules.pooled;
    tables[module][tb.name] =
        torchrec_entry(s.type, torchrec_shards(tb, s, M, block), M, sc.cluster);
    estimates[tb.name] = shard_estimate(costs, static_cast<int>(t), s, M, block, sc.layout.cp.size);
  }
  return {{"plan", tables}, {"strait", strait_block(sc, std::move(estimates))}};
}

TorchRecFile read_torchrec_file(const std::string& path) {
  return read_torchrec_file(load_config(path));
}

TorchRecFile read_torchrec_file(const ConfigNode& root) { return read_file(root, {}); }

TorchRecPlan read_torchrec_plan(const std::string& path, const sim::workload::ModelConfig& model) {
  return parse_torchrec_plan(load_config(path), model);
}

TorchRecPlan parse_torchrec_plan(const ConfigNode& node, const sim::workload::ModelConfig& model) {
  TorchRecPlan out;
  out.sharding.assign(model.tables.size(), {});
  out.tables.resize(model.tables.size());
  std::size_t t = 0;  // the model table of the entry being read
  EntryChecks checks;
  checks.before = [&](const std::string& table, const ConfigNode& entry) {
    t = model_table(table, entry, model, out.tables);
  };
  checks.after = [&](const TorchRecEntry& entry) {
    out.tables[t] = tile_table(entry, model.tables[t], out.sharding[t]);
  };
  out.group_size = read_file(node, checks).group_size;
  for (std::size_t i = 0; i < model.tables.size(); ++i) {
    if (!out.tables[i].entry)
      node.at("plan").fail(
          fmt::format("expected every model table; \"{}\" is missing", model.tables[i].name));
  }
  return out;
}

sim::workload::ParallelPlan apply_torchrec_plan(Json& document,
                                                const sim::workload::ParallelPlan& plan,
                                                const TorchRecPlan& torchrec,
                                                const sim::workload::ModelConfig& model,
                                                const sim::topology::Cluster* cluster) {
  // The group the file's ranks index: the "strait" block's, else the whole world.
  const int M = torchrec.group_size > 0 ? torchrec.group_size
                : plan.ranks > 0        ? plan.ranks
                : cluster               ? cluster->gpu_count()
                                        : 0;
  const std::string group =
      torchrec.group_size > 0
          ? fmt::format("the {}-rank model-parallel group (the \"strait\" block's group_size)", M)
      : plan.ranks > 0 ? fmt::format("the {}-rank world (the plan's ranks)", M)
                       : fmt::format("the {}-rank world (every GPU of the cluster)", M);
  const int block = cluster && M > 0 ? host_block(*cluster, M) : 0;
  for (std::size_t t = 0; t < torchrec.tables.size(); ++t) {
    const auto& rec = torchrec.tables[t];
    if (!rec.entry) continue;
    const auto type = torchrec.sharding[t].type;
    if (type == ShardingType::kRowWise && M > 0 && rec.row_blocks != M)
      rec.entry->at("shards").fail(fmt::format("expected {} row blocks, one per rank of {}; got {}",
                                               M, group, rec.row_blocks));
    if (sim::workload::spans_host_block(type) && block > 0 && rec.row_blocks != block)
      rec.entry->at("shards").fail(fmt::format(
          "expected {} row blocks per column slice, one per GPU of a {}-GPU host block of {}; "
          "got {}",
          block, block, group, rec.row_blocks));
    for (const auto& r : rec.ranks) {
      if (M > 0 && r.rank >= M)
        r.node.fail(fmt::format("expected a rank of {}, 0..{}; got {}", group, M - 1, r.rank));
    }
  }
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
