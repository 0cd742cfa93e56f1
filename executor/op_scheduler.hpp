#pragma once
// OpScheduler: which of one rank's ops may start now, by the OpGraph's rules
// (sim/workload/op_graph.hpp), with no clock and no MPI, so the executor's loop and its
// tests share it.
//
// An op is ready when every dependency has finished, it is the first not-yet-started op
// of its stream and its stream is free (the previous op of the stream has finished), and,
// for a collective, it is this rank's next collective on its group by op index: MPI, like
// NCCL, matches the k-th call on a communicator on every member, so every rank must issue
// a group's collectives in one order, and op index order is the order the builder issued
// them in (deps point backwards, so that order never blocks progress). Calls are numbered
// as the simulator numbers them (sim/workload/collective_calls.hpp).

#include <cstdint>
#include <vector>

#include "sim/workload/op_graph.hpp"

namespace strait::executor {

class OpScheduler {
 public:
  /// Schedules `rank`'s ops; `group_count` = graph.groups.size().
  OpScheduler(const sim::workload::RankOps& rank, std::size_t stream_count,
              std::size_t group_count);

  /// Ops that may start now, ascending by index (each returned once until started).
  std::vector<std::int32_t> ready() const;
  /// Marks op `index` started (it must be ready).
  void start(std::int32_t index);
  /// Marks op `index` finished.
  void finish(std::int32_t index);
  bool done() const { return finished_ == ops_.size(); }
  std::size_t running() const { return running_; }

 private:
  bool is_ready(std::int32_t index) const;

  const std::vector<sim::workload::Op>& ops_;
  std::vector<std::vector<std::int32_t>> stream_ops_;  // op indices per stream, in order
  std::vector<std::size_t> stream_head_;               // next op to start per stream
  std::vector<bool> stream_busy_;
  std::vector<std::int32_t> call_number_;  // each op's call on its group (collective_calls.hpp)
  std::vector<std::int32_t> group_calls_;  // calls started per group
  std::vector<std::int32_t> deps_left_;
  std::vector<std::vector<std::int32_t>> dependents_;
  std::size_t finished_ = 0;
  std::size_t running_ = 0;
};

}  // namespace strait::executor
