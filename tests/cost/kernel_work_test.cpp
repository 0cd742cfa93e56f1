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
