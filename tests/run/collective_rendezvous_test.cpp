#include "sim/run/detail/collective_rendezvous.hpp"

#include <gtest/gtest.h>

#include "sim/core/error.hpp"

namespace strait::sim::run::detail {
namespace {

// Groups "dp" {0, 1, 2} and "pair" {2, 0} over three ranks, each rank's state knowing its
// memberships (group, position), as the replay sets them up, and, through its shape, each
// op's call number on its group (calls(): -1 for an op that is no collective).
struct ThreeRanks {
  ReplayGraph graph{network::NetworkMode::kAnalytical};
  std::vector<RankState> ranks = std::vector<RankState>(3);
  std::vector<OpShape> shapes = std::vector<OpShape>(3);

  ThreeRanks() {
    workload::OpGraph header;
    header.groups = {{"dp", {0, 1, 2}}, {"pair", {2, 0}}};
    header.ranks.resize(3);
    graph.finish(header);
    for (std::int32_t g = 0; g < 2; ++g) {
      const auto& members = header.groups[u(g)].ranks;
      for (std::size_t i = 0; i < members.size(); ++i)
        ranks[u(members[i])].groups.push_back({g, static_cast<std::int32_t>(i)});
    }
  }

  void calls(std::int32_t r, const std::vector<std::int32_t>& numbers) {
    OpShape& s = shapes[u(r)];
    for (const auto k : numbers) {
      s.slot.push_back(static_cast<std::int32_t>(s.collectives.size()));
      if (k < 0) continue;
      CollectiveShape c;
      c.call = k;
      s.collectives.push_back(c);
    }
    ranks[u(r)].shape = &s;
  }
};

Time us(double t) { return Time::from_us(t); }

// NCCL's rule: the k-th call of each member on a group is one collective. Rank 0 issues
// its calls 0 and 1 on "dp" (ops 4 and 5) at 1 and 2 us; rank 2 its call 0 (op 7) at 3 us;
// rank 1 its call 0 (op 6) at 5 us, which completes call 0: it launches at 5 us, the last
// issue, with the members by position. Call 1 waits for ranks 1 and 2.
TEST(CollectiveRendezvous, TheKthCallOfEveryMemberIsOneCollective) {
  ThreeRanks t;
  t.calls(0, {-1, -1, -1, -1, 0, 1});
  t.calls(1, {-1, -1, -1, -1, -1, -1, 0, -1, 1});
  t.calls(2, {-1, -1, -1, -1, -1, -1, -1, 0, -1, 1});
  CollectiveRendezvous rendezvous(t.graph);
  EXPECT_EQ(rendezvous.arrive(t.ranks[0], 0, 4, 0, us(1)), kNone);
  EXPECT_EQ(rendezvous.arrive(t.ranks[0], 0, 5, 0, us(2)), kNone);
  EXPECT_EQ(rendezvous.arrive(t.ranks[2], 2, 7, 0, us(3)), kNone);
  ASSERT_EQ(rendezvous.arrive(t.ranks[1], 1, 6, 0, us(5)), 0);
  const GroupCall call = rendezvous.launch(0, 0);
  EXPECT_EQ(call.latest, us(5));
  EXPECT_EQ(call.members, (CallMembers{{0, 4}, {1, 6}, {2, 7}}));
  EXPECT_EQ(rendezvous.arrive(t.ranks[1], 1, 8, 0, us(6)), kNone);
  ASSERT_EQ(rendezvous.arrive(t.ranks[2], 2, 9, 0, us(7)), 1);
  EXPECT_EQ(rendezvous.launch(0, 1).members, (CallMembers{{0, 5}, {1, 8}, {2, 9}}));
}

// Calls are counted per group: rank 0's first call on "pair" is that group's call 0 even
// after its calls on "dp"; its members are by position in "pair" (rank 2 first).
TEST(CollectiveRendezvous, CallsAreCountedPerGroupAndMembersOrderedByPosition) {
  ThreeRanks t;
  t.calls(0, {-1, 0, 0});
  t.calls(2, {-1, -1, -1, 0});
  CollectiveRendezvous rendezvous(t.graph);
  EXPECT_EQ(rendezvous.arrive(t.ranks[0], 0, 1, 0, us(1)), kNone);
  EXPECT_EQ(rendezvous.arrive(t.ranks[0], 0, 2, 1, us(2)), kNone);
  ASSERT_EQ(rendezvous.arrive(t.ranks[2], 2, 3, 1, us(1)), 0);
  const GroupCall call = rendezvous.launch(1, 0);
  EXPECT_EQ(call.latest, us(2));
  EXPECT_EQ(call.members, (CallMembers{{2, 3}, {0, 2}}));
}

// Rank 0 issues its call 1 on "pair" (op 1, on another stream than call 0) before call 0,
// and rank 2 too: call 1 completes first and launches at once, at 2 us; call 0 then
// launches when rank 0 issues it at 4 us, and call 2 is met as usual after both.
TEST(CollectiveRendezvous, ACallCompletedBeforeAnEarlierOneLaunchesAtOnce) {
  ThreeRanks t;
  t.calls(0, {0, 1, 2});
  t.calls(2, {0, 1, 2});
  CollectiveRendezvous rendezvous(t.graph);
  EXPECT_EQ(rendezvous.arrive(t.ranks[0], 0, 1, 1, us(1)), kNone);
  ASSERT_EQ(rendezvous.arrive(t.ranks[2], 2, 1, 1, us(2)), 1);
  const GroupCall second = rendezvous.launch(1, 1);
  EXPECT_EQ(second.latest, us(2));
  EXPECT_EQ(second.members, (CallMembers{{2, 1}, {0, 1}}));
  EXPECT_EQ(rendezvous.arrive(t.ranks[2], 2, 0, 1, us(3)), kNone);
  ASSERT_EQ(rendezvous.arrive(t.ranks[0], 0, 0, 1, us(4)), 0);
  const GroupCall first = rendezvous.launch(1, 0);
  EXPECT_EQ(first.latest, us(4));
  EXPECT_EQ(first.members, (CallMembers{{2, 0}, {0, 0}}));
  EXPECT_EQ(rendezvous.arrive(t.ranks[0], 0, 2, 1, us(5)), kNone);
  ASSERT_EQ(rendezvous.arrive(t.ranks[2], 2, 2, 1, us(6)), 2);
  EXPECT_EQ(rendezvous.launch(1, 2).members, (CallMembers{{2, 2}, {0, 2}}));
}

// A call on a group that does not exist, or on one the rank is not in, is an error in the
// op graph naming the rank and the group.
TEST(CollectiveRendezvous, ACallOutsideTheRanksGroupsIsAnError) {
  ThreeRanks t;
  t.calls(1, {0});
  CollectiveRendezvous rendezvous(t.graph);
  try {
    rendezvous.arrive(t.ranks[1], 1, 0, 1, us(0));
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "op graph: rank 1 calls a collective on group 'pair' it is not a member of");
  }
  try {
    rendezvous.arrive(t.ranks[1], 1, 0, 5, us(0));
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "op graph: rank 1 calls a collective on group 5, which does not exist");
  }
}

}  // namespace
}  // namespace strait::sim::run::detail
