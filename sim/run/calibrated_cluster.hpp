#pragma once
// Applies the communication factors of calibration profiles (cost::CollectiveFactors,
// written by `strait calibrate fit`) to a cluster and to the network options of a run.
//
// Link-class factors of a GPU type's profile apply to the links inside the hosts whose
// GPUs are of that type (a link belongs to the host of its source node, else of its
// destination); links outside hosts (leaf, spine, cross-datacenter) take them only when
// every GPU of the cluster has that type. Op factors apply when every GPU has one type.
// Profiles without a "collectives" section change nothing.

#include <memory>

#include "sim/cost/cost_model.hpp"
#include "sim/engine/simulator.hpp"
#include "sim/network/collective.hpp"
#include "sim/network/network.hpp"
#include "sim/topology/cluster.hpp"

namespace strait::sim::run {

/// Whether any profile of a GPU type in `cluster` has link-class factors.
bool has_link_factors(const topology::Cluster& cluster, const cost::CostModel& cost);
/// A copy of `cluster` with the link-class factors applied.
topology::Cluster calibrated_cluster(const topology::Cluster& cluster, const cost::CostModel& cost);
/// The per-operation factors for collectives on `cluster` (none on mixed-type clusters).
network::CollectiveCalibration collective_calibration(const topology::Cluster& cluster,
                                                      const cost::CostModel& cost);
/// The network of a run in `mode` on `cluster` (already calibrated_cluster's where it has
/// link factors), with the per-operation factors of collective_calibration.
std::unique_ptr<network::Network> calibrated_network(engine::Simulator& sim,
                                                     const topology::Cluster& cluster,
                                                     const cost::CostModel& cost,
                                                     network::NetworkMode mode);

}  // namespace strait::sim::run
