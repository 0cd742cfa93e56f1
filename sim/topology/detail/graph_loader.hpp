#pragma once
// Loader of the graph form of cluster files (see configs/clusters/README.md).

#include "sim/core/config_node.hpp"
#include "sim/topology/cluster.hpp"

namespace strait::sim::topology::detail {

/// Graph form: explicit nodes, links and optional routes.
Cluster load_graph_form(const ConfigNode& root);

}  // namespace strait::sim::topology::detail
