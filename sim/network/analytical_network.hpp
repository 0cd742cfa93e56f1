#pragma once
// AnalyticalNetwork: analytical mode. A collective's time is computed from its Schedule
// without per-flow events: each phase pattern is routed once; its time is
//   max over links (bytes on the link / link bandwidth) + the longest path latency,
// and with m chunk lanes over P phases the pipeline takes
//   sum_p t_p + (m - 1) * cycle,  cycle = max(max_p t_p, max over links of one lane's
//   bytes on the link summed over all phases / bandwidth)   (t_p for one lane's share).
// This is exact for the uncontended, symmetric schedules strait builds (ring steps, tree
// levels, pairwise rounds) and agrees with flow mode there. It ignores contention between
// different collectives and transfers: each sees an idle network. On hierarchy-form
// clusters the busiest link is found per level (detail/level_estimator.hpp) instead of by
// routing every transfer, and a direct all-to-all(v) is summed per level from its spec.
// Since a collective's time and traffic depend on its spec alone, a call repeated with the
// same spec (a context-parallel pair's all-gather in every layer of a step) is timed once;
// on hierarchy-form clusters the spec's GPUs are read as their placement
// (LevelEstimator::placement), so the same call on any group placed alike (the pairs inside
// each of 16,384 hosts) is timed once too.

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "sim/network/detail/level_estimator.hpp"
#include "sim/network/detail/schedule_estimator.hpp"
#include "sim/network/network.hpp"

namespace strait::sim::network {

class AnalyticalNetwork final : public Network {
 public:
  AnalyticalNetwork(engine::Simulator& sim, const topology::Cluster& cluster,
                    NetworkOptions options);

  void start_collective(const CollectiveSpec& spec, std::function<void()> on_done) override;
  /// What start_collective takes for `spec` from its call to its end (`time`; of it, a
  /// calibrated base latency that start_collective waits out as an event of its own,
  /// `delay`), its traffic counted now, and no event scheduled: for callers that order
  /// the calls themselves (the op replay's dataflow order, sim/run/op_replay.hpp). An idle
  /// network's time depends on the spec alone, so any order gives the same times.
  struct Timed {
    Time time;
    Time delay;
  };
  Timed time_collective(const CollectiveSpec& spec);
  /// True for a direct all-to-all(v) on a hierarchy-form cluster: summed per level from its
  /// spec in O(n) (all_to_all) without building its n^2 transfers.
  bool in_closed_form(const CollectiveSpec& spec) override;
  void start_schedule(Schedule schedule, int priority, double weight,
                      std::function<void()> on_done) override;
  void start_transfer(int src, int dst, Bytes bytes, int priority,
                      std::function<void()> on_done) override;

 private:
  struct TimedCall {
    CallKey key;
    Time time;             // from the call to its end
    TrafficStats traffic;  // payload bytes per link class
  };
  // `schedule`'s time on an idle network, its payload counted as traffic now.
  Time timed_schedule(const Schedule& schedule);
  std::vector<topology::LinkIndex> path_;  // scratch
  std::vector<int> placed_;                // scratch: a call's placement
  CollectiveSpec scaled_;  // scratch: a closed-form all-to-all at its calibrated sizes
  std::unordered_map<std::uint64_t, TimedCall> timed_;  // by hash of the key
};

}  // namespace strait::sim::network
