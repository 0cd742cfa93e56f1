#pragma once
// ScheduleEstimator: the analytical time of a Schedule on an idle network (the formula of
// analytical_network.hpp), shared by analytical mode and by `auto` algorithm selection.

#include <memory>
#include <vector>

#include "sim/network/schedule.hpp"
#include "sim/network/traffic.hpp"
#include "sim/topology/pair_paths.hpp"
#include "sim/topology/router.hpp"

namespace strait::sim::network::detail {

class ScheduleEstimator {
 public:
  ScheduleEstimator(const topology::Cluster& cluster, topology::Router& router);
  /// The schedule's time; adds its traffic to `traffic` when not null.
  Time estimate(const Schedule& schedule, TrafficStats* traffic);

 private:
  // estimate's steps: one phase's link loads (all pairs counted, or transfer by transfer),
  // then the busiest link of the phase and of one lane of all phases.
  Time load_all_pairs(const Schedule& schedule, const Phase& phase, int lanes, bool whole,
                      TrafficStats* traffic);
  void load_transfers(const Schedule& schedule, const Phase& phase, int lanes, bool whole,
                      TrafficStats* traffic, Time& latency, Time& latency_sum);
  Time busiest_phase_link();
  Time busiest_lane_link() const;

  const topology::Cluster& cluster_;
  topology::Router& router_;
  std::vector<double> link_load_;                          // bytes per link for the current phase
  std::vector<double> lane_load_;                          // one lane's bytes per link, all phases
  std::vector<topology::LinkIndex> touched_;               // links with a non-zero load
  std::vector<topology::LinkIndex> path_, leg_;            // scratch
  std::unique_ptr<topology::PairPathCounter> pair_paths_;  // all-pairs phases, made on first use
};

}  // namespace strait::sim::network::detail
