// sim/workload/representative.hpp: the ranks an estimate builds to stand for a job.

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "sim/workload/batch.hpp"
#include "sim/workload/representative.hpp"
#include "test_support.hpp"

namespace strait::sim::workload {
namespace {

using namespace testing_support;

// Two sequence tables: "item" row-wise, "user" table-wise on the group's last member but two.
const char* kTwoTables =
    R"({"embedding": {"tables": [{"name": "item", "rows": 1000000, "dim": 64, "pooling": "sequence"},
                                 {"name": "user", "rows": 100000, "dim": 64, "pooling": "sequence"}]},
  "dense": {"hstu": {"layers": 2, "model_dim": 64, "heads": 2, "head_dim": 32, "negatives": 16}}})";
const char* kLognormal = R"({"batch_size": {"per_rank": 4}, "max_length": 4096,
  "sequence_length": {"distribution": "lognormal", "mean": 600, "sigma": 1.2}})";

TrainingScenario with_group(int group) {
  return scenario_of("hgx-h100-8.json", kTwoTables, kLognormal,
                     R"({"sparse": {"group_size": )" + std::to_string(group) +
                         R"(, "default": "row_wise",
                          "tables": {"user": {"type": "table_wise", "ranks": [)" +
                         std::to_string(group - 3) + R"(]}}}})");
}

int costliest(const std::vector<ReplicaBatch>& batches) {
  int best = 0;
  for (int g = 1; g < static_cast<int>(batches.size()); ++g) {
    if (batches[static_cast<std::size_t>(g)].cost > batches[static_cast<std::size_t>(best)].cost)
      best = g;
  }
  return best;
}

// Blocks of 4 members, at most 4 ranks wanted: block 0 (evenly spaced, one wanted) and the
// costliest replica's block, each with all 4 members (no block is larger than 4).
TEST(RepresentativeRanks, BlocksNoLargerThanWantedKeepEveryMember) {
  const auto sc = with_group(4);
  const auto batches = sample_step(sc, 0);
  const auto map = ShardMap::build(sc.model, sc.plan, 4, 8);
  const int heavy_block = costliest(batches) / 4;
  std::vector<int> blocks = {0, heavy_block};
  blocks.erase(std::unique(blocks.begin(), blocks.end()), blocks.end());
  const auto got = representative_ranks(sc, batches, map, 4);
  ASSERT_EQ(got.size(), blocks.size());
  for (std::size_t b = 0; b < got.size(); ++b) {
    EXPECT_EQ(got[b].block, blocks[b]);
    EXPECT_EQ(got[b].members, (std::vector<int>{0, 1, 2, 3}));
  }
  // Nothing wanted (0): every block, every member.
  const auto all = representative_ranks(sc, batches, map, 0);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[1].block, 1);
  EXPECT_EQ(all[1].members.size(), 4u);
}

// One group of 8, 2 ranks wanted: members 0 and 4 (evenly spaced), the costliest replica's
// member, and member 5, which holds the table-wise table (its shards differ).
TEST(RepresentativeRanks, ALargeBlockKeepsSpacedMembersAndThoseThatDiffer) {
  const auto sc = with_group(8);
  const auto batches = sample_step(sc, 0);
  const auto map = ShardMap::build(sc.model, sc.plan, 8, 8);
  std::vector<int> members = {0, 4, 5, costliest(batches)};
  std::sort(members.begin(), members.end());
  members.erase(std::unique(members.begin(), members.end()), members.end());
  const auto got = representative_ranks(sc, batches, map, 2);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].block, 0);
  EXPECT_EQ(got[0].members, members);
}

}  // namespace
}  // namespace strait::sim::workload
