#pragma once
// Per-point filters of a sweep: {"axis": NAME, "op": OP, "value": V} or
// {"axis": NAME, "op": OP, "other_axis": NAME2}; OP is one of == != < <= > >= (numbers
// compare numerically; strings and booleans only with == and !=), or in / not_in with
// "value" a list. A point is kept when every filter holds. A filter with "if" (a condition
// of the same form) applies only to the points where that condition holds.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/core/config_node.hpp"

namespace strait::sweep::detail {

class PointFilter {
 public:
  /// Reads one filter; axis names are checked against `axis_names`. Throws ConfigError.
  static PointFilter from_config(const ConfigNode& node,
                                 const std::vector<std::string>& axis_names);

  /// Whether a point with these axis values (in axis order) passes. Throws ConfigError at
  /// the filter when the values cannot be compared with its operator.
  bool keeps(const std::vector<Json>& values) const;

 private:
  explicit PointFilter(ConfigNode node) : node_(std::move(node)) {}

  ConfigNode node_;
  std::string op_;
  std::size_t axis_ = 0;
  std::optional<std::size_t> other_axis_;
  Json value_;
  std::shared_ptr<const PointFilter> if_;  // the filter holds where this does not
};

}  // namespace strait::sweep::detail
