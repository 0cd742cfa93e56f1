#include "sim/workload/collective_calls.hpp"

#include <algorithm>
#include <utility>

namespace strait::sim::workload {

std::vector<std::int32_t> call_numbers(const std::vector<Op>& ops) {
  std::vector<std::int32_t> out(ops.size(), kNotACall);
  // Calls so far per group: a rank is in a handful of groups, searched linearly (a vector
  // over all groups would cost as much as the graph's groups at every rank).
  std::vector<std::pair<int, std::int32_t>> issued;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].kind != OpKind::kCollective) continue;
    const int g = ops[i].collective.group;
    auto it =
        std::find_if(issued.begin(), issued.end(), [g](const auto& e) { return e.first == g; });
    if (it == issued.end()) it = issued.insert(issued.end(), {g, 0});
    out[i] = it->second++;
  }
  return out;
}

GroupCalls::GroupCalls(const OpGraph& graph) {
  index(graph, std::vector<bool>(graph.groups.size(), true));
}

GroupCalls::GroupCalls(const OpGraph& graph, int rank) {
  std::vector<bool> indexed(graph.groups.size(), false);
  for (std::size_t g = 0; g < graph.groups.size(); ++g) {
    const auto& members = graph.groups[g].ranks;
    indexed[g] = std::find(members.begin(), members.end(), rank) != members.end();
  }
  index(graph, indexed);
}

void GroupCalls::index(const OpGraph& graph, const std::vector<bool>& indexed) {
  calls_.assign(graph.groups.size(), {});
  // Each rank's (group, position) memberships of the indexed groups, then each rank's ops
  // once, in order.
  std::vector<std::vector<std::pair<int, std::size_t>>> member_of(graph.ranks.size());
  for (std::size_t g = 0; g < graph.groups.size(); ++g) {
    if (!indexed[g]) continue;
    const auto& members = graph.groups[g].ranks;
    calls_[g].resize(members.size());
    for (std::size_t j = 0; j < members.size(); ++j) {
      const auto r = static_cast<std::size_t>(members[j]);
      if (members[j] >= 0 && r < member_of.size())
        member_of[r].emplace_back(static_cast<int>(g), j);
    }
  }
  for (std::size_t r = 0; r < graph.ranks.size(); ++r) {
    if (member_of[r].empty()) continue;
    const auto& ops = graph.ranks[r].ops;
    for (std::size_t i = 0; i < ops.size(); ++i) {
      if (ops[i].kind != OpKind::kCollective) continue;
      const int g = ops[i].collective.group;
      for (const auto& [group, position] : member_of[r]) {
        if (group == g)
          calls_[static_cast<std::size_t>(g)][position].push_back(static_cast<std::int32_t>(i));
      }
    }
  }
}

}  // namespace strait::sim::workload
