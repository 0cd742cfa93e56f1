#pragma once
// Loader of the hierarchy form of cluster files (see configs/clusters/README.md).

#include "sim/core/config_node.hpp"
#include "sim/topology/cluster.hpp"

namespace strait::sim::topology::detail {

/// Hierarchy form: datacenters of hosts, leaf/spine networks, cross-datacenter links.
Cluster load_hierarchy_form(const ConfigNode& root);

}  // namespace strait::sim::topology::detail
