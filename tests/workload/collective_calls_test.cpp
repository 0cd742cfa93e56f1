#include "sim/workload/collective_calls.hpp"

#include <gtest/gtest.h>

namespace strait::sim::workload {
namespace {

Op collective(int group) {
  Op op;
  op.kind = OpKind::kCollective;
  op.collective.group = group;
  return op;
}

// Groups "dp" {0, 1, 2} (group 0) and "pair" {2, 0} (group 1); rank 1 also calls on
// "pair", which it is not in. Ops (k: kernel, d: dp, p: pair):
//   rank 0: k d p d p      rank 1: d k d p      rank 2: p d d
OpGraph three_ranks() {
  OpGraph g;
  g.groups = {{"dp", {0, 1, 2}}, {"pair", {2, 0}}};
  g.ranks.resize(3);
  const Op kernel;
  g.ranks[0].ops = {kernel, collective(0), collective(1), collective(0), collective(1)};
  g.ranks[1].ops = {collective(0), kernel, collective(0), collective(1)};
  g.ranks[2].ops = {collective(1), collective(0), collective(0)};
  for (int r = 0; r < 3; ++r) g.ranks[static_cast<std::size_t>(r)].rank = r;
  return g;
}

// A call's number is the count of the rank's earlier collectives on the same group.
TEST(CollectiveCalls, EachCallIsNumberedOnItsOwnGroupInOpOrder) {
  const OpGraph g = three_ranks();
  EXPECT_EQ(call_numbers(g.ranks[0].ops), (std::vector<std::int32_t>{kNotACall, 0, 0, 1, 1}));
  EXPECT_EQ(call_numbers(g.ranks[1].ops), (std::vector<std::int32_t>{0, kNotACall, 1, 0}));
  EXPECT_EQ(call_numbers(g.ranks[2].ops), (std::vector<std::int32_t>{0, 0, 1}));
  EXPECT_TRUE(call_numbers({}).empty());
}

// Member j of a group issues the group's call k as ops(g, j)[k]: dp's call 1 is rank 0's op
// 3, rank 1's op 2 and rank 2's op 2; pair's members are by position (rank 2 first), and
// rank 1's call on pair is no member's.
TEST(CollectiveCalls, TheKthCallsOfTheMembersAreMatchedByPosition) {
  const OpGraph g = three_ranks();
  const GroupCalls calls(g);
  ASSERT_EQ(calls.members(0), 3u);
  EXPECT_EQ(calls.ops(0, 0), (std::vector<std::int32_t>{1, 3}));
  EXPECT_EQ(calls.ops(0, 1), (std::vector<std::int32_t>{0, 2}));
  EXPECT_EQ(calls.ops(0, 2), (std::vector<std::int32_t>{1, 2}));
  ASSERT_EQ(calls.members(1), 2u);
  EXPECT_EQ(calls.ops(1, 0), (std::vector<std::int32_t>{0}));
  EXPECT_EQ(calls.ops(1, 1), (std::vector<std::int32_t>{2, 4}));
  EXPECT_EQ(calls.op(0, 1, 1), 2);
  EXPECT_EQ(calls.op(1, 0, 1), kNotACall);  // rank 2 makes one call on pair
  EXPECT_EQ(calls.op(1, 1, -1), kNotACall);
}

// Indexed for one rank: only the groups it is a member of hold calls.
TEST(CollectiveCalls, OneRanksIndexHoldsItsGroupsOnly) {
  const OpGraph g = three_ranks();
  const GroupCalls of_rank_1(g, 1);
  EXPECT_EQ(of_rank_1.members(0), 3u);
  EXPECT_EQ(of_rank_1.members(1), 0u);
  EXPECT_EQ(of_rank_1.ops(0, 2), (std::vector<std::int32_t>{1, 2}));
  const GroupCalls of_rank_2(g, 2);
  EXPECT_EQ(of_rank_2.members(1), 2u);
}

}  // namespace
}  // namespace strait::sim::workload
