#pragma once
// The bandwidth the collective library achieves on a link: line rate, times
// CommParameters::nvlink_efficiency on NVLink (NCCL's copies reach ~370 of 450 GB/s).

#include "sim/topology/cluster.hpp"

namespace strait::sim::network::detail {

inline BytesPerSec library_bandwidth(const topology::Cluster& cluster, const topology::Link& link) {
  return link.link_class == topology::LinkClass::kNvlink
             ? link.bandwidth * cluster.comm().nvlink_efficiency
             : link.bandwidth;
}

}  // namespace strait::sim::network::detail
