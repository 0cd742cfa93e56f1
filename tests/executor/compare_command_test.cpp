// strait compare end to end: a simulated result and trace compared with themselves give
// errors of exactly 0; a missing file is refused with its name; a simulation against a
// real job's Kineto traces (--kineto). No MPI needed.

#include <gtest/gtest.h>

#include "strait_process.hpp"

namespace strait::cli::testing {
namespace {

TEST(CompareCommand, ASimulatedRunAgainstItselfHasNoError) {
  const auto json = temp_path("sim.json"), trace = temp_path("sim-trace.json"),
             out = temp_path("compare.json"), both = temp_path("both.json");
  const auto sim = run_strait(
      {"simulate", "configs/scenarios/dlrm-tiny-cpu.json", "--json", json, "--trace", trace});
  ASSERT_EQ(sim.exit_code, 0) << sim.err;
  const auto r = run_strait({"compare", json, json, "--sim-trace", trace, "--measured-trace", trace,
                             "--json", out, "--trace", both});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "strait compare: scenario 'dlrm-tiny-cpu', 2 ranks"));
  EXPECT_TRUE(contains(r.out, "MAPE over kernel families: 0.0%"));

  const auto c = read_json(out);
  ASSERT_FALSE(c["step_time"].empty());
  for (const char* key : {"step_time", "breakdown_ms", "kernel_families", "comm_purposes"}) {
    for (const auto& f : c[key]) {
      EXPECT_EQ(f["simulated_ms"], f["measured_ms"]) << key << " " << f["name"];
      EXPECT_EQ(f["error"], 0.0) << key << " " << f["name"];
    }
  }
  EXPECT_FALSE(c["kernel_families"].empty());
  EXPECT_EQ(c["kernel_family_mape_percent"], 0.0);
  EXPECT_EQ(c["unmatched_ops"], 0);
  EXPECT_GT(c["matched_ops"].get<int>(), 0);
  for (const auto& op : c["top_ops"]) EXPECT_EQ(op["abs_error_ms"], 0.0);

  const auto trace_json = read_json(both);
  int simulated = 0, measured = 0;
  for (const auto& e : trace_json["traceEvents"]) {
    if (e["ph"] != "M" || e["name"] != "process_name") continue;
    const auto name = e["args"]["name"].get<std::string>();
    simulated += name.rfind("simulated: ", 0) == 0;
    measured += name.rfind("measured: ", 0) == 0;
  }
  EXPECT_EQ(simulated, 2);
  EXPECT_EQ(measured, 2);
}

// The fixture job of kineto_measured_test.cpp (a directory of two per-rank traces) against
// its simulation: gemm 0.300 vs 0.310 ms, collectives per op, both names on op rows.
TEST(CompareCommand, ComparesASimulationWithAKinetoTraceDirectory) {
  const std::string data = "tests/executor/data/kineto";
  const auto out = temp_path("kineto-compare.json");
  const auto r =
      run_strait({"compare", data + "/simulated.json", "--sim-trace",
                  data + "/simulated-trace.json", "--kineto", data + "/job", "--json", out});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "strait compare: scenario 'kineto-fixture', 2 ranks"));
  EXPECT_TRUE(contains(r.out, "collectives, ms per step, all ranks"));
  EXPECT_TRUE(contains(r.out, "    gemm                                   0.300       0.310"));
  EXPECT_TRUE(contains(r.out, "dense_ar | ncclKernel_AllReduce_RING..."));
  EXPECT_TRUE(contains(r.out, "2 kernels of no known family"));
  const auto c = read_json(out);
  ASSERT_EQ(c["comm_ops"].size(), 2u);
  EXPECT_EQ(c["comm_ops"][0]["name"], "all_reduce");
  EXPECT_EQ(c["breakdown_ms"].size(), 1u);
  EXPECT_EQ(c["matched_ops"], 24);
}

// Round trip: a simulation against its own Kineto traces (strait simulate --trace-format
// kineto) has errors of ~0 (microsecond rounding) in every figure and matches every op.
TEST(CompareCommand, ASimulationAgainstItsOwnKinetoTracesHasNoError) {
  const auto json = temp_path("rt-sim.json"), trace = temp_path("rt-sim-trace.json"),
             kineto = temp_path("rt-kineto"), out = temp_path("rt-compare.json");
  const std::string scenario = "configs/scenarios/dlrm-tiny-cpu.json";
  const auto sim = run_strait({"simulate", scenario, "--json", json, "--trace", trace});
  ASSERT_EQ(sim.exit_code, 0) << sim.err;
  const auto k = run_strait({"simulate", scenario, "--trace-format", "kineto", "--trace", kineto});
  ASSERT_EQ(k.exit_code, 0) << k.err;
  const auto r =
      run_strait({"compare", json, "--sim-trace", trace, "--kineto", kineto, "--json", out});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto c = read_json(out);
  for (const char* key : {"step_time", "breakdown_ms", "kernel_families", "comm_ops"}) {
    ASSERT_FALSE(c[key].empty()) << key;
    for (const auto& f : c[key]) EXPECT_NEAR(f["error"].get<double>(), 0.0, 1e-6) << f["name"];
  }
  EXPECT_EQ(c["unmatched_ops"], 0);
  EXPECT_GT(c["matched_ops"].get<int>(), 0);
}

TEST(CompareCommand, KinetoModeNeedsTheSimulatedTraceAndNoMeasuredResult) {
  const std::string data = "tests/executor/data/kineto";
  const auto no_trace =
      run_strait({"compare", data + "/simulated.json", "--kineto", data + "/job"});
  EXPECT_NE(no_trace.exit_code, 0);
  EXPECT_TRUE(contains(no_trace.err, "--kineto needs --sim-trace"));
  const auto missing =
      run_strait({"compare", data + "/simulated.json", "--sim-trace",
                  data + "/simulated-trace.json", "--kineto", data + "/job/b_rank0.json"});
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_TRUE(contains(missing.err, "expected a Kineto trace of rank 1"));
}

TEST(CompareCommand, RefusesAMissingFileNamingIt) {
  const auto r = run_strait({"compare", "no-such-sim.json", "no-such-measured.json"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(contains(r.err, "no-such-sim.json"));
}

}  // namespace
}  // namespace strait::cli::testing
