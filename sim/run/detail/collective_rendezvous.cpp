#include "sim/run/detail/collective_rendezvous.hpp"

#include <fmt/format.h>

#include "sim/core/error.hpp"

namespace strait::sim::run::detail {

GroupCall CollectiveRendezvous::launch(std::int32_t g, std::int32_t k) {
  auto& pending = pending_[u(g)];
  GroupCall& call = pending.calls[u(k - pending.first)];
  GroupCall launched = std::move(call);
  // NOLINTNEXTLINE(bugprone-use-after-move): the moved-from slot is emptied for its next call
  call.members.clear();
  call.arrived = kLaunched;
  while (!pending.calls.empty() && pending.calls.front().arrived == kLaunched) {
    pending.calls.erase(pending.calls.begin());
    ++pending.first;
  }
  return launched;
}

void CollectiveRendezvous::no_such_group(std::int32_t r, std::int32_t g) const {
  throw Error(
      fmt::format("op graph: rank {} calls a collective on group {}, which does not exist", r, g));
}

void CollectiveRendezvous::not_a_member(std::int32_t r, std::int32_t g) const {
  throw Error(
      fmt::format("op graph: rank {} calls a collective on group '{}' it is not a member of", r,
                  graph_.groups()[u(g)].name));
}

namespace {

Bytes bytes_of(const RankState& rank, std::int32_t op, const ReplayGraph& graph) {
  return graph.collective_bytes(*rank.info, rank.shape->slot[u(op)]);
}

}  // namespace

void collective_spec(network::CollectiveSpec& spec, const CallMembers& members,
                     const RankState* ranks, const ReplayGraph& graph, std::int32_t g) {
  const auto [first_rank, first_op] = members[0];
  const CollectiveShape& call = ranks[first_rank].call(first_op);
  const Bytes bytes = bytes_of(ranks[first_rank], first_op, graph);
  spec.gpus.clear();
  spec.send_bytes.clear();
  spec.send_matrix.clear();
  spec.op = call.op;
  spec.algorithm = call.algorithm;
  spec.bytes = bytes;
  spec.priority = call.priority;
  spec.traffic_tag = static_cast<int>(call.comm_class);
  const auto n = members.size();
  spec.gpus.reserve(n);
  for (const auto& [rank, op] : members) spec.gpus.push_back(ranks[rank].info->gpu);
  if (call.op == network::CollectiveOp::kAllToAll) {
    // Compact all-to-all: members may each send a different (uniform) buffer.
    bool differ = false;
    for (const auto& [rank, op] : members)
      differ = differ || bytes_of(ranks[rank], op, graph) != bytes;
    if (differ) {
      spec.send_bytes.reserve(n);
      for (const auto& [rank, op] : members)
        spec.send_bytes.push_back(bytes_of(ranks[rank], op, graph));
    }
  }
  if (call.op == network::CollectiveOp::kAllToAllV) {
    spec.send_matrix.reserve(n * n);
    for (const auto& [rank, op] : members) {
      const auto& st = ranks[rank];
      const auto& row = graph.send_row(*st.info, st.call(op).row);
      if (row.size() != n) {
        throw Error(fmt::format(
            "op graph: all_to_allv on group '{}' has a send row of {} entries for {} members",
            graph.groups()[u(g)].name, row.size(), n));
      }
      spec.send_matrix.insert(spec.send_matrix.end(), row.begin(), row.end());
    }
  }
}

}  // namespace strait::sim::run::detail
