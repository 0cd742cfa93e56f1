#include "planner/constraints.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "planner/plan_document.hpp"
#include "sim/core/error.hpp"

namespace strait::planner {
namespace {

using sim::workload::ShardingType;

/// True when some block of `dim` holds ranks of two datacenters (blocks are contiguous).
bool crosses_datacenters(const sim::workload::GroupDimension& dim,
                         const std::vector<int>& rank_dc) {
  if (dim.size <= 1) return false;
  for (std::size_t r = 0; r < rank_dc.size(); ++r) {
    const std::size_t first = r - r % static_cast<std::size_t>(dim.size);
    if (rank_dc[r] != rank_dc[first]) return true;
  }
  return false;
}

/// The fix document with "/sparse/default" written out for every table it does not name.
Json expanded_fix(const Json& fix, const sim::workload::ModelConfig& model) {
  Json f = fix;
  if (!f.contains("sparse") || !f["sparse"].contains("default")) return f;
  Json& tables = f["sparse"]["tables"];
  if (!tables.is_object()) tables = Json::object();
  for (const auto& t : model.tables) {
    if (!tables.contains(t.name)) tables[t.name] = f["sparse"]["default"];
  }
  f["sparse"].erase("default");
  return f;
}

}  // namespace

Constraints Constraints::none(const sim::workload::ModelConfig& model) {
  Constraints c;
  c.forbidden.resize(model.tables.size());
  return c;
}

Constraints Constraints::load(const std::string& path, const sim::workload::ModelConfig& model) {
  return from_config(load_config(path), model);
}

Constraints Constraints::from_config(const ConfigNode& node,
                                     const sim::workload::ModelConfig& model) {
  node.allow_only({"description", "fix", "forbid_sharding", "memory_headroom",
                   "max_cross_dc_bytes_per_step", "may_span_datacenters", "objective"});
  Constraints c = none(model);
  c.file = node.file();
  if (auto fix = node.find("fix")) {
    if (!fix->is_object()) fix->fail("expected an object in the plan format (plan.hpp)");
    // Parsing the fixed part as a plan checks its keys, values and table names.
    sim::workload::ParallelPlan::from_config(*fix, model);
    c.fix = *fix;
  }
  if (auto forbid = node.find("forbid_sharding")) {
    std::vector<std::string> allowed = model.table_names();
    allowed.emplace_back("*");
    forbid->allow_only(allowed);
    for (const auto& key : forbid->keys()) {
      const auto list = forbid->at(key);
      std::vector<ShardingType> types;
      for (const auto& e : list.elements()) types.push_back(sim::workload::sharding_type(e));
      for (std::size_t t = 0; t < model.tables.size(); ++t) {
        if (key != "*" && model.tables[t].name != key) continue;
        c.forbidden[t].insert(c.forbidden[t].end(), types.begin(), types.end());
      }
    }
    for (std::size_t t = 0; t < model.tables.size(); ++t) {
      bool all = true;
      for (const auto& [type, name] : enum_names(ShardingType{})) {
        all = all &&
              std::find(c.forbidden[t].begin(), c.forbidden[t].end(), type) != c.forbidden[t].end();
      }
      if (all) {
        forbid->fail(
            fmt::format("every sharding type is forbidden for table \"{}\"; expected at "
                        "least one allowed",
                        model.tables[t].name));
      }
    }
  }
  if (node.has("memory_headroom")) {
    c.memory_headroom = static_cast<double>(node.bytes("memory_headroom"));
    if (c.memory_headroom < 0) node.at("memory_headroom").fail("expected bytes >= 0");
  }
  if (node.has("max_cross_dc_bytes_per_step")) {
    c.max_cross_dc_bytes = static_cast<double>(node.bytes("max_cross_dc_bytes_per_step"));
    c.max_cross_dc_node = node.at("max_cross_dc_bytes_per_step");
    if (c.max_cross_dc_bytes < 0) c.max_cross_dc_node->fail("expected bytes >= 0");
  }
  if (auto span = node.find("may_span_datacenters")) {
    c.span_sparse = c.span_cp = c.span_fsdp = c.span_expert = false;
    for (const auto& e : span->elements()) {
      const std::string v = e.as_string();
      if (v == "sparse")
        c.span_sparse = true;
      else if (v == "context_parallel")
        c.span_cp = true;
      else if (v == "fsdp")
        c.span_fsdp = true;
      else if (v == "expert")
        c.span_expert = true;
      else
        e.fail("expected one of sparse, context_parallel, fsdp, expert");
    }
  }
  c.objective = read_enum_or(node, "objective", c.objective);
  return c;
}

bool Constraints::fixed(std::string_view section, std::string_view key) const {
  if (!fix || !fix->has(section)) return false;
  if (key.empty()) return true;
  const auto s = fix->at(section);
  return !s.is_object() || s.has(key);
}

std::string Constraints::violation(const Json& document, const sim::workload::ParallelPlan& plan,
                                   const sim::workload::Layout& layout,
                                   const sim::topology::Cluster& cluster,
                                   const sim::workload::ModelConfig& model) const {
  const std::string where = file.empty() ? "<constraints>" : file;
  for (std::size_t t = 0; t < model.tables.size(); ++t) {
    if (forbids(static_cast<int>(t), plan.sharding[t].type)) {
      return fmt::format("{}: /forbid_sharding: table \"{}\" is {}", where, model.tables[t].name,
                         sim::workload::to_string(plan.sharding[t].type));
    }
  }
  const std::pair<const sim::workload::GroupDimension*, const char*> spans[] = {
      {span_sparse ? nullptr : &layout.sparse, "sparse model-parallel"},
      {span_cp ? nullptr : &layout.cp, "context-parallel"},
      {span_fsdp || plan.dense != sim::workload::DenseParallelism::kFsdp ? nullptr : &layout.fsdp,
       "FSDP"},
      {span_expert ? nullptr : &layout.expert, "expert-parallel"}};
  for (const auto& [dim, name] : spans) {
    if (dim && crosses_datacenters(*dim, layout.rank_dc)) {
      return fmt::format(
          "{}: /may_span_datacenters: the {} group of {} ranks crosses a datacenter boundary",
          where, name, dim->size);
    }
  }
  if (!fix) return "";
  const Json pins = expanded_fix(fix->json(), model);
  Json pinned = document;
  pinned.merge_patch(pins);
  Json want;
  try {
    const auto pinned_plan = parse_plan(pinned, where, model);
    want = plan_summary(pinned_plan, sim::workload::Layout::build(cluster, pinned_plan), model);
  } catch (const ConfigError& e) {
    return fmt::format("{}: /fix: the fixed values do not combine with this plan: {}", where,
                       e.what());
  }
  const Json have = plan_summary(plan, layout, model);
  const Json patch = Json::diff(have, want);
  if (!patch.empty()) {
    const std::string path = patch.front()["path"].get<std::string>();
    const Json::json_pointer p(path);
    return fmt::format("{}: /fix{}: expected {}, the plan has {}", where, path,
                       want.contains(p) ? want.at(p).dump() : "nothing",
                       have.contains(p) ? have.at(p).dump() : "nothing");
  }
  // Explicit slice owners, when the fix names them.
  if (pins.contains("sparse") && pins["sparse"].contains("tables")) {
    for (std::size_t t = 0; t < model.tables.size(); ++t) {
      const Json& f = pins["sparse"]["tables"].value(model.tables[t].name, Json());
      if (f.is_object() && f.contains("ranks") &&
          f["ranks"].get<std::vector<int>>() != plan.sharding[t].ranks) {
        return fmt::format("{}: /fix/sparse/tables/{}/ranks: expected {}, the plan places it on {}",
                           where, model.tables[t].name, f["ranks"].dump(),
                           Json(plan.sharding[t].ranks).dump());
      }
    }
  }
  return "";
}

bool Constraints::forbids(int table, ShardingType type) const {
  const auto& f = forbidden[static_cast<std::size_t>(table)];
  return std::find(f.begin(), f.end(), type) != f.end();
}

}  // namespace strait::planner
