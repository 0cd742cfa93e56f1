#include "sim/cost/collective_factors.hpp"

#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace strait::sim::cost {
namespace {

std::string microseconds(Time t) { return fmt::format("{:.6g} us", t.to_s() * 1e6); }

}  // namespace

CollectiveFactors CollectiveFactors::from_config(const ConfigNode& node) {
  node.allow_only({"link_classes", "ops"});
  CollectiveFactors f;
  f.present = true;
  if (auto classes = node.find("link_classes")) {
    std::vector<std::string> names;
    names.reserve(topology::kLinkClassCount);
    for (int c = 0; c < topology::kLinkClassCount; ++c) {
      names.emplace_back(topology::to_string(static_cast<topology::LinkClass>(c)));
    }
    classes->allow_only(names);
    for (int c = 0; c < topology::kLinkClassCount; ++c) {
      const auto entry = classes->find(names[static_cast<std::size_t>(c)]);
      if (!entry) continue;
      entry->allow_only({"bandwidth_efficiency", "latency"});
      LinkClassFactors lf;
      const ConfigNode eff = entry->at("bandwidth_efficiency");
      lf.bandwidth_efficiency = eff.as_number();
      if (!(lf.bandwidth_efficiency > 0 && lf.bandwidth_efficiency <= 1)) {
        eff.fail(fmt::format("expected a fraction in (0, 1], got {}", lf.bandwidth_efficiency));
      }
      lf.latency = entry->duration("latency");
      f.link_classes[static_cast<std::size_t>(c)] = lf;
    }
  }
  if (auto ops = node.find("ops")) {
    for (const std::string& name : ops->keys()) {
      const auto op = network::parse_collective_op(name);
      const ConfigNode entry = ops->at(name);
      if (!op) {
        entry.fail(fmt::format("unknown collective \"{}\"; expected one of {}", name,
                               network::collective_op_names()));
      }
      entry.allow_only({"base_latency", "bandwidth_scale"});
      network::OpCalibration c;
      c.base_latency = entry.duration("base_latency");
      const auto scale = EfficiencyTable::from_config(entry.at("bandwidth_scale"), "bytes");
      for (const auto& point : scale.points()) {
        c.log2_bytes.push_back(std::log2(point.key));
        c.scales.push_back(point.efficiency);
      }
      f.ops[static_cast<std::size_t>(*op)] = c;
    }
  }
  return f;
}

Json to_json(const CollectiveFactors& f) {
  Json classes = Json::object(), ops = Json::object();
  for (int c = 0; c < topology::kLinkClassCount; ++c) {
    if (const auto& lf = f.link_classes[static_cast<std::size_t>(c)]) {
      classes[topology::to_string(static_cast<topology::LinkClass>(c))] = {
          {"bandwidth_efficiency", lf->bandwidth_efficiency},
          {"latency", microseconds(lf->latency)}};
    }
  }
  for (int o = 0; o < network::kCollectiveOpCount; ++o) {
    const auto& c = f.ops[static_cast<std::size_t>(o)];
    if (c.neutral()) continue;
    std::vector<EfficiencyTable::Point> points;
    for (std::size_t i = 0; i < c.scales.size(); ++i) {
      points.push_back({std::exp2(c.log2_bytes[i]), c.scales[i]});
    }
    ops[network::to_string(static_cast<network::CollectiveOp>(o))] = {
        {"base_latency", microseconds(c.base_latency)},
        {"bandwidth_scale",
         points.empty() ? Json(1.0) : to_json(EfficiencyTable(points), "bytes")}};
  }
  return {{"link_classes", classes}, {"ops", ops}};
}

}  // namespace strait::sim::cost
