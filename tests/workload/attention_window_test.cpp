// Sliding-window attention (HstuConfig::attention_window, Kunlun's local attention), by
// hand on small shapes:
//   - pairs and score elements of one sample: L = 10, W = 4: 1 + 2 + 3 + 4 x 7 = 34 pairs
//     (W(W + 1)/2 + (L - W) W), 10 x 4 = 40 scores; L = 3 <= W: 6 pairs, 9 scores;
//   - fixed length 1024, window 256, 4 samples a rank, h = 2, dqk = dv = 32: pairs per
//     sample 256 x 257 / 2 + 768 x 256 = 229,504 (full: 524,800), so the attention kernel's
//     FLOPs are 2 h (dqk + dv) x 4 x 229,504 = 256 x 918,016 = 235,012,096;
//   - an unfused kernel's scores per layer B L W h e = 4 x 1024 x 256 x 2 x 2 = 4 MiB (the
//     full causal kernel's 16 MiB), 2 layers;
//   - a window longer than every sample changes nothing;
//   - balancing cost: the quadratic term b L^2 becomes b (2 pairs - L).
#include <gtest/gtest.h>

#include <string>

#include "sim/core/units.hpp"
#include "sim/workload/batch.hpp"
#include "sim/workload/memory_model.hpp"
#include "sim/workload/op_graph_builder.hpp"
#include "test_support.hpp"

namespace strait::sim::workload {
namespace {

using testing_support::config_error_of;
using testing_support::kSmallHstu;
using testing_support::scenario_of;
using testing_support::small_hstu_with;

const char* kFixed1024 =
    R"({"batch_size": {"per_rank": 4}, "max_length": 4096,
        "sequence_length": {"distribution": "fixed", "value": 1024}})";

Kernel attention(const OpGraph& g) {
  for (const auto& op : g.ranks[0].ops) {
    if (g.names[static_cast<std::size_t>(op.name)] == "hstu.0/attention") return op.kernel;
  }
  return Kernel{};
}

TEST(AttentionWindow, PairsAndScoresOfOneSample) {
  EXPECT_DOUBLE_EQ(attended_pairs(10, 4), 34);
  EXPECT_DOUBLE_EQ(score_elements(10, 4), 40);
  EXPECT_DOUBLE_EQ(attended_pairs(3, 4), 6);
  EXPECT_DOUBLE_EQ(score_elements(3, 4), 9);
  EXPECT_DOUBLE_EQ(attended_pairs(10, 0), 55);
  EXPECT_DOUBLE_EQ(score_elements(10, 0), 100);
}

TEST(AttentionWindow, AttentionFlopsCountThePairsInTheWindow) {
  const auto windowed =
      scenario_of("hgx-h100-8.json", small_hstu_with(R"("attention_window": 256)"), kFixed1024,
                  R"({"ranks": 1})");
  const auto full = scenario_of("hgx-h100-8.json", kSmallHstu, kFixed1024, R"({"ranks": 1})");
  const auto b = sample_step(windowed, 0)[0];
  EXPECT_DOUBLE_EQ(b.pairs, 4 * 229504.0);
  EXPECT_DOUBLE_EQ(attention(build_op_graph(windowed)).flops, 235012096.0);
  EXPECT_DOUBLE_EQ(attention(build_op_graph(full)).flops, 256 * 4 * 524800.0);
  // Tokens are unchanged: every token still attends (the kernel reads each once).
  EXPECT_DOUBLE_EQ(b.tokens, sample_step(full, 0)[0].tokens);
}

TEST(AttentionWindow, UnfusedScoresAreTheBand) {
  const auto windowed =
      scenario_of("hgx-h100-8.json",
                  small_hstu_with(R"("attention_kernel": "unfused", "attention_window": 256)"),
                  kFixed1024, "{}");
  EXPECT_DOUBLE_EQ(memory_per_rank(windowed).ranks[0].term("attention_scores"), 2 * 4.0 * kMiB);
  const auto padded = scenario_of(
      "hgx-h100-8.json",
      small_hstu_with(
          R"("attention_kernel": "unfused", "attention": "padded", "attention_window": 256)"),
      kFixed1024, "{}");
  EXPECT_DOUBLE_EQ(memory_per_rank(padded).ranks[0].term("attention_scores"), 2 * 4.0 * kMiB);
}

TEST(AttentionWindow, AWindowLongerThanEverySampleChangesNothing) {
  const auto wide = scenario_of("hgx-h100-8.json", small_hstu_with(R"("attention_window": 4096)"),
                                kFixed1024, R"({"ranks": 1})");
  const auto full = scenario_of("hgx-h100-8.json", kSmallHstu, kFixed1024, R"({"ranks": 1})");
  EXPECT_EQ(attention(build_op_graph(wide)).flops, attention(build_op_graph(full)).flops);
  EXPECT_EQ(sample_step(wide, 0)[0].cost, sample_step(full, 0)[0].cost);
}

TEST(AttentionWindow, BalancingCostsThePairsInTheWindow) {
  SampleCost c;
  c.a = 3;
  c.b = 2;
  c.window = 4;
  EXPECT_DOUBLE_EQ(c(10), 3 * 10 + 2 * (2 * 34 - 10));
  EXPECT_DOUBLE_EQ(c(3), 3 * 3 + 2 * 9);
  c.window = 0;
  EXPECT_DOUBLE_EQ(c(10), 3 * 10 + 2 * 100);
}

TEST(AttentionWindow, ANonPositiveWindowIsRefusedByName) {
  const auto error = config_error_of([] {
    scenario_of("hgx-h100-8.json", small_hstu_with(R"("attention_window": 0)"), kFixed1024, "{}");
  });
  EXPECT_NE(error.find("attention_window"), std::string::npos) << error;
}

}  // namespace
}  // namespace strait::sim::workload
