// The HSTU layer's kernels on one rank, every byte by hand. kSmallHstu: d = 64, h = 2,
// dqk = dv = 32, bf16 (e = 2), 16 negatives; B = 4 samples of fixed length 100, so
// T = 400 tokens, S = sum L^2 = 40000, W = h (2 dqk + 2 dv) = 256.
//   silu              2 T W e = 409600 bytes, 4 T W = 409600 flops; backward 2x bytes,
//                     1.5x flops = 819200, 614400
//   rel_bias (fused)  16 T = 6400 bytes, 20 T = 8000 flops; no backward op (in the kernel)
//   dropout           (2 e + 1) T h dv = 5 x 400 x 64 = 128000 bytes, backward the same
//   residual          3 T d e = 153600 bytes, backward the same
//   loss, shared negatives (the default): T + R = 416 rows gathered
//     negatives_gather  2 x 416 x 64 x 2 = 106496 bytes; backward 3 x 416 x 64 x 2 = 159744
//     logits            GEMM 2 x 400 x 16 x 64 = 819200 flops
//     softmax           2 x 400 x 17 x 4 = 54400 bytes (backward the same)
//   loss, per-token negatives, rows = T (R + 1) = 6800:
//     negatives_gather  2 x 6800 x 64 x 2 = 1740800 bytes
//     logits            2 x 6800 x 64 = 870400 flops; 870400 + 51200 + 27200 = 948800 bytes
//     softmax           2 x 6800 x 4 = 54400 bytes (backward the same)
//     logits_bwd        27200 + 1740800 + 102400 = 1870400 bytes
//     negatives_gather_bwd 3 x 6800 x 64 x 2 = 2611200 bytes
//   unfused: rel_bias writes 8 T + S e = 3200 + 80000 = 83200 bytes; attention adds
//   2 S h e + S e = 320000 + 80000 bytes; padded: Q K V to padding (T + B L_max) h
//   (2 dqk + dv) e = 800 x 2 x 96 x 2 = 307200 bytes, output back 800 x 2 x 32 x 2 = 102400.
#include <gtest/gtest.h>

#include <map>

#include "sim/workload/op_graph_builder.hpp"
#include "test_support.hpp"

namespace strait::sim::workload {
namespace {

using testing_support::kSmallHstu;
using testing_support::scenario_of;
using testing_support::small_hstu_with;

const char* kFixed100 = R"({"batch_size": {"per_rank": 4}, "max_length": 1000,
                            "sequence_length": {"distribution": "fixed", "value": 100}})";

// Kernels of rank 0 by op name, and the names of layer 0's ops in order.
struct RankKernels {
  std::map<std::string, Kernel> by_name;
  std::vector<std::string> layer0;
};
RankKernels kernels_of(const std::string& model) {
  const OpGraph g =
      build_op_graph(scenario_of("hgx-h100-8.json", model, kFixed100, R"({"ranks": 1})"));
  RankKernels out;
  for (const auto& op : g.ranks[0].ops) {
    const std::string& name = g.names[static_cast<std::size_t>(op.name)];
    out.by_name[name] = op.kernel;
    if (name.rfind("hstu.0/", 0) == 0) out.layer0.push_back(name.substr(7));
  }
  return out;
}

TEST(HstuLayer, RunsEveryKernelOfAStepInOrder) {
  const auto k = kernels_of(kSmallHstu);
  EXPECT_EQ(k.layer0, (std::vector<std::string>{
                          "norm_in", "uvqk", "silu", "rel_bias", "attention", "norm_out", "dropout",
                          "out", "residual", "out_bwd", "dropout_bwd", "norm_out_bwd",
                          "attention_bwd", "silu_bwd", "uvqk_bwd", "norm_in_bwd", "residual_bwd"}));
}

TEST(HstuLayer, ElementwiseKernelsMoveTheHandComputedBytes) {
  const auto k = kernels_of(kSmallHstu).by_name;
  EXPECT_DOUBLE_EQ(k.at("hstu.0/silu").hbm_bytes, 409600);
  EXPECT_DOUBLE_EQ(k.at("hstu.0/silu").flops, 409600);
  EXPECT_DOUBLE_EQ(k.at("hstu.0/silu_bwd").hbm_bytes, 819200);
  EXPECT_DOUBLE_EQ(k.at("hstu.0/silu_bwd").flops, 614400);
  EXPECT_DOUBLE_EQ(k.at("hstu.0/rel_bias").hbm_bytes, 6400);
  EXPECT_DOUBLE_EQ(k.at("hstu.0/rel_bias").flops, 8000);
  EXPECT_DOUBLE_EQ(k.at("hstu.0/dropout").hbm_bytes, 128000);
  EXPECT_DOUBLE_EQ(k.at("hstu.0/dropout_bwd").hbm_bytes, 128000);
  EXPECT_DOUBLE_EQ(k.at("hstu.0/residual").hbm_bytes, 153600);
  EXPECT_DOUBLE_EQ(k.at("hstu.0/residual_bwd").hbm_bytes, 153600);
  for (const char* name : {"hstu.0/silu", "hstu.0/dropout", "hstu.0/residual"}) {
    EXPECT_EQ(k.at(name).kind, KernelKind::kElementwise) << name;
  }
}

