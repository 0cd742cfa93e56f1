#pragma once
// EventQueue: a min-heap of (time, sequence number) keys, each naming its action in a slab.
// Equal times pop in the order they were scheduled, so runs are deterministic.
//
// Why this layout: at 131,072 ranks the queue holds hundreds of thousands of events and
// runs tens of millions; a binary heap of (time, sequence, std::function) entries (48
// bytes) missed the cache at nearly every level of every pop. Keys are 40 bytes and the
// heap is 4-ary (half the levels, a node's children within three cache lines); actions
// stay where they were scheduled until they run. The order is the same strict order of
// (time, sequence), so the pops are exactly those of the binary heap.
//
// An event may name the memory its action reads first (Touches): when the event reaches
// the front, that memory and its action are prefetched while the event before it runs.

#include <cstdint>
#include <functional>
#include <vector>

#include "sim/core/huge_pages.hpp"
#include "sim/core/units.hpp"
#include "sim/engine/touches.hpp"

namespace strait::sim::engine {

class EventQueue {
 public:
  using Action = std::function<void()>;

  /// Schedules `action` at `at`. `touches`: memory the action reads first (e.g. its rank's
  /// state), prefetched while the event before it runs.
  void schedule(Time at, Action action, Touches touches = {});
  bool empty() const { return heap_.empty(); }
  /// Time of the earliest event; Time::infinite() if empty.
  Time next_time() const { return heap_.empty() ? Time::infinite() : heap_.front().at; }
  /// Runs every event scheduled at exactly `t`, including ones scheduled at `t` meanwhile.
  void run_due(Time t);
  std::uint64_t events_run() const { return events_run_; }

 private:
  struct Key {
    Time at;
    std::uint64_t sequence;
    std::uint32_t slot;  // index of the action in actions_
    Touches touches;
  };
  static bool before(const Key& a, const Key& b) {
    return a.at != b.at ? a.at < b.at : a.sequence < b.sequence;
  }
  void pop();  // removes heap_.front()

  HugeVector<Key> heap_;  // 4-ary: children of i are 4i + 1 .. 4i + 4
  HugeVector<Action> actions_;
  std::vector<std::uint32_t> free_slots_;
  std::uint64_t next_sequence_ = 0;
  std::uint64_t events_run_ = 0;
};

}  // namespace strait::sim::engine
