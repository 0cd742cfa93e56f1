#include "executor/kernel_shapes.hpp"

#include <gtest/gtest.h>

#include <map>
#include <set>

namespace strait::executor {
namespace {

using sim::cost::KernelKind;
using sim::cost::KernelWork;

TEST(KernelShapes, EmbeddingLookupIdsAreFlopsOverTheRowLength) {
  // sparse_traffic.cpp: lookup flops = ids * dim -> 1000 ids of dim 64 = 64,000 flops.
  KernelWork k;
  k.kind = KernelKind::kEmbeddingLookup;
  k.embedding_dim = 64;
  k.flops = 1000.0 * 64;
  EXPECT_EQ(embedding_ids(k), 1000);
}

TEST(KernelShapes, EmbeddingLookupBagsComeFromItsBytes) {
  // 3000 fp32 ids of dim 64 pooled into 1000 bags: bytes = 3000 (256 + 8) + 1000 * 256.
  KernelWork k;
  k.kind = KernelKind::kEmbeddingLookup;
  k.precision = sim::cost::Precision::kFp32;
  k.embedding_dim = 64;
  k.flops = 3000.0 * 64;
  k.hbm_bytes = 3000.0 * 264 + 1000.0 * 256;
  EXPECT_EQ(embedding_bags(k), 1000);
  // An update reads a gradient row per id: one id per bag.
  k.kind = KernelKind::kEmbeddingUpdate;
  k.unique_fraction = 1;
  k.flops = 3000.0 * 64 * 5;
  EXPECT_EQ(embedding_bags(k), 3000);
}

TEST(KernelShapes, EmbeddingUpdateIdsCountTheOptimizerWorkOfUniqueRows) {
  // update flops = ids d + 4 u ids d; u = 0.5, d = 64, 1000 ids -> 1000 * 64 * 3 = 192,000.
  KernelWork k;
  k.kind = KernelKind::kEmbeddingUpdate;
  k.embedding_dim = 64;
  k.unique_fraction = 0.5;
  k.flops = 192000;
  EXPECT_EQ(embedding_ids(k), 1000);
}

TEST(KernelShapes, EmbeddingIdsHitTheOpsShareOfDistinctRows) {
  // 1000 ids with unique fraction 0.43 -> 430 distinct rows, each used 2 or 3 times.
  KernelWork k;
  k.kind = KernelKind::kEmbeddingLookup;
  k.embedding_dim = 64;
  k.flops = 1000.0 * 64;
  k.unique_fraction = 0.43;
  EXPECT_EQ(embedding_unique_rows(k), 430);
  const auto ids = embedding_indices(1000, 430, 65536, 7);
  ASSERT_EQ(ids.size(), 1000u);
  std::map<std::int64_t, int> uses;
  for (auto row : ids) {
    EXPECT_GE(row, 0);
    EXPECT_LT(row, 65536);
    ++uses[row];
  }
  EXPECT_EQ(uses.size(), 430u);
  for (const auto& [row, n] : uses) {
    EXPECT_GE(n, 2);
    EXPECT_LE(n, 3);
  }
  // Never more distinct rows than the table has.
  const auto small = embedding_indices(100, 50, 10, 1);
  EXPECT_EQ(std::set<std::int64_t>(small.begin(), small.end()).size(), 10u);
}

TEST(KernelShapes, AttentionBatchIsTheEqualLengthBatchNearestTheFlops) {
  // One sample of 100 tokens, 2 heads of 32: 2 h (d + d) L (L + 1) / 2 = 2 * 2 * 64 * 5050
  // = 1,292,800 flops; 10.4 samples' worth rounds to 10 samples of length 100.
  KernelWork k;
  k.kind = KernelKind::kJaggedAttention;
  k.heads = 2;
  k.head_dim = 32;
  k.mean_length = 99.7;
  k.flops = 10.4 * 1292800;
  const auto b = attention_batch(k);
  EXPECT_EQ(b.length, 100);
  EXPECT_EQ(b.batch, 10);
  EXPECT_DOUBLE_EQ(attention_flops(k, b), 10 * 1292800.0);
  // The backward pass counts 2.5x the forward's flops.
  k.kind = KernelKind::kJaggedAttentionBackward;
  k.flops = 2.5 * 3 * 1292800;
  EXPECT_EQ(attention_batch(k).batch, 3);
}

TEST(KernelShapes, ElementwiseCopiesHalfItsBytesAndAdamUpdatesATenthOfItsFlops) {
  KernelWork k;
  k.hbm_bytes = 2000;
  k.flops = 10000;
  EXPECT_EQ(elementwise_copy_bytes(k), 1000);
  EXPECT_EQ(optimizer_params(k), 1000);
}

}  // namespace
}  // namespace strait::executor
