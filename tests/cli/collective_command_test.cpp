// strait collective: simulated nccl-tests over a size sweep, its table and its JSON.
//
// Setup: a ring all-reduce on one 8xH100 host (configs/clusters/hgx-h100-8.json) at 1, 2
// and 4 MiB (-b 1M -e 4M -f 2). nccl-tests defines algbw = size / time and, for
// all-reduce on n ranks, busbw = algbw * 2(n-1)/n, i.e. busbw = 1.75 algbw for n = 8.

#include <cstdio>
#include <sstream>

#include <gtest/gtest.h>

#include "strait_process.hpp"

namespace strait::cli::testing {
namespace {

constexpr const char* kCluster = "configs/clusters/hgx-h100-8.json";

StraitRun run_sweep(const std::string& json_path) {
  return run_strait({"collective", "--cluster", kCluster, "-b", "1M", "-e", "4M", "-f", "2",
                     "--json", json_path});
}

TEST(CliCollective, WritesNcclTestsTableAndJson) {
  const std::string json_path = temp_path("collective.json");
  const auto run = run_sweep(json_path);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.err, "");

  // The header names nccl-tests' columns in nccl-tests' order.
  std::istringstream lines(run.out);
  std::string line, header;
  int rows = 0;
  while (std::getline(lines, line)) {
    if (line.find("size") != std::string::npos && line.find("busbw") != std::string::npos)
      header = line;
    if (!line.empty() && line[0] != '#') ++rows;
  }
  ASSERT_FALSE(header.empty()) << run.out;
  std::size_t at = 0;
  for (const char* column : {"size", "count", "type", "redop", "root", "time", "algbw", "busbw"}) {
    const auto found = header.find(column, at);
    ASSERT_NE(found, std::string::npos)
        << "column '" << column << "' missing or out of order in: " << header;
    at = found + 1;
  }
  EXPECT_EQ(rows, 3) << run.out;
  EXPECT_TRUE(contains(run.out, "# Avg bus bandwidth"));

  const auto json = read_json(json_path);
  ASSERT_TRUE(json.is_object());
  ASSERT_TRUE(json.contains("results") && json["results"].is_array());
  ASSERT_EQ(json["results"].size(), 3u);
  const std::int64_t sizes[] = {1 << 20, 2 << 20, 4 << 20};
  for (std::size_t i = 0; i < 3; ++i) {
    const auto& r = json["results"][i];
    for (const char* key : {"size_bytes", "time_us", "algbw_GBps", "busbw_GBps"}) {
      ASSERT_TRUE(r.contains(key) && r[key].is_number())
          << "result " << i << " lacks number " << key;
    }
    EXPECT_EQ(r["size_bytes"].get<std::int64_t>(), sizes[i]);
    EXPECT_GT(r["time_us"].get<double>(), 0.0);
  }
  ASSERT_TRUE(json.contains("events") && json["events"].is_number_integer());
  EXPECT_GT(json["events"].get<std::int64_t>(), 0);
  ASSERT_TRUE(json.contains("wall_s") && json["wall_s"].is_number());
  EXPECT_GE(json["wall_s"].get<double>(), 0.0);
  std::remove(json_path.c_str());
}

TEST(CliCollective, BandwidthsFollowNcclTestsDefinitions) {
  const std::string json_path = temp_path("collective.json");
  const auto run = run_sweep(json_path);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto json = read_json(json_path);
  ASSERT_EQ(json.value("ranks", 0), 8);
  ASSERT_EQ(json["results"].size(), 3u);
  const double factor = 2.0 * (8 - 1) / 8;
  for (const auto& r : json["results"]) {
    const double size = r["size_bytes"].get<double>();
    const double time_s = r["time_us"].get<double>() * 1e-6;
    const double algbw = r["algbw_GBps"].get<double>();
    const double busbw = r["busbw_GBps"].get<double>();
    EXPECT_NEAR(algbw, size / time_s / 1e9, 1e-9 * algbw) << "size " << size;
    EXPECT_NEAR(busbw, algbw * factor, 1e-9 * busbw) << "size " << size;
  }
  std::remove(json_path.c_str());
}

}  // namespace
}  // namespace strait::cli::testing
