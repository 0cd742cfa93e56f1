// Memory model, hand-checkable:
//   - context parallel degree k = 2 and 4 on one host: attention score memory per rank of
//     an unfused kernel is 1/k of k = 1 (same per-replica batch, fixed length 1024), and
//     the activations too, but for the loss's shared negatives that every rank keeps;
//   - unfused jagged score memory is sum L_i^2 h e per layer, padded B L_max^2 h e: with
//     lengths fixed at L, both equal B L^2 h e = 4 x 1024^2 x 2 x 2 = 16 MiB per layer
//     (2 layers); with uniform lengths jagged < padded;
//   - a fused kernel (the default) keeps no scores: the attention_scores term is 0, while
//     the unfused references stay as above;
//   - fits(): an 80 GiB GPU fits, a 1 MiB one does not, naming the rank and the term.
#include <gtest/gtest.h>

#include "sim/workload/batch.hpp"
#include "sim/workload/detail/dense_stack.hpp"
#include "sim/workload/memory_model.hpp"
#include "sim/workload/op_graph_builder.hpp"
#include "test_support.hpp"

namespace strait::sim::workload {
namespace {

using testing_support::kSmallHstu;
using testing_support::scenario_of;
using testing_support::small_hstu_with;

std::string data_with(const std::string& length) {
  return R"({"batch_size": {"per_rank": 4}, "max_length": 4096, "sequence_length": )" + length +
         "}";
}

const char* kFixed1024 = R"({"distribution": "fixed", "value": 1024})";

const std::string kUnfusedHstu = small_hstu_with(R"("attention_kernel": "unfused")");

TEST(MemoryModel, ContextParallelDividesAttentionMemoryByItsDegree) {
  const auto base =
      memory_per_rank(scenario_of("hgx-h100-8.json", kUnfusedHstu, data_with(kFixed1024), "{}"));
  EXPECT_DOUBLE_EQ(base.ranks[0].term("attention_scores"), 2 * 16.0 * kMiB);
  for (int k : {2, 4}) {
    const auto cp = memory_per_rank(scenario_of(
        "hgx-h100-8.json", kUnfusedHstu, data_with(kFixed1024),
        R"({"context_parallel": {"degree": )" + std::to_string(k) + R"(, "placement": "host"}})"));
    EXPECT_NEAR(cp.ranks[0].term("attention_scores"), base.ranks[0].term("attention_scores") / k,
                1.0)
        << k;
    // The loss's shared negatives (R d e = 16 x 64 x 2 = 2048 B) stay whole on every rank.
    EXPECT_NEAR(cp.ranks[0].term("activations"),
                base.ranks[0].term("activations") / k + 2048.0 * (1 - 1.0 / k), 1.0)
        << k;
  }
  EXPECT_DOUBLE_EQ(base.ranks[0].attention_jagged_bytes, 2 * 16.0 * kMiB);
  EXPECT_DOUBLE_EQ(base.ranks[0].attention_padded_bytes, 2 * 16.0 * kMiB);
}

TEST(MemoryModel, JaggedScalesWithSumOfSquaresPaddedWithMaxLength) {
  const auto sc =
      scenario_of("hgx-h100-8.json", kSmallHstu,
                  data_with(R"({"distribution": "uniform", "min": 16, "max": 4096})"), "{}");
  const auto mem = memory_per_rank(sc);
  const auto batch = sample_step(sc, 0)[0];
  const double h = 2, e = 2, layers = 2;
  EXPECT_DOUBLE_EQ(mem.ranks[0].attention_jagged_bytes, layers * batch.squares * h * e);
  EXPECT_DOUBLE_EQ(mem.ranks[0].attention_padded_bytes,
                   layers * 4.0 * batch.max_length * batch.max_length * h * e);
  EXPECT_LT(mem.ranks[0].attention_jagged_bytes, mem.ranks[0].attention_padded_bytes);
}

// Fixed length 1024, 4 samples, h = 2, e = 2, 2 layers: fused keeps no scores; unfused
// jagged keeps 2 x 4 x 1024^2 x 2 x 2 = 32 MiB; unfused padded the same at fixed lengths.
// Fused or not, the references (what unfused kernels would keep) are 32 MiB.
TEST(MemoryModel, FusedAttentionKeepsNoScoresUnfusedKeepsThem) {
  const auto fused =
      memory_per_rank(scenario_of("hgx-h100-8.json", kSmallHstu, data_with(kFixed1024), "{}"));
  const auto unfused =
      memory_per_rank(scenario_of("hgx-h100-8.json", kUnfusedHstu, data_with(kFixed1024), "{}"));
  EXPECT_EQ(fused.ranks[0].term("attention_scores"), 0.0);
  EXPECT_DOUBLE_EQ(unfused.ranks[0].term("attention_scores"), 32.0 * kMiB);
  EXPECT_DOUBLE_EQ(fused.ranks[0].attention_jagged_bytes, 32.0 * kMiB);
  EXPECT_DOUBLE_EQ(fused.ranks[0].attention_padded_bytes, 32.0 * kMiB);
  EXPECT_DOUBLE_EQ(unfused.ranks[0].total() - fused.ranks[0].total(), 32.0 * kMiB);
}

// Uniform lengths: an unfused padded kernel books B L_max^2 h e per layer, 2 layers.
TEST(MemoryModel, UnfusedPaddedAttentionBooksPaddedScores) {
  const auto sc = scenario_of(
      "hgx-h100-8.json", small_hstu_with(R"("attention_kernel": "unfused", "attention": "padded")"),
      data_with(R"({"distribution": "uniform", "min": 16, "max": 4096})"), "{}");
  const auto b = sample_step(sc, 0)[0];
  EXPECT_DOUBLE_EQ(memory_per_rank(sc).ranks[0].term("attention_scores"),
                   2 * 4.0 * b.max_length * b.max_length * 2 * 2);
}

TEST(MemoryModel, JaggedAttentionFlopsScaleWithPairsPaddedWithMaxLength) {
  const std::string model_padded =
      std::string(kSmallHstu)
          .replace(std::string(kSmallHstu).find("\"negatives\""), 0, "\"attention\": \"padded\", ");
  const std::string data = data_with(R"({"distribution": "uniform", "min": 16, "max": 4096})");
  const auto jagged = scenario_of("hgx-h100-8.json", kSmallHstu, data, R"({"ranks": 1})");
  const auto padded = scenario_of("hgx-h100-8.json", model_padded, data, R"({"ranks": 1})");
  const auto b = sample_step(jagged, 0)[0];
  auto attention = [](const OpGraph& g) {
    for (const auto& op : g.ranks[0].ops) {
      if (g.names[static_cast<std::size_t>(op.name)] == "hstu.0/attention") return op.kernel;
    }
    return Kernel{};
  };
  const Kernel kj = attention(build_op_graph(jagged)), kp = attention(build_op_graph(padded));
  EXPECT_EQ(kj.kind, KernelKind::kJaggedAttention);
  EXPECT_EQ(kp.kind, KernelKind::kPaddedAttention);
  EXPECT_DOUBLE_EQ(kj.flops, 4 * 2 * 32 * b.pairs);
  const double lmax = b.max_length;
  EXPECT_DOUBLE_EQ(kp.flops, 4 * 2 * 32 * 4 * lmax * (lmax + 1) / 2);
}

TEST(MemoryModel, FitsNamesTheRankAndTheDominantTerm) {
  const auto sc = scenario_of("hgx-h100-8.json", kSmallHstu, data_with(kFixed1024), "{}");
  const auto mem = memory_per_rank(sc);
  EXPECT_TRUE(mem.fits(80.0 * kGiB).fits);
  const auto small = mem.fits(1.0 * kMiB);
  EXPECT_FALSE(small.fits);
  EXPECT_GT(small.excess, 0);
  EXPECT_DOUBLE_EQ(small.total - 1.0 * kMiB, small.excess);
  EXPECT_EQ(small.dominant, mem.ranks[static_cast<std::size_t>(small.rank)].dominant().name);
  // Row-wise over 8 ranks: 1e6 x 64 x 4 B / 8 = 32 MB of weights per rank.
  EXPECT_DOUBLE_EQ(mem.ranks[0].term("embedding_weights"), 1e6 * 64 * 4 / 8);
  EXPECT_DOUBLE_EQ(mem.ranks[0].term("embedding_optimizer"), 1e6 * 4 / 8);
}

// Work shared between callers, not changed by it: context-parallel pairs of 8 GPUs (cp 2)
// on lognormal lengths over 2 steps, so that every replica and step has its own shape.
//   - the batches sampled once and handed to build_op_graph and memory_per_rank give the
//     op graph and the memory each samples for itself;
//   - LayerWorkMemo gives each shape the stack's own work, asked in any order (a shape,
//     another, the first again).
TEST(MemoryModel, BatchesSampledOnceAndRememberedLayerWorkChangeNothing) {
  const auto sc =
      scenario_of("hgx-h100-8.json", kSmallHstu,
                  data_with(R"({"distribution": "lognormal", "mean": 600, "sigma": 1.2})"),
                  R"({"context_parallel": {"degree": 2, "placement": "host"}})", 2);
  const auto batches = sample_steps(sc, sc.steps);
  OpGraphOptions shared;
  shared.batches = &batches;
  const OpGraph own = build_op_graph(sc), given = build_op_graph(sc, shared);
  ASSERT_EQ(own.ranks.size(), given.ranks.size());
  for (std::size_t r = 0; r < own.ranks.size(); ++r) {
    ASSERT_EQ(own.ranks[r].ops.size(), given.ranks[r].ops.size()) << r;
    for (std::size_t i = 0; i < own.ranks[r].ops.size(); ++i) {
      EXPECT_EQ(own.ranks[r].ops[i].kernel.flops, given.ranks[r].ops[i].kernel.flops) << r;
      EXPECT_EQ(own.ranks[r].ops[i].kernel.hbm_bytes, given.ranks[r].ops[i].kernel.hbm_bytes);
      EXPECT_EQ(own.ranks[r].ops[i].collective.bytes, given.ranks[r].ops[i].collective.bytes);
    }
  }
  const auto a = memory_per_rank(sc), b = memory_per_rank(sc, batches);
  for (std::size_t r = 0; r < a.ranks.size(); ++r) {
    ASSERT_EQ(a.ranks[r].terms.size(), b.ranks[r].terms.size());
    for (std::size_t t = 0; t < a.ranks[r].terms.size(); ++t)
      EXPECT_EQ(a.ranks[r].terms[t].bytes, b.ranks[r].terms[t].bytes) << r;
  }
  const detail::DenseStack stack(sc.model, sc.plan);
  const auto first = detail::shape_of(batches[0][0], 2),
             second = detail::shape_of(batches[1][1], 2);
  ASSERT_FALSE(first == second);
  detail::LayerWorkMemo memo;
  for (const auto* shape : {&first, &second, &first, &first}) {
    const auto& work = memo.of(stack, *shape);
    ASSERT_EQ(static_cast<int>(work.size()), stack.layers());
    for (int l = 0; l < stack.layers(); ++l) {
      const auto expected = stack.work(l, *shape);
      EXPECT_EQ(work[static_cast<std::size_t>(l)].activation_bytes, expected.activation_bytes);
      ASSERT_EQ(work[static_cast<std::size_t>(l)].forward.size(), expected.forward.size());
      for (std::size_t k = 0; k < expected.forward.size(); ++k) {
        EXPECT_EQ(work[static_cast<std::size_t>(l)].forward[k].kernel.flops,
                  expected.forward[k].kernel.flops);
      }
    }
  }
}

// The memory report build_op_graph fills as it builds (OpGraphOptions::memory) is
// memory_per_rank's, term by term, on two steps of lognormal lengths with context parallel
// pairs and row-wise embedding groups of 4 members (so output-dist buffers differ by member
// and step), with and without a sink, and for representative ranks only.
TEST(MemoryModel, TheBuilderFillsTheSameReportAsMemoryPerRank) {
  const auto sc =
      scenario_of("hgx-h100-8.json", kSmallHstu,
                  data_with(R"({"distribution": "lognormal", "mean": 600, "sigma": 1.2})"),
                  R"({"context_parallel": {"degree": 2, "placement": "host"},
          "sparse": {"group_size": 4, "default": "row_wise"}})",
                  2);
  const auto batches = sample_steps(sc, sc.steps);
  const auto expected = memory_per_rank(sc, batches);
  ASSERT_EQ(expected.ranks.size(), 8u);
  ASSERT_NE(expected.ranks[0].term("comm_buffers"), expected.ranks[2].term("comm_buffers"));
  for (const bool sink : {false, true}) {
    MemoryReport built;
    OpGraphOptions options;
    options.batches = &batches;
    options.memory = &built;
    if (sink) {
      build_op_graph(sc, options, [](const RankOps&) {});
    } else {
      build_op_graph(sc, options);
    }
    ASSERT_EQ(built.ranks.size(), expected.ranks.size());
    for (std::size_t r = 0; r < expected.ranks.size(); ++r) {
      const auto &a = expected.ranks[r], &b = built.ranks[r];
      EXPECT_EQ(b.rank, a.rank);
      ASSERT_EQ(b.terms.size(), a.terms.size());
      for (std::size_t t = 0; t < a.terms.size(); ++t) {
        EXPECT_EQ(b.terms[t].name, a.terms[t].name);
        EXPECT_EQ(b.terms[t].bytes, a.terms[t].bytes) << r << " " << a.terms[t].name;
      }
      EXPECT_EQ(b.attention_jagged_bytes, a.attention_jagged_bytes);
    }
  }
  // Representative ranks: the first group of 4 only, the others without terms.
  const auto few = memory_per_rank(sc, batches, 4);
  MemoryReport built;
  OpGraphOptions options;
  options.batches = &batches;
  options.memory = &built;
  options.representative_ranks = 4;
  build_op_graph(sc, options);
  for (std::size_t r = 0; r < few.ranks.size(); ++r) {
    ASSERT_EQ(built.ranks[r].terms.size(), few.ranks[r].terms.size()) << r;
    EXPECT_EQ(built.ranks[r].total(), few.ranks[r].total()) << r;
  }
}

}  // namespace
}  // namespace strait::sim::workload
