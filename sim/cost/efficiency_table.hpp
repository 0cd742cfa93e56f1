#pragma once
// EfficiencyTable: achieved fraction of a peak (FLOP/s or HBM bandwidth) as a function of
// one size key, from a few measured or estimated points.
//
// Between points the efficiency is interpolated linearly in log2(key): kernel efficiency
// curves are smooth in the logarithm of size (cuBLAS, FBGEMM and STREAM-style curves all
// rise over decades of size and flatten). Outside the points it is clamped to the first or
// last point; a key <= 0 takes the first point. A table of one point is a constant.
//
// In a profile file a table is {"key": "<key name>", "points": [[key, efficiency], ...]}
// with keys > 0 strictly increasing and efficiencies in (0, 1]; a bare number is a constant.

#include <string>
#include <utility>
#include <vector>

#include "sim/core/config_node.hpp"

namespace strait::sim::cost {

class EfficiencyTable {
 public:
  struct Point {
    double key = 0;         // > 0, in the unit of the table's key
    double efficiency = 0;  // in (0, 1]
  };

  EfficiencyTable() = default;
  /// Builds a table from points; throws std::invalid_argument unless the keys are > 0 and
  /// strictly increasing and every efficiency is in (0, 1] (there must be at least one).
  explicit EfficiencyTable(std::vector<Point> points);
  /// A constant efficiency (one point).
  static EfficiencyTable constant(double efficiency);
  /// Reads a number or a {"key", "points"} table whose "key" must equal `key_name`;
  /// every violation is a ConfigError naming the file and the JSON pointer.
  static EfficiencyTable from_config(const ConfigNode& node, const std::string& key_name);

  /// Efficiency at `key` (interpolated in log2(key), clamped at the ends).
  double at(double key) const;
  /// Efficiency at a key given by its base-2 logarithm (for keys too large for a double's
  /// comfort, such as m*n*k, or computed in the log domain to stay exact).
  double at_log2(double log2_key) const;

  const std::vector<Point>& points() const { return points_; }

 private:
  std::vector<Point> points_;
  std::vector<double> log2_keys_;
  std::vector<double> values_;  // the efficiencies, beside their keys
};

/// A one-point table as a number, else {"key": key_name, "points": [[key, efficiency], ...]}.
Json to_json(const EfficiencyTable& table, const std::string& key_name);

}  // namespace strait::sim::cost