TEST(HstuLayer, SampledSoftmaxSharesOneSetOfNegativesByDefault) {
  const auto k = kernels_of(kSmallHstu).by_name;
  EXPECT_DOUBLE_EQ(k.at("loss/negatives_gather").hbm_bytes, 106496);
  EXPECT_DOUBLE_EQ(k.at("loss/negatives_gather_bwd").hbm_bytes, 159744);
  EXPECT_EQ(k.at("loss/logits").kind, KernelKind::kGemm);
  EXPECT_DOUBLE_EQ(k.at("loss/logits").flops, 819200);
  EXPECT_DOUBLE_EQ(k.at("loss/logits_bwd").flops, 2 * 819200);
  EXPECT_DOUBLE_EQ(k.at("loss/softmax").hbm_bytes, 54400);
  EXPECT_DOUBLE_EQ(k.at("loss/softmax_bwd").hbm_bytes, 54400);
}

TEST(HstuLayer, PerTokenNegativesGatherEveryTokensRows) {
  const auto k = kernels_of(small_hstu_with(R"("negative_sampling": "per_token")")).by_name;
  EXPECT_DOUBLE_EQ(k.at("loss/negatives_gather").hbm_bytes, 1740800);
  EXPECT_DOUBLE_EQ(k.at("loss/logits").flops, 870400);
  EXPECT_DOUBLE_EQ(k.at("loss/logits").hbm_bytes, 948800);
  EXPECT_EQ(k.at("loss/logits").kind, KernelKind::kElementwise);
  EXPECT_DOUBLE_EQ(k.at("loss/softmax").hbm_bytes, 54400);
  EXPECT_DOUBLE_EQ(k.at("loss/softmax_bwd").hbm_bytes, 54400);
  EXPECT_DOUBLE_EQ(k.at("loss/logits_bwd").hbm_bytes, 1870400);
  EXPECT_DOUBLE_EQ(k.at("loss/negatives_gather_bwd").hbm_bytes, 2611200);
}

TEST(HstuLayer, NoDropoutOpAtRatioZero) {
  const auto k = kernels_of(small_hstu_with(R"("dropout": 0)"));
  EXPECT_EQ(k.by_name.count("hstu.0/dropout"), 0u);
  EXPECT_EQ(k.by_name.count("hstu.0/dropout_bwd"), 0u);
}

TEST(HstuLayer, UnfusedAttentionMaterializesScoresAndBias) {
  const auto fused = kernels_of(kSmallHstu).by_name;
  const auto unfused = kernels_of(small_hstu_with(R"("attention_kernel": "unfused")")).by_name;
  EXPECT_DOUBLE_EQ(unfused.at("hstu.0/rel_bias").hbm_bytes, 83200);
  EXPECT_DOUBLE_EQ(unfused.at("hstu.0/rel_bias_bwd").hbm_bytes, 2 * 83200);
  EXPECT_DOUBLE_EQ(
      unfused.at("hstu.0/attention").hbm_bytes - fused.at("hstu.0/attention").hbm_bytes, 400000);
  EXPECT_EQ(fused.count("hstu.0/rel_bias_bwd"), 0u);
}

TEST(HstuLayer, PaddedAttentionConvertsToAndFromPadding) {
  const auto k = kernels_of(small_hstu_with(R"("attention": "padded")"));
  EXPECT_DOUBLE_EQ(k.by_name.at("hstu.0/jagged_to_padded").hbm_bytes, 307200);
  EXPECT_DOUBLE_EQ(k.by_name.at("hstu.0/padded_to_jagged").hbm_bytes, 102400);
  EXPECT_DOUBLE_EQ(k.by_name.at("hstu.0/padded_to_jagged_bwd").hbm_bytes, 102400);
  EXPECT_DOUBLE_EQ(k.by_name.at("hstu.0/jagged_to_padded_bwd").hbm_bytes, 307200);
  const std::vector<std::string> forward(k.layer0.begin(), k.layer0.begin() + 7);
  EXPECT_EQ(forward,
            (std::vector<std::string>{"norm_in", "uvqk", "silu", "rel_bias", "jagged_to_padded",
                                      "attention", "padded_to_jagged"}));
}

// Length 100 with query tiles of 128: one tile of 128^2 pairs over 100 x 228 / 2 = 11400.
TEST(HstuLayer, AttentionCarriesItsBatchsTileFactors) {
  const auto k = kernels_of(kSmallHstu).by_name;
  EXPECT_DOUBLE_EQ(k.at("hstu.0/attention").tile_factor[3], 16384.0 / 11400);
  EXPECT_DOUBLE_EQ(k.at("hstu.0/attention_bwd").tile_factor[3], 16384.0 / 11400);
}

}  // namespace
}  // namespace strait::sim::workload
