#include "sim/engine/simulator.hpp"

#include <algorithm>

namespace strait::sim::engine {

Simulator::Simulator() : fluid_([this] { return now_; }) {}

Time Simulator::run(Time until) {
  // Activities started before run() (or since the last run) get their rates first.
  fluid_.resolve();
  for (;;) {
    const Time t = std::min(queue_.next_time(), fluid_.next_completion());
    if (t > until || t.is_infinite()) {
      if (!until.is_infinite()) now_ = std::max(now_, until);
      return now_;
    }
    now_ = t;
    // Everything due at t happens before rates are recomputed once for this instant;
    // completions and events may start zero-work activities or schedule events at t.
    do {
      fluid_.complete_due(t);
      queue_.run_due(t);
    } while (queue_.next_time() <= t || fluid_.next_completion() <= t);
    fluid_.resolve();
  }
}

}  // namespace strait::sim::engine
