#include "sim/cost/calibration_profile.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>

#include <fmt/format.h>

namespace strait::sim::cost {
namespace {

bool valid_implementation_name(const std::string& name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
  });
}

KernelEfficiency read_kernel(const ConfigNode& node, KernelKind kind, bool named) {
  std::vector<std::string> keys = {"implementation", "provenance", "compute_efficiency",
                                   "memory_efficiency"};
  if (is_embedding(kind)) keys.insert(keys.end(), {"repeat_hit_rate", "call_latency"});
  if (is_attention(kind)) keys.insert(keys.end(), {"tile_rows", "compute_efficiency_by_head_dim"});
  node.allow_only(keys);
  const std::string key = table_key_name(kind);
  KernelEfficiency out;
  if (named && !node.has("implementation"))
    node.fail(
        "missing required key \"implementation\" (every one of a family's "
        "implementations is named)");
  if (auto name = node.find("implementation")) {
    out.implementation = name->as_string();
    if (!valid_implementation_name(out.implementation))
      name->fail(
          fmt::format("expected an implementation name of a-z, 0-9, '-', '_' and '.', got \"{}\"",
                      out.implementation));
  }
  if (auto source = node.find("provenance")) out.provenance = source->as_string();
  if (auto by_dim = node.find("compute_efficiency_by_head_dim")) {
    if (node.has("compute_efficiency"))
      node.fail("expected one of \"compute_efficiency\" or \"compute_efficiency_by_head_dim\"");
    if (!by_dim->is_object()) by_dim->fail("expected an object of head dimension -> table");
    for (const std::string& dim_text : by_dim->keys()) {
      const ConfigNode table = by_dim->at(dim_text);
      int dim = 0;
      const auto [end, ec] =
          std::from_chars(dim_text.data(), dim_text.data() + dim_text.size(), dim);
      if (ec != std::errc() || end != dim_text.data() + dim_text.size() || dim < 1 || dim > 4096)
        table.fail(
            fmt::format("expected a head dimension 1..4096 as the key, got \"{}\"", dim_text));
      out.compute_by_head_dim.emplace_back(dim, EfficiencyTable::from_config(table, key));
    }
    if (out.compute_by_head_dim.empty()) by_dim->fail("expected at least one head dimension");
    std::sort(out.compute_by_head_dim.begin(), out.compute_by_head_dim.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    // The plain table stands for the largest head dimension (what code that reads one table
    // sees; the cost model reads the per-dimension ones).
    out.compute = out.compute_by_head_dim.back().second;
  } else {
    out.compute = EfficiencyTable::from_config(node.at("compute_efficiency"), key);
  }
  out.memory = EfficiencyTable::from_config(node.at("memory_efficiency"), key);
  if (is_embedding(kind)) {
    const ConfigNode h = node.at("repeat_hit_rate");
    out.repeat_hit_rate = h.as_number();
    if (out.repeat_hit_rate < -1 || out.repeat_hit_rate > 1) {
      h.fail(fmt::format("expected a number in [-1, 1], got {}", out.repeat_hit_rate));
    }
    if (auto c = node.find("call_latency")) out.call_latency = c->as_duration();
  }
  if (auto tile = node.find("tile_rows")) {
    const std::int64_t rows = tile->as_integer();
    if (rows > 256 || attention_tile_index(static_cast<int>(rows)) < 0) {
      tile->fail(fmt::format("expected a query tile of 16, 32, 64, 128 or 256 rows, got {}", rows));
    }
    out.tile_rows = static_cast<int>(rows);
  }
  return out;
}

// One family: an implementation object, or {"default": name, "implementations": [...]}.
// Returns the one in use first, then the alternatives.
std::vector<KernelEfficiency> read_family(const ConfigNode& node, KernelKind kind) {
  if (!node.has("implementations")) return {read_kernel(node, kind, false)};
  node.allow_only({"default", "implementations"});
  const ConfigNode list = node.at("implementations");
  if (list.size() == 0) list.fail("expected at least one implementation");
  std::vector<KernelEfficiency> all;
  for (const ConfigNode& e : list.elements()) {
    KernelEfficiency k = read_kernel(e, kind, true);
    for (const auto& seen : all) {
      if (seen.implementation == k.implementation)
        e.at("implementation")
            .fail(fmt::format("implementation \"{}\" is listed twice", k.implementation));
    }
    all.push_back(std::move(k));
  }
  const ConfigNode def = node.at("default");
  const std::string name = def.as_string();
  const auto it = std::find_if(all.begin(), all.end(),
                               [&](const KernelEfficiency& k) { return k.implementation == name; });
  if (it == all.end()) {
    std::string have;
    for (const auto& k : all) have += (have.empty() ? "" : ", ") + k.implementation;
    def.fail(
        fmt::format("expected one of the listed implementations ({}), got \"{}\"", have, name));
  }
  std::rotate(all.begin(), it, it + 1);
  return all;
}

Json kernel_json(const KernelEfficiency& e, KernelKind kind) {
  Json k = Json::object();
  if (!e.implementation.empty()) k["implementation"] = e.implementation;
  if (!e.provenance.empty()) k["provenance"] = e.provenance;
  if (e.compute_by_head_dim.empty()) {
    k["compute_efficiency"] = to_json(e.compute, table_key_name(kind));
  } else {
    Json by_dim = Json::object();
    for (const auto& [dim, table] : e.compute_by_head_dim)
      by_dim[std::to_string(dim)] = to_json(table, table_key_name(kind));
    k["compute_efficiency_by_head_dim"] = by_dim;
  }
  k["memory_efficiency"] = to_json(e.memory, table_key_name(kind));
  if (is_embedding(kind)) {
    k["repeat_hit_rate"] = e.repeat_hit_rate;
    if (e.call_latency > Time::zero())
      k["call_latency"] = fmt::format("{:.6g} us", e.call_latency.to_s() * 1e6);
  }
  if (is_attention(kind) && e.tile_rows > 0) k["tile_rows"] = e.tile_rows;
  return k;
}

Provenance read_provenance(const ConfigNode& node) {
  node.allow_only(
      {"status", "summary", "sources", "machine", "date", "versions", "validation", "records"});
  Provenance p;
  for (const char* key : {"machine", "date", "versions", "validation", "records"}) {
    if (node.has(key)) p.fit[key] = node.at(key).json();
  }
  p.status = node.choice("status", {"estimated", "measured", "fitted"});
  p.summary = node.string("summary");
  const ConfigNode sources = node.at("sources");
  if (sources.size() == 0) sources.fail("expected at least one source");
  for (const ConfigNode& s : sources.elements()) p.sources.push_back(s.as_string());
  return p;
}

}  // namespace

