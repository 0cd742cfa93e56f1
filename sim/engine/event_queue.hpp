#pragma once
// EventQueue: a binary heap of (time, sequence number, action). Equal times pop in the
// order they were scheduled, so runs are deterministic.

#include <cstdint>
#include <functional>
#include <vector>

#include "sim/core/units.hpp"

namespace strait::sim::engine {

class EventQueue {
 public:
  using Action = std::function<void()>;

  void schedule(Time at, Action action);
  bool empty() const { return heap_.empty(); }
  /// Time of the earliest event; Time::infinite() if empty.
  Time next_time() const { return heap_.empty() ? Time::infinite() : heap_.front().at; }
  /// Runs every event scheduled at exactly `t`, including ones scheduled at `t` meanwhile.
  void run_due(Time t);
  std::uint64_t events_run() const { return events_run_; }

 private:
  struct Entry {
    Time at;
    std::uint64_t sequence;
    Action action;
  };
  struct Later {
    bool operator()(const Entry& a, const Entry& b) const {
      return a.at != b.at ? a.at > b.at : a.sequence > b.sequence;
    }
  };
  std::vector<Entry> heap_;
  std::uint64_t next_sequence_ = 0;
  std::uint64_t events_run_ = 0;
};

}  // namespace strait::sim::engine
