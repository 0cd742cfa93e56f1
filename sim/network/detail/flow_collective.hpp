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
// (phase, rank, lane): bundles finished that the rank sends or receives (none of it in
// lockstep, below). A rank's lane moves to phase p+1 when all of them are done and its
// previous lane has passed p.
// What does not change while it runs (bundles, routes) is its FlowPlan, shared by every run
// of the same spec.
//
// Scale: when every phase is one coflow of every rank (rings, flat direct schedules), the
// ranks move in lockstep and per-rank progress is skipped (phase p + 1 starts when p's
// coflow ends; no per-(phase, rank) counters). A repeated coflow's flow stays linked to
// its links between repeats (FluidModel keep_linked / restart): a ring step then costs
// O(1) instead of O(links it uses) while it shares no link. One flow is kept at a time;
// patterns with identical links (reduce-scatter and all-gather steps) share it.

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "sim/engine/fluid_model.hpp"
#include "sim/network/detail/flow_plan.hpp"

namespace strait::sim::network {
class FlowNetwork;
}

namespace strait::sim::network::detail {

class FlowCollective {
 public:
  /// A run of `plan` (shared with other runs of the same spec) from now; its traffic is
  /// also counted under `traffic_tag` (if >= 0).
  FlowCollective(FlowNetwork& network, std::shared_ptr<const FlowPlan> plan, int priority,
                 double weight, int traffic_tag, std::function<void()> on_done);
  /// Launches every rank's first phase.
  void start();
  /// Runs the user's completion callback (called once by the network).
  void notify_done();
  /// Its place in the network's list of running collectives (removal in O(1)).
  std::size_t slot() const { return slot_; }
  void set_slot(std::size_t slot) { slot_ = slot; }

 private:
  using Pattern = FlowPlan::Pattern;
  void bundle_done(std::uint64_t tag);
  void advance(int rank, int lane);
  void launch(int rank, int lane, int phase);
  void start_bundle(const Pattern& pattern, std::size_t index, int phase, int lane,
                    std::int32_t bundle);
  void start_coflow(int phase);
  void release_kept();
  void finish();
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
  std::shared_ptr<const FlowPlan> plan_;
  const Schedule& schedule_;  // plan_'s
  int priority_;
  double weight_;
  int traffic_tag_;
  std::function<void()> on_done_;
  int ranks_;
  int lanes_;
  int phases_;       // expanded
  Time not_before_;  // its start + the schedule's min_data_time (and streamed latencies)
  std::vector<std::int32_t> position_;  // per (rank, lane): next phase to complete
  std::vector<std::int32_t> launched_;  // per (rank, lane): phases launched so far
  std::vector<Time> launch_time_;       // per (rank, lane): start of its current bundle
  std::vector<std::int32_t> done_;      // per (phase, rank, lane)
  // When coflow phase `phase` started (in lockstep, the one running now).
  Time& coflow_start(int phase) {
    return plan_->lockstep ? lockstep_start_ : phase_start_[static_cast<std::size_t>(phase)];
  }

  std::size_t slot_ = 0;
  std::vector<std::int32_t> arrived_;  // coflow phases: ranks that reached the phase
  std::vector<Time> phase_start_;      // coflow phases: when the coflow started
  Time lockstep_start_;                // lockstep: when the running coflow started
  std::int64_t lanes_left_;
  engine::ActivityId kept_;       // the repeated coflow parked between repeats, if any
  std::int32_t kept_group_ = -1;  // its route group
};

}  // namespace strait::sim::network::detail
