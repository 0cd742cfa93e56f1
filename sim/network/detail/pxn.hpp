#pragma once
// PXN (NCCL's PCI x NVLink): in peer-to-peer operations (all-to-all(v), send/recv) a
// message to a GPU of another host on another rail crosses NVLink first, to the GPU of its
// own host on the destination's rail (the relay), and leaves by the relay's NIC, so it
// travels on the destination's rail plane (one leaf under rail-optimized fabrics, where
// the sender's own NIC would need the spine). Both network modes route such a transfer as
// two legs, src -> relay (inside the host) and relay -> dst; CommParameters::pxn (cluster
// file "nccl": {"pxn": false}) turns it off. Implicit all-pairs phases (uniform direct
// all-to-all) are counted without it: with every rank sending every peer the same bytes,
// each NIC carries the same load either way (its host's traffic to its rail), and only the
// NVLink hop, never their bottleneck on the bundled clusters, is left out.

#include "sim/network/collective.hpp"
#include "sim/topology/cluster.hpp"

namespace strait::sim::network::detail {

/// True for the operations NCCL sends through its peer-to-peer path.
inline bool peer_to_peer(CollectiveOp op) {
  return op == CollectiveOp::kAllToAll || op == CollectiveOp::kAllToAllV ||
         op == CollectiveOp::kSendRecv;
}

/// The GPU through which a peer-to-peer message from GPU `src` to GPU `dst` leaves its
/// host under PXN, or -1 when it leaves by `src`'s own NIC: PXN off, the same host, the
/// same rail, a host that is not rail-optimized or has one NIC, or no GPU of `src`'s host
/// on `dst`'s rail.
inline int pxn_relay(const topology::Cluster& cluster, int src, int dst);

/// The relay of GPU `src` toward rail `rail` on another host (pxn_relay's rule).
inline int pxn_rail_relay(const topology::Cluster& cluster, int src, int rail) {
  if (!cluster.comm().pxn) return -1;
  const topology::Gpu& s = cluster.gpu(src);
  if (s.rail == rail) return -1;
  const topology::Host& host = cluster.hosts()[static_cast<std::size_t>(s.host)];
  if (!host.rail_optimized || host.nics < 2) return -1;
  for (int g : host.gpus) {
    if (cluster.gpu(g).rail == rail) return g;
  }
  return -1;
}

inline int pxn_relay(const topology::Cluster& cluster, int src, int dst) {
  if (cluster.gpu(src).host == cluster.gpu(dst).host) return -1;
  return pxn_rail_relay(cluster, src, cluster.gpu(dst).rail);
}

}  // namespace strait::sim::network::detail
