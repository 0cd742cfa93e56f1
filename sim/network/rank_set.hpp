#pragma once
// Rank sets as users write them, on the command line and in scenario files:
//   "all"            every GPU of the cluster
//   "0-7,16,18-19"   GPU indices and inclusive ranges
//   "dc0"            every GPU of the datacenter named dc0 (names from the cluster file)
//   "host:3"         every GPU of host 3 (global host index)
//   "first:64"       GPUs 0..63
//   "local:0"        the GPU with local index 0 on every host (one per host, e.g. a rail)

#include <string_view>
#include <vector>

#include "sim/topology/cluster.hpp"

namespace strait::sim::network {

/// Parses `text` against `cluster`; returns GPU indices in the order written. Throws
/// strait::Error naming the text and the expectation.
std::vector<int> parse_rank_set(std::string_view text, const topology::Cluster& cluster);

}  // namespace strait::sim::network
