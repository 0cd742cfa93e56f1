#include "sweep/detail/point_filter.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace strait::sweep::detail {
namespace {

std::size_t axis_index(const ConfigNode& node, const std::vector<std::string>& axis_names) {
  const auto name = node.as_string();
  const auto it = std::find(axis_names.begin(), axis_names.end(), name);
  if (it == axis_names.end()) {
    const auto hint = closest_match(name, axis_names);
    node.fail(hint.empty() ? fmt::format("unknown axis '{}'", name)
                           : fmt::format("unknown axis '{}' (did you mean '{}'?)", name, hint));
  }
  return static_cast<std::size_t>(it - axis_names.begin());
}

}  // namespace

PointFilter PointFilter::from_config(const ConfigNode& node,
                                     const std::vector<std::string>& axis_names) {
  node.allow_only({"axis", "op", "value", "other_axis", "if"});
  PointFilter f(node);
  if (auto condition = node.find("if"))
    f.if_ = std::make_shared<const PointFilter>(from_config(*condition, axis_names));
  f.axis_ = axis_index(node.at("axis"), axis_names);
  f.op_ = node.choice("op", {"==", "!=", "<", "<=", ">", ">=", "in", "not_in"});
  if (node.has("value") == node.has("other_axis"))
    node.fail("expected exactly one of \"value\" or \"other_axis\"");
  if (auto other = node.find("other_axis")) {
    if (f.op_ == "in" || f.op_ == "not_in")
      other->fail("expected \"value\" (a list) with in / not_in");
    f.other_axis_ = axis_index(*other, axis_names);
  } else {
    f.value_ = node.at("value").json();
    if ((f.op_ == "in" || f.op_ == "not_in") && !f.value_.is_array())
      node.at("value").fail("expected a list of values for in / not_in");
  }
  return f;
}

bool PointFilter::keeps(const std::vector<Json>& values) const {
  if (if_ && !if_->keeps(values)) return true;
  const Json& left = values.at(axis_);
  const Json& right = other_axis_ ? values.at(*other_axis_) : value_;
  if (op_ == "in" || op_ == "not_in") {
    const bool found = std::find(right.begin(), right.end(), left) != right.end();
    return found == (op_ == "in");
  }
  if (op_ == "==") return left == right;
  if (op_ == "!=") return left != right;
  if (!left.is_number() || !right.is_number()) {
    node_.fail(fmt::format("cannot compare {} {} {}: '{}' needs numbers", left.dump(), op_,
                           right.dump(), op_));
  }
  const double a = left.get<double>(), b = right.get<double>();
  if (op_ == "<") return a < b;
  if (op_ == "<=") return a <= b;
  if (op_ == ">") return a > b;
  return a >= b;
}

}  // namespace strait::sweep::detail
