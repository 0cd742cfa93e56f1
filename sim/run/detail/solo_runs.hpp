#pragma once
// Solo runs (flow mode). A kernel that finds its rank's SMs and HBM unused runs at its
// bound, the rate the engine gives it alone, and so does every kernel it hands over to
// (OpShape::hands_over: the next on its stream, waiting on nothing else, seen by nobody
// else) while they stay alone. Such a run is advanced by the replay instead of the engine:
// the kernels' launches and ends follow from their costs (cost::GpuModel::end_alone), and
// one event at the run's end finishes them all, while the rank's state is in cache,
// instead of a launch event and an activity per kernel. Before anything else starts on the
// SMs or HBM (a collective's hold, a kernel of another stream), the replay cuts the run
// short and hands it back to the engine at that instant: kernels ended by then are
// finished, the one running becomes an activity that has run alone since it started
// (FluidModel::start_since: the rate and predicted end it had), the one launching gets its
// launch event. So every time is what the engine gives kernel by kernel (tests/run:
// SoloRunsOf, OpReplay.SoloRunsMatchKernelByKernel...); only equal-time callbacks may run
// in another order. Kernels' launches and ends were about 90% of a flow run's events, each
// a cache miss on the rank's state and the heaps.
//
// Here: the run's arithmetic on a rank's state. The Replayer (op_replay.cpp) begins, ends
// and cuts runs with it.

#include <cstdint>

#include "sim/cost/gpu_model.hpp"
#include "sim/run/detail/rank_state.hpp"

namespace strait::sim::run::detail {

/// When kernel op `op` of `rank`, reached by its stream at `launched`, ends alone.
inline Time solo_end(const RankState& rank, std::int32_t op, Time launched) {
  return cost::GpuModel::end_alone(rank.kernel(op), launched);
}

/// Events the engine takes for kernel op `op`'s launch: one after a launch overhead.
inline std::uint64_t launch_events(const RankState& rank, std::int32_t op) {
  return rank.kernel(op).launch_overhead > Time::zero() ? 1 : 0;
}

/// When a run from kernel op `op`, reached by its stream at `now`, ends alone: each
/// kernel hands over to the next at its end.
inline Time solo_run_end(const RankState& rank, std::int32_t op, Time now) {
  Time end = now;
  for (; op != kNone; op = rank.shape->hands_over[u(op)]) end = solo_end(rank, op, end);
  return end;
}

/// A kernel of a solo run and when it ends alone.
struct SoloKernel {
  std::int32_t op;
  Time end;
};

/// Walks `rank`'s solo run: each kernel that ends by `until` and hands over to a next one
/// is handed over (`hand_over(op, end)`, which moves solo.op and solo.launched on). Returns
/// the first kernel that does not: still running or launching at `until`, or the run's
/// last; its stream reached it at solo.launched.
template <class HandOver>
SoloKernel advance_solo(RankState& rank, Time until, HandOver&& hand_over) {
  for (;;) {
    const std::int32_t op = rank.solo.op;
    const Time end = solo_end(rank, op, rank.solo.launched);
    if (end > until || rank.shape->hands_over[u(op)] == kNone) return {op, end};
    hand_over(op, end);
  }
}

}  // namespace strait::sim::run::detail
