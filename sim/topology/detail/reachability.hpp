#pragma once
// Checks that every GPU of a cluster can reach every other GPU over its links (GPUs are
// never transit, see hop_graph.hpp). Loaders turn a failure into a ConfigError.

#include <optional>
#include <string>
#include <utility>

#include "sim/topology/cluster.hpp"

namespace strait::sim::topology::detail {

/// A pair (src GPU, dst GPU) with no path from src to dst, or nullopt if all pairs connect.
/// Fast when the switches form one strongly connected fabric every GPU attaches to both
/// ways (every hierarchy-form cluster); otherwise one search per destination GPU.
std::optional<std::pair<int, int>> find_unreachable_gpu_pair(const Cluster& cluster);

/// Throws ConfigError at (`file`, `where`) naming a GPU that cannot reach another one.
void check_all_gpus_connected(const Cluster& cluster, const std::string& file,
                              const std::string& where);

}  // namespace strait::sim::topology::detail
