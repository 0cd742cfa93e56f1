#pragma once
// FlowCollective: one collective's Schedule running on a FlowNetwork.
//
// Unpipelined schedules (one lane) move each phase as one fluid flow, a "coflow": all
// its transfers spread over their paths in proportion to their bytes, so the phase ends
// when its busiest link drains, and it shares links with other traffic as one unit. A
// phase starts when every rank taking part has finished the previous one (a barrier per
// phase: exact for the symmetric phases of rings, hierarchical and direct algorithms).
// This keeps a 1,024-GPU ring at one flow per step instead of one per rank and channel,
// and an all-to-all at one flow instead of n^2; its latency is the longest of its paths
// plus the phase's step latency, paced over its bytes (see FlowNetwork).
// An implicit all-pairs phase (a uniform direct all-to-all) has no transfer list: its
// coflow's link shares come from topology::count_pair_paths (paths per link, by
// destination trees under d-mod-k), the same shares the per-pair routing gives.
// Pipelined schedules (tree, chain) keep one flow per transfer and per-rank progress:
// their lanes contend with each other on shared links, where a coflow would be wrong.
//
// State per (rank, lane): the next phase to complete and the next to launch; per
// (phase, rank, lane): bundles finished that the rank sends or receives. A rank's lane
// moves to phase p+1 when all of them are done and its previous lane has passed p.
// Routes of phases that repeat or are chunked are computed once and reused.
//
// Scale: when every phase is one coflow of every rank (rings, flat direct schedules), the
// ranks move in lockstep and per-rank progress is skipped (phase p + 1 starts when p's
// coflow ends; no per-(phase, rank) counters). A repeated coflow's flow stays linked to
// its links between repeats (FluidModel keep_linked / restart): a ring step then costs
// O(1) instead of O(links it uses) while it shares no link. One flow is kept at a time;
// patterns with identical links (reduce-scatter and all-gather steps) share it.

#include <array>
#include <cstdint>
#include <functional>
#include <vector>

#include "sim/engine/fluid_model.hpp"
#include "sim/network/network.hpp"
#include "sim/network/schedule.hpp"
#include "sim/topology/pair_paths.hpp"

namespace strait::sim::network {
class FlowNetwork;
}

namespace strait::sim::network::detail {

class FlowCollective {
 public:
  FlowCollective(FlowNetwork& network, Schedule schedule, int priority, double weight,
                 std::function<void()> on_done);
  /// Launches every rank's first phase.
  void start();
  bool finished() const { return lanes_left_ == 0; }
  /// Runs the user's completion callback (called once by the network).
  void notify_done();
  /// Its place in the network's list of running collectives (removal in O(1)).
  std::size_t slot() const { return slot_; }
  void set_slot(std::size_t slot) { slot_ = slot; }

 private:
  struct Bundle {
    int src = 0;       // -1 for a whole-phase coflow
    double bytes = 0;  // all lanes
    std::uint32_t dsts_begin = 0, dsts_count = 0;
    std::uint32_t transfers_begin = 0, transfers_count = 0;  // into Plan::transfer_list
  };
  struct Routes {
    std::vector<engine::ResourceUse> uses;
    std::array<double, topology::kLinkClassCount> traffic{};  // link-bytes, all lanes
    Time latency;
  };
  struct Plan {  // one per schedule phase (pattern)
    std::vector<Bundle> bundles;
    std::vector<std::int32_t> src_bundles;    // per rank + 1: CSR offsets into bundles
    std::vector<std::int32_t> dsts;           // distinct receivers per bundle
    std::vector<std::int32_t> transfer_list;  // transfer indices per bundle
    std::vector<std::int32_t> involvement;    // per rank: bundles sent + received
    std::vector<Routes> routes;               // per bundle, when cached
    bool cached = false;
    bool coflow = false;                // one bundle for the whole phase
    bool all_pairs = false;             // coflow of an implicit all-pairs phase
    std::vector<std::int32_t> members;  // coflow: ranks taking part
    std::int32_t route_group = -1;      // cached coflow: first pattern with the same links
  };

  void merge_streaming_phases();
  void make_plan(std::size_t pattern);
  void route_bundle(const Plan& plan, const Bundle& bundle, std::size_t pattern, Routes& out);
  void bundle_done(std::uint64_t tag);
  void advance(int rank, int lane);
  void launch(int rank, int lane, int phase);
  void start_bundle(Plan& plan, std::size_t pattern, int phase, int lane, std::int32_t bundle);
  void start_coflow(int phase);
  void release_kept();
  void finish();
  std::int32_t route_group(std::size_t pattern) const;
  std::size_t lane_index(int rank, int lane) const {
    return static_cast<std::size_t>(rank) * static_cast<std::size_t>(lanes_) +
           static_cast<std::size_t>(lane);
  }
  std::size_t done_index(int phase, int rank, int lane) const {
    return (static_cast<std::size_t>(phase) * static_cast<std::size_t>(ranks_) +
            static_cast<std::size_t>(rank)) *
               static_cast<std::size_t>(lanes_) +
           static_cast<std::size_t>(lane);
  }

  FlowNetwork& network_;
  Schedule schedule_;
  int priority_;
  double weight_;
  std::function<void()> on_done_;
  int ranks_;
  int lanes_;
  int phases_;                         // expanded
  Time not_before_;                    // its start + the schedule's min_data_time
  bool streamed_ = false;              // cut-through phases merged into one
  Time streamed_latency_;              // then: the sum of the phases' latencies
  std::vector<std::int32_t> pattern_;  // expanded phase -> index in schedule_.phases
  std::vector<Plan> plans_;
  std::vector<std::int32_t> position_;  // per (rank, lane): next phase to complete
  std::vector<std::int32_t> launched_;  // per (rank, lane): phases launched so far
  std::vector<Time> launch_time_;       // per (rank, lane): start of its current bundle
  std::vector<std::int32_t> done_;      // per (phase, rank, lane)
  std::size_t slot_ = 0;
  std::vector<std::int32_t> arrived_;  // coflow phases: ranks that reached the phase
  std::vector<Time> phase_start_;      // coflow phases: when the coflow started
  std::int64_t lanes_left_;
  bool lockstep_ = false;         // every phase a coflow of all ranks: no per-rank progress
  engine::ActivityId kept_;       // the cached coflow parked between repeats, if any
  std::int32_t kept_group_ = -1;  // its route group
  Routes scratch_routes_;
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
