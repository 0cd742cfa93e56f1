#include "kernels/jagged.hpp"

#include <gtest/gtest.h>

#include "tests/kernels/kernel_test_util.hpp"

namespace strait::kernels {
namespace {

TEST(JaggedCpu, LengthsToOffsetsIsAnExclusiveScanWithTheTotal) {
  std::vector<std::int32_t> lengths{2, 0, 3}, offsets(4, -1);
  lengths_to_offsets(Device::kCpu, lengths.data(), offsets.data(), 3);
  EXPECT_EQ(offsets, (std::vector<std::int32_t>{0, 2, 2, 5}));
}

TEST(JaggedCpu, PadsTruncatesAndRestores) {
  // Sequences of lengths 2, 0, 3 with dim 1: values (1, 2 | - | 3, 4, 5), max_len 2.
  std::vector<float> values{1, 2, 3, 4, 5}, padded(6), back(5, -1);
  std::vector<std::int32_t> off{0, 2, 2, 5};
  JaggedShape s{3, 2, 1, 5, DType::kF32};
  jagged_to_padded(Device::kCpu, s, values.data(), off.data(), padded.data(), -9.0f);
  EXPECT_EQ(padded, (std::vector<float>{1, 2, -9, -9, 3, 4}));
  padded_to_jagged(Device::kCpu, s, padded.data(), off.data(), back.data());
  EXPECT_EQ(back, (std::vector<float>{1, 2, 3, 4, 0}));  // position 2 of sequence 2 was truncated
}

TEST(JaggedCpu, ElementwiseAddsAndMultipliesTheDenseOperand) {
  std::vector<float> values{1, 2, 3}, dense{10, 20, 30, 40}, out(3);
  std::vector<std::int32_t> off{0, 1, 3};
  JaggedShape s{2, 2, 1, 3, DType::kF32};
  jagged_dense_elementwise(Device::kCpu, s, ElementwiseOp::kAdd, values.data(), off.data(),
                           dense.data(), out.data());
  EXPECT_EQ(out, (std::vector<float>{11, 32, 43}));
  jagged_dense_elementwise(Device::kCpu, s, ElementwiseOp::kMul, values.data(), off.data(),
                           dense.data(), out.data());
  EXPECT_EQ(out, (std::vector<float>{10, 60, 120}));
}

TEST(JaggedErrors, DecreasingOffsetsAreRejected) {
  std::vector<float> values(3), padded(4);
  std::vector<std::int32_t> off{0, 2, 1};
  JaggedShape s{2, 2, 1, 1, DType::kF32};
  EXPECT_THROW(jagged_to_padded(Device::kCpu, s, values.data(), off.data(), padded.data()),
               KernelArgumentError);
}

TEST(DTypes, ConversionsRoundToNearestEven) {
  EXPECT_EQ(float_to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(float_to_f16(1.0f), 0x3c00);
  EXPECT_EQ(float_to_f16(65504.0f), 0x7bff);
  EXPECT_EQ(float_to_f16(1e6f), 0x7c00);
  EXPECT_EQ(float_to_f16(5.9604645e-8f), 0x0001);          // 2^-24, the smallest subnormal
  EXPECT_EQ(float_to_f16(1.0f + 0.00048828125f), 0x3c00);  // 1 + 2^-11: tie, to even
  EXPECT_EQ(float_to_bf16(1.0f + 0.00390625f), 0x3f80);    // 1 + 2^-8: tie, to even
  for (const float x : {0.1f, -3.5f, 1234.5f, 6.1e-5f, 0.0f}) {
    EXPECT_NEAR(f16_to_float(float_to_f16(x)), x, std::abs(x) * 1e-3f + 1e-7f);
    EXPECT_NEAR(bf16_to_float(float_to_bf16(x)), x, std::abs(x) * 8e-3f);
  }
}

}  // namespace
}  // namespace strait::kernels
