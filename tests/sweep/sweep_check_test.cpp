// check_values: a sweep value that the key it sets refuses (a negative bandwidth with its
// unit, an unknown unit, a fraction where a count is due, a value of the wrong type) stops
// the sweep before any point runs, with a message naming the sweep file, where the value
// sits in it, the axis, the value and the config's own error; `strait sweep` then exits 1
// without creating or changing an output. Values wrong only together are left to the rows.
// The base scenario is configs/scenarios/dlrm-8gpu.json (one HGX host, 8 GPUs).

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "sim/core/error.hpp"
#include "strait_process.hpp"
#include "sweep/sweep.hpp"
#include "sweep_test_support.hpp"

namespace strait::sweep {
namespace {

using cli::testing::contains;
using cli::testing::read_text;
using cli::testing::run_strait;
using cli::testing::temp_path;
using cli::testing::write_text;

const std::string kSource = STRAIT_SOURCE_DIR;
const std::string kSweepFile = kSource + "/configs/sweeps/test.json";
const std::string kCluster = kSource + "/configs/clusters/hgx-h100-8.json";
const std::string kData = kSource + "/configs/data/criteo-1tb-multihot.json";

// A sweep over the bundled 8-GPU scenario; `body` holds the keys after "scenario".
SweepSpec spec_of(const std::string& body) {
  return SweepSpec::from_config(ConfigNode(
      Json::parse(R"({"scenario": "../scenarios/dlrm-8gpu.json", )" + body + "}"), kSweepFile));
}

// The message check_values throws for `body`, or "" when it accepts every value.
std::string error_of(const std::string& body) {
  const auto spec = spec_of(body);
  try {
    check_values(spec);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

// A first axis of 2 seeds, so that the bad value's axis is /axes/1.
std::string after_seeds(const std::string& axis) {
  return R"("axes": [{"name": "seed", "pointer": "/scenario/seed", "values": [1, 2]}, )" + axis +
         "]";
}

TEST(SweepCheck, ANegativeBandwidthWithItsUnitIsRefused) {
  EXPECT_EQ(
      error_of(after_seeds(
          R"({"name": "nvlink_gbs", "pointer": "/cluster/defaults/host/nvlink/bandwidth",
              "unit": "GB/s", "values": [450, -150]})")),
      kSweepFile + ": /axes/1/values/1: axis 'nvlink_gbs' cannot take the value -150: " + kCluster +
          ": /defaults/host/nvlink/bandwidth: expected a positive bandwidth, got \"-150 GB/s\"");
}

TEST(SweepCheck, AnUnknownUnitIsRefusedAtTheFirstValue) {
  EXPECT_EQ(error_of(after_seeds(
                R"({"name": "nvlink", "pointer": "/cluster/defaults/host/nvlink/bandwidth",
              "unit": "furlongs/s", "values": [450, 900]})")),
            kSweepFile +
                ": /axes/1/values/0: axis 'nvlink' cannot take the value 450: " + kCluster +
                ": /defaults/host/nvlink/bandwidth: expected a bandwidth with its unit such as "
                "\"400 Gb/s\" or \"450 GB/s\", got the string \"450 furlongs/s\"");
}

TEST(SweepCheck, AValueOfTheWrongTypeIsRefused) {
  EXPECT_EQ(error_of(after_seeds(R"({"name": "batch", "pointer": "/data/batch_size/per_rank",
                                     "values": [256, "large"]})")),
            kSweepFile + ": /axes/1/values/1: axis 'batch' cannot take the value \"large\": " +
                kData + ": /batch_size/per_rank: expected an integer, got the string \"large\"");
}

TEST(SweepCheck, AFractionWhereACountIsDueIsRefused) {
  EXPECT_EQ(error_of(after_seeds(R"({"name": "batch", "pointer": "/data/batch_size/per_rank",
                                     "values": [256, 1536.5]})")),
            kSweepFile + ": /axes/1/values/1: axis 'batch' cannot take the value 1536.5: " + kData +
                ": /batch_size/per_rank: expected an integer, got the number 1536.5");
  // A fixed pooling factor is a count too (the loader's wording is distribution.cpp's).
  EXPECT_TRUE(cli::testing::starts_with(
      error_of(after_seeds(R"({"name": "pooling", "values": [3, 1.5],
                               "pointer": "/data/pooling_factors/cat_0/value"})")),
      kSweepFile + ": /axes/1/values/1: axis 'pooling' cannot take the value 1.5: " + kData +
          ": /pooling_factors/cat_0/value: expected a whole count"));
}

TEST(SweepCheck, ARangeValueIsNamedByItsIndex) {
  // linear 1..-2 in 4: 1, 0, -1, -2 steps; the scenario refuses 0 first.
  EXPECT_EQ(error_of(R"("axes": [{"name": "steps", "pointer": "/scenario/steps", "integer": true,
                                  "linear": {"from": 1, "to": -2, "count": 4}}])"),
            kSweepFile +
                ": /axes/0/linear: axis 'steps' cannot take the value 0 (index 1): " + kSource +
                "/configs/scenarios/dlrm-8gpu.json: /steps: expected 1..1000 steps, got 0");
}

TEST(SweepCheck, ABadValueOfTheSetBlockIsRefused) {
  EXPECT_EQ(error_of(R"("set": {"/scenario/steps": 0},
                        "axes": [{"name": "seed", "pointer": "/scenario/seed", "values": [1]}])"),
            kSweepFile + ": /set/~1scenario~1steps: cannot set /scenario/steps to 0: " + kSource +
                "/configs/scenarios/dlrm-8gpu.json: /steps: expected 1..1000 steps, got 0");
}

TEST(SweepCheck, ValuesWrongOnlyTogetherAreLeftToTheRows) {
  // A sparse group of 16 is a valid group size, but not on this 8-GPU host: the plan and the
  // cluster disagree, which the point's row reports (sweep_run_test.cpp).
  EXPECT_EQ(error_of(R"("axes": [{"name": "group", "pointer": "/plan/sparse/group_size",
                                  "values": [8, 16]}])"),
            "");
  // Valid values of every kind pass.
  EXPECT_EQ(error_of(after_seeds(
                R"({"group": "g", "zip": [
                      {"name": "nvlink", "pointer": "/cluster/defaults/host/nvlink/bandwidth",
                       "unit": "GB/s", "values": [100, 450]},
                      {"name": "net", "pointer": "/scenario/mode", "values": ["flow", "analytical"]},
                      {"name": "batch", "pointer": "/data/batch_size/per_rank", "values": [256, 512]}]})")),
            "");
}

