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
#include <unordered_map>
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
  using LinkClassBytes = std::array<double, topology::kLinkClassCount>;
  // all_to_all's two forms: they add their bytes per link class and load phase_; they
  // return the latency.
  Time matrix_all_to_all(const CollectiveSpec& spec, LinkClassBytes& link_bytes);
  Time uniform_all_to_all(const CollectiveSpec& spec, LinkClassBytes& link_bytes);
  // matrix_all_to_all's steps (level_all_to_all.cpp): receivers in classes that share a
  // level path, then per sender its row split by relation and loaded.
  struct MatrixReceivers;
  struct MatrixSender;
  void classify_receivers(const CollectiveSpec& spec, MatrixReceivers& to);
  void take_out_host_block(std::size_t i, const Bytes* row, MatrixReceivers& to,
                           MatrixSender& from);
  void split_by_relation(const Endpoint& a, const MatrixReceivers& to, MatrixSender& from);
  const Endpoint* relay_toward(const Endpoint& a, int rail, MatrixSender& from);
  void look_up_relay(const Endpoint& a, int rail, MatrixSender& from);
  Time load_sender(const Endpoint& a, const MatrixSender& from, LinkClassBytes& link_bytes);
  void load_receivers(const MatrixReceivers& to);
  // A uniform all-to-all group as its closed form reads it: what depends on the members'
  // GPUs alone, worked out once per group (its calls differ only in their sizes; at 131,072
  // GPUs, 256 embedding groups of 512 make 1,536 calls). Counts are whole numbers.
  struct UniformGroup {
    std::vector<int> gpus;                   // the key
    std::size_t hosts = 0;                   // hosts among the members
    std::vector<std::int32_t> host;          // per member: its host, numbered as met
    std::vector<std::int32_t> datacenter;    // per member
    std::vector<std::int32_t> host_members;  // per member: members on its host
    std::vector<std::int64_t> dc_members;    // per datacenter
    std::vector<std::int32_t> same_leaf;     // per member: members under its leaf, off its host
    struct Rail {                            // PXN: one rail with members, as member i reaches it
      std::int32_t relay;                    // i's relay toward the rail (-1: none)
      std::int32_t off_host;                 // members on the rail off i's host
      std::int32_t same_leaf;                // of them, under the leaf i's message leaves by
    };
    std::vector<Rail> rails;                 // per member, in rail_offsets' ranges
    std::vector<std::int32_t> rail_offsets;  // member i: [rail_offsets[i], rail_offsets[i + 1])
    std::vector<std::size_t> first_of_dc;    // per datacenter (n: none)
    // Member pairs whose levels stand for the group's (n: none): another member of member
    // 0's host; the first pair across hosts under one leaf, and through a spine.
    std::size_t same_host = 0, leaf_from = 0, leaf_pair = 0, spine_from = 0, spine_pair = 0;
  };
  const UniformGroup& uniform_group(const std::vector<int>& gpus);
  // uniform_group's steps (level_all_to_all.cpp).
  struct PlacementCounts;
  void place_hosts(UniformGroup& G);
  PlacementCounts count_placement(const std::vector<int>& gpus);
  void place_rails_and_leaves(UniformGroup& G, const PlacementCounts& k);
  void add_rails(UniformGroup& G, const PlacementCounts& k, std::size_t i);
  // uniform_all_to_all's steps: they load phase_ (and `link_bytes`) from share_.
  struct UniformRelays {  // PXN's hop to the relays: bytes over NVLink, longest latency
    double nvlink = 0;
    Time hop = Time::zero();
  };
  double sum_uniform_shares(const CollectiveSpec& spec, const UniformGroup& G,
                            std::vector<double>& dc_send);
  void load_uniform_members(const CollectiveSpec& spec, const UniformGroup& G, double total);
  void load_uniform_datacenter_pairs(const UniformGroup& G, const std::vector<double>& dc_send);
  UniformRelays relay_uniform(const CollectiveSpec& spec, const UniformGroup& G,
                              LinkClassBytes& link_bytes);
  double uniform_same_leaf_bytes(const UniformGroup& G, bool pxn) const;
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
  std::unordered_map<std::uint64_t, UniformGroup> uniform_groups_;  // by a hash of the GPUs
  UniformGroup uniform_scratch_;           // a group whose hash another group holds
  std::vector<double> share_, host_send_;  // uniform_all_to_all's per member and per host sums
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
