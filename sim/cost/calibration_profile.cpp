#include "sim/cost/calibration_profile.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace strait::sim::cost {
namespace {

KernelEfficiency read_kernel(const ConfigNode& node, KernelKind kind) {
  if (is_embedding(kind)) {
    node.allow_only({"implementation", "compute_efficiency", "memory_efficiency", "repeat_hit_rate",
                     "call_latency"});
  } else if (is_attention(kind)) {
    node.allow_only({"implementation", "compute_efficiency", "memory_efficiency", "tile_rows"});
  } else {
    node.allow_only({"implementation", "compute_efficiency", "memory_efficiency"});
  }
  const std::string key = table_key_name(kind);
  KernelEfficiency out;
  if (auto name = node.find("implementation")) {
    out.implementation = name->as_string();
    const bool valid =
        !out.implementation.empty() &&
        std::all_of(out.implementation.begin(), out.implementation.end(), [](char c) {
          return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
                 c == '.';
        });
    if (!valid)
      name->fail(
          fmt::format("expected an implementation name of a-z, 0-9, '-', '_' and '.', got \"{}\"",
                      out.implementation));
  }
  out.compute = EfficiencyTable::from_config(node.at("compute_efficiency"), key);
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
    out.tile_rows = static_cast<int>(tile->as_integer());
    if (attention_tile_index(out.tile_rows) < 0) {
      tile->fail(fmt::format("expected a query tile of 16, 32, 64, 128 or 256 rows, got {}",
                             out.tile_rows));
    }
  }
  return out;
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
    profile.kernels[static_cast<std::size_t>(i)] =
        read_kernel(kernels.at(to_string(source)), source);
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
    Json k = {{"compute_efficiency", to_json(e.compute, table_key_name(kind))},
              {"memory_efficiency", to_json(e.memory, table_key_name(kind))}};
    if (!e.implementation.empty()) k["implementation"] = e.implementation;
    if (is_embedding(kind)) {
      k["repeat_hit_rate"] = e.repeat_hit_rate;
      if (e.call_latency > Time::zero())
        k["call_latency"] = fmt::format("{:.6g} us", e.call_latency.to_s() * 1e6);
    }
    if (is_attention(kind) && e.tile_rows > 0) k["tile_rows"] = e.tile_rows;
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
