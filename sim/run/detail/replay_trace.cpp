#include "sim/run/detail/replay_trace.hpp"

#include <fmt/format.h>

namespace strait::sim::run::detail {

using workload::Op;
using workload::OpKind;

void ReplayTrace::name_rank(std::int32_t r, const std::string& node) {
  sink_.set_rank_name(r, fmt::format("rank {} ({})", r, node));
}

void ReplayTrace::record_op(std::int32_t r, const RankState& rank, std::int32_t index,
                            Time op_start) {
  auto& tl = sink_;
  const auto i = u(index);
  const Op& op = (*graph_.kept_ops(r))[i];
  const Time op_end = rank.ends[index];
  const auto track = tl.track(graph_.streams()[u(op.stream)]);
  const auto name = tl.name(graph_.names()[u(op.name)]);
  if (op.kind == OpKind::kKernel) {
    tl.add_span(r, track, name, tl.name(cost::to_string(op.kernel.kind)), op_start, op_end,
                {TraceArg("step", op.step), TraceArg("flops", op.kernel.flops),
                 TraceArg("hbm_bytes", op.kernel.hbm_bytes)});
  } else {
    const auto category = tl.name(workload::to_string(op.collective.comm_class));
    const Time started = rank.started(index);
    if (started > op_start) {
      tl.add_span(r, track, tl.name("wait for peers"), category, op_start, started);
    }
    const auto& group = graph_.groups()[u(op.collective.group)];
    tl.add_span(r, track, name, category, started, op_end,
                {TraceArg("step", op.step), TraceArg("bytes", op.collective.bytes),
                 TraceArg("op", network::to_string(op.collective.op)),
                 TraceArg("group", group.name), TraceArg("group_size", group.ranks.size())});
  }
}

void ReplayTrace::record_waits(const CallMembers& members, std::int32_t last,
                               const RankState* ranks, Time now) {
  auto& tl = sink_;
  const auto& last_state = ranks[last];
  std::int32_t last_op = kNone;
  for (const auto& [rank, op] : members) {
    if (rank == last) last_op = op;
  }
  const auto from_track = tl.track(graph_.streams()[u(last_state.shape->stream[u(last_op)])]);
  for (const auto& [rank, op] : members) {
    const auto& st = ranks[rank];
    if (rank == last || !st.traced) continue;
    const auto to_track = tl.track(graph_.streams()[u(st.shape->stream[u(op)])]);
    tl.add_flow(next_flow_++, TraceFlowEnd{last, from_track, now},
                TraceFlowEnd{rank, to_track, now}, "waited for", "collective");
  }
}

}  // namespace strait::sim::run::detail
