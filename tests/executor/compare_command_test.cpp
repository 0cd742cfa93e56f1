// strait compare end to end: a simulated result and trace compared with themselves give
// errors of exactly 0; a missing file is refused with its name. No MPI needed.

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

TEST(CompareCommand, RefusesAMissingFileNamingIt) {
  const auto r = run_strait({"compare", "no-such-sim.json", "no-such-measured.json"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(contains(r.err, "no-such-sim.json"));
}

}  // namespace
}  // namespace strait::cli::testing
