// Output files (--json, --trace) are written atomically: a run that fails leaves no file,
// no half-written file and no temporary file behind, and never clobbers an older result.

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "strait_process.hpp"

namespace strait::cli::testing {
namespace {

namespace fs = std::filesystem;

constexpr const char* kCluster = "configs/clusters/hgx-h100-8.json";

std::vector<std::string> entries(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
  return out;
}

TEST(CliOutputFiles, JsonIntoMissingDirectoryFailsAndLeavesNothing) {
  ASSERT_FALSE(fs::exists("/nonexistent-dir"));
  const auto run = run_strait({"collective", "--cluster", kCluster, "-b", "1M", "-e", "1M",
                               "--json", "/nonexistent-dir/out.json"});
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_EQ(run.err, "strait: error: /nonexistent-dir/out.json: cannot open file for writing\n");
  EXPECT_FALSE(fs::exists("/nonexistent-dir"));
}

// --json - writes the JSON to standard output, alone, and the human report to standard
// error; no file named "-" appears.
TEST(CliOutputFiles, JsonDashIsStandardOutputAndTheReportGoesToStandardError) {
  const auto run =
      run_strait({"collective", "--cluster", kCluster, "-b", "1M", "-e", "1M", "--json", "-"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  const auto j = nlohmann::json::parse(run.out);
  EXPECT_EQ(j["op"], "all_reduce");
  EXPECT_NE(run.err.find("all_reduce"), std::string::npos);
  EXPECT_FALSE(fs::exists("-"));
}

// An output over one of the run's inputs is refused before anything runs, the input
// untouched: the scenario file, a file it names, and a sweep's own file.
TEST(CliOutputFiles, AnOutputIsNeverWrittenOverAnInput) {
  const fs::path dir = temp_path("inputs");
  fs::create_directories(dir / "scenarios");
  const std::string scenario = (dir / "scenarios" / "s.json").string();
  write_text(scenario,
             read_text(std::string(STRAIT_SOURCE_DIR) + "/configs/scenarios/collectives-3dc.json"));
  const std::string text = read_text(scenario);
  auto run = run_strait({"simulate", scenario, "--json", scenario});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.err, "strait: simulate: --json " + scenario + " is one of the run's inputs (" +
                         scenario + "); write the output elsewhere\n");
  EXPECT_EQ(read_text(scenario), text);

  const std::string sweep = (dir / "sweep.json").string();
  write_text(sweep, R"({"name": "s", "scenario": ")" + std::string(STRAIT_SOURCE_DIR) +
                        R"(/configs/scenarios/dlrm-8gpu.json",
    "axes": [{"name": "steps", "pointer": "/scenario/steps", "values": [1]}]})");
  const std::string sweep_text = read_text(sweep);
  run = run_strait({"sweep", sweep, "--csv", sweep});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.err, "strait: sweep: --csv " + sweep + " is one of the run's inputs (" + sweep +
                         "); write the output elsewhere\n");
  EXPECT_EQ(read_text(sweep), sweep_text);
}

TEST(CliOutputFiles, FailedJsonStopsTheTraceToo) {
  const fs::path dir = temp_path("outputs");
  fs::create_directories(dir);
  const auto run =
      run_strait({"simulate", "configs/scenarios/dlrm-8gpu.json", "--json",
                  "/nonexistent-dir/out.json", "--trace", (dir / "trace.json").string()});
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_EQ(run.err, "strait: error: /nonexistent-dir/out.json: cannot open file for writing\n");
  EXPECT_TRUE(entries(dir).empty()) << entries(dir).front();
  fs::remove_all(dir);
}

TEST(CliOutputFiles, FailedRenameLeavesNoTemporaryFile) {
  // The target is an existing directory: the temporary file is written next to it, the
  // rename onto the directory fails, and the temporary file must be gone afterwards.
  const fs::path dir = temp_path("outputs");
  fs::create_directories(dir / "out.json" / "occupied");
  const auto run = run_strait({"collective", "--cluster", kCluster, "-b", "1M", "-e", "1M",
                               "--json", (dir / "out.json").string()});
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_TRUE(starts_with(
      run.err, "strait: error: " + (dir / "out.json").string() + ": cannot rename temporary file"));
  EXPECT_EQ(entries(dir), std::vector<std::string>{"out.json"});
  EXPECT_TRUE(fs::is_directory(dir / "out.json"));
  fs::remove_all(dir);
}

TEST(CliOutputFiles, FailedRunKeepsTheOlderResult) {
  const std::string scenario = temp_path("malformed.json");
  write_text(scenario, "{");
  const std::string result = temp_path("result.json");
  write_text(result, "{\"old\": true}\n");
  const auto run = run_strait({"simulate", scenario, "--json", result});
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_EQ(read_text(result), "{\"old\": true}\n");
  std::remove(scenario.c_str());
  std::remove(result.c_str());
}

}  // namespace
}  // namespace strait::cli::testing
