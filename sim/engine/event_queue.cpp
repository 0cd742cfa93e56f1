#include "sim/engine/event_queue.hpp"

#include <utility>

namespace strait::sim::engine {

void EventQueue::schedule(Time at, Action action, Touches touches) {
  std::uint32_t slot;
  if (free_slots_.empty()) {
    slot = static_cast<std::uint32_t>(actions_.size());
    actions_.push_back(std::move(action));
  } else {
    slot = free_slots_.back();
    free_slots_.pop_back();
    actions_[slot] = std::move(action);
  }
  const Key key{at, next_sequence_++, slot, touches};
  // Sift up: move parents down until the key's place is found.
  std::size_t i = heap_.size();
  heap_.push_back(key);
  while (i > 0) {
    const std::size_t parent = (i - 1) / 4;
    if (!before(key, heap_[parent])) break;
    heap_[i] = heap_[parent];
    i = parent;
  }
  heap_[i] = key;
}

void EventQueue::pop() {
  const Key last = heap_.back();
  heap_.pop_back();
  const std::size_t n = heap_.size();
  if (n == 0) return;
  // Sift the last key down from the root: move the least child up while it precedes it.
  std::size_t i = 0;
  for (;;) {
    const std::size_t first = 4 * i + 1;
    if (first >= n) break;
    std::size_t least = first;
    const std::size_t end = first + 4 < n ? first + 4 : n;
    for (std::size_t c = first + 1; c < end; ++c) {
      if (before(heap_[c], heap_[least])) least = c;
    }
    if (!before(heap_[least], last)) break;
    heap_[i] = heap_[least];
    i = least;
  }
  heap_[i] = last;
}

void EventQueue::run_due(Time t) {
  // The action is moved out and popped before it runs: it may schedule more events,
  // which reallocates the heap and the slab.
  while (!heap_.empty() && heap_.front().at <= t) {
    const std::uint32_t slot = heap_.front().slot;
    pop();
    if (!heap_.empty()) {
      __builtin_prefetch(&actions_[heap_.front().slot]);
      heap_.front().touches.prefetch();
    }
    Action action = std::move(actions_[slot]);
    actions_[slot] = nullptr;
    free_slots_.push_back(slot);
    ++events_run_;
    if (action) action();
  }
}

}  // namespace strait::sim::engine
