// Memory model, hand-checkable:
//   - context parallel degree k = 2 and 4 on one host: attention score memory per rank is
//     1/k of k = 1 (same per-replica batch, fixed length 1024), and the activations too;
//   - jagged score memory is sum L_i^2 h e per layer, padded B L_max^2 h e: with lengths
//     fixed at L, both equal B L^2 h e = 4 x 1024^2 x 2 x 2 = 16 MiB per layer (2 layers);
//     with uniform lengths jagged < padded;
//   - fits(): an 80 GiB GPU fits, a 1 MiB one does not, naming the rank and the term.
#include <gtest/gtest.h>

#include "sim/workload/batch.hpp"
#include "sim/workload/memory_model.hpp"
#include "sim/workload/op_graph_builder.hpp"
#include "test_support.hpp"

namespace strait::sim::workload {
namespace {

using testing_support::kSmallHstu;
using testing_support::scenario_of;

std::string data_with(const std::string& length) {
  return R"({"batch_size": {"per_rank": 4}, "max_length": 4096, "sequence_length": )" + length +
         "}";
}

const char* kFixed1024 = R"({"distribution": "fixed", "value": 1024})";

TEST(MemoryModel, ContextParallelDividesAttentionMemoryByItsDegree) {
  const auto base =
      memory_per_rank(scenario_of("hgx-h100-8.json", kSmallHstu, data_with(kFixed1024), "{}"));
  for (int k : {2, 4}) {
    const auto cp = memory_per_rank(scenario_of(
        "hgx-h100-8.json", kSmallHstu, data_with(kFixed1024),
        R"({"context_parallel": {"degree": )" + std::to_string(k) + R"(, "placement": "host"}})"));
    EXPECT_NEAR(cp.ranks[0].term("attention_scores"), base.ranks[0].term("attention_scores") / k,
                1.0)
        << k;
    EXPECT_NEAR(cp.ranks[0].term("activations"), base.ranks[0].term("activations") / k, 1.0) << k;
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

}  // namespace
}  // namespace strait::sim::workload
