#include "executor/kernel_shapes.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "calibration/kernel_case.hpp"
#include "sim/core/error.hpp"
#include "sim/core/rng.hpp"
#include "sim/cost/kernel_shapes.hpp"
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
  const std::vector<int> ten(10, 100);
  EXPECT_DOUBLE_EQ(sim::cost::attention_work(sim::cost::attention_shape(ten, false, 2, 32),
                                             sim::cost::Precision::kFp32)
                       .flops,
                   10 * 1292800.0);
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

// What the executor runs an op at, as work: sim/cost/kernel_shapes.hpp's formula applied
// to the shape the executor takes from the op (its kernels: row-wise AdaGrad with one f32
// of state per row for embedding updates, Adam in fp32 for the dense optimizer, a memcpy
// for elementwise ops).
KernelWork executed_work(const KernelWork& k) {
  namespace cost = sim::cost;
  const bool backward = k.kind != cost::forward_kind(k.kind);
  switch (cost::forward_kind(k.kind)) {
    case KernelKind::kGemm: {
      const KernelWork f = cost::gemm_work({static_cast<double>(k.m), static_cast<double>(k.n),
                                            static_cast<double>(k.k), gemm_runs(k)},
                                           k.precision);
      return backward ? cost::gemm_backward_work(f) : f;
    }
    case KernelKind::kJaggedAttention:
    case KernelKind::kPaddedAttention: {
      const auto b = attention_batch(k);
      const std::vector<int> lengths(static_cast<std::size_t>(b.batch), b.length);
      const bool padded = cost::forward_kind(k.kind) == KernelKind::kPaddedAttention;
      const KernelWork f = cost::attention_work(
          cost::attention_shape(lengths, padded, k.heads, k.head_dim), k.precision);
      return backward ? cost::attention_backward_work(f) : f;
    }
    case KernelKind::kEmbeddingLookup:
      return cost::embedding_lookup_work(
          {static_cast<double>(embedding_ids(k)), static_cast<double>(embedding_bags(k)),
           static_cast<double>(k.embedding_dim), k.unique_fraction},
          k.precision);
    case KernelKind::kEmbeddingUpdate: {
      const auto ids = static_cast<double>(embedding_ids(k));
      return cost::embedding_update_work(
          {ids, ids, static_cast<double>(k.embedding_dim), k.unique_fraction}, k.precision, 4);
    }
    case KernelKind::kElementwise:
      return cost::copy_work(static_cast<double>(elementwise_copy_bytes(k)));
    default:
      return cost::optimizer_work(static_cast<double>(optimizer_params(k)), 4, 8);
  }
}

struct Bundled {
  std::string scenario;
  bool padded = false;  // run its HSTU layers on padded attention (a what-if of the model)
};

// What the executor's kernels run like the workload's formulas: embedding updates whose op
// is one shape (tables of one row length, row-wise AdaGrad in fp32), Adam in fp32.
struct SameKernels {
  bool one_shape_updates = false;
  bool adam = false;
};

// Checks that the executor runs `k` (op `name`) at the shape nearest its work, within the
// rounding stated on the test below; counts the GEMM ops whose bytes are a fused layer's.
void expect_runs_near_its_work(const KernelWork& k, const std::string& name,
                               const SameKernels& same, int& fused) {
  const KernelWork run = executed_work(k);
  const double d = k.embedding_dim, e = sim::cost::bytes_per_element(k.precision);
  // Half a unit apart is a tie the rounding may take either way: its last bits.
  const double tie = 1e-12 * k.flops;
  switch (sim::cost::forward_kind(k.kind)) {
    case KernelKind::kGemm:
      EXPECT_EQ(run.flops, k.flops);
      if (name.starts_with("interaction/") || name.starts_with("dcn.") ||
          name.ends_with("/experts") || name.ends_with("/experts_bwd")) {
        ++fused;
      } else {
        EXPECT_EQ(run.hbm_bytes, k.hbm_bytes);
      }
      break;
    case KernelKind::kJaggedAttention:
    case KernelKind::kPaddedAttention:
      EXPECT_NEAR(run.flops, k.flops, run.flops / attention_batch(k).batch / 2 + tie);
      EXPECT_EQ(run.mean_length, std::max(1.0, std::round(k.mean_length)));
      break;
    case KernelKind::kEmbeddingLookup:
      EXPECT_NEAR(run.flops, k.flops, d / 2 + tie);
      EXPECT_NEAR(run.hbm_bytes, k.hbm_bytes, d * e + 8);
      break;
    case KernelKind::kEmbeddingUpdate: {
      const double u = k.unique_fraction;
      EXPECT_NEAR(run.flops, k.flops, d * (1 + 4 * u) / 2 + tie);
      // The op sums its tables (each its own unique fraction); 1e-12: their order.
      if (same.one_shape_updates) {
        EXPECT_NEAR(run.hbm_bytes, k.hbm_bytes,
                    (d * e + 2 * u * d * e + 8 * u) / 2 + 1e-12 * k.hbm_bytes);
      }
      break;
    }
    case KernelKind::kElementwise:
      EXPECT_NEAR(run.hbm_bytes, k.hbm_bytes, 1);
      break;
    default:
      EXPECT_EQ(run.flops, k.flops);
      if (same.adam) {
        EXPECT_EQ(run.hbm_bytes, k.hbm_bytes);
      }
      break;
  }
}

