#include "executor/collective_calls.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "sim/core/error.hpp"

namespace strait::executor {

using sim::workload::Op;
using sim::workload::OpKind;

CollectiveCalls::CollectiveCalls(const sim::workload::OpGraph& graph, int rank)
    : graph_(graph),
      rank_(rank),
      calls_(graph, rank),
      call_number_(sim::workload::call_numbers(graph.ranks[static_cast<std::size_t>(rank)].ops)) {
  position_.assign(graph.groups.size(), -1);
  for (std::size_t g = 0; g < graph.groups.size(); ++g) {
    const auto& members = graph.groups[g].ranks;
    const auto it = std::find(members.begin(), members.end(), rank);
    if (it != members.end()) position_[g] = static_cast<int>(it - members.begin());
  }
}

const Op& CollectiveCalls::peer_call(std::size_t index, std::size_t member) const {
  const auto& op = graph_.ranks[static_cast<std::size_t>(rank_)].ops[index];
  const auto g = static_cast<std::size_t>(op.collective.group);
  const auto k = call_number_[index];
  const auto peer_op = calls_.op(g, member, k);
  const int peer = graph_.groups[g].ranks[member];
  if (peer_op == sim::workload::kNotACall)
    throw Error(fmt::format(
        "op graph: rank {} makes {} or more calls on group '{}' but rank {} makes only {}", rank_,
        k + 1, graph_.groups[g].name, peer, calls_.ops(g, member).size()));
  return graph_.ranks[static_cast<std::size_t>(peer)].ops[static_cast<std::size_t>(peer_op)];
}

std::size_t CollectiveCalls::group_of(std::size_t index) const {
  const auto& op = graph_.ranks[static_cast<std::size_t>(rank_)].ops[index];
  const auto g = static_cast<std::size_t>(op.collective.group);
  if (position_[g] < 0)
    throw Error(fmt::format("op graph: rank {} calls a collective on group '{}', not its own",
                            rank_, graph_.groups[g].name));
  return g;
}

CollectiveCalls::PeerBytes CollectiveCalls::all_to_all_bytes(std::size_t index) const {
  const auto& op = graph_.ranks[static_cast<std::size_t>(rank_)].ops[index];
  const auto g = group_of(index);
  const int me = position_[g];
  const bool v = op.collective.op == sim::network::CollectiveOp::kAllToAllV;
  const auto n = graph_.groups[g].ranks.size();
  PeerBytes out;
  for (std::size_t j = 0; j < n; ++j) {
    const Op& peer = j == static_cast<std::size_t>(me) ? op : peer_call(index, j);
    out.send.push_back(v ? op.collective.send_row.at(j)
                         : op.collective.bytes / static_cast<std::int64_t>(n));
    out.recv.push_back(v ? peer.collective.send_row.at(static_cast<std::size_t>(me))
                         : peer.collective.bytes / static_cast<std::int64_t>(n));
  }
  return out;
}

}  // namespace strait::executor
