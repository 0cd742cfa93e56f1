// Comparison: hand-built results and timelines with errors and MAPE computed by hand.

#include "executor/comparison.hpp"

#include <gtest/gtest.h>

#include "sim/core/error.hpp"

namespace strait::executor {
namespace {

using traces::Arg;

ConfigNode doc(const char* text, const char* file) {
  return ConfigNode(nlohmann::json::parse(text), file);
}

// Simulated: mean 11 ms, p50 10, p99 12; measured: mean 10, p50 10, no p99.
//   step mean 11/10 - 1 = 0.1, p50 0, p99 not compared (measured lacks it).
//   breakdown: compute 8 vs 8 -> 0; exposed_output_dist 2 vs 1 -> 1.0; straggler_wait 1 vs 0
//   -> no error (measured 0); bubble 0 vs 0 -> 0; "extra" only measured -> not compared.
TEST(Comparison, ComparesTheStepTimesAndBreakdownKeysBothResultsHave) {
  const auto c = compare_results(
      doc(R"({"scenario": "x", "gpus": 2, "step_time_ms": 11, "step_time_p50_ms": 10,
             "step_time_p99_ms": 12, "breakdown_ms": {"compute": 8, "exposed_output_dist": 2,
             "straggler_wait": 1, "bubble": 0}})",
          "sim.json"),
      doc(R"({"scenario": "x", "gpus": 2, "step_time_ms": 10, "step_time_p50_ms": 10,
             "breakdown_ms": {"compute": 8, "exposed_output_dist": 1, "straggler_wait": 0,
             "bubble": 0, "extra": 1}})",
          "meas.json"));
  EXPECT_EQ(c.scenario, "x");
  EXPECT_EQ(c.ranks, 2);
  ASSERT_EQ(c.step_time.size(), 2u);
  EXPECT_EQ(c.step_time[0].name, "mean");
  EXPECT_NEAR(*c.step_time[0].error(), 0.1, 1e-12);
  EXPECT_EQ(c.step_time[1].name, "p50");
  EXPECT_EQ(*c.step_time[1].error(), 0.0);
  ASSERT_EQ(c.breakdown.size(), 4u);
  EXPECT_EQ(c.breakdown[0].name, "bubble");  // the simulated result's key order (sorted)
  EXPECT_EQ(*c.breakdown[0].error(), 0.0);
  EXPECT_EQ(c.breakdown[1].name, "compute");
  EXPECT_EQ(*c.breakdown[1].error(), 0.0);
  EXPECT_EQ(c.breakdown[2].name, "exposed_output_dist");
  EXPECT_NEAR(*c.breakdown[2].error(), 1.0, 1e-12);
  EXPECT_EQ(c.breakdown[3].name, "straggler_wait");
  EXPECT_FALSE(c.breakdown[3].error().has_value());
  const auto j = comparison_json(c);
  EXPECT_TRUE(j["breakdown_ms"][3]["error"].is_null());
  EXPECT_FALSE(j.contains("kernel_families"));
}

// A measured result with its mean's 95% interval: the simulated mean 11 ms is inside
// [9.5, 11.5], and 12 ms would be outside.
TEST(Comparison, SaysWhetherTheSimulatedMeanIsInsideTheMeasuredInterval) {
  const auto measured =
      doc(R"({"scenario": "x", "gpus": 1, "step_time_ms": 10.5, "breakdown_ms": {"compute": 10},
             "steady_state": {"counted_steps": 8, "mean_ci95_ms": [9.5, 11.5]}})",
          "meas.json");
  const auto inside = compare_results(
      doc(R"({"scenario": "x", "gpus": 1, "step_time_ms": 11, "breakdown_ms": {"compute": 10}})",
          "sim.json"),
      measured);
  ASSERT_TRUE(inside.measured_mean_ci95_ms.has_value());
  EXPECT_EQ(inside.measured_counted_steps, 8);
  EXPECT_EQ(comparison_json(inside)["simulated_mean_in_ci95"], true);
  const auto outside = compare_results(
      doc(R"({"scenario": "x", "gpus": 1, "step_time_ms": 12, "breakdown_ms": {"compute": 10}})",
          "sim.json"),
      measured);
  EXPECT_EQ(comparison_json(outside)["simulated_mean_in_ci95"], false);
  EXPECT_EQ(comparison_json(outside)["measured_mean_ci95_ms"], nlohmann::json::array({9.5, 11.5}));
}

void add(traces::Timeline& tl, int rank, const char* name, const char* cat, double start_us,
         double dur_us) {
  tl.add_span(rank, "compute", name, cat, Time::from_us(start_us), Time::from_us(start_us + dur_us),
              {Arg("step", 0)});
}

