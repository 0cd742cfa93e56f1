#pragma once
// How a collective's ranks sit in the hierarchy: grouped by host and datacenter, in
// topology order. Used by the schedule builders.

#include <vector>

#include "sim/network/collective.hpp"
#include "sim/topology/cluster.hpp"

namespace strait::sim::network::detail {

struct RankLayout {
  int n = 0;
  std::vector<int> order;                     // rank indices sorted by (datacenter, host, local)
  std::vector<std::vector<int>> hosts;        // rank indices per host, topology order
  std::vector<std::vector<int>> datacenters;  // host-group indices per datacenter
  bool uniform_hosts = true;                  // every host group has the same size
  bool uniform_datacenters = true;            // every datacenter has the same number of host groups
  int rails = 1;                              // distinct NIC rails among the first host's ranks
};

/// Validates GPU indices (in range, no repeats) and groups the ranks. Throws strait::Error.
RankLayout make_rank_layout(const CollectiveSpec& spec, const topology::Cluster& cluster);

}  // namespace strait::sim::network::detail
