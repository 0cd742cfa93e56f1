#pragma once
// TrafficStats: bytes a network carried, per link class.

#include <array>
#include <cstdint>

#include "sim/topology/cluster.hpp"

namespace strait::sim::network {

/// Bytes carried per link class, summed over links (a transfer crossing two scale-out
/// links counts twice), and how many transfers were started.
struct TrafficStats {
  std::array<double, topology::kLinkClassCount> link_bytes{};
  std::uint64_t transfers = 0;
  double bytes(topology::LinkClass c) const { return link_bytes[static_cast<std::size_t>(c)]; }
  TrafficStats& operator+=(const TrafficStats& o) {
    for (std::size_t c = 0; c < link_bytes.size(); ++c) link_bytes[c] += o.link_bytes[c];
    transfers += o.transfers;
    return *this;
  }
};

}  // namespace strait::sim::network
