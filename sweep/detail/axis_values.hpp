#pragma once
// The values of sweep axes: explicit lists, linear and logarithmic ranges, and random or
// Latin-hypercube samples drawn from a seed (strait::Rng, so identical everywhere).

#include <cstdint>
#include <string>
#include <vector>

#include "sim/core/config_node.hpp"

namespace strait::sweep::detail {

/// A numeric range of one sampled dimension: [from, to], linear or logarithmic.
struct SampleRange {
  double from = 0, to = 1;
  bool log = false;
  bool integer = false;  // values rounded to the nearest integer
};

/// The values of an axis that has "values", "linear" or "log" (exactly one). "integer"
/// rounds range values. Throws ConfigError at `axis`.
std::vector<Json> axis_values(const ConfigNode& axis);

/// `count` joint samples of `ranges`: independent uniform draws (`latin` false) or a
/// Latin hypercube (each dimension's range cut into `count` strata, each used once).
/// result[i][d] is sample i of dimension d.
std::vector<std::vector<Json>> sample_values(const std::vector<SampleRange>& ranges,
                                             std::size_t count, std::uint64_t seed, bool latin);

/// Reads "from", "to", "scale" (linear | log) and "integer" of a sampled dimension.
SampleRange sample_range(const ConfigNode& axis);

/// A number as an axis value: an integer when `integer`, else rounded to 12 significant
/// digits (so 0.1 + 0.2 reads 0.3 in the CSV).
Json number_value(double v, bool integer);

}  // namespace strait::sweep::detail