// Every kernel op of the scenarios strait exec runs (the CPU ones and the one-GPU ones),
// the HSTU one also with padded attention, runs at a shape whose work (by the formula the
// simulator built the op with) is the op's, to the nearest whole runnable shape:
//   gemm, gemm_backward  flops exactly (whole GEMMs of the op's m, n, k); bytes exactly but
//                        for the layers whose op fuses more than its GEMMs (dot
//                        interaction, DCN cross, MoE experts: dense_stack.cpp)
//   attention            flops within half a sample of round(mean_length) tokens
//   embedding lookup     flops within half an id, bytes within one id and its row
//   embedding update     flops within half an id; bytes within half an id's where the op is
//                        one shape (an op over rows of several lengths runs at their mean)
//   elementwise          bytes within a byte (a memcpy of half of them; no flops)
//   optimizer            flops exactly; bytes exactly under Adam in fp32 (dlrm-1gpu's
//                        AdaGrad keeps one state per parameter, not two)
TEST(KernelShapes, EveryKernelOpOfTheBundledScenariosRunsAtTheShapeNearestItsWork) {
  const std::vector<Bundled> bundled = {
      {"dlrm-tiny-cpu"},       {"dlrm-tiny-cpu-4"}, {"hstu-tiny-cpu"}, {"hstu-tiny-cpu-4"},
      {"hstu-tiny-cpu", true}, {"dlrm-1gpu"},       {"hstu-1gpu"}};
  std::set<KernelKind> kinds;
  int fused = 0;
  for (const auto& b : bundled) {
    auto scenario = sim::workload::TrainingScenario::load(
        std::string(STRAIT_SOURCE_DIR) + "/configs/scenarios/" + b.scenario + ".json");
    scenario.model.hstu.padded = b.padded;
    const auto& model = scenario.model;
    std::set<int> dims;
    for (const auto& t : model.tables) dims.insert(t.dim);
    using sim::workload::Optimizer;
    SameKernels same;
    same.one_shape_updates = dims.size() == 1 &&
                             model.embedding_optimizer == Optimizer::kRowWiseAdagrad &&
                             model.embedding_optimizer_dtype == sim::cost::Precision::kFp32;
    same.adam = model.dense_optimizer == Optimizer::kAdam &&
                model.param_dtype == sim::cost::Precision::kFp32;
    const auto graph = sim::workload::build_op_graph(scenario);
    for (const auto& rank : graph.ranks) {
      for (const auto& op : rank.ops) {
        if (op.kind != sim::workload::OpKind::kKernel) continue;
        const std::string& name = graph.names[static_cast<std::size_t>(op.name)];
        SCOPED_TRACE(b.scenario + " rank " + std::to_string(rank.rank) + " " + name);
        expect_runs_near_its_work(op.kernel, name, same, fused);
        kinds.insert(op.kernel.kind);
      }
    }
  }
  EXPECT_EQ(kinds.size(), static_cast<std::size_t>(sim::cost::kKernelKindCount));
  EXPECT_GT(fused, 0);
}

}  // namespace
}  // namespace strait::executor
