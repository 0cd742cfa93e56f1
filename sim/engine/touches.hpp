#pragma once
// Touches: the memory an event's action or an activity's on_done reads first, named when
// it is scheduled. When it becomes the next to run, the engine prefetches it while the
// one before it runs: at 16,384 ranks a rank's state and its next kernel's costs are
// cache misses at nearly every event. A hint only: it changes no order and no result.

namespace strait::sim::engine {

struct Touches {
  const void* first = nullptr;   // e.g. the rank's replay state
  const void* second = nullptr;  // e.g. the rank's next kernel's costs
  void prefetch() const {
    if (first != nullptr) __builtin_prefetch(first);
    if (second != nullptr) __builtin_prefetch(second);
  }
};

}  // namespace strait::sim::engine
