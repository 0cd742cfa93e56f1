#include "sim/engine/event_queue.hpp"

#include <algorithm>
#include <utility>

namespace strait::sim::engine {

void EventQueue::schedule(Time at, Action action) {
  heap_.push_back(Entry{at, next_sequence_++, std::move(action)});
  std::push_heap(heap_.begin(), heap_.end(), Later{});
}

void EventQueue::run_due(Time t) {
  // The action is moved out and popped before it runs: it may schedule more events,
  // which reallocates heap_.
  while (!heap_.empty() && heap_.front().at <= t) {
    std::pop_heap(heap_.begin(), heap_.end(), Later{});
    Action action = std::move(heap_.back().action);
    heap_.pop_back();
    ++events_run_;
    if (action) action();
  }
}

}  // namespace strait::sim::engine
