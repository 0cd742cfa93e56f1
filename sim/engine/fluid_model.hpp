#pragma once
// FluidModel: activities that share resources under weighted max-min fairness.
//
// A resource (a link direction, a GPU's SMs, HBM, a copy engine) has a capacity in units
// of work per second. An activity has an amount of work and uses a set of resources,
// each with a coefficient (work on the resource per unit of activity work, usually 1).
// Rates come from progressive filling (Bertsekas & Gallager, "Data Networks", 6.5.2;
// the model of SimGrid's lmm and of flow-level network simulators):
//   - within one priority level, every unfrozen activity a grows at weight_a * lambda;
//     when a resource saturates, the activities crossing it freeze; an activity also
//     freezes at its own max_rate;
//   - priority levels are strict: level 0 is filled first, level 1 shares what is left.
// Rates are recomputed only for the connected component (activities linked through
// shared resources) that an arrival or completion touched, once per instant, after all
// changes of that instant, and not even that where nothing can move: an arrival that fits
// in what its shared resources have left runs at its bound (no resource saturates, so no
// other rate changes), and a completion on a resource that was not full at the last solve
// frees capacity nobody was waiting for (no one's bottleneck). Both are exact; they keep a
// small flow on a link that a collective spanning thousands of links also crosses from
// re-solving that collective. An activity whose resources all have infinite capacity and
// no max_rate completes at once.
//
// Parked activities (keep_linked) let a repeated transfer over the same resources, like
// the steps of a ring collective, run again in O(1) when it shares none of its resources
// (each activity counts its uses on resources with another user, kept up to date as
// activities link and unlink); otherwise restart() solves its component like a start.
//
// Latency (paced activities): an activity with a latency L spreads its work over
// work / bound + L, the time it takes alone: its rate is capped at work / (work / bound + L),
// where bound is its rate alone on its resources. This is the alpha-beta cost of a message
// whose fixed part (protocol steps, proxy, RDMA round trip) overlaps its bytes, as NCCL's
// pipelined protocols do: a latency-bound ring step takes a trickle of each link for its
// whole duration instead of the full link for a few nanoseconds and then nothing, so
// lower-priority traffic on the same links keeps one steady rate. Alone, a paced activity
// finishes exactly at work / bound + L.
//
// A parked activity restarted at the instant it parked (the next step of a ring), with the
// same cap, takes back its rate without a solve: nothing else changed on its resources.
//
// Known limits: no rate ramp-up (TCP slow start) or packet-level effects; a resource's
// capacity is shared, not split by direction (model each direction as its own resource).

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "sim/core/units.hpp"
#include "sim/engine/touches.hpp"

namespace strait::sim::engine {

struct ResourceId {
  std::uint32_t index = 0;
  friend bool operator==(ResourceId, ResourceId) = default;
};

/// A handle to an activity; stale once the activity completed (generation differs).
struct ActivityId {
  std::uint32_t index = 0;
  std::uint32_t generation = 0;
  friend bool operator==(ActivityId, ActivityId) = default;
};

/// One resource an activity uses, and how much resource work one unit of activity work costs.
struct ResourceUse {
  ResourceId resource;
  double coefficient = 1.0;
};

struct ActivitySpec {
  double work = 0;                                            // units (bytes, flops, ...)
  double weight = 1.0;                                        // share within its priority level
  int priority = 0;                                           // 0 first; strictly before 1, ...
  double max_rate = std::numeric_limits<double>::infinity();  // units per second
  std::function<void()> on_done = {};                         // called at completion
  /// At completion the activity parks instead of ending: it stays linked to its resources
  /// (counted in their coupling potential, with no rate) until restart() or cancel().
  bool keep_linked = false;
  /// Paced over work / bound + latency (see the header comment); zero: not paced.
  Time latency = Time::zero();
  /// Memory on_done reads first (e.g. its rank's state): prefetched when the activity's
  /// completion comes next, while the events before it run.
  Touches touches = {};
};

class FluidModel {
 public:
  using Clock = std::function<Time()>;
  explicit FluidModel(Clock clock);

