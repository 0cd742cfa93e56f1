#include "sim/cost/kernel_work.hpp"

#include <gtest/gtest.h>

namespace strait::sim::cost {
namespace {

TEST(KernelWork, PrecisionNamesRoundTrip) {
  for (int i = 0; i < kPrecisionCount; ++i) {
    const auto p = static_cast<Precision>(i);
    EXPECT_EQ(parse_precision(to_string(p)), p);
  }
  EXPECT_EQ(parse_precision("bfloat16"), std::nullopt);
}

TEST(KernelWork, KernelKindNamesRoundTrip) {
  for (int i = 0; i < kKernelKindCount; ++i) {
    const auto k = static_cast<KernelKind>(i);
    EXPECT_EQ(parse_kernel_kind(to_string(k)), k);
  }
  EXPECT_EQ(parse_kernel_kind("matmul"), std::nullopt);
}

// Causal tiles of t x t computed for a length L: n = ceil(L / t), t^2 n (n + 1) / 2 pairs,
// over the L (L + t) / 2 a multiple of t computes:
//   L = 100, t = 64:  n = 2, 4096 x 3 = 12288 over 100 x 164 / 2 = 8200   -> 1.4985...
//   L = 100, t = 128: n = 1, 16384 over 100 x 228 / 2 = 11400             -> 1.4372...
//   L = 128, t = 128: 16384 over 128 x 256 / 2 = 16384                    -> 1
//   L = 129, t = 128: n = 2, 49152 over 129 x 257 / 2 = 16576.5           -> 2.9651...
//   {100, 128} at t = 128: (16384 + 16384) / (11400 + 16384) = 32768 / 27784
TEST(KernelWork, AttentionTileFactorsCountWholeTiles) {
  const std::int32_t l100[] = {100}, l128[] = {128}, l129[] = {129}, both[] = {100, 128};
  const int t64 = attention_tile_index(64), t128 = attention_tile_index(128);
  ASSERT_EQ(t64, 2);
  ASSERT_EQ(t128, 3);
  EXPECT_EQ(attention_tile_index(100), -1);
  EXPECT_DOUBLE_EQ(attention_tile_factors(l100)[2], 12288.0 / 8200);
  EXPECT_DOUBLE_EQ(attention_tile_factors(l100)[3], 16384.0 / 11400);
  EXPECT_DOUBLE_EQ(attention_tile_factors(l128)[3], 1.0);
  EXPECT_DOUBLE_EQ(attention_tile_factors(l129)[3], 49152.0 / 16576.5);
  EXPECT_DOUBLE_EQ(attention_tile_factors(both)[3], 32768.0 / 27784);
  EXPECT_DOUBLE_EQ(attention_tile_factors({})[0], 1.0);
}

TEST(KernelWork, ElementSizesFollowThePrecision) {
  EXPECT_EQ(bytes_per_element(Precision::kFp32), 4);
  EXPECT_EQ(bytes_per_element(Precision::kTf32), 4);
  EXPECT_EQ(bytes_per_element(Precision::kBf16), 2);
  EXPECT_EQ(bytes_per_element(Precision::kFp16), 2);
  EXPECT_EQ(bytes_per_element(Precision::kFp8), 1);
}

TEST(KernelWork, OnlyGemmAndAttentionUseTensorCores) {
  EXPECT_TRUE(uses_tensor_cores(KernelKind::kGemm));
  EXPECT_TRUE(uses_tensor_cores(KernelKind::kJaggedAttention));
  EXPECT_TRUE(uses_tensor_cores(KernelKind::kPaddedAttention));
  EXPECT_FALSE(uses_tensor_cores(KernelKind::kEmbeddingLookup));
  EXPECT_FALSE(uses_tensor_cores(KernelKind::kElementwise));
  EXPECT_FALSE(uses_tensor_cores(KernelKind::kOptimizer));
}

}  // namespace
}  // namespace strait::sim::cost
