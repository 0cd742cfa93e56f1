#pragma once
// FlowPlan: what running one Schedule in flow mode needs and never changes while it runs:
// the schedule itself (all-pairs phases stored when it has lanes, cut-through phases
// merged into one), its expanded phase order, and per phase pattern the bundles that move
// as one fluid flow, each with its routes (link shares, traffic per link class, latency).
//
// A plan depends on the schedule and the cluster alone, so FlowNetwork builds one per
// collective spec and shares it between every call of that spec (a context-parallel
// pair's all-gather in every layer of every step): the calls after the first skip
// building the schedule, planning and routing, which were about a third of a training
// run's time in flow mode. The running state of a call is FlowCollective's.
//
// Bundles: an unpipelined phase (one lane) is one coflow of all its transfers; an implicit
// all-pairs phase one coflow routed as a whole (topology::PairPathCounter); with lanes, one
// bundle per transfer (per-rank progress, see FlowCollective).

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "sim/engine/fluid_model.hpp"
#include "sim/network/schedule.hpp"
#include "sim/topology/pair_paths.hpp"

namespace strait::sim::network {
class FlowNetwork;
}

namespace strait::sim::network::detail {

struct FlowPlan {
  struct Bundle {
    int src = 0;       // -1 for a whole-phase coflow
    double bytes = 0;  // all lanes
    std::uint32_t dsts_begin = 0, dsts_count = 0;
    std::uint32_t transfers_begin = 0, transfers_count = 0;  // into Pattern::transfer_list
  };
  struct Routes {
    std::vector<engine::ResourceUse> uses;
    std::array<double, topology::kLinkClassCount> traffic{};  // link-bytes, all lanes
    Time latency;
  };
  struct Pattern {  // one per schedule phase
    std::vector<Bundle> bundles;
    std::vector<std::int32_t> src_bundles;    // per rank + 1: CSR offsets into bundles
    std::vector<std::int32_t> dsts;           // distinct receivers per bundle
    std::vector<std::int32_t> transfer_list;  // transfer indices per bundle
    std::vector<std::int32_t> involvement;    // per rank: bundles sent + received
    std::vector<Routes> routes;               // per bundle
    bool repeats = false;                     // runs more than once (repeat > 1 or lanes)
    bool coflow = false;                      // one bundle for the whole phase
    bool all_pairs = false;                   // coflow of an implicit all-pairs phase
    std::vector<std::int32_t> members;        // coflow: ranks taking part
    std::int32_t route_group = -1;            // repeated coflow: first pattern with the same links
  };

  Schedule schedule;
  int ranks = 0;
  int lanes = 1;
  int phases = 0;                     // expanded
  bool streamed = false;              // cut-through phases merged into one
  Time streamed_latency;              // then: the sum of the phases' latencies
  std::vector<std::int32_t> pattern;  // expanded phase -> index in patterns
  std::vector<Pattern> patterns;      // per schedule phase
  bool lockstep = false;              // every phase a coflow of all ranks

  /// Heap bytes it holds (vectors' capacities), about: what remembering it costs.
  std::size_t bytes() const;
};

// A finished bundle is named by (expanded phase, lane, bundle index in its pattern), packed
// into 64 bits so a completion callback fits std::function's inline storage.
inline constexpr int kLaneBits = 8;
inline constexpr int kBundleBits = 32;

/// Builds FlowPlans on one FlowNetwork (routing needs its router and link resources; its
/// scratch is kept between plans).
class FlowPlanner {
 public:
  explicit FlowPlanner(FlowNetwork& network) : network_(network) {}
  /// `schedule`'s plan, every bundle routed. Throws Error for more than 255 lanes or more
  /// phases than a bundle's tag can name.
  std::shared_ptr<const FlowPlan> plan(Schedule schedule);

 private:
  void merge_streaming_phases(FlowPlan& plan);
  void make_pattern(FlowPlan& plan, std::size_t index);
  // make_pattern's steps: transfers by sender, then the phase's bundles by kind.
  void group_by_sender(const Phase& phase, std::size_t n, FlowPlan::Pattern& pattern);
  void add_all_pairs_coflow(const FlowPlan& plan, const Phase& phase, FlowPlan::Pattern& pattern);
  void add_phase_coflow(const Phase& phase, FlowPlan::Pattern& pattern);
  void add_transfer_bundles(const Phase& phase, std::size_t n, FlowPlan::Pattern& pattern);
  void route_bundle(const FlowPlan& plan, const FlowPlan::Pattern& pattern,
                    const FlowPlan::Bundle& bundle, std::size_t index, FlowPlan::Routes& out);
  // route_bundle's three ways: an implicit all-pairs phase, a bundle of many transfers
  // (counted), and transfer by transfer.
  void route_all_pairs(const Schedule& s, const Phase& phase, const FlowPlan::Bundle& bundle,
                       FlowPlan::Routes& out);
  void route_counted(const Schedule& s, const Phase& phase, const FlowPlan::Pattern& pattern,
                     const FlowPlan::Bundle& bundle, FlowPlan::Routes& out);
  void route_transfers(const Schedule& s, const Phase& phase, const FlowPlan::Pattern& pattern,
                       const FlowPlan::Bundle& bundle, FlowPlan::Routes& out);
  Time relay_leg(int src, int relay, double bytes);
  static std::int32_t route_group(const FlowPlan& plan, std::size_t index);

  FlowNetwork& network_;
  std::vector<std::int32_t> offsets_, fill_, seen_;  // scratch of make_pattern
  std::vector<engine::ResourceUse> scratch_uses_;
  // Bundles of at least this many transfers have their bytes per link counted, not routed
  // transfer by transfer (route_bundle).
  static constexpr std::uint32_t kCountedTransfers = 4096;
  std::vector<topology::PairBytes> counted_;
  // route_bundle's in-host legs to the current sender's PXN relays (at most one per rail):
  // a sender of a 512-member all_to_allv reaches 511 peers through at most 7 relays.
  struct RelayLeg {
    int relay = -1;
    std::size_t begin = 0, end = 0;  // its links' resources in relay_resources_
    Time latency;
  };
  std::vector<RelayLeg> relay_legs_;
  std::vector<engine::ResourceId> relay_resources_;
};

}  // namespace strait::sim::network::detail
