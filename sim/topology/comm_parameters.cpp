#include "sim/topology/comm_parameters.hpp"

#include <string>

namespace strait::sim::topology {

CommParameters CommParameters::published_defaults() {
  // NCCL's tuner constants for ring algorithms (src/graph/tuning.cc): baseLat
  // {LL 6.6, LL128 14.0, Simple 8.4} us, hwLat NVLINK {0.6, 1.9, 3.4} us and NET
  // {2.7, 4.0, 14.0} us per step; LL carries half the bandwidth (flags), LL128 0.92.
  // hwLat NET is a whole network step as measured, the RDMA write and its completion
  // included: strait names that part rdma_round_trip (~1 us each way on ConnectX-7/NDR,
  // perftest order) and keeps the rest per protocol, so a step across hosts totals NCCL's
  // hwLat NET + its net overhead (proxy_latency: getNetOverhead, 1 us on x86).
  CommParameters c;
  c.rdma_round_trip = Time::from_us(2.0);
  c.protocols[0] = {0.5, {Time::from_us(6.6), Time::from_us(0.6), Time::from_us(0.7)}, {}, {}};
  c.protocols[1] = {0.92, {Time::from_us(14.0), Time::from_us(1.9), Time::from_us(2.0)}, {}, {}};
  c.protocols[2] = {1.0, {Time::from_us(8.4), Time::from_us(3.4), Time::from_us(12.0)}, {}, {}};
  // Trees: baseLat {6.8, 14.0, 8.4} us, hwLat NVLINK {0.6, 1.25, 4.0} and NET {5.0, 8.5, 14.0};
  // NCCL adds no net overhead to a tree's step, so the part kept per protocol is hwLat NET
  // less rdma_round_trip and proxy_latency (which every step across hosts pays here).
  c.protocols[0].tree = {Time::from_us(6.8), Time::from_us(0.6), Time::from_us(2.0)};
  c.protocols[1].tree = {Time::from_us(14.0), Time::from_us(1.25), Time::from_us(5.5)};
  c.protocols[2].tree = {Time::from_us(8.4), Time::from_us(4.0), Time::from_us(11.0)};
  c.hierarchical_in_datacenter = false;
  c.nvls_tree_first = true;
  // Busbw ceilings (tuning.cc): llMaxBws, Hopper on one host 141 GB/s, across hosts by CPU
  // (Intel, as in DGX H100: 39.0 on two hosts, 20.4 on more; AMD 22.5 / 19.0);
  // perChMaxNVLSTreeBws, Hopper: 57.7 GB/s per channel on two hosts, 45.5 on more.
  c.protocols[0].max_busbw = {141e9, 39.0e9, 20.4e9};
  c.nvls_tree_channel_busbw.two_hosts = 57.7e9;
  c.nvls_tree_channel_busbw.more_hosts = 45.5e9;
  c.proxy_latency = Time::from_us(1.0);
  c.per_peer_latency = Time::from_us(0.5);
  // 8 x H100 NVLS all-reduce peaks at ~480 GB/s busbw (nccl-tests issue #212), where
  // nvls moves (7/8) S each way at 370 GB/s x f: busbw = 2 x 370 x f, f = 480 / 740;
  // NCCL's tuner charges NVLS 25 us per NVLink step (hwLat).
  c.nvls_bandwidth_fraction = 480.0 / 740.0;
  c.nvls_step_latency = Time::from_us(25.0);
  // "With the protocol overhead (~20%) NCCL can get an effective NVLink bandwidth of
  // 370GB/s" of 450 (nccl-tests issue #212).
  c.nvlink_efficiency = 370.0 / 450.0;
  // "For NDR @ 400Gbps you should see 46-48GB/s per NIC" of 50 (nccl-tests issue #290).
  c.net_efficiency = 47.0 / 50.0;
  // NCCL_PXN_DISABLE defaults to 0 (NCCL 2.12 and later).
  c.pxn = true;
  // Channels (enqueue.cc: a ring or tree drops a channel, then halves its threads, while
  // nBytes < nChannels x nThreads x threadThreshold): thresholds LL 8, LL128 8, Simple 64
  // bytes per thread (LL x ranks on a ring) at most 512, 640 and 512 threads. 16 channels:
  // NVIDIA's 8 x H100 all_reduce_perf (dgxc-benchmarking, nccl/README.md) sits at 19.3 -
  // 20.7 us from 32 KiB to 512 KiB, where ring LL runs on 1 .. 16 channels of 32 KiB and
  // strait's LL rate gives 20.0 us at 16 (it gave 15.2 - 20.0 us rising with S on all).
  c.channels = 16;
  c.protocols[0].channel_bytes = 512 * 8;
  c.protocols[1].channel_bytes = 640 * 8;
  c.protocols[2].channel_bytes = 512 * 64;
  // NVLS lanes: fitted to the same curve (NVLS from 2 MiB: 42.2, 54.2, 83.0, 123.8, 199.3,
  // 324.7 us at 2 - 64 MiB, 8 GiB at 480 GB/s busbw): the stages overlap but for 8 MiB.
  c.nvls_lane_bytes = 8 * kMiB;
  return c;
}

namespace {

// `key` of `node` (else `fallback`), each checked: a fraction in (0, 1], a duration >= 0,
// a size >= 0.
double fraction_or(const ConfigNode& node, std::string_view key, double fallback) {
  const double f = node.number_or(key, fallback);
  if (!(f > 0 && f <= 1)) node.at(key).fail("expected a number in (0, 1]");
  return f;
}

Time duration_or(const ConfigNode& node, std::string_view key, Time fallback) {
  const Time t = node.duration_or(key, fallback);
  if (t < Time::zero()) node.at(key).fail("expected a duration >= 0");
  return t;
}

Bytes size_or(const ConfigNode& node, std::string_view key, Bytes fallback) {
  auto v = node.find(key);
  if (!v) return fallback;
  const Bytes b = v->as_bytes();
  if (b < 0) v->fail("expected a size >= 0");
  return b;
}

// A ceiling per host count; "none" lifts one.
HostCountCeiling ceiling(const ConfigNode& node, HostCountCeiling cap) {
  node.allow_only({"one_host", "two_hosts", "more_hosts"});
  constexpr std::array<std::string_view, 3> kKeys = {"one_host", "two_hosts", "more_hosts"};
  std::array<BytesPerSec*, 3> out = {&cap.one_host, &cap.two_hosts, &cap.more_hosts};
  for (std::size_t k = 0; k < kKeys.size(); ++k) {
    auto v = node.find(kKeys[k]);
    if (!v) continue;
    *out[k] = v->is_string() && v->as_string() == "none" ? std::numeric_limits<double>::infinity()
                                                         : node.bandwidth(kKeys[k]);
  }
  return cap;
}

// A column of step latencies: its keys over `base`.
StepLatencies latencies(const ConfigNode& node, StepLatencies base) {
  base.base_latency = duration_or(node, "base_latency", base.base_latency);
  base.nvlink_step_latency = duration_or(node, "nvlink_step_latency", base.nvlink_step_latency);
  base.net_step_latency = duration_or(node, "net_step_latency", base.net_step_latency);
  return base;
}

// The "protocols" object: per protocol its keys over `c`'s.
void parse_protocols(const ConfigNode& protocols, CommParameters& c) {
  protocols.allow_only({"ll", "ll128", "simple"});
  constexpr std::array<std::string_view, kProtocolCount> kNames = {"ll", "ll128", "simple"};
  for (std::size_t p = 0; p < kNames.size(); ++p) {
    auto node = protocols.find(kNames[p]);
    if (!node) continue;
    node->allow_only({"bandwidth_fraction", "base_latency", "nvlink_step_latency",
                      "net_step_latency", "tree", "max_busbw", "channel_bytes"});
    auto& out = c.protocols[p];
    out.channel_bytes = size_or(*node, "channel_bytes", out.channel_bytes);
    out.bandwidth_fraction = fraction_or(*node, "bandwidth_fraction", out.bandwidth_fraction);
    out.ring = latencies(*node, out.ring);
    if (auto cap = node->find("max_busbw")) out.max_busbw = ceiling(*cap, out.max_busbw);
    if (auto tree = node->find("tree")) {
      tree->allow_only({"base_latency", "nvlink_step_latency", "net_step_latency"});
      out.tree = latencies(*tree, out.tree);
    }
  }
}

}  // namespace

CommParameters parse_comm_parameters(const ConfigNode& section) {
  if (section.is_string()) {
    // "none": the bare link model (e.g. MPI over shared memory, not NCCL).
    if (section.as_string() != "none") section.fail("expected an object or \"none\"");
    return CommParameters::neutral();
  }
  CommParameters c = CommParameters::published_defaults();
  section.allow_only({"protocols", "proxy_latency", "rdma_round_trip", "per_peer_latency", "nvls",
                      "nvls_bandwidth_fraction", "nvls_step_latency", "nvlink_efficiency", "pxn",
                      "collnet", "hierarchical_in_datacenter", "nvls_tree_channel_busbw",
                      "net_efficiency", "nvls_tree_first", "channels", "nvls_lane_bytes"});
  if (auto protocols = section.find("protocols")) parse_protocols(*protocols, c);
  c.proxy_latency = duration_or(section, "proxy_latency", c.proxy_latency);
  c.rdma_round_trip = duration_or(section, "rdma_round_trip", c.rdma_round_trip);
  c.per_peer_latency = duration_or(section, "per_peer_latency", c.per_peer_latency);
  c.nvls = section.bool_or("nvls", c.nvls);
  c.pxn = section.bool_or("pxn", c.pxn);
  c.collnet = section.bool_or("collnet", c.collnet);
  c.hierarchical_in_datacenter =
      section.bool_or("hierarchical_in_datacenter", c.hierarchical_in_datacenter);
  c.nvls_tree_first = section.bool_or("nvls_tree_first", c.nvls_tree_first);
  c.nvls_bandwidth_fraction =
      fraction_or(section, "nvls_bandwidth_fraction", c.nvls_bandwidth_fraction);
  if (auto cap = section.find("nvls_tree_channel_busbw"))
    c.nvls_tree_channel_busbw = ceiling(*cap, c.nvls_tree_channel_busbw);
  c.nvls_step_latency = duration_or(section, "nvls_step_latency", c.nvls_step_latency);
  c.nvls_lane_bytes = size_or(section, "nvls_lane_bytes", c.nvls_lane_bytes);
  const auto channels = section.integer_or("channels", c.channels);
  if (channels < 0 || channels > 1024)
    section.at("channels").fail("expected an integer in [0, 1024]");
  c.channels = static_cast<int>(channels);
  c.nvlink_efficiency = fraction_or(section, "nvlink_efficiency", c.nvlink_efficiency);
  c.net_efficiency = fraction_or(section, "net_efficiency", c.net_efficiency);
  return c;
}

}  // namespace strait::sim::topology
