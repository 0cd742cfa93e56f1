#include "sim/cost/efficiency_table.hpp"

#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "sim/core/log2_interpolation.hpp"

namespace strait::sim::cost {
namespace {

bool valid_efficiency(double e) { return e > 0 && e <= 1; }

}  // namespace

EfficiencyTable::EfficiencyTable(std::vector<Point> points) : points_(std::move(points)) {
  if (points_.empty()) throw std::invalid_argument("an efficiency table needs at least one point");
  for (std::size_t i = 0; i < points_.size(); ++i) {
    const Point& p = points_[i];
    if (!(p.key > 0) || !std::isfinite(p.key)) {
      throw std::invalid_argument("efficiency table keys must be positive and finite");
    }
    if (i > 0 && !(p.key > points_[i - 1].key)) {
      throw std::invalid_argument("efficiency table keys must be strictly increasing");
    }
    if (!valid_efficiency(p.efficiency)) {
      throw std::invalid_argument("efficiencies must be in (0, 1]");
    }
    log2_keys_.push_back(std::log2(p.key));
    values_.push_back(p.efficiency);
  }
}

EfficiencyTable EfficiencyTable::constant(double efficiency) {
  return EfficiencyTable({Point{1.0, efficiency}});
}

EfficiencyTable EfficiencyTable::from_config(const ConfigNode& node, const std::string& key_name) {
  auto read_efficiency = [](const ConfigNode& n) {
    const double e = n.as_number();
    if (!valid_efficiency(e)) n.fail(fmt::format("expected an efficiency in (0, 1], got {}", e));
    return e;
  };
  if (node.is_number()) return constant(read_efficiency(node));
  if (!node.is_object()) {
    node.fail(fmt::format(
        "expected an efficiency in (0, 1] or a table {{\"key\": \"{}\", \"points\": [[key, "
        "efficiency], ...]}}",
        key_name));
  }
  node.allow_only({"key", "points"});
  const ConfigNode key = node.at("key");
  if (key.as_string() != key_name) {
    key.fail(fmt::format(R"(expected "{}" (the key of this table), got "{}")", key_name,
                         key.as_string()));
  }
  const ConfigNode list = node.at("points");
  if (list.size() == 0) list.fail("expected at least one [key, efficiency] point");
  std::vector<Point> points;
  for (const ConfigNode& entry : list.elements()) {
    if (!entry.is_array() || entry.size() != 2) entry.fail("expected a [key, efficiency] pair");
    const ConfigNode k = entry.at(std::size_t{0});
    const double key_value = k.as_number();
    if (!(key_value > 0)) k.fail(fmt::format("expected a positive key, got {}", key_value));
    if (!points.empty() && !(key_value > points.back().key)) {
      k.fail(fmt::format("expected keys in strictly increasing order, got {} after {}", key_value,
                         points.back().key));
    }
    points.push_back({key_value, read_efficiency(entry.at(std::size_t{1}))});
  }
  return EfficiencyTable(std::move(points));
}

double EfficiencyTable::at(double key) const {
  if (!(key > 0)) return points_.front().efficiency;
  return at_log2(std::log2(key));
}

double EfficiencyTable::at_log2(double log2_key) const {
  if (points_.empty()) throw std::logic_error("EfficiencyTable used before being built");
  return interpolate_log2(log2_keys_, values_, log2_key);
}

Json to_json(const EfficiencyTable& table, const std::string& key_name) {
  if (table.points().size() == 1) return table.points().front().efficiency;
  Json points = Json::array();
  for (const auto& p : table.points()) points.push_back({p.key, p.efficiency});
  return {{"key", key_name}, {"points", points}};
}

}  // namespace strait::sim::cost
