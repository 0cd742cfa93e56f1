#pragma once
// NCCL's rule, coded once: the k-th collective a rank issues on a process group is its part
// of the group's k-th collective, which starts once every member has issued it. A rank
// issues a group's collectives in op order (the order the builder made them in, which
// every member keeps: op_graph.hpp), so a call's number is its rank in that order. The
// replay (sim/run), the executor (what each peer sends, when a call may start, when it
// started) and the planner's closed form all number and match calls here.
//
//   const auto k = call_numbers(graph.ranks[r].ops);  // op i is call k[i] on its group
//   const GroupCalls calls(graph);                    // every group's calls by member
//   calls.op(g, j, k[i])                              // member j's op in that call

#include <cstdint>
#include <vector>

#include "sim/workload/op_graph.hpp"

namespace strait::sim::workload {

inline constexpr std::int32_t kNotACall = -1;

/// Each op's call number on its group: how many collectives on the same group come before
/// it in `ops` (one rank's ops in issue order); kNotACall for a kernel.
std::vector<std::int32_t> call_numbers(const std::vector<Op>& ops);

/// The collective calls on an op graph's groups, member by member: member j (group
/// position) of group g issues its call k as op ops(g, j)[k] of rank groups[g].ranks[j].
/// A rank's collective on a group it is not a member of, or on no group, is left out (the
/// replay and the executor refuse such a graph with their own errors).
class GroupCalls {
 public:
  /// Every group of `graph`.
  explicit GroupCalls(const OpGraph& graph);
  /// The groups that `rank` is a member of; the others hold no calls.
  GroupCalls(const OpGraph& graph, int rank);

  /// Member `member`'s collective ops on group g, in issue order (op indices of its rank).
  const std::vector<std::int32_t>& ops(std::size_t g, std::size_t member) const {
    return calls_[g][member];
  }
  /// Member `member`'s op in group g's call k, or kNotACall when it makes fewer calls.
  std::int32_t op(std::size_t g, std::size_t member, std::int32_t k) const {
    const auto& list = calls_[g][member];
    return k >= 0 && static_cast<std::size_t>(k) < list.size() ? list[static_cast<std::size_t>(k)]
                                                               : kNotACall;
  }
  /// The members of group g (its size; 0 for a group not indexed).
  std::size_t members(std::size_t g) const { return calls_[g].size(); }

 private:
  void index(const OpGraph& graph, const std::vector<bool>& indexed);

  std::vector<std::vector<std::vector<std::int32_t>>> calls_;  // [group][member][k]
};

}  // namespace strait::sim::workload
