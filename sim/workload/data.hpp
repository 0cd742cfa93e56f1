#pragma once
// DataConfig: the training data as a distribution per sample: sequence length (for
// sequence tables and HSTU), pooling factor per pooled table, id skew per table, batch.
//
//   {"name": "...",
//    "batch_size": {"per_rank": 64} | {"global": 65536},
//    "sequence_length": {"distribution": "lognormal", "mean": 900, "sigma": 1.0},
//    "max_length": 8192,
//    "pooling_factors": {"default": {"distribution": "fixed", "value": 1}, "t3": {...}},
//    "id_skew": {"default": 1.05, "item": 1.2}}
// Distributions: see distribution.hpp. Lengths are clipped to [1, max_length], pooling
// factors to [0, 10^6]. Table names in pooling_factors/id_skew must be model tables.
// "per_rank" counts samples per data-parallel replica (a context-parallel group shares
// one batch); "global" is divided evenly among the replicas.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/core/config_node.hpp"
#include "sim/workload/distribution.hpp"
#include "sim/workload/model.hpp"

namespace strait::sim::workload {

struct DataConfig {
  std::string name;
  std::string file;
  std::int64_t batch_per_replica = 0;  // set from per_rank, or 0 when global
  std::int64_t global_batch = 0;       // set from global, or 0 when per_rank
  Distribution sequence_length = Distribution::fixed(1);
  std::int64_t max_length = 1;
  std::vector<Distribution> pooling;  // per model table (sequence tables: unused)
  std::vector<double> zipf_exponent;  // per model table, 0 = uniform ids

  static DataConfig load(const std::string& path, const ModelConfig& model);
  static DataConfig from_config(const ConfigNode& node, const ModelConfig& model);

  /// Samples per data-parallel replica when there are `replicas` of them; throws
  /// ConfigError when a global batch does not divide evenly.
  std::int64_t batch_for(int replicas) const;

 private:
  std::optional<ConfigNode> batch_node_;  // for the error of batch_for
};

}  // namespace strait::sim::workload
