#pragma once
// LevelEstimator: analytical time of a schedule from per-level bottlenecks, without
// routing every transfer — the analytical mode for clusters in the hierarchy form
// (hosts with NVSwitch and NICs, datacenters joined by cross-datacenter links), where
// routing all 16,384 destinations would cost gigabytes of tables.
//
// Per phase, every transfer is classified as inside a host, across hosts of one
// datacenter, or across datacenters a -> b, and summed per GPU and per datacenter pair:
//   t_phase = max( max_g NVLink bytes out or in of g / NVLink bandwidth of g,
//                  max_g NIC bytes out or in of g / NIC bandwidth of g,
//                  max_(a,b) bytes a -> b / cross-datacenter capacity a -> b )
//             + the longest latency of the levels the phase uses,
// and phases combine as in analytical_network.hpp (repeats, pipelined lanes). A GPU's NIC
// bandwidth is the bottleneck of its path to another host. This equals the routed
// busiest-link estimate on non-blocking fabrics; oversubscribed leaf uplinks are not seen
// (use the routed estimate, i.e. a graph-form cluster, to study them). Latency and
// link-class traffic follow one representative path per level: inside a host, between
// hosts of a datacenter under the same leaf switch or not, per pair of datacenters.

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sim/core/huge_pages.hpp"
#include "sim/network/collective.hpp"
#include "sim/network/schedule.hpp"
#include "sim/network/traffic.hpp"
#include "sim/topology/router.hpp"

namespace strait::sim::network::detail {

class LevelEstimator {
 public:
  LevelEstimator(const topology::Cluster& cluster, topology::Router& router);
  /// True for hierarchy-form clusters (every host has NICs, or there is one host).
  bool applicable() const { return applicable_; }
  /// The schedule's time; adds its traffic to `traffic` when not null.
  Time estimate(const Schedule& schedule, TrafficStats* traffic);
  /// A direct all-to-all(v) from its spec, in O(n) for all_to_all (O(n^2) for the
  /// all_to_allv matrix), without building its n^2 transfers; `step_latency` is its one
  /// phase's protocol latency (see repeat_latency).
  Time all_to_all(const CollectiveSpec& spec, Time step_latency, TrafficStats* traffic);
  /// `gpus`' placement as this estimator, the schedule builders and the tuner read it, into
  /// `key`: per member its datacenter, its host and its leaf switch numbered by first
  /// appearance among the members, and its index in its host; then per host met, its class
  /// (hosts alike link for link, see host_class). Groups of one placement are one group up
  /// to a symmetry of the hierarchy (the context-parallel pairs inside every host), so on an
  /// idle network they take the same time and traffic. Empty when a GPU is out of range.
  void placement(const std::vector<int>& gpus, std::vector<int>& key);

 private:
  struct LevelPath {  // a representative path of one level
    Time latency;
    std::array<double, topology::kLinkClassCount> links{};
  };
  struct Loads {  // bytes per GPU and per datacenter pair, with the entries touched
    HugeVector<double> nv_out, nv_in, nic_out, nic_in, cross;
    std::vector<int> gpus;
    std::vector<int> pairs;
    void add(int src, int dst, bool same_host, int pair, double bytes);
    void touch(int gpu);  // lists `gpu` among those touched (before its first bytes)
    void add_cross(int pair, double bytes);  // bytes between a datacenter pair
    Time busiest(LevelEstimator& e);
    void clear();
  };
  // Where a GPU sits, as level paths read it (an all_to_allv reads it n^2 times).
  struct Endpoint {
    int gpu, host, datacenter, rail;
    topology::NodeIndex leaf;
  };
  Loads make_loads() const;
  int pair_index(int src, int dst) const;  // -1 inside one datacenter
  int dc_pair(int a, int b) const;         // the same from datacenters a and b
  Endpoint endpoint(int gpu);
  const LevelPath& level_path(int src, int dst);
  const LevelPath& level_path(const Endpoint& s, const Endpoint& d);
  topology::NodeIndex leaf_of(int gpu);
  BytesPerSec nvlink_bandwidth(int gpu);
  BytesPerSec nic_bandwidth(int gpu);
  BytesPerSec cross_capacity(int pair);
  LevelPath route(int src, int dst);
  // Hosts numbered by what they hold: two hosts of one class have the same NICs, GPU types
  // and rails by local index, and the same links, link for link (class, bandwidth, latency,
  // and which local node or which kind of outside node each reaches).
  int host_class(int host);

  const topology::Cluster& cluster_;
  topology::Router& router_;
  bool applicable_ = false;
  int datacenters_ = 1;
  static constexpr topology::NodeIndex kNoNode = ~topology::NodeIndex{0};
  std::vector<BytesPerSec> nvlink_bw_, nic_bw_, cross_cap_;  // 0 = not computed yet
  std::vector<topology::NodeIndex> leaf_;                    // first switch off the host, per GPU
  // Level paths by level, filled on first use: per host, per datacenter and same leaf or
  // not (index 2 dc + same_leaf), per ordered datacenter pair (a D + b).
  std::vector<std::optional<LevelPath>> host_paths_, datacenter_paths_, cross_paths_;
  std::vector<topology::LinkIndex> path_;
  Loads phase_, lane_;
  // placement(): each host's class (-1 not yet known), the classes by fingerprint, and
  // scratch numbering of the hosts and leaves met (-1 between calls).
  std::vector<int> host_class_;
  std::map<std::vector<std::int64_t>, int> classes_;
  std::map<std::string, std::int64_t> types_;  // GPU types numbered as met
  std::vector<int> host_seen_, leaf_seen_;
  std::vector<int> hosts_met_;                   // in the order met
  std::vector<topology::NodeIndex> leaves_met_;  // in the order met
};

}  // namespace strait::sim::network::detail