// The sweep file of the end-to-end tests: 2 seeds x NVLink bandwidths `bandwidths`.
std::string write_sweep(const std::string& name, const std::string& bandwidths) {
  const auto path = temp_path(name);
  write_text(path, fmt::format(R"({{"scenario": "{}/configs/scenarios/dlrm-8gpu.json",
      "set": {{"/scenario/steps": 1, "/scenario/mode": "analytical"}},
      "axes": [{{"name": "seed", "pointer": "/scenario/seed", "values": [1, 2]}},
               {{"name": "nvlink_gbs", "pointer": "/cluster/defaults/host/nvlink/bandwidth",
                 "unit": "GB/s", "values": {}}}]}})",
                               kSource, bandwidths));
  return path;
}

std::string negative_bandwidth_error(const std::string& sweep) {
  return "strait: error: " + sweep +
         ": /axes/1/values/0: axis 'nvlink_gbs' cannot take the value -150: " + kCluster +
         ": /defaults/host/nvlink/bandwidth: expected a positive bandwidth, got \"-150 GB/s\"\n";
}

TEST(SweepCheck, StraitSweepRefusesABadValueBeforeWritingAnything) {
  const auto sweep = write_sweep("bad-value.json", "[-150, 450]");
  // Fresh outputs in a folder that does not exist yet: neither is created.
  const auto dir = temp_path("bad-value-out");
  const auto csv = dir + "/sweep.csv", jsonl = dir + "/sweep.jsonl";
  const auto fresh = run_strait({"sweep", sweep, "--csv", csv, "--jsonl", jsonl});
  EXPECT_EQ(fresh.exit_code, 1);
  EXPECT_EQ(fresh.err, negative_bandwidth_error(sweep));
  EXPECT_EQ(fresh.out, "");
  EXPECT_FALSE(std::filesystem::exists(dir));

  // Existing outputs are left as they are, replaced or resumed.
  const auto old_csv = temp_path("old.csv"), old_jsonl = temp_path("old.jsonl");
  write_text(old_csv, "point,seed\n");
  write_text(old_jsonl, "{}\n");
  for (const bool resume : {false, true}) {
    std::vector<std::string> args = {"sweep", sweep, "--csv", old_csv, "--jsonl", old_jsonl};
    if (resume) args.push_back("--resume");
    const auto run = run_strait(args);
    EXPECT_EQ(run.exit_code, 1);
    EXPECT_EQ(run.err, negative_bandwidth_error(sweep));
    EXPECT_EQ(read_text(old_csv), "point,seed\n");
    EXPECT_EQ(read_text(old_jsonl), "{}\n");
  }

  // --list, the dry run, checks the values too.
  const auto list = run_strait({"sweep", sweep, "--list"});
  EXPECT_EQ(list.exit_code, 1);
  EXPECT_EQ(list.err, negative_bandwidth_error(sweep));

  // The same sweep with valid values runs every point.
  const auto good = write_sweep("good-value.json", "[150, 450]");
  const auto good_csv = temp_path("good.csv");
  const auto ok = run_strait({"sweep", good, "--threads", "2", "--csv", good_csv});
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_TRUE(contains(ok.out, "4 of 4 points written (4 run now, 0 failed)"));
  EXPECT_EQ(testing::lines(read_text(good_csv)).size(), 5u);
}

TEST(SweepCheck, EveryMpiRankRefusesABadValueBeforeWritingAnything) {
  const std::string mpiexec = STRAIT_MPIEXEC;
  if (!mpi_built() || mpiexec.empty() || !std::filesystem::exists(mpiexec))
    GTEST_SKIP() << "MPI is not installed (scripts/setup.sh installs it)";
  const auto sweep = write_sweep("bad-value-mpi.json", "[-150, 450]");
  const auto csv = temp_path("mpi-bad.csv"), log = temp_path("mpi-bad.log");
  const auto command = fmt::format(
      "cd {} && {} --allow-run-as-root --oversubscribe -np 2 {} sweep {} --csv {} >{} 2>&1",
      kSource, mpiexec, STRAIT_BINARY, sweep, csv, log);
  const int status = std::system(command.c_str());
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) != 0);
  EXPECT_TRUE(contains(read_text(log), negative_bandwidth_error(sweep)));
  EXPECT_FALSE(std::filesystem::exists(csv));
  EXPECT_FALSE(std::filesystem::exists(std::filesystem::path(csv).replace_extension(".jsonl")));
}

}  // namespace
}  // namespace strait::sweep
