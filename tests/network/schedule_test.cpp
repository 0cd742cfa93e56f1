#include "sim/network/schedule.hpp"

#include <set>

#include <gtest/gtest.h>

#include "sim/core/error.hpp"
#include "sim/network/detail/rank_layout.hpp"
#include "sim/network/detail/schedule_builders.hpp"
#include "test_clusters.hpp"

namespace strait::sim::network {
namespace {

using testing::all_gpus;
using testing::make_cluster;

CollectiveSpec spec_for(const topology::Cluster& c, CollectiveOp op, Algorithm algo, Bytes bytes) {
  CollectiveSpec s;
  s.op = op;
  s.algorithm = algo;
  s.bytes = bytes;
  s.gpus = all_gpus(c);
  return s;
}

// Ring all-reduce on 8 ranks of one host: reduce-scatter and all-gather phases, each
// repeated n-1 = 7 times, each with 8 transfers of S/8.
TEST(Schedule, RingAllReduceHasTwoPhasesOfNMinusOneSteps) {
  const auto c = make_cluster(1, 1, 8);
  const auto s =
      build_schedule(spec_for(c, CollectiveOp::kAllReduce, Algorithm::kRing, 8 * kMiB), c);
  ASSERT_EQ(s.phases.size(), 2u);
  EXPECT_EQ(s.expanded_phase_count(), 14);
  for (const auto& p : s.phases) {
    ASSERT_EQ(p.transfers.size(), 8u);
    for (const auto& t : p.transfers) EXPECT_EQ(t.bytes, kMiB);
  }
  EXPECT_DOUBLE_EQ(s.total_bytes(), 14.0 * 8 * kMiB);
}

// With 4 hosts of 4 GPUs, one ring per rail: each channel leaves every host from the GPU
// on the rail it enters the next host with, so scale-out hops never change rails.
TEST(Schedule, ChannelRingsKeepEachHostCrossingOnOneRail) {
  const auto c = make_cluster(1, 4, 4);
  const auto spec = spec_for(c, CollectiveOp::kAllReduce, Algorithm::kRing, 64 * kMiB);
  const auto layout = detail::make_rank_layout(spec, c);
  EXPECT_EQ(layout.rails, 4);
  const auto rings = detail::channel_rings(layout, 4);
  ASSERT_EQ(rings.size(), 4u);
  for (const auto& ring : rings) {
    ASSERT_EQ(ring.size(), 16u);
    EXPECT_EQ(std::set<int>(ring.begin(), ring.end()).size(), 16u);
    for (std::size_t i = 0; i < ring.size(); ++i) {
      const auto& a = c.gpu(ring[i]);
      const auto& b = c.gpu(ring[(i + 1) % ring.size()]);
      if (a.host != b.host) {
        EXPECT_EQ(a.rail, b.rail) << "edge " << i;
      }
    }
  }
  const auto s = build_schedule(spec, c);
  EXPECT_EQ(s.channels, 4);
  EXPECT_EQ(s.phases[0].transfers.front().bytes, 64 * kMiB / 64);
}

// Hierarchical all-to-all over 2 hosts x 2 GPUs with S = 4 KiB per rank (1 KiB per pair):
// inside a host, (a,l) -> (a,l') carries the pairs bound for position l' on both hosts
// (2 KiB); across hosts, (a,l) -> (b,l) carries what both local ranks send to (b,l) (2 KiB).
TEST(Schedule, HierarchicalAllToAllAggregatesPerRail) {
  const auto c = make_cluster(1, 2, 2);
  const auto s =
      build_schedule(spec_for(c, CollectiveOp::kAllToAll, Algorithm::kHierarchical, 4 * kKiB), c);
  ASSERT_EQ(s.phases.size(), 2u);
  EXPECT_EQ(s.phases[0].transfers.size(), 4u);
  EXPECT_EQ(s.phases[1].transfers.size(), 4u);
  for (const auto& p : s.phases) {
    for (const auto& t : p.transfers) EXPECT_EQ(t.bytes, 2 * kKiB);
  }
  for (const auto& t : s.phases[1].transfers) EXPECT_EQ(c.gpu(t.src).rail, c.gpu(t.dst).rail);
}

// All-to-all-v skips zero entries and self-sends.
TEST(Schedule, AllToAllVUsesTheSendMatrix) {
  const auto c = make_cluster(1, 1, 3);
  auto spec = spec_for(c, CollectiveOp::kAllToAllV, Algorithm::kDirect, 0);
  spec.send_matrix = {5, 1, 0,  //
                      2, 5, 3,  //
                      0, 0, 5};
  const auto s = build_schedule(spec, c);
  ASSERT_EQ(s.phases.size(), 1u);
  EXPECT_EQ(s.phases[0].transfers.size(), 3u);
  EXPECT_DOUBLE_EQ(s.total_bytes(), 6.0);
}

TEST(Schedule, AutoFollowsNcclHabits) {
  const auto host = make_cluster(1, 1, 8);
  const auto hosts = make_cluster(1, 4, 4);
  const auto dcs = make_cluster(3, 2, 4);
  EXPECT_EQ(
      choose_algorithm(spec_for(host, CollectiveOp::kAllReduce, Algorithm::kAuto, kKiB), host),
      Algorithm::kRing);
  EXPECT_EQ(
      choose_algorithm(spec_for(hosts, CollectiveOp::kAllReduce, Algorithm::kAuto, kKiB), hosts),
      Algorithm::kTree);
  EXPECT_EQ(
      choose_algorithm(spec_for(hosts, CollectiveOp::kAllReduce, Algorithm::kAuto, kGiB), hosts),
      Algorithm::kRing);
  EXPECT_EQ(choose_algorithm(spec_for(dcs, CollectiveOp::kAllReduce, Algorithm::kAuto, kGiB), dcs),
            Algorithm::kHierarchical);
  EXPECT_EQ(choose_algorithm(spec_for(host, CollectiveOp::kAllToAll, Algorithm::kAuto, kGiB), host),
            Algorithm::kDirect);
  EXPECT_EQ(
      choose_algorithm(spec_for(hosts, CollectiveOp::kAllToAll, Algorithm::kAuto, kGiB), hosts),
      Algorithm::kDirect);
}

std::string error_of(const topology::Cluster& c, const CollectiveSpec& spec) {
  try {
    build_schedule(spec, c);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(Schedule, BadRankSetsAndAlgorithmsAreClearErrors) {
  const auto c = make_cluster(1, 1, 4);
  auto spec = spec_for(c, CollectiveOp::kAllReduce, Algorithm::kRing, kMiB);
  spec.gpus = {0, 1, 9};
  EXPECT_EQ(error_of(c, spec),
            "collective: GPU 9 does not exist (cluster 'test-1x1x4' has GPUs 0..3)");
  spec.gpus = {0, 1, 1};
  EXPECT_EQ(error_of(c, spec), "collective: GPU 1 appears twice in the rank set");
  spec.gpus = {};
  EXPECT_EQ(error_of(c, spec), "collective: the rank set is empty");
  spec = spec_for(c, CollectiveOp::kAllGather, Algorithm::kPairwise, kMiB);
  EXPECT_EQ(error_of(c, spec), "collective: algorithm 'pairwise' is not available for all_gather");
  spec = spec_for(c, CollectiveOp::kAllToAllV, Algorithm::kDirect, 0);
  EXPECT_EQ(error_of(c, spec), "collective: all_to_allv needs an 4x4 send matrix, got 0 entries");
}

TEST(Collective, BusBandwidthFactorsMatchNcclTests) {
  EXPECT_DOUBLE_EQ(busbw_factor(CollectiveOp::kAllReduce, 8), 2.0 * 7 / 8);
  EXPECT_DOUBLE_EQ(busbw_factor(CollectiveOp::kAllGather, 8), 7.0 / 8);
  EXPECT_DOUBLE_EQ(busbw_factor(CollectiveOp::kReduceScatter, 8), 7.0 / 8);
  EXPECT_DOUBLE_EQ(busbw_factor(CollectiveOp::kAllToAll, 8), 7.0 / 8);
  EXPECT_DOUBLE_EQ(busbw_factor(CollectiveOp::kBroadcast, 8), 1.0);
  EXPECT_DOUBLE_EQ(busbw_factor(CollectiveOp::kSendRecv, 2), 1.0);
}

TEST(Collective, ParsesNcclAndStraitSpellings) {
  EXPECT_EQ(parse_collective_op("allreduce"), CollectiveOp::kAllReduce);
  EXPECT_EQ(parse_collective_op("all_reduce"), CollectiveOp::kAllReduce);
  EXPECT_EQ(parse_collective_op("alltoallv"), CollectiveOp::kAllToAllV);
  EXPECT_FALSE(parse_collective_op("allreduc"));
  EXPECT_EQ(parse_enum<Algorithm>("hierarchical"), Algorithm::kHierarchical);
  EXPECT_EQ(parse_enum<Algorithm>("nvls"), Algorithm::kNvls);
  EXPECT_EQ(parse_enum<Algorithm>("collnet"), Algorithm::kCollNet);
  EXPECT_FALSE(parse_enum<Algorithm>("collnet_chain"));
  EXPECT_EQ(parse_enum<Protocol>("ll128"), Protocol::kLL128);
  EXPECT_FALSE(parse_enum<Protocol>("LL"));
}

}  // namespace
}  // namespace strait::sim::network