const char* table_key_name(KernelKind k) {
  switch (k) {
    case KernelKind::kGemm:
    case KernelKind::kGemmBackward:
      return "mnk_cube_root";
    case KernelKind::kJaggedAttention:
    case KernelKind::kPaddedAttention:
    case KernelKind::kJaggedAttentionBackward:
    case KernelKind::kPaddedAttentionBackward:
      return "mean_length";
    case KernelKind::kEmbeddingLookup:
    case KernelKind::kEmbeddingUpdate:
      return "row_bytes";
    case KernelKind::kElementwise:
    case KernelKind::kOptimizer:
      return "hbm_bytes";
  }
  return "";
}

double KernelEfficiency::compute_efficiency(double log2_key, int head_dim) const {
  if (compute_by_head_dim.empty() || head_dim <= 0) return compute.at_log2(log2_key);
  const auto& tables = compute_by_head_dim;
  if (head_dim <= tables.front().first) return tables.front().second.at_log2(log2_key);
  if (head_dim >= tables.back().first) return tables.back().second.at_log2(log2_key);
  std::size_t hi = 1;
  while (tables[hi].first < head_dim) ++hi;
  const auto& [d0, t0] = tables[hi - 1];
  const auto& [d1, t1] = tables[hi];
  const double f = (std::log2(head_dim) - std::log2(d0)) / (std::log2(d1) - std::log2(d0));
  return t0.at_log2(log2_key) + f * (t1.at_log2(log2_key) - t0.at_log2(log2_key));
}

