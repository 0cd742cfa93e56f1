#include "executor/op_scheduler.hpp"

#include <gtest/gtest.h>

#include "sim/core/error.hpp"

namespace strait::executor {
namespace {

using sim::workload::Op;
using sim::workload::OpKind;
using sim::workload::RankOps;

Op kernel(std::int32_t stream, std::vector<std::int32_t> deps = {}) {
  Op op;
  op.kind = OpKind::kKernel;
  op.stream = stream;
  op.deps.assign(deps.begin(), deps.end());
  return op;
}

Op collective(std::int32_t stream, int group, std::vector<std::int32_t> deps = {}) {
  Op op = kernel(stream, std::move(deps));
  op.kind = OpKind::kCollective;
  op.collective.group = group;
  return op;
}

using Ready = std::vector<std::int32_t>;

TEST(OpScheduler, StartsOpsInStreamOrderOnceTheirDepsFinish) {
  // Streams 0 (compute) and 1 (comm), one group:
  //   0 kernel  s0           2 kernel s0            3 kernel s0 after 1
  //   1 coll    s1 after 0   4 coll   s1 (stream order puts it after 1)
  RankOps rank;
  rank.ops = {kernel(0), collective(1, 0, {0}), kernel(0), kernel(0, {1}), collective(1, 0)};
  OpScheduler s(rank, 2, 1);
  EXPECT_EQ(s.ready(), (Ready{0}));  // op 1 waits for op 0
  s.start(0);
  EXPECT_EQ(s.ready(), Ready{});  // compute busy, op 1 still waits
  s.finish(0);
  EXPECT_EQ(s.ready(), (Ready{1, 2}));
  s.start(1);
  s.start(2);
  EXPECT_EQ(s.running(), 2u);
  s.finish(2);
  EXPECT_EQ(s.ready(), Ready{});  // op 3 needs op 1; comm stream busy with op 1
  s.finish(1);
  EXPECT_EQ(s.ready(), (Ready{3, 4}));
  s.start(3);
  s.start(4);
  s.finish(4);
  s.finish(3);
  EXPECT_TRUE(s.done());
}

TEST(OpScheduler, IssuesAGroupsCollectivesInOpIndexOrderAcrossStreams) {
  // Two collectives on group 0 on different streams, neither with deps: the second may
  // start only once the first was issued, so every rank calls them in the same order.
  RankOps rank;
  rank.ops = {kernel(0), collective(1, 0, {0}), collective(2, 0)};
  OpScheduler s(rank, 3, 1);
  EXPECT_EQ(s.ready(), (Ready{0}));
  s.start(0);
  s.finish(0);
  EXPECT_EQ(s.ready(), (Ready{1}));
  s.start(1);
  EXPECT_EQ(s.ready(), (Ready{2}));
}

TEST(OpScheduler, RefusesADependencyOnALaterOp) {
  RankOps rank;
  rank.rank = 3;
  rank.ops = {kernel(0, {1}), kernel(0)};
  try {
    OpScheduler s(rank, 1, 0);
    FAIL() << "expected strait::Error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "op graph: rank 3 op 0 depends on op 1, which is not earlier");
  }
}

TEST(OpScheduler, RefusesACollectiveOnAMissingGroup) {
  RankOps rank;
  rank.ops = {collective(0, 2)};
  EXPECT_THROW(OpScheduler(rank, 1, 1), Error);
}

}  // namespace
}  // namespace strait::executor