  /// Adds a resource with `capacity` units of work per second (> 0, may be infinite).
  /// Throws std::invalid_argument otherwise.
  ResourceId add_resource(double capacity, std::string name = {});
  /// Changes a resource's capacity from now on (e.g. a link degraded mid-run); 0 stalls
  /// its users until it is raised again. Throws std::invalid_argument if negative or NaN.
  void set_capacity(ResourceId id, double capacity);
  double capacity(ResourceId id) const;
  const std::string& name(ResourceId id) const;
  std::size_t resource_count() const;
  /// A hint: `id` will be used soon (started on, or released), so fetch it into cache.
  void prefetch(ResourceId id) const;

  /// Starts an activity now. Its rate is set at the end of this instant; one with no work,
  /// or with no finite constraint at all, completes at this instant. Throws
  /// std::invalid_argument on negative work, a weight that is not positive and finite,
  /// a negative max_rate or coefficient, or an unknown resource.
  ActivityId start(ActivitySpec spec, std::span<const ResourceUse> uses);
  /// Runs a parked activity (keep_linked, completed) again with `work`, `on_done` and
  /// `latency` (pacing), as if started now over the same resources, without relinking them.
  /// When none of its resources has another user, its rate is its bound at once (no solve);
  /// restarted at the instant it parked with the same cap, it keeps its rate (no solve).
  /// Throws std::invalid_argument if `id` is not parked, work is negative or latency is.
  void restart(ActivityId id, double work, std::function<void()> on_done,
               Time latency = Time::zero());
  /// Starts an activity that has run alone on its resources since `since` (<= now): linked
  /// from now on, with the rate (its bound) and the predicted finish it got at `since`,
  /// exactly as if it had been started then while nothing else used its resources. For work
  /// advanced outside the model while it had its resources to itself (the replay's solo
  /// kernel runs), brought back in before something else joins them. Throws
  /// std::invalid_argument if one of its resources has a linked user, if since is after
  /// now, and on what start() rejects.
  ActivityId start_since(ActivitySpec spec, std::span<const ResourceUse> uses, Time since);
  /// Stops an activity, running or parked, without calling on_done. No effect if finished.
  void cancel(ActivityId id);

  bool active(ActivityId id) const;
  /// Current rate (units/s) and remaining work as of now; 0 for an inactive id.
  double rate(ActivityId id) const;
  double remaining(ActivityId id) const;
  /// How many activities are linked to a resource (running, parked, or started this instant).
  std::size_t users(ResourceId id) const;
  /// A resource's capacity and an activity's coefficient on it.
  struct CapacityUse {
    double capacity = 0;
    double coefficient = 0;
  };
  /// When an activity of `work` started at `start` alone on distinct resources of the given
  /// capacities finishes: at its bound (capacity over its coefficient, min over its finite
  /// resources), which is the rate start() and resolve() give it, with the same rounding;
  /// `start` if nothing bounds it. No resource is read: the caller knows the capacities
  /// (the replay's solo runs, on a GPU's SMs and HBM, whose capacities it set).
  static Time finish_alone(double work, std::span<const CapacityUse> uses, Time start);
  /// Sum of current rates times coefficients on a resource (units/s).
  double load(ResourceId id) const;
  std::size_t active_count() const;

  // Used by the Simulator's run loop.
  /// Time of the earliest completion under current rates; infinite if none.
  Time next_completion() const;
  /// Completes every activity finishing at `t` (in start order) and runs their on_done.
  void complete_due(Time t);
  /// Recomputes rates for the components changed since the last call.
  void resolve();
  bool has_pending_changes() const;
  std::uint64_t completions() const { return completions_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::uint64_t completions_ = 0;

 public:
  ~FluidModel();
  FluidModel(const FluidModel&) = delete;
  FluidModel& operator=(const FluidModel&) = delete;
};

}  // namespace strait::sim::engine
