#pragma once
// CollectiveRendezvous: NCCL's rule that the k-th call on a group is one collective, as the
// replay meets it. A collective op's call number on its group is its shape's (numbered by
// sim/workload/collective_calls.hpp, as the executor and the planner number them); call k
// launches when every member has issued it, at the instant the last one did, with its
// members by group position. And collective_spec: the network collective that a call's
// members make.

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "sim/core/units.hpp"
#include "sim/network/collective.hpp"
#include "sim/run/detail/rank_state.hpp"
#include "sim/run/replay_graph.hpp"

namespace strait::sim::run::detail {

/// The members of one call on a group, by group position: (rank, op).
using CallMembers = std::vector<std::pair<std::int32_t, std::int32_t>>;

/// One call on a group as its members issue it.
struct GroupCall {
  int arrived = 0;  // members so far; kLaunched once launched
  Time latest;      // when the last member so far issued it
  CallMembers members;
};

// A group's collectives from `first`, the first not yet launched: calls first, first + 1,
// ... They launch in call order where each member issues its calls in call order (the
// builder's graphs: the arrival completing k + 1 comes after every arrival at k); a call
// completed before an earlier one (a member issued them on two streams, the later first)
// launches at once and keeps its slot until the calls before it launch. A vector (no
// allocation while empty) serves as the queue.
struct PendingCalls {
  std::int32_t first = 0;
  std::vector<GroupCall> calls;
  // The members of the last call launched in dataflow order, kept for the next call's
  // (no allocation per collective).
  CallMembers spare;
};

class CollectiveRendezvous {
 public:
  explicit CollectiveRendezvous(const ReplayGraph& graph)
      : graph_(graph), pending_(graph.groups().size()) {}

  /// Rank r (`rank`) issues its op `index`, a collective on group g, at `now`. Returns the
  /// call's index on the group when this arrival completes it (every member has issued
  /// it), else kNone. Errors: a group that does not exist, or that r is not a member of.
  std::int32_t arrive(RankState& rank, std::int32_t r, std::int32_t index, std::int32_t g,
                      Time now) {
    if (g < 0 || u(g) >= graph_.groups().size()) no_such_group(r, g);
    RankState::Membership* member = rank.membership(g);
    if (!member) not_a_member(r, g);
    const auto k = rank.call(index).call;
    const auto size = graph_.groups()[u(g)].ranks.size();
    auto& pending = pending_[u(g)];
    const auto at = u(k - pending.first);
    if (at >= pending.calls.size()) pending.calls.resize(at + 1);
    auto& call = pending.calls[at];
    if (call.members.empty()) {
      call.members.swap(pending.spare);
      call.members.assign(size, {kNone, kNone});
    }
    call.members[u(member->position)] = {r, index};
    call.latest = std::max(call.latest, now);
    if (++call.arrived < static_cast<int>(size)) return kNone;
    return k;
  }
  /// Takes group g's call k, which the last arrival completed, off the pending calls.
  GroupCall launch(std::int32_t g, std::int32_t k);
  static constexpr int kLaunched = -1;
  /// Keeps a launched call's member list for the group's next call.
  void recycle(std::int32_t g, CallMembers members) { pending_[u(g)].spare = std::move(members); }

 private:
  [[noreturn]] void no_such_group(std::int32_t r, std::int32_t g) const;
  [[noreturn]] void not_a_member(std::int32_t r, std::int32_t g) const;

  const ReplayGraph& graph_;
  std::vector<PendingCalls> pending_;  // by group
};

/// Sets `spec` (its buffers kept) to the collective that `members` make, group g's call:
/// the first member's operation, algorithm, bytes, priority and class; each member's GPU;
/// an all_to_all's send sizes where members differ; an all_to_allv's send matrix, one row
/// per member (an error when a row's length is not the group's size).
void collective_spec(network::CollectiveSpec& spec, const CallMembers& members,
                     const RankState* ranks, const ReplayGraph& graph, std::int32_t g);

}  // namespace strait::sim::run::detail
