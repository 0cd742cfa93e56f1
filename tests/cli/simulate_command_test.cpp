// strait simulate: a training scenario (configs/scenarios/dlrm-8gpu.json, 8 GPUs, 3 steps)
// and a collectives scenario (configs/scenarios/collectives-3dc.json, 768 GPUs in three
// datacenters), with their --json reports and --trace files.

#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "strait_process.hpp"

namespace strait::cli::testing {
namespace {

using nlohmann::json;

constexpr const char* kTraining = "configs/scenarios/dlrm-8gpu.json";
constexpr const char* kCollectives = "configs/scenarios/collectives-3dc.json";

// Runs the training scenario with --json; returns the parsed report (null on failure).
json simulate_training(const std::string& json_path) {
  const auto run = run_strait({"simulate", kTraining, "--json", json_path});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  return run.exit_code == 0 ? read_json(json_path) : json();
}

double number(const json& object, const char* key) {
  EXPECT_TRUE(object.contains(key) && object[key].is_number()) << "missing number '" << key << "'";
  return object.contains(key) && object[key].is_number() ? object[key].get<double>() : std::nan("");
}

TEST(CliSimulate, TrainingScenarioWritesReportJson) {
  const std::string json_path = temp_path("report.json");
  const json r = simulate_training(json_path);
  ASSERT_TRUE(r.is_object());

  EXPECT_GT(number(r, "step_time_ms"), 0.0);
  EXPECT_GT(number(r, "samples_per_sec"), 0.0);
  EXPECT_GT(number(r, "mfu"), 0.0);
  EXPECT_LT(number(r, "mfu"), 1.0);
  EXPECT_GT(number(r, "peak_memory_gib"), 0.0);
  EXPECT_GE(number(r, "sim_wall_s"), 0.0);
  ASSERT_TRUE(r.contains("events") && r["events"].is_number_integer());
  EXPECT_GT(r["events"].get<std::int64_t>(), 0);

  ASSERT_TRUE(r.contains("breakdown_ms") && r["breakdown_ms"].is_object());
  for (const char* key : {"compute", "straggler_wait", "bubble"}) {
    EXPECT_GE(number(r["breakdown_ms"], key), 0.0) << key;
  }
  ASSERT_TRUE(r.contains("memory_terms_gib") && r["memory_terms_gib"].is_object());
  EXPECT_FALSE(r["memory_terms_gib"].empty());
  ASSERT_TRUE(r.contains("traffic_bytes") && r["traffic_bytes"].is_object());
  for (const char* key : {"nvlink", "pcie", "scale_out", "cross_dc"}) {
    EXPECT_GE(number(r["traffic_bytes"], key), 0.0) << key;
  }
  // One host: everything moves over NVLink.
  EXPECT_GT(number(r["traffic_bytes"], "nvlink"), 0.0);
  EXPECT_EQ(number(r["traffic_bytes"], "cross_dc"), 0.0);
  std::remove(json_path.c_str());
}

TEST(CliSimulate, CriticalRankBreakdownSumsToStepTime) {
  // Every millisecond of the critical rank's mean step (over every step, warm-up and
  // drain included) is in exactly one category.
  const std::string json_path = temp_path("report.json");
  const json r = simulate_training(json_path);
  ASSERT_TRUE(r.is_object());
  ASSERT_TRUE(r.contains("breakdown_critical_ms") && r["breakdown_critical_ms"].is_object());
  double sum = 0;
  for (const auto& [category, ms] : r["breakdown_critical_ms"].items()) {
    ASSERT_TRUE(ms.is_number()) << category;
    EXPECT_GE(ms.get<double>(), 0.0) << category;
    sum += ms.get<double>();
  }
  const double step = number(r["steady_state"], "all_steps_mean_ms");
  EXPECT_NEAR(sum, step, 1e-6 * step) << r["breakdown_critical_ms"].dump();
  std::remove(json_path.c_str());
}

TEST(CliSimulate, TraceIsChromeJsonWithSpansAndProcessNames) {
  const std::string json_path = temp_path("report.json");
  const std::string trace_path = temp_path("trace.json");
  const auto run = run_strait({"simulate", kTraining, "--json", json_path, "--trace", trace_path});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_TRUE(contains(run.out, "wrote " + trace_path + " (Chrome/Perfetto trace, "));

  const json trace = read_json(trace_path);
  ASSERT_TRUE(trace.is_object());
  ASSERT_TRUE(trace.contains("traceEvents") && trace["traceEvents"].is_array());
  int spans = 0, process_names = 0;
  for (const auto& e : trace["traceEvents"]) {
    ASSERT_TRUE(e.contains("ph") && e["ph"].is_string()) << e.dump();
    const auto ph = e["ph"].get<std::string>();
    if (ph == "X") {
      ++spans;
      ASSERT_TRUE(e.contains("ts") && e["ts"].is_number()) << e.dump();
      ASSERT_TRUE(e.contains("dur") && e["dur"].is_number()) << e.dump();
      EXPECT_GE(e["ts"].get<double>(), 0.0) << e.dump();
      EXPECT_GE(e["dur"].get<double>(), 0.0) << e.dump();
    } else if (ph == "M" && e.value("name", "") == "process_name") {
      ++process_names;
      EXPECT_TRUE(e.contains("args") && e["args"].contains("name")) << e.dump();
    }
  }
  EXPECT_GT(spans, 0);
  // The default --trace-ranks 0-7 covers all 8 GPUs.
  EXPECT_EQ(process_names, 8);
  std::remove(json_path.c_str());
  std::remove(trace_path.c_str());
}

// The report text without the lines holding wall-clock times.
std::string without_wall_times(const std::string& text) {
  std::istringstream in(text);
  std::string line, out;
  while (std::getline(in, line)) {
    if (line.find("\"sim_wall_s\"") != std::string::npos ||
        line.find("\"build_wall_s\"") != std::string::npos) {
      continue;
    }
    out += line + "\n";
  }
  return out;
}

TEST(CliSimulate, TwoRunsGiveIdenticalJsonApartFromWallTimes) {
  const std::string first = temp_path("first.json");
  const std::string second = temp_path("second.json");
  ASSERT_EQ(run_strait({"simulate", kTraining, "--json", first}).exit_code, 0);
  ASSERT_EQ(run_strait({"simulate", kTraining, "--json", second}).exit_code, 0);

  json a = read_json(first), b = read_json(second);
  ASSERT_TRUE(a.is_object() && b.is_object());
  for (const char* key : {"sim_wall_s", "build_wall_s"}) {
    EXPECT_TRUE(a.contains(key)) << key;
    a.erase(key);
    b.erase(key);
  }
  EXPECT_EQ(a, b);
  // Byte for byte too: the same keys in the same order with the same digits.
  const std::string text_a = without_wall_times(read_text(first));
  EXPECT_FALSE(text_a.empty());
  EXPECT_EQ(text_a, without_wall_times(read_text(second)));
  std::remove(first.c_str());
  std::remove(second.c_str());
}

TEST(CliSimulate, CollectivesScenarioReportsEachCollective) {
  const std::string json_path = temp_path("collectives.json");
  const auto run = run_strait({"simulate", kCollectives, "--json", json_path});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const json r = read_json(json_path);
  ASSERT_TRUE(r.is_object());
  EXPECT_EQ(r.value("gpus", 0), 768);
  ASSERT_TRUE(r.contains("collectives") && r["collectives"].is_array());
  std::vector<std::string> names;
  for (const auto& c : r["collectives"]) {
    names.push_back(c.value("name", ""));
    EXPECT_GT(number(c, "time_us"), 0.0) << c.dump();
  }
  const std::vector<std::string> expected = {"emb_a2a_east", "emb_a2a_central", "emb_a2a_west",
                                             "dense_grads", "next_emb_a2a_east"};
  EXPECT_EQ(names, expected);
  EXPECT_GT(number(r["traffic_bytes"], "cross_dc"), 0.0);
  std::remove(json_path.c_str());
}

}  // namespace
}  // namespace strait::cli::testing
