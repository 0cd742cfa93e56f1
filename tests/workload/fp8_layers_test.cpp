// FP8 layers (LoKA's casts around each FP8 GEMM, dense_stack.cpp), by hand: one top-MLP
// layer of 48 -> 64 (32 dense features and a 16-wide table, no interaction) on 128 samples.
//   forward cast:  A [128, 48] bf16 read twice, written as FP8 and its transpose: 6 x 6,144
//                  B; W [48, 64] fp32 read twice, written twice: 10 x 3,072 B; 67,584 B in
//                  all, 4 flops per element: 36,864;
//   backward cast: dY [128, 64]: 6 x 8,192 = 49,152 B, 32,768 flops;
// each just before its GEMM; a bf16 layer has neither. DCN cross layers: x [m, in] and
// V^T x [m, r], weights V and U, gradients of both.
#include <gtest/gtest.h>

#include <string>

#include "sim/workload/op_graph_builder.hpp"
#include "test_support.hpp"

namespace strait::sim::workload {
namespace {

using testing_support::scenario_of;

std::string one_layer(const std::string& precision) {
  return R"({"embedding": {"tables": [{"name": "t0", "rows": 1000, "dim": 16}]},
    "dense": {"dense_features": 32, "top_mlp": {"layers": [64], "precision": ")" +
         precision + R"("}}})";
}
const char* kData = R"({"batch_size": {"per_rank": 128},
  "pooling_factors": {"default": {"distribution": "fixed", "value": 2}}})";

/// The ops of rank 0 by name, in order.
std::vector<std::pair<std::string, Kernel>> ops_of(const OpGraph& g) {
  std::vector<std::pair<std::string, Kernel>> out;
  for (const auto& op : g.ranks[0].ops)
    out.emplace_back(g.names[static_cast<std::size_t>(op.name)], op.kernel);
  return out;
}

std::size_t index_of(const std::vector<std::pair<std::string, Kernel>>& ops,
                     const std::string& name) {
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].first == name) return i;
  }
  return ops.size();
}

TEST(Fp8Layers, CastsAroundEachFp8GemmByHand) {
  const auto ops = ops_of(
      build_op_graph(scenario_of("hgx-h100-8.json", one_layer("fp8"), kData, R"({"ranks": 1})")));
  const auto fwd = index_of(ops, "top_mlp.0/fwd"), cast = index_of(ops, "top_mlp.0/fp8_cast");
  const auto bwd = index_of(ops, "top_mlp.0/bwd");
  const auto cast_bwd = index_of(ops, "top_mlp.0/fp8_cast_bwd");
  ASSERT_LT(fwd, ops.size());
  ASSERT_LT(bwd, ops.size());
  EXPECT_DOUBLE_EQ(ops[fwd].second.flops, 2.0 * 128 * 64 * 48);  // the layer is 48 -> 64
  EXPECT_EQ(ops[fwd].second.precision, Precision::kFp8);
  ASSERT_EQ(cast + 1, fwd);
  EXPECT_DOUBLE_EQ(ops[cast].second.hbm_bytes, 67584);
  EXPECT_DOUBLE_EQ(ops[cast].second.flops, 36864);
  EXPECT_EQ(ops[cast].second.kind, KernelKind::kElementwise);
  ASSERT_EQ(cast_bwd + 1, bwd);
  EXPECT_DOUBLE_EQ(ops[cast_bwd].second.hbm_bytes, 49152);
  EXPECT_DOUBLE_EQ(ops[cast_bwd].second.flops, 32768);
}

TEST(Fp8Layers, ABf16LayerHasNoCasts) {
  const auto fp8 = ops_of(
      build_op_graph(scenario_of("hgx-h100-8.json", one_layer("fp8"), kData, R"({"ranks": 1})")));
  const auto bf16 = ops_of(
      build_op_graph(scenario_of("hgx-h100-8.json", one_layer("bf16"), kData, R"({"ranks": 1})")));
  EXPECT_EQ(index_of(bf16, "top_mlp.0/fp8_cast"), bf16.size());
  EXPECT_EQ(index_of(bf16, "top_mlp.0/fp8_cast_bwd"), bf16.size());
  EXPECT_EQ(fp8.size(), bf16.size() + 2);
}

}  // namespace
}  // namespace strait::sim::workload
