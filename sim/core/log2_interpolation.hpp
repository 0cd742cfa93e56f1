#pragma once
// Piecewise-linear interpolation in log2 of a key, clamped at the ends: the shape of every
// size-keyed table strait reads (kernel efficiency tables in sim/cost, the per-size
// bandwidth of a collective in sim/network).

#include <cstddef>
#include <span>

namespace strait {

/// Value at `log2_key` of the table (log2_keys[i], values[i]), log2_keys strictly
/// increasing and not empty; the first value at or below the first key (and for NaN/-inf),
/// the last at or above the last.
inline double interpolate_log2(std::span<const double> log2_keys, std::span<const double> values,
                               double log2_key) {
  if (!(log2_key > log2_keys.front())) return values.front();
  if (log2_key >= log2_keys.back()) return values.back();
  std::size_t hi = 1;
  while (log2_keys[hi] < log2_key) ++hi;  // tables have a handful of points
  const double t = (log2_key - log2_keys[hi - 1]) / (log2_keys[hi] - log2_keys[hi - 1]);
  return values[hi - 1] + t * (values[hi] - values[hi - 1]);
}

}  // namespace strait
