#pragma once
// OrderedWriter: hands finished points to SweepOutput in point order and keeps the
// progress figures. Points may finish in any order (threads, MPI ranks); a point is
// held back until every point before it has been written.

#include <chrono>
#include <map>
#include <mutex>

#include "sweep/detail/sweep_output.hpp"
#include "sweep/sweep.hpp"

namespace strait::sweep::detail {

class OrderedWriter {
 public:
  OrderedWriter(SweepOutput& output, std::size_t total,
                std::function<void(const SweepProgress&)> progress);

  /// Writes `outcome` now (it must be the next point). Not thread-safe.
  void write(const PointOutcome& outcome);
  /// Thread-safe: writes `outcome` and any held points that follow it, or holds it.
  void submit(PointOutcome outcome);

  /// The figures so far (call when no write is in flight).
  const SweepProgress& progress() const { return progress_; }
  /// Whether every point of the sweep has been written.
  bool complete() const { return progress_.done == progress_.total; }

 private:
  void report();

  SweepOutput& output_;
  std::function<void(const SweepProgress&)> on_progress_;
  std::chrono::steady_clock::time_point start_;
  SweepProgress progress_;
  std::mutex mutex_;                          // guards held_ for submit()
  std::map<std::size_t, PointOutcome> held_;  // finished, waiting for earlier points
};

}  // namespace strait::sweep::detail
