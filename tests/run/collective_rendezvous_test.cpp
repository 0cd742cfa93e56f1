#include "sim/run/detail/collective_rendezvous.hpp"

#include <gtest/gtest.h>

#include "sim/core/error.hpp"

namespace strait::sim::run::detail {
namespace {

// Groups "dp" {0, 1, 2} and "pair" {2, 0} over three ranks, each rank's state knowing its
// memberships (group, position), as the replay sets them up.
struct ThreeRanks {
  ReplayGraph graph{network::NetworkMode::kAnalytical};
  std::vector<RankState> ranks = std::vector<RankState>(3);

  ThreeRanks() {
    workload::OpGraph header;
    header.groups = {{"dp", {0, 1, 2}}, {"pair", {2, 0}}};
    header.ranks.resize(3);
    graph.finish(header);
    for (std::int32_t g = 0; g < 2; ++g) {
      const auto& members = header.groups[u(g)].ranks;
      for (std::size_t i = 0; i < members.size(); ++i)
        ranks[u(members[i])].groups.push_back({g, static_cast<std::int32_t>(i), 0});
    }
  }
};

Time us(double t) { return Time::from_us(t); }

// NCCL's rule: the k-th call of each member on a group is one collective. Rank 0 issues
// its calls 0 and 1 on "dp" (ops 4 and 5) at 1 and 2 us; rank 2 its call 0 (op 7) at 3 us;
// rank 1 its call 0 (op 6) at 5 us, which completes call 0: it launches at 5 us, the last
// issue, with the members by position. Call 1 waits for ranks 1 and 2.
TEST(CollectiveRendezvous, TheKthCallOfEveryMemberIsOneCollective) {
  ThreeRanks t;
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
  CollectiveRendezvous rendezvous(t.graph);
  EXPECT_EQ(rendezvous.arrive(t.ranks[0], 0, 1, 0, us(1)), kNone);
  EXPECT_EQ(rendezvous.arrive(t.ranks[0], 0, 2, 1, us(2)), kNone);
  ASSERT_EQ(rendezvous.arrive(t.ranks[2], 2, 3, 1, us(1)), 0);
  const GroupCall call = rendezvous.launch(1, 0);
  EXPECT_EQ(call.latest, us(2));
  EXPECT_EQ(call.members, (CallMembers{{2, 3}, {0, 2}}));
}

// A call on a group that does not exist, or on one the rank is not in, is an error in the
// op graph naming the rank and the group.
TEST(CollectiveRendezvous, ACallOutsideTheRanksGroupsIsAnError) {
  ThreeRanks t;
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
