#pragma once
// ReplayTrace: what the replay records of its traced ranks through a TraceSink: each op's
// span (a collective's wait for its peers apart), and an arrow from the member whose call
// completed a collective to each other traced member, showing whom they waited for.

#include <cstdint>
#include <string>

#include "sim/core/trace_sink.hpp"
#include "sim/core/units.hpp"
#include "sim/run/detail/collective_rendezvous.hpp"
#include "sim/run/detail/rank_state.hpp"
#include "sim/run/replay_graph.hpp"

namespace strait::sim::run::detail {

class ReplayTrace {
 public:
  ReplayTrace(TraceSink& sink, const ReplayGraph& graph) : sink_(sink), graph_(graph) {}

  /// Names rank r in viewers: "rank r (node)".
  void name_rank(std::int32_t r, const std::string& node);
  /// Op `index` of traced rank r (`rank`, which keeps its ops), from `op_start` (when its
  /// stream started it) to its end: a kernel's span with its family, step, flops and
  /// bytes; a collective's wait for peers until it started, then its span with its step,
  /// bytes, operation and group.
  void record_op(std::int32_t r, const RankState& rank, std::int32_t index, Time op_start);
  /// Member `last`'s call completed the collective of `members` at `now`: an arrow from it
  /// to every other traced member.
  void record_waits(const CallMembers& members, std::int32_t last, const RankState* ranks,
                    Time now);

 private:
  TraceSink& sink_;
  const ReplayGraph& graph_;
  std::uint64_t next_flow_ = 0;
};

}  // namespace strait::sim::run::detail
