#include "executor/collective_calls.hpp"

#include <gtest/gtest.h>

#include "sim/core/error.hpp"

namespace strait::executor {
namespace {

using sim::network::CollectiveOp;
using sim::workload::Op;
using sim::workload::OpGraph;
using sim::workload::OpKind;

Op collective(CollectiveOp what, std::int64_t bytes, std::vector<std::int64_t> send_row) {
  Op op;
  op.kind = OpKind::kCollective;
  op.collective.op = what;
  op.collective.group = 0;
  op.collective.bytes = bytes;
  op.collective.send_row =
      sim::workload::SendRow(std::vector<Bytes>(send_row.begin(), send_row.end()));
  return op;
}

// Two ranks on group {1, 0} (rank 1 is member 0). Call 0: all_to_all of 100 bytes on rank 0
// and 200 on rank 1 (each sends bytes / 2 to every member). Call 1: all_to_allv, rank 1
// sends [30, 40] to members [0, 1] (itself, rank 0), rank 0 sends [10, 20].
OpGraph two_calls() {
  OpGraph g;
  g.groups = {{"sparse", {1, 0}}};
  g.ranks.resize(2);
  Op kernel;
  g.ranks[0].ops = {kernel, collective(CollectiveOp::kAllToAll, 100, {}),
                    collective(CollectiveOp::kAllToAllV, 0, {10, 20})};
  g.ranks[1].ops = {collective(CollectiveOp::kAllToAll, 200, {}),
                    collective(CollectiveOp::kAllToAllV, 0, {30, 40})};
  return g;
}

TEST(CollectiveCalls, SizesEachPeersShareFromItsOwnCallOfTheSameOrder) {
  const OpGraph g = two_calls();
  const CollectiveCalls rank0(g, 0), rank1(g, 1);
  EXPECT_EQ(rank0.position(0), 1);
  EXPECT_EQ(rank1.position(0), 0);
  // all_to_all: rank 0 (member 1) sends 50 to each, receives 100 from rank 1 and 50 from
  // itself.
  auto b = rank0.all_to_all_bytes(1);
  EXPECT_EQ(b.send, (std::vector<std::int64_t>{50, 50}));
  EXPECT_EQ(b.recv, (std::vector<std::int64_t>{100, 50}));
  // all_to_allv: rank 0 receives send_row[1] of each member: 40 from rank 1, 20 from itself.
  b = rank0.all_to_all_bytes(2);
  EXPECT_EQ(b.send, (std::vector<std::int64_t>{10, 20}));
  EXPECT_EQ(b.recv, (std::vector<std::int64_t>{40, 20}));
  b = rank1.all_to_all_bytes(1);
  EXPECT_EQ(b.recv, (std::vector<std::int64_t>{30, 10}));
}

TEST(CollectiveCalls, ACollectiveOnAGroupThisRankIsNotInIsAnError) {
  OpGraph g = two_calls();
  g.groups = {{"sparse", {1}}};
  const CollectiveCalls rank0(g, 0);
  EXPECT_EQ(rank0.position(0), -1);
  EXPECT_THROW(rank0.group_of(1), Error);
  EXPECT_THROW(rank0.all_to_all_bytes(1), Error);
}

TEST(CollectiveCalls, APeerWithFewerCallsOnTheGroupIsAnError) {
  OpGraph g = two_calls();
  g.ranks[1].ops.pop_back();
  const CollectiveCalls rank0(g, 0);
  EXPECT_THROW(rank0.all_to_all_bytes(2), Error);
}

}  // namespace
}  // namespace strait::executor
