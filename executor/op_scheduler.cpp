#include "executor/op_scheduler.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "sim/core/error.hpp"
#include "sim/workload/collective_calls.hpp"

namespace strait::executor {

using sim::workload::OpKind;

OpScheduler::OpScheduler(const sim::workload::RankOps& rank, std::size_t stream_count,
                         std::size_t group_count)
    : ops_(rank.ops),
      stream_ops_(stream_count),
      stream_head_(stream_count, 0),
      stream_busy_(stream_count, false),
      call_number_(sim::workload::call_numbers(rank.ops)),
      group_calls_(group_count, 0),
      deps_left_(rank.ops.size(), 0),
      dependents_(rank.ops.size()) {
  for (std::size_t i = 0; i < ops_.size(); ++i) {
    const auto& op = ops_[i];
    const auto index = static_cast<std::int32_t>(i);
    if (op.stream < 0 || static_cast<std::size_t>(op.stream) >= stream_count)
      throw Error(fmt::format("op graph: rank {} op {} is on stream {}, which does not exist",
                              rank.rank, i, op.stream));
    stream_ops_[static_cast<std::size_t>(op.stream)].push_back(index);
    if (op.kind == OpKind::kCollective) {
      const auto g = op.collective.group;
      if (g < 0 || static_cast<std::size_t>(g) >= group_count)
        throw Error(fmt::format(
            "op graph: rank {} op {} calls a collective on group {}, which does not exist",
            rank.rank, i, g));
    }
    for (auto d : op.deps) {
      if (d < 0 || d >= index)
        throw Error(fmt::format("op graph: rank {} op {} depends on op {}, which is not earlier",
                                rank.rank, i, d));
      ++deps_left_[i];
      dependents_[static_cast<std::size_t>(d)].push_back(index);
    }
  }
}

bool OpScheduler::is_ready(std::int32_t index) const {
  const auto i = static_cast<std::size_t>(index);
  const auto& op = ops_[i];
  if (deps_left_[i] > 0) return false;
  if (op.kind == OpKind::kCollective) {
    const auto g = static_cast<std::size_t>(op.collective.group);
    if (call_number_[i] != group_calls_[g]) return false;
  }
  return true;
}

std::vector<std::int32_t> OpScheduler::ready() const {
  std::vector<std::int32_t> out;
  for (std::size_t s = 0; s < stream_ops_.size(); ++s) {
    if (stream_busy_[s] || stream_head_[s] >= stream_ops_[s].size()) continue;
    const auto index = stream_ops_[s][stream_head_[s]];
    if (is_ready(index)) out.push_back(index);
  }
  std::sort(out.begin(), out.end());
  return out;
}

void OpScheduler::start(std::int32_t index) {
  const auto& op = ops_[static_cast<std::size_t>(index)];
  const auto s = static_cast<std::size_t>(op.stream);
  stream_busy_[s] = true;
  ++stream_head_[s];
  if (op.kind == OpKind::kCollective) ++group_calls_[static_cast<std::size_t>(op.collective.group)];
  ++running_;
}

void OpScheduler::finish(std::int32_t index) {
  const auto& op = ops_[static_cast<std::size_t>(index)];
  stream_busy_[static_cast<std::size_t>(op.stream)] = false;
  --running_;
  ++finished_;
  for (auto next : dependents_[static_cast<std::size_t>(index)])
    --deps_left_[static_cast<std::size_t>(next)];
}

}  // namespace strait::executor