std::vector<std::string> CalibrationProfile::implementations(KernelKind k) const {
  std::vector<std::string> names = {kernel(k).implementation};
  for (const auto& o : alternatives[static_cast<std::size_t>(k)]) names.push_back(o.implementation);
  return names;
}

void CalibrationProfile::choose(KernelKind k, const std::string& name) {
  auto& in_use = kernels[static_cast<std::size_t>(k)];
  if (in_use.implementation == name) return;
  auto& others = alternatives[static_cast<std::size_t>(k)];
  const auto it = std::find_if(others.begin(), others.end(),
                               [&](const KernelEfficiency& e) { return e.implementation == name; });
  if (it == others.end()) {
    std::string have;
    for (const auto& n : implementations(k)) have += (have.empty() ? "\"" : ", \"") + n + "\"";
    throw CostError(fmt::format("the {} profile ({}) has no {} implementation \"{}\" (it has {})",
                                device.gpu_type, file, to_string(k), name, have));
  }
  std::swap(in_use, *it);
}

CalibrationProfile CalibrationProfile::from_config(const ConfigNode& root) {
  root.allow_only({"gpu_type", "provenance", "device", "kernels", "collectives"});
  CalibrationProfile profile;
  profile.file = root.file();
  const ConfigNode gpu_type = root.at("gpu_type");
  if (gpu_type.as_string().empty()) gpu_type.fail("expected a non-empty GPU type name");
  profile.provenance = read_provenance(root.at("provenance"));
  profile.device = DeviceSpec::from_config(root.at("device"), gpu_type.as_string());

  const ConfigNode kernels = root.at("kernels");
  std::vector<std::string> names;
  names.reserve(kKernelKindCount);
  for (int i = 0; i < kKernelKindCount; ++i) {
    names.emplace_back(to_string(static_cast<KernelKind>(i)));
  }
  kernels.allow_only(names);
  for (int i = 0; i < kKernelKindCount; ++i) {
    const auto kind = static_cast<KernelKind>(i);
    // A profile without a backward family (GEMM, attention) costs the backward with the
    // forward family's efficiencies (the profiles written before the split).
    const KernelKind source = kernels.has(to_string(kind)) ? kind : forward_kind(kind);
    auto family = read_family(kernels.at(to_string(source)), source);
    profile.kernels[static_cast<std::size_t>(i)] = std::move(family.front());
    family.erase(family.begin());
    profile.alternatives[static_cast<std::size_t>(i)] = std::move(family);
  }
  if (auto collectives = root.find("collectives")) {
    profile.collectives = CollectiveFactors::from_config(*collectives);
  }
  return profile;
}

Json to_json(const CalibrationProfile& profile) {
  Json provenance = {{"status", profile.provenance.status},
                     {"summary", profile.provenance.summary},
                     {"sources", profile.provenance.sources}};
  for (const auto& [key, value] : profile.provenance.fit.items()) provenance[key] = value;
  Json kernels = Json::object();
  for (int i = 0; i < kKernelKindCount; ++i) {
    const auto kind = static_cast<KernelKind>(i);
    const KernelEfficiency& e = profile.kernel(kind);
    const auto& others = profile.alternatives[static_cast<std::size_t>(i)];
    Json k = kernel_json(e, kind);
    if (!others.empty()) {
      Json list = Json::array({k});
      for (const auto& o : others) list.push_back(kernel_json(o, kind));
      k = {{"default", e.implementation}, {"implementations", list}};
    }
    kernels[to_string(kind)] = k;
  }
  Json out = {{"gpu_type", profile.device.gpu_type},
              {"provenance", provenance},
              {"device", to_json(profile.device)},
              {"kernels", kernels}};
  if (profile.collectives.present) out["collectives"] = to_json(profile.collectives);
  return out;
}

CalibrationProfile load_profile(const std::string& path) {
  return CalibrationProfile::from_config(load_config(path));
}

}  // namespace strait::sim::cost
