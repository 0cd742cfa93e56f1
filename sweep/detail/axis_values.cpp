#include "sweep/detail/axis_values.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <fmt/format.h>

#include "sim/core/rng.hpp"

namespace strait::sweep::detail {
namespace {

// Largest number of values one axis or sample group may have.
constexpr std::int64_t kMaxValues = 1'000'000;

std::size_t value_count(const ConfigNode& node) {
  const auto count = node.integer("count");
  if (count < 1 || count > kMaxValues)
    node.at("count").fail(fmt::format("expected a count in 1..{}", kMaxValues));
  return static_cast<std::size_t>(count);
}

// The i-th of `count` points from `from` to `to` (both ends included, exact at the ends).
double interpolate(const SampleRange& r, std::size_t i, std::size_t count) {
  if (count == 1 || i == 0) return r.from;
  if (i + 1 == count) return r.to;
  const double t = static_cast<double>(i) / static_cast<double>(count - 1);
  return r.log ? std::exp(std::log(r.from) + t * (std::log(r.to) - std::log(r.from)))
               : r.from + t * (r.to - r.from);
}

double at_fraction(const SampleRange& r, double u) {
  return r.log ? std::exp(std::log(r.from) + u * (std::log(r.to) - std::log(r.from)))
               : r.from + u * (r.to - r.from);
}

SampleRange read_range(const ConfigNode& node, bool log, bool integer) {
  SampleRange r{node.number("from"), node.number("to"), log, integer};
  if (!std::isfinite(r.from)) node.at("from").fail("expected a finite number");
  if (!std::isfinite(r.to)) node.at("to").fail("expected a finite number");
  if (log && r.from <= 0) node.at("from").fail("expected a number > 0 for a logarithmic range");
  if (log && r.to <= 0) node.at("to").fail("expected a number > 0 for a logarithmic range");
  return r;
}

}  // namespace

Json number_value(double v, bool integer) {
  if (integer) return Json(static_cast<std::int64_t>(std::llround(v)));
  const double rounded = std::stod(fmt::format("{:.12g}", v));
  if (rounded == std::trunc(rounded) && std::abs(rounded) < 1e15)
    return Json(static_cast<std::int64_t>(rounded));
  return Json(rounded);
}

std::vector<Json> axis_values(const ConfigNode& axis) {
  int kinds = 0;
  for (const char* k : {"values", "linear", "log"}) kinds += axis.has(k) ? 1 : 0;
  if (kinds != 1) axis.fail("expected exactly one of \"values\", \"linear\" or \"log\"");
  const bool integer = axis.bool_or("integer", false);
  std::vector<Json> out;
  if (auto values = axis.find("values")) {
    if (values->size() == 0) values->fail("expected a non-empty array of values");
    for (const auto& v : values->elements()) {
      if (v.json().is_null()) v.fail("expected a value, got null");
      out.push_back(integer && v.is_number() ? number_value(v.as_number(), true) : v.json());
    }
    return out;
  }
  const bool log = axis.has("log");
  const ConfigNode range = axis.at(log ? "log" : "linear");
  range.allow_only({"from", "to", "count"});
  const SampleRange r = read_range(range, log, integer);
  const std::size_t count = value_count(range);
  for (std::size_t i = 0; i < count; ++i)
    out.push_back(number_value(interpolate(r, i, count), integer));
  return out;
}

SampleRange sample_range(const ConfigNode& axis) {
  const bool log = axis.choice_or("scale", {"linear", "log"}, "linear") == "log";
  return read_range(axis, log, axis.bool_or("integer", false));
}

std::vector<std::vector<Json>> sample_values(const std::vector<SampleRange>& ranges,
                                             std::size_t count, std::uint64_t seed, bool latin) {
  Rng rng(seed);
  std::vector<std::vector<double>> u(ranges.size(), std::vector<double>(count));
  for (std::size_t d = 0; d < ranges.size(); ++d) {
    Rng dim = rng.fork(d);
    if (!latin) {
      for (auto& x : u[d]) x = dim.uniform();
      continue;
    }
    // A random permutation of the strata (Fisher-Yates), then a uniform place in each.
    std::vector<std::size_t> strata(count);
    std::iota(strata.begin(), strata.end(), 0);
    for (std::size_t i = count; i > 1; --i) std::swap(strata[i - 1], strata[dim.uniform_int(i)]);
    for (std::size_t i = 0; i < count; ++i)
      u[d][i] = (static_cast<double>(strata[i]) + dim.uniform()) / static_cast<double>(count);
  }
  std::vector<std::vector<Json>> out(count);
  for (std::size_t i = 0; i < count; ++i) {
    for (std::size_t d = 0; d < ranges.size(); ++d)
      out[i].push_back(number_value(at_fraction(ranges[d], u[d][i]), ranges[d].integer));
  }
  return out;
}

}  // namespace strait::sweep::detail
