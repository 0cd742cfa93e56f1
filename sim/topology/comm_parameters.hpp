#pragma once
// CommParameters: what the collective library (NCCL) adds on top of the links — its
// protocols, per-step and per-message latencies, NVLink SHARP — read from a cluster
// file's optional "nccl" section (see configs/clusters/README.md).
//
// A protocol p moves a step of b bytes in b / (bandwidth x bandwidth_fraction_p) plus its
// step latency (nvlink_step inside a host, net_step across hosts), and a collective run
// with p starts base_latency_p after it is issued. The defaults of a cluster file are
// NCCL's own tuner constants (src/graph/tuning.cc, NCCL 2.2x: baseLat, hwLat NVLINK/NET,
// a column for rings and one for trees; LL = half the bandwidth, LL128 0.92), and `auto`
// weighs NCCL's algorithms only inside a datacenter; a Cluster built in code starts from
// neutral() (every protocol is the bare link model), so hand-built tests keep their
// closed forms. NCCL's measured busbw ceilings (LL's llMaxBws, NVLS tree's per-channel
// cap) bound a collective's data time by host count. Limits: one set per cluster (not per
// datacenter); the other per-channel caps of NCCL's tuner (tree, LL128) are not modelled:
// they sit above the links' rate on H100 hosts with 16 or more channels.

#include <array>
#include <limits>

#include "sim/core/config_node.hpp"
#include "sim/core/units.hpp"

