#include "sim/run/rank_account.hpp"

#include <gtest/gtest.h>

#include "run_test_support.hpp"

namespace strait::sim::run {
namespace {

using testing_support::all_reduce;
using testing_support::kernel;
using workload::CommClass;
using workload::Op;
using workload::OpKind;

constexpr auto kReplica = static_cast<std::size_t>(CommClass::kReplicaSync);
constexpr auto kDense = static_cast<std::size_t>(CommClass::kDenseSync);

// account_wait on its own, by hand: collectives X (issued 10, started 12, ended 20) and Y
// (issued 20 behind X on its stream, started 25 when the peer issued it, ended 30); the
// compute stream idles from 5 to 30 waiting on Y: exposed 30-25 + 20-12 = 13, straggler
// wait 25-20 + 12-10 = 7, and the 5 before X was issued, straggler wait too (12 in all).
TEST(RankAccount, AccountWaitFollowsTheChainOfTheRanksOwnCollectives) {
  auto us = [](double t) { return Time::from_us(t); };
  const Op k = kernel(1, 0);
  const auto x = all_reduce(CommClass::kDenseSync, 1, 2, {0});
  const auto y = all_reduce(CommClass::kReplicaSync, 1, 2, {});
  const std::vector<Op> ops = {k, x, y};
  const std::vector<Time> issued = {us(0), us(10), us(20)}, started = {us(0), us(12), us(25)},
                          ended = {us(5), us(20), us(30)};
  const auto streams = ops_by_stream(ops);  // compute: {0}, dense_comm: {1, 2}
  ASSERT_EQ(streams, (std::vector<std::vector<std::int32_t>>{{0}, {}, {1, 2}}));
  RankAccount a;
  account_wait(a, us(5), us(30), 2, {ops, issued, started, ended, streams});
  EXPECT_EQ(a.exposed_comm[kReplica], us(5));
  EXPECT_EQ(a.exposed_comm[kDense], us(8));
  EXPECT_EQ(a.straggler_wait, us(12));
  EXPECT_EQ(a.bubble, Time::zero());
  RankAccount b;  // waiting on a kernel: bubble
  account_wait(b, us(5), us(30), 0, {ops, issued, started, ended, streams});
  EXPECT_EQ(b.bubble, us(25));
}

// account_tail on its own: overlapping spans go to the one that ends last while it runs.
TEST(RankAccount, AccountTailBooksEachInstantToTheRunningCollectiveThatEndsLast) {
  auto us = [](double t) { return Time::from_us(t); };
  RankAccount a;
  // Tail [10, 50]: replica sync [5, 30], dense sync [20, 40]; 40-50 nothing runs.
  account_tail(a, us(10), us(50),
               {{us(5), us(30), CommClass::kReplicaSync}, {us(20), us(40), CommClass::kDenseSync}});
  EXPECT_EQ(a.exposed_comm[kReplica], us(10));  // 10-20
  EXPECT_EQ(a.exposed_comm[kDense], us(20));    // 20-40
  EXPECT_EQ(a.straggler_wait, us(10));          // 40-50
}

}  // namespace
}  // namespace strait::sim::run
