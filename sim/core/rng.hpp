#pragma once
// Rng: a seeded pseudo-random generator (xoshiro256**, seeded through splitmix64) with
// the few distributions strait samples. Written here rather than taken from <random>
// because the standard distributions may differ between library versions, and results
// must be byte-identical for a given seed everywhere.

#include <cstdint>

namespace strait {

class Rng {
 public:
  explicit Rng(std::uint64_t seed);

  /// A new generator whose stream depends only on this seed and `stream` (e.g. a rank).
  Rng fork(std::uint64_t stream) const;

  std::uint64_t next_u64();
  /// Uniform in [0, 1).
  double uniform();
  /// Uniform integer in [0, n), n > 0.
  std::uint64_t uniform_int(std::uint64_t n);
  /// Standard normal (Box-Muller; both values used in turn).
  double normal();
  /// exp(mu + sigma * N(0,1)).
  double lognormal(double mu, double sigma);
  /// Exponential with the given mean.
  double exponential(double mean);

 private:
  std::uint64_t seed_;
  std::uint64_t s_[4];
  double spare_normal_ = 0;
  bool has_spare_ = false;
};

}  // namespace strait
