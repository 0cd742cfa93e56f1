#pragma once
// Simulator: the event core of strait. An event is "at time t, call this"; fluid
// activities (kernels, flows, copies) progress between events at rates set by the
// FluidModel. The run loop fits on one screen (see simulator.cpp).
//
// Determinism: events at equal times run in the order they were scheduled; activities
// finishing at the same instant complete in the order they were started, all in one
// step, before the rates are recomputed once for that instant.

#include <cstdint>
#include <functional>
#include <memory>

#include "sim/core/units.hpp"
#include "sim/engine/event_queue.hpp"
#include "sim/engine/fluid_model.hpp"

namespace strait::sim::engine {

class Simulator {
 public:
  Simulator();
  Simulator(const Simulator&) = delete;
  Simulator& operator=(const Simulator&) = delete;

  Time now() const { return now_; }
  /// Calls `action` at now() + delay (delay >= 0); `touches` as EventQueue::schedule.
  void after(Time delay, EventQueue::Action action, Touches touches = {}) {
    queue_.schedule(now_ + delay, std::move(action), touches);
  }
  /// Calls `action` at absolute time `at` (at >= now()).
  void at(Time at, EventQueue::Action action) { queue_.schedule(at, std::move(action)); }

  /// The fluid model whose activities this simulator advances.
  FluidModel& fluid() { return fluid_; }
  const FluidModel& fluid() const { return fluid_; }

  /// Runs until no event and no activity is left, or until `until`. Returns the end time.
  Time run(Time until = Time::infinite());

  /// Events handled so far: scheduled events run plus activity completions.
  std::uint64_t events() const { return queue_.events_run() + fluid_.completions(); }

 private:
  Time now_ = Time::zero();
  EventQueue queue_;
  FluidModel fluid_;
};

}  // namespace strait::sim::engine