namespace strait::sim::topology {

/// NCCL's protocols, in its order: LL (8-byte stores with a flag), LL128, Simple.
inline constexpr int kProtocolCount = 3;

/// A bus-bandwidth ceiling that depends on how many hosts a collective spans, as NCCL's
/// tuner keeps its measured caps (one host, two, more); infinite where there is none.
struct HostCountCeiling {
  BytesPerSec one_host = std::numeric_limits<double>::infinity();
  BytesPerSec two_hosts = std::numeric_limits<double>::infinity();
  BytesPerSec more_hosts = std::numeric_limits<double>::infinity();
  BytesPerSec at(int hosts) const {
    return hosts <= 1 ? one_host : hosts == 2 ? two_hosts : more_hosts;
  }
  bool any() const {
    return one_host < std::numeric_limits<double>::infinity() ||
           two_hosts < std::numeric_limits<double>::infinity() ||
           more_hosts < std::numeric_limits<double>::infinity();
  }
};

/// Latencies of one protocol under one algorithm family (NCCL's tuner keeps a column per
/// algorithm: rings and trees differ).
struct StepLatencies {
  Time base_latency;         // once per collective
  Time nvlink_step_latency;  // per step whose transfers stay inside hosts
  Time net_step_latency;     // per step that crosses hosts
};

struct ProtocolParameters {
  double bandwidth_fraction = 1.0;  // achievable share of link bandwidth, in (0, 1]
  /// Latencies of every algorithm but NCCL's tree (NCCL's ring column), and of the tree
  /// (chains inside hosts, a binary tree across them): NCCL's tuner charges trees their own
  /// baseLat and hwLat (a tree's network step waits on two children, a ring's on one
  /// neighbour).
  StepLatencies ring;
  StepLatencies tree;
  /// The most bus bandwidth (nccl-tests' busbw) a collective reaches with this protocol,
  /// whatever the links allow: NCCL's llMaxBws for LL (flag polling, and across hosts the
  /// proxy's host-memory path, cap it).
  HostCountCeiling max_busbw;
  /// Bytes one channel of a ring or tree takes before NCCL launches another: its most
  /// threads x its per-thread threshold (NCCL_{LL,LL128,SIMPLE}_THREAD_THRESHOLD; a ring's
  /// LL threshold is also x ranks). 0: every collective runs on all channels.
  Bytes channel_bytes = 0;
};

struct CommParameters {
  std::array<ProtocolParameters, kProtocolCount> protocols{};  // LL, LL128, Simple
  /// NCCL's channels for rings and trees (nChannels, one thread block each). NCCL drops
  /// channels while a collective has fewer than channels x channel_bytes bytes, so a ring
  /// or tree of S bytes takes as long as at clamp(S / channel_bytes, 1, channels) / channels
  /// of its protocol's bandwidth (and of its busbw ceiling; the difference is time that
  /// loads no link): below that size its data time stops shrinking with S. 0: no such ramp
  /// (the bare link model).
  int channels = 0;
  /// Per step that crosses hosts: the network proxy thread posting the message and the
  /// RDMA write plus its completion (a round trip), on top of the link latencies.
  Time proxy_latency;
  Time rdma_round_trip;
  /// All-to-all(v) and send/recv: per peer message a rank posts in a step (NCCL's p2p
  /// setup of each peer's channel and proxy work).
  Time per_peer_latency;
  /// NVLink SHARP: the hosts' NVSwitches reduce and multicast (enables nvls, nvls_tree).
  bool nvls = false;
  /// InfiniBand SHARP in the scale-out switches (NCCL's CollNet, NCCL_COLLNET_ENABLE=1):
  /// enables collnet, the switches summing each GPU's slice across hosts.
  bool collnet = false;
  /// Whether `auto` may pick strait's hierarchical all-reduce (reduce-scatter inside hosts,
  /// all-reduce across, all-gather inside) for ranks of one datacenter. NCCL has no such
  /// algorithm: it runs ring, tree, NVLS, NVLS tree or CollNet there, so a cluster that
  /// runs NCCL keeps hierarchical for ranks across datacenters (a framework's job, not
  /// NCCL's) unless this is set. The bare link model (neutral) keeps every algorithm.
  bool hierarchical_in_datacenter = true;
  /// NCCL's tuner ranks NVLS tree above the ring and the tree across NVLS hosts wherever
  /// bandwidth counts: its model sees Simple rings, trees and NVLS tree all bound by the
  /// hosts' NICs (nChannels x bwInter, NVLS tree's per-channel cap above a channel's NIC
  /// share), LL128 below them, and NVLS tree pays the least latency of the three. So NCCL
  /// runs NVLS tree where a Simple or LL128 ring or tree would come out (LL still wins
  /// small messages by latency). When set, `auto` does the same, timed by strait's
  /// estimate of NVLS tree; the bare link model (neutral) picks by the estimate alone.
  bool nvls_tree_first = false;
  /// NVLS tree's measured ceiling per channel (NCCL's perChMaxNVLSTreeBws, two hosts and
  /// more); a collective has one channel per NIC of its hosts (NVLS heads), so its busbw
  /// ceiling is this x NICs per host.
  HostCountCeiling nvls_tree_channel_busbw;
  double nvls_bandwidth_fraction = 1.0;  // NVLS achievable share of NVLink bandwidth
  Time nvls_step_latency;                // per NVLS step inside a host
  /// Single-host NVLS moves a message in lanes of this many bytes: the switch reduces a
  /// lane (multimem ld_reduce, each GPU's egress) and then multicasts it (multimem st, each
  /// GPU's ingress) while it reduces the next, so the two stages overlap but for one lane:
  /// S / bw becomes (S + min(S, lane)) / bw. 0: no fill (the stages overlap entirely).
  Bytes nvls_lane_bytes = 0;
  /// Achievable share of NVLink line rate for the library's copies (all protocols).
  double nvlink_efficiency = 1.0;
  /// Achievable share of scale-out line rate (NICs, leaf and spine links) for the library's
  /// RDMA transfers (headers, PCIe and completion overheads).
  double net_efficiency = 1.0;
  /// PXN (NCCL's PCI x NVLink, on by default): in all-to-all(v) and send/recv, a message to
  /// another host's GPU on another rail first crosses NVLink to the GPU of its own host on
  /// the destination's rail and leaves by that GPU's NIC, so it stays on one rail plane.
  /// Rail-optimized hosts with more than one NIC only.
  bool pxn = false;

  /// Every protocol the bare link model, no extra latency, no NVLS (code-built clusters).
  static CommParameters neutral() { return {}; }
  /// The defaults of a cluster file (sources in configs/clusters/README.md).
  static CommParameters published_defaults();
};

/// A cluster file's "nccl" section over published_defaults() (or "none": neutral());
/// throws ConfigError.
CommParameters parse_comm_parameters(const ConfigNode& section);

}  // namespace strait::sim::topology