// One step, two ranks (us):
//   simulated rank 0: mlp gemm 100, mlp gemm 100, attn jagged_attention 50, a2a output_dist
//             30 (after 20 of "wait for peers", not op time); rank 1: mlp gemm 200, attn_bwd
//             padded_attention_backward 40.
//   measured  rank 0: mlp 80, mlp 120, attn 100, a2a 60; rank 1: mlp 200, attn_bwd 40.
// Families: gemm 0.4 vs 0.4 ms -> 0; attention_fwd 0.05 vs 0.1 -> -0.5; attention_bwd 0.04
// vs 0.04 -> 0; MAPE (0 + 50 + 0) / 3 = 16.67%. output_dist 0.03 vs 0.06 -> -0.5, MAPE 50%.
// Ops by |error|: rank 0 attn 0.05, a2a 0.03, mlp 0.02, mlp #1 0.02, then rank 1's (0).
// MAPE over (gemm 0.4 vs 0.5 ms: -20%; elementwise 4 vs 1 us: +300%, under the 10 us
// floor of per-op timing, left out) = 20%.
TEST(Comparison, FiguresUnderTheTimingFloorStayOutOfMape) {
  const std::vector<ComparedFigure> fs = {{"gemm", 0.4, 0.5}, {"elementwise", 0.004, 0.001}};
  EXPECT_TRUE(in_mape(fs[0]));
  EXPECT_FALSE(in_mape(fs[1]));
  EXPECT_NEAR(*mape_percent(fs), 20.0, 1e-9);
  EXPECT_FALSE(mape_percent({{"elementwise", 0.004, 0.001}}).has_value());
}

TEST(Comparison, SumsFamiliesAndPurposesOverRanksAndRanksOpsByAbsoluteError) {
  traces::Timeline sim, meas;
  add(sim, 0, "mlp", "gemm", 0, 100);
  add(sim, 0, "mlp", "gemm", 100, 100);
  add(sim, 0, "attn", "jagged_attention", 200, 50);
  add(sim, 0, "wait for peers", "output_dist", 250, 20);
  add(sim, 0, "a2a", "output_dist", 270, 30);
  add(sim, 1, "mlp", "gemm", 0, 200);
  add(sim, 1, "attn_bwd", "padded_attention_backward", 200, 40);
  add(meas, 0, "mlp", "gemm", 0, 80);
  add(meas, 0, "mlp", "gemm", 80, 120);
  add(meas, 0, "attn", "jagged_attention", 200, 100);
  add(meas, 0, "a2a", "output_dist", 300, 60);
  add(meas, 1, "mlp", "gemm", 0, 200);
  add(meas, 1, "attn_bwd", "padded_attention_backward", 200, 40);
  Comparison c;
  compare_traces(sim, "st.json", meas, "mt.json", c);
  ASSERT_TRUE(c.has_traces);
  ASSERT_EQ(c.families.size(), 3u);
  EXPECT_EQ(c.families[0].name, "gemm");
  EXPECT_NEAR(c.families[0].simulated_ms, 0.4, 1e-12);
  EXPECT_NEAR(*c.families[0].error(), 0.0, 1e-12);
  EXPECT_EQ(c.families[1].name, "attention_fwd");
  EXPECT_NEAR(*c.families[1].error(), -0.5, 1e-12);
  EXPECT_EQ(c.families[2].name, "attention_bwd");
  EXPECT_NEAR(*mape_percent(c.families), 50.0 / 3, 1e-9);
  ASSERT_EQ(c.purposes.size(), 1u);
  EXPECT_EQ(c.purposes[0].name, "output_dist");
  EXPECT_NEAR(c.purposes[0].simulated_ms, 0.03, 1e-12);
  EXPECT_NEAR(*mape_percent(c.purposes), 50.0, 1e-9);
  EXPECT_EQ(c.matched_ops, 6u);
  EXPECT_EQ(c.unmatched_ops, 0u);
  ASSERT_EQ(c.top_ops.size(), 6u);
  EXPECT_EQ(c.top_ops[0].name, "attn");
  EXPECT_EQ(c.top_ops[1].name, "a2a");
  EXPECT_EQ(c.top_ops[2].name, "mlp");
  EXPECT_EQ(c.top_ops[2].occurrence, 0);
  EXPECT_NEAR(c.top_ops[2].measured_ms, 0.08, 1e-12);
  EXPECT_EQ(c.top_ops[3].occurrence, 1);
  EXPECT_EQ(c.top_ops[4].rank, 1);
  const auto j = comparison_json(c);
  EXPECT_NEAR(j["kernel_family_mape_percent"].get<double>(), 50.0 / 3, 1e-9);
  EXPECT_EQ(j["top_ops"][0]["name"], "attn");

  const auto both = side_by_side(sim, meas);
  EXPECT_EQ(both.rank_name(0), "simulated: rank 0");
  EXPECT_EQ(both.rank_name(3), "measured: rank 1");
  EXPECT_EQ(both.spans().size(), sim.spans().size() + meas.spans().size());
}

TEST(Comparison, RefusesAResultWithoutABreakdownNamingTheFileAndKey) {
  try {
    compare_results(doc(R"({"step_time_ms": 1, "breakdown_ms": {}})", "sim.json"),
                    doc(R"({"step_time_ms": 1})", "meas.json"));
    FAIL() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.file(), "meas.json");
    EXPECT_NE(std::string(e.what()).find("breakdown_ms"), std::string::npos) << e.what();
  }
}

TEST(Comparison, RefusesTracesOfDifferentRanks) {
  traces::Timeline sim, meas;
  add(sim, 0, "mlp", "gemm", 0, 100);
  add(sim, 1, "mlp", "gemm", 0, 100);
  add(meas, 0, "mlp", "gemm", 0, 100);
  Comparison c;
  try {
    compare_traces(sim, "st.json", meas, "mt.json", c);
    FAIL() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.file(), "mt.json");
    EXPECT_NE(std::string(e.what()).find("expected the ranks of st.json (0,1); this trace has "
                                         "ranks 0"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace strait::executor
