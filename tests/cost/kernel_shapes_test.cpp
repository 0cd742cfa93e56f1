#include "sim/cost/kernel_shapes.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "sim/core/error.hpp"

namespace strait::sim::cost {
namespace {

// A GEMM of 1536 x 128 x 64 in bf16 (e = 2): 2 m n k = 25,165,824 flops and
// (m k + k n + m n) e = (98,304 + 8,192 + 196,608) x 2 = 606,208 bytes; two of them in one op
// twice that; the backward (input and weight gradient) twice the forward's.
TEST(KernelShapes, GemmWorkIsTwoMnkFlopsAndItsThreeMatrices) {
  const KernelWork f = gemm_work({1536, 128, 64}, Precision::kBf16);
  EXPECT_EQ(f.kind, KernelKind::kGemm);
  EXPECT_EQ(f.flops, 25165824.0);
  EXPECT_EQ(f.hbm_bytes, 606208.0);
  EXPECT_EQ(f.m, 1536);
  EXPECT_EQ(f.n, 128);
  EXPECT_EQ(f.k, 64);
  const KernelWork pair = gemm_work({1536, 128, 64, 2}, Precision::kBf16);
  EXPECT_EQ(pair.flops, 2 * 25165824.0);
  EXPECT_EQ(pair.hbm_bytes, 2 * 606208.0);
  const KernelWork b = gemm_backward_work(f);
  EXPECT_EQ(b.kind, KernelKind::kGemmBackward);
  EXPECT_EQ(b.flops, 2 * 25165824.0);
  EXPECT_EQ(b.hbm_bytes, 2 * 606208.0);
}

TEST(KernelShapes, GemmShapeInvertsGemmWorkForWholeCounts) {
  for (int count : {1, 2, 3}) {
    const GemmShape s{1536, 128, 64, count};
    EXPECT_EQ(gemm_shape(gemm_work(s, Precision::kFp32)), s);
    EXPECT_EQ(gemm_shape(gemm_backward_work(gemm_work(s, Precision::kBf16))), s);
  }
  KernelWork half = gemm_work({1536, 128, 64}, Precision::kFp32);
  half.flops *= 1.5;
  EXPECT_THROW(gemm_shape(half), Error);
  half.flops = 0;
  EXPECT_THROW(gemm_shape(half), Error);
}

// Two sequences of 3 and 5 tokens, 2 heads of 4 (fp32, e = 4):
//   jagged: T = 8, P = 3 x 4 / 2 + 5 x 6 / 2 = 21, S = 9 + 25 = 34;
//     flops 2 h (dqk + dv) P = 2 x 2 x 8 x 21 = 672;
//     bytes T h (2 dqk + 2 dv) e + T h dv e = 8 x 2 x 16 x 4 + 8 x 2 x 4 x 4 = 1280;
//   padded (L_max = 5): T = 10, P = 2 x 15 = 30, S = 50: 960 flops, 1600 bytes;
//   unfused jagged with a bias: + 2 S h e + S e = 544 + 136 bytes.
TEST(KernelShapes, AttentionWorkCountsCausalPairsAndTouchedTokens) {
  const std::vector<int> lengths = {3, 5};
  const AttentionShape jagged = attention_shape(lengths, false, 2, 4);
  EXPECT_EQ(jagged.tokens, 8);
  EXPECT_EQ(jagged.pairs, 21);
  EXPECT_EQ(jagged.scores, 34);
  EXPECT_EQ(jagged.mean_length, 4);
  const KernelWork f = attention_work(jagged, Precision::kFp32);
  EXPECT_EQ(f.kind, KernelKind::kJaggedAttention);
  EXPECT_EQ(f.flops, 672);
  EXPECT_EQ(f.hbm_bytes, 1280);
  EXPECT_EQ(f.heads, 2);
  EXPECT_EQ(f.head_dim, 4);
  EXPECT_EQ(f.tile_factor, attention_tile_factors(std::vector<std::int32_t>{3, 5}));
  const KernelWork b = attention_backward_work(f);
  EXPECT_EQ(b.kind, KernelKind::kJaggedAttentionBackward);
  EXPECT_EQ(b.flops, 2.5 * 672);
  EXPECT_EQ(b.hbm_bytes, 2 * 1280);

  const AttentionShape padded = attention_shape(lengths, true, 2, 4);
  EXPECT_EQ(padded.mean_length, 5);
  const KernelWork p = attention_work(padded, Precision::kFp32);
  EXPECT_EQ(p.kind, KernelKind::kPaddedAttention);
  EXPECT_EQ(p.flops, 960);
  EXPECT_EQ(p.hbm_bytes, 1600);

  AttentionShape unfused = jagged;
  unfused.fused = false;
  unfused.relative_bias = true;
  EXPECT_EQ(attention_work(unfused, Precision::kFp32).hbm_bytes, 1280 + 544 + 136);
}

TEST(KernelShapes, AttentionBatchInvertsEqualLengthBatches) {
  for (const bool padded : {false, true}) {
    for (const int batch : {1, 7, 32}) {
      for (const int length : {1, 100, 129}) {
        const std::vector<int> lengths(static_cast<std::size_t>(batch), length);
        const KernelWork f =
            attention_work(attention_shape(lengths, padded, 2, 32), Precision::kBf16);
        const AttentionBatch want{batch, length};
        EXPECT_EQ(attention_batch(f), want);
        EXPECT_EQ(attention_batch(attention_backward_work(f)), want);
      }
    }
  }
  // One sample of 100 tokens, 2 heads of 32: 2 h (d + d) L (L + 1) / 2 = 1,292,800 flops;
  // 10.4 samples' worth at a mean of 99.7 is 10 samples of 100 tokens.
  KernelWork k;
  k.kind = KernelKind::kJaggedAttention;
  k.heads = 2;
  k.head_dim = 32;
  k.mean_length = 99.7;
  k.flops = 10.4 * 1292800;
  EXPECT_EQ(attention_batch(k), (AttentionBatch{10, 100}));
}

// 3000 fp32 ids of dim 64 into 1000 bags: 192,000 flops, 3000 (256 + 8) + 1000 x 256 bytes.
// Their update with half of them distinct (U = 1500) and a 4-byte state per row:
// 3000 x 64 + 4 x 1500 x 64 = 576,000 flops; 3000 x 256 + 2 x 1500 x 256 + 2 x 1500 x 4 bytes.
TEST(KernelShapes, EmbeddingWorkCountsRowsIdsAndUniqueRows) {
  const KernelWork l = embedding_lookup_work({3000, 1000, 64, 0.5}, Precision::kFp32);
  EXPECT_EQ(l.kind, KernelKind::kEmbeddingLookup);
  EXPECT_EQ(l.flops, 192000);
  EXPECT_EQ(l.hbm_bytes, 3000.0 * 264 + 1000.0 * 256);
  EXPECT_EQ(l.embedding_dim, 64);
  EXPECT_EQ(l.unique_fraction, 0.5);
  const KernelWork u = embedding_update_work({3000, 3000, 64, 0.5}, Precision::kFp32, 4);
  EXPECT_EQ(u.kind, KernelKind::kEmbeddingUpdate);
  EXPECT_EQ(u.flops, 576000);
  EXPECT_EQ(u.hbm_bytes, 3000.0 * 256 + 2 * 1500.0 * 256 + 2 * 1500.0 * 4);
}

TEST(KernelShapes, EmbeddingShapeInvertsWholeShapes) {
  for (const Precision p : {Precision::kFp32, Precision::kFp16}) {
    for (const double u : {1.0, 0.5, 0.3, 0.0731}) {
      const EmbeddingShape lookup{3000, 1000, 64, u};
      EXPECT_EQ(embedding_shape(embedding_lookup_work(lookup, p)), lookup);
      const EmbeddingShape sequence{777, 777, 48, u};
      EXPECT_EQ(embedding_shape(embedding_lookup_work(sequence, p)), sequence);
      const EmbeddingShape update{3000, 3000, 128, u};
      EXPECT_EQ(embedding_shape(embedding_update_work(update, p, 4)), update);
    }
  }
  // No work: no ids.
  EXPECT_EQ(embedding_shape(embedding_lookup_work({0, 0, 64}, Precision::kFp32)).ids, 0);
}

// Two shards: 1000 ids of dim 64 (u = 0.5) and 3000 of dim 32 (u = 0.1): the op's work is
// their sum, its row length (64000 + 96000) / 4000 = 40, its unique fraction 800 / 4000.
TEST(KernelShapes, AnEmbeddingOpSumsItsShards) {
  const EmbeddingShape a{1000, 100, 64, 0.5}, b{3000, 3000, 32, 0.1};
  EmbeddingOpWork op(KernelKind::kEmbeddingLookup, Precision::kFp32);
  op.add(a);
  op.add(b);
  const KernelWork w = op.work();
  const KernelWork wa = embedding_lookup_work(a, Precision::kFp32);
  const KernelWork wb = embedding_lookup_work(b, Precision::kFp32);
  EXPECT_EQ(w.flops, wa.flops + wb.flops);
  EXPECT_EQ(w.hbm_bytes, wa.hbm_bytes + wb.hbm_bytes);
  EXPECT_EQ(w.embedding_dim, 40);
  EXPECT_DOUBLE_EQ(w.unique_fraction, 0.2);
  // One shard: the shard's own work.
  EmbeddingOpWork one(KernelKind::kEmbeddingUpdate, Precision::kFp32);
  one.add(a, 4);
  EXPECT_EQ(one.work(), embedding_update_work(a, Precision::kFp32, 4));
  EXPECT_EQ(EmbeddingOpWork(KernelKind::kEmbeddingUpdate, Precision::kFp32).work().embedding_dim,
            0);
}

// A copy of 1000 bytes moves 2000; Adam in fp32 over 1000 parameters: 10,000 flops and
// 1000 x (3 x 4 + 2 x 8) = 28,000 bytes.
TEST(KernelShapes, CopiesAndOptimizerStepsInvert) {
  const KernelWork copy = copy_work(1000);
  EXPECT_EQ(copy.kind, KernelKind::kElementwise);
  EXPECT_EQ(copy.hbm_bytes, 2000);
  EXPECT_EQ(copy.flops, 0);
  EXPECT_EQ(elementwise_copy_bytes(copy), 1000);
  const KernelWork adam = optimizer_work(1000, 4, 8);
  EXPECT_EQ(adam.kind, KernelKind::kOptimizer);
  EXPECT_EQ(adam.flops, 10000);
  EXPECT_EQ(adam.hbm_bytes, 28000);
  EXPECT_EQ(optimizer_params(adam), 1000);
  const KernelWork norm = elementwise_work(500, 800, Precision::kBf16);
  const KernelWork norm_bwd = elementwise_backward_work(norm, 1.5);
  EXPECT_EQ(norm_bwd.kind, KernelKind::kElementwise);
  EXPECT_EQ(norm_bwd.flops, 750);
  EXPECT_EQ(norm_bwd.hbm_bytes, 1600);
}

}  // namespace
}  // namespace strait::sim::cost
