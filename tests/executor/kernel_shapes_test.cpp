#include "executor/kernel_shapes.hpp"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "calibration/kernel_case.hpp"
#include "sim/core/error.hpp"
#include "sim/core/rng.hpp"
#include "sim/workload/op_graph_builder.hpp"
#include "sim/workload/scenario.hpp"
#include "sim/workload/unique_rows.hpp"

namespace strait::executor {
namespace {

using sim::cost::KernelKind;
using sim::cost::KernelWork;

TEST(KernelShapes, GemmRunsCountForwardGemmsAndBackwardPairs) {
  // dense_stack: a linear layer's forward is 2 m n k flops, its backward (backward_of(gemm,
  // 2), the gemm_backward family) 4 m n k: one input- and weight-gradient pair. A DCN cross
  // layer's forward is two GEMMs of its shape (4 m n k), its backward two pairs (8 m n k).
  KernelWork k;
  k.kind = KernelKind::kGemm;
  k.m = 1536;
  k.n = 128;
  k.k = 64;
  const double one = 2.0 * 1536 * 128 * 64;
  k.flops = one;
  EXPECT_EQ(gemm_runs(k), 1);
  k.flops = 2 * one;
  EXPECT_EQ(gemm_runs(k), 2);
  k.flops = 1.5 * one;
  EXPECT_THROW(gemm_runs(k), Error);
  k.kind = KernelKind::kGemmBackward;
  k.flops = 2 * one;
  EXPECT_EQ(gemm_runs(k), 1);
  k.flops = 4 * one;
  EXPECT_EQ(gemm_runs(k), 2);
  k.flops = one;  // half a pair
  EXPECT_THROW(gemm_runs(k), Error);
}

TEST(KernelShapes, EveryGemmOfTheBundledOneGpuDlrmIsWholeRuns) {
  // dlrm-1gpu has DCNv2 cross layers: two GEMMs forward, two gradient pairs backward.
  const auto scenario = sim::workload::TrainingScenario::load(std::string(STRAIT_SOURCE_DIR) +
                                                              "/configs/scenarios/dlrm-1gpu.json");
  const auto graph = sim::workload::build_op_graph(scenario);
  int forward_pairs = 0, backward_pairs = 0;
  for (const auto& op : graph.ranks.at(0).ops) {
    if (op.kind != sim::workload::OpKind::kKernel) continue;
    const auto kind = op.kernel.kind;
    if (kind != KernelKind::kGemm && kind != KernelKind::kGemmBackward) continue;
    const int runs = gemm_runs(op.kernel);
    if (runs == 2) ++(kind == KernelKind::kGemm ? forward_pairs : backward_pairs);
  }
  // Three cross layers per step, four steps.
  EXPECT_EQ(forward_pairs, 3 * 4);
  EXPECT_EQ(backward_pairs, 3 * 4);
}

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

TEST(KernelShapes, EmbeddingIdSkewGivesTheOpsShareOfDistinctRows) {
  // 10,000 ids over 65,536 rows; uniform ids are 92.8% distinct (65536 (1 - e^-10000/65536)).
  KernelWork k;
  k.kind = KernelKind::kEmbeddingLookup;
  k.embedding_dim = 64;
  k.flops = 10000.0 * 64;
  k.unique_fraction = 0.43;
  const double s = embedding_id_skew(k, 65536);
  EXPECT_GT(s, 0.5);
  EXPECT_NEAR(sim::workload::expected_unique_rows(65536, 10000, s), 4300, 0.01);
  // Drawn with that exponent, the ids hit about that many distinct rows.
  const calibration::RowSampler sample(65536, s);
  Rng rng(3);
  std::set<std::int64_t> rows;
  for (int i = 0; i < 10000; ++i) {
    const auto row = sample(rng);
    ASSERT_GE(row, 0);
    ASSERT_LT(row, 65536);
    rows.insert(row);
  }
  EXPECT_NEAR(static_cast<double>(rows.size()), 4300, 150);
  // A share above what uniform ids give: uniform.
  k.unique_fraction = 0.99;
  EXPECT_EQ(embedding_id_skew(k, 65536), 0);
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
