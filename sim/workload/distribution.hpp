#pragma once
// Distribution: a distribution of non-negative integers (sequence lengths, pooling
// factors) as data files describe it, sampled with strait's seeded Rng.
//
//   {"distribution": "fixed", "value": 512}
//   {"distribution": "uniform", "min": 64, "max": 4096}            inclusive
//   {"distribution": "lognormal", "mean": 900, "sigma": 1.0}       or "median" instead of
//        "mean"; mu = ln(median) = ln(mean) - sigma^2 / 2
//   {"distribution": "zipf", "exponent": 1.2, "min": 16, "max": 8192}   P(x) ~ x^-exponent
//   {"distribution": "empirical", "file": "hist.json"}   file relative to the data file:
//        {"values": [128, 512, 2048], "weights": [0.5, 0.3, 0.2]}
// Samples are rounded to integers and clipped to [floor, cap] (set by the caller, e.g.
// [1, max_length] for lengths). Zipf and empirical sample by inverse CDF on a shared table.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sim/core/config_node.hpp"
#include "sim/core/rng.hpp"

namespace strait::sim::workload {

class Distribution {
 public:
  enum class Kind { kFixed, kUniform, kLognormal, kZipf, kEmpirical };

  static Distribution fixed(double value);
  static Distribution uniform(std::int64_t min, std::int64_t max);
  static Distribution lognormal_with_mean(double mean, double sigma);
  static Distribution zipf(double exponent, std::int64_t min, std::int64_t max);
  static Distribution empirical(std::vector<std::int64_t> values, std::vector<double> weights);
  /// Parses one of the forms above (histogram files relative to the node's file).
  static Distribution from_config(const ConfigNode& node);

  Kind kind() const { return kind_; }
  /// One sample, rounded and clipped to [floor, cap].
  std::int64_t sample(Rng& rng, std::int64_t floor, std::int64_t cap) const;
  /// Mean and variance before clipping (for the sum of many samples).
  double mean() const;
  double variance() const;
  std::string describe() const;

 private:
  Kind kind_ = Kind::kFixed;
  double a_ = 0, b_ = 0;  // fixed: value; uniform: min,max; lognormal: mu,sigma; zipf: min,max
  double exponent_ = 0;
  // Inverse-CDF table (zipf, empirical): values and cumulative probabilities.
  std::shared_ptr<const std::vector<std::int64_t>> values_;
  std::shared_ptr<const std::vector<double>> cdf_;
};

}  // namespace strait::sim::workload
