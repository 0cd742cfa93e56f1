#pragma once
// The bandwidth the collective library achieves on a link: line rate, times
// CommParameters::nvlink_efficiency on NVLink (NCCL's copies reach ~370 of 450 GB/s) and
// net_efficiency on scale-out links (RDMA reaches ~47 of a 400 Gb/s NIC's 50 GB/s).

#include "sim/topology/cluster.hpp"

namespace strait::sim::network::detail {

inline BytesPerSec library_bandwidth(const topology::Cluster& cluster, const topology::Link& link) {
  switch (link.link_class) {
    case topology::LinkClass::kNvlink:
      return link.bandwidth * cluster.comm().nvlink_efficiency;
    case topology::LinkClass::kScaleOut:
      return link.bandwidth * cluster.comm().net_efficiency;
    default:
      return link.bandwidth;
  }
}

}  // namespace strait::sim::network::detail
