// run_sweep on threads: rows in point order whatever the thread count, a failing point as
// an error row, resume after a half-written row or a stop, and files of another sweep
// refused. The sweeps run configs/scenarios/dlrm-8gpu.json (8 GPUs, one step), a few
// milliseconds per point.

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "strait_process.hpp"
#include "sweep/detail/report_columns.hpp"
#include "sweep/sweep.hpp"
#include "sweep_test_support.hpp"

namespace strait::sweep {
namespace {

using testing::csv_without_wall_times;
using testing::jsonl_without_wall_times;
using testing::lines;

using cli::testing::read_text;
using cli::testing::temp_path;
using cli::testing::write_text;

const std::string kSweepFile = std::string(STRAIT_SOURCE_DIR) + "/configs/sweeps/test.json";
const std::string kProfiles = std::string(STRAIT_SOURCE_DIR) + "/configs/profiles";

// NVLink bandwidth (3 values, the last with a sparse group of 16 on the host's 8 GPUs: a
// plan the cluster cannot hold, so those points fail as they run) x batch per rank (2): 6
// points. Each value is valid for its own key, so check_values lets the sweep start.
SweepSpec small_sweep(const std::string& bandwidths = "[100, 450, 400]") {
  return SweepSpec::from_config(ConfigNode(Json::parse(R"({
      "scenario": "../scenarios/dlrm-8gpu.json", "set": {"/scenario/steps": 1},
      "axes": [{"group": "link", "zip": [
                 {"name": "nvlink_gbs", "pointer": "/cluster/defaults/host/nvlink/bandwidth",
                  "unit": "GB/s", "values": )" + bandwidths +
                                                       R"(},
                 {"name": "sparse_group", "pointer": "/plan/sparse/group_size", "values": [8, 8, 16]}]},
               {"name": "batch", "pointer": "/data/batch_size/per_rank", "values": [256, 1024]}]})"),
                                           kSweepFile));
}

struct Files {
  std::string csv, jsonl;
};

Files files() { return {temp_path("sweep.csv"), temp_path("sweep.jsonl")}; }

SweepSummary run(const SweepSpec& spec, const Files& f, int threads, bool resume = false,
                 const std::atomic<bool>* stop = nullptr,
                 std::function<void(const SweepProgress&)> progress = {}) {
  SweepOptions o;
  o.csv_path = f.csv;
  o.jsonl_path = f.jsonl;
  o.threads = threads;
  o.resume = resume;
  o.default_profiles_dir = kProfiles;
  o.stop = stop;
  o.progress = std::move(progress);
  return run_sweep(spec, o);
}

std::vector<std::vector<std::string>> csv_rows(const std::string& path) {
  std::vector<std::vector<std::string>> out;
  for (const auto& line : lines(read_text(path))) out.push_back(detail::split_csv_line(line));
  return out;
}

std::size_t column_of(const std::vector<std::string>& header, const std::string& name) {
  return static_cast<std::size_t>(std::find(header.begin(), header.end(), name) - header.begin());
}

TEST(SweepRun, TwoThreadsWriteTheSameFilesAsOne) {
  const auto spec = small_sweep();
  const auto one = files(), two = files();
  const auto s1 = run(spec, one, 1);
  const auto s2 = run(spec, two, 2);
  EXPECT_EQ(s1.progress.done, 6u);
  EXPECT_EQ(s2.progress.done, 6u);
  EXPECT_EQ(s2.workers, 2);
  EXPECT_FALSE(s2.interrupted);
  EXPECT_EQ(csv_without_wall_times(one.csv), csv_without_wall_times(two.csv));
  EXPECT_EQ(jsonl_without_wall_times(one.jsonl), jsonl_without_wall_times(two.jsonl));
  EXPECT_EQ(lines(read_text(one.csv)).size(), 7u);  // header + 6 rows
}

TEST(SweepRun, EachRowHoldsItsPointsReport) {
  const auto spec = small_sweep();
  const auto f = files();
  run(spec, f, 2);
  const auto rows = csv_rows(f.csv);
  const auto reports = lines(read_text(f.jsonl));
  ASSERT_EQ(rows.size(), 7u);
  ASSERT_EQ(reports.size(), 6u);
  const auto& header = rows[0];
  EXPECT_EQ(header, detail::csv_header({"nvlink_gbs", "sparse_group", "batch"}));
  const auto step = column_of(header, "step_time_ms");
  const auto gpus = column_of(header, "gpus");
  for (std::size_t i = 0; i < 4; ++i) {
    const auto& row = rows[i + 1];
    const auto report = Json::parse(reports[i]);
    EXPECT_EQ(row[0], std::to_string(i));
    EXPECT_EQ(report["point"], i);
    EXPECT_EQ(row[1], format_axis_value(report["axes"]["nvlink_gbs"]));
    EXPECT_EQ(row[step], detail::format_number(report["result"]["step_time_ms"]));
    EXPECT_EQ(row[gpus], "8");
    EXPECT_EQ(row.back(), "");  // no error
  }
  // Points 0..3: (100, 256) (100, 1024) (450, 256) (450, 1024). More NVLink bandwidth on one
  // host, where every collective crosses NVLink, never makes a step slower.
  EXPECT_EQ(rows[3][1] + "," + rows[3][3], "450,256");
  EXPECT_LT(std::stod(rows[3][step]), std::stod(rows[1][step]));
  EXPECT_LT(std::stod(rows[4][step]), std::stod(rows[2][step]));
  EXPECT_GT(std::stod(rows[2][column_of(header, "nvlink_bytes")]),
            std::stod(rows[1][column_of(header, "nvlink_bytes")]));
}

TEST(SweepRun, AFailingPointIsARowWithItsError) {
  const auto f = files();
  const auto summary = run(small_sweep(), f, 2);
  EXPECT_EQ(summary.progress.failed, 2u);
  const auto rows = csv_rows(f.csv);
  ASSERT_EQ(rows.size(), 7u);
  for (std::size_t r : {5u, 6u}) {
    EXPECT_EQ(rows[r][2], "16");
    EXPECT_EQ(rows[r][column_of(rows[0], "step_time_ms")], "");
    EXPECT_TRUE(cli::testing::contains(
        rows[r].back(),
        "dlrm-8gpu.json: /sparse/group_size: expected a group size that divides the 8 ranks, "
        "got 16"));
  }
  const auto last = Json::parse(lines(read_text(f.jsonl)).back());
  EXPECT_FALSE(last.contains("result"));
  EXPECT_TRUE(cli::testing::contains(last["error"].get<std::string>(), "divides the 8 ranks"));
}

TEST(SweepRun, ResumeAfterAHalfWrittenRowEndsWithTheSameFiles) {
  const auto spec = small_sweep();
  const auto full = files(), cut = files();
  run(spec, full, 1);
  // As a kill could leave them: two whole rows and half a third in the CSV, three JSON lines.
  const auto csv = lines(read_text(full.csv));
  const auto jsonl = lines(read_text(full.jsonl));
  write_text(cut.csv, csv[0] + "\n" + csv[1] + "\n" + csv[2] + "\n" + csv[3].substr(0, 9));
  write_text(cut.jsonl, jsonl[0] + "\n" + jsonl[1] + "\n" + jsonl[2] + "\n");
  const auto summary = run(spec, cut, 2, /*resume=*/true);
  EXPECT_EQ(summary.progress.ran, 4u);
  EXPECT_EQ(summary.progress.done, 6u);
  EXPECT_EQ(summary.progress.failed, 2u);
  EXPECT_EQ(csv_without_wall_times(cut.csv), csv_without_wall_times(full.csv));
  EXPECT_EQ(jsonl_without_wall_times(cut.jsonl), jsonl_without_wall_times(full.jsonl));
  // The two kept rows are the old ones, byte for byte (wall times included).
  const auto resumed = lines(read_text(cut.csv));
  EXPECT_EQ(resumed[1], csv[1]);
  EXPECT_EQ(resumed[2], csv[2]);
}

TEST(SweepRun, AStoppedSweepLeavesWholeRowsThatResumeCompletes) {
  const auto spec = small_sweep();
  const auto full = files(), stopped = files();
  run(spec, full, 1);
  std::atomic<bool> stop{false};
  const auto summary = run(spec, stopped, 1, false, &stop, [&stop](const SweepProgress& p) {
    if (p.done >= 2) stop.store(true);
  });
  EXPECT_TRUE(summary.interrupted);
  EXPECT_EQ(summary.progress.done, 2u);
  const auto partial = csv_without_wall_times(stopped.csv);
  EXPECT_EQ(lines(partial).size(), 3u);
  EXPECT_EQ(partial, csv_without_wall_times(full.csv).substr(0, partial.size()));
  const auto resumed = run(spec, stopped, 2, /*resume=*/true);
  EXPECT_FALSE(resumed.interrupted);
  EXPECT_EQ(resumed.progress.ran, 4u);
  EXPECT_EQ(csv_without_wall_times(stopped.csv), csv_without_wall_times(full.csv));
}

TEST(SweepRun, ResumeWithoutFilesStartsFresh) {
  const auto f = files();
  const auto summary = run(small_sweep(), f, 1, /*resume=*/true);
  EXPECT_EQ(summary.progress.ran, 6u);
  EXPECT_EQ(lines(read_text(f.csv)).size(), 7u);
}

TEST(SweepRun, ResumeRefusesTheFilesOfAnotherSweep) {
  const auto f = files();
  run(small_sweep(), f, 1);
  const std::string before = read_text(f.csv);
  try {
    run(small_sweep("[200, 450, 400]"), f, 1, /*resume=*/true);
    FAIL() << "expected ResumeMismatch";
  } catch (const ResumeMismatch& e) {
    EXPECT_TRUE(cli::testing::contains(e.what(), f.csv +
                                                     ": line 2 (nvlink_gbs=100, sparse_group=8, "
                                                     "batch=256) is not point 0 of this sweep "
                                                     "(nvlink_gbs=200, sparse_group=8, "
                                                     "batch=256)"));
  }
  EXPECT_EQ(read_text(f.csv), before);  // untouched
}

// The files of another sweep are refused whether or not their partner file exists: a CSV
// whose .jsonl was deleted was overwritten with exit 0, and a lone .jsonl too.
TEST(SweepRun, ResumeRefusesAnotherSweepsFileWithoutItsPartner) {
  const auto f = files();
  run(small_sweep(), f, 1);
  const std::string csv = read_text(f.csv), jsonl = read_text(f.jsonl);
  std::filesystem::remove(f.jsonl);
  EXPECT_THROW(run(small_sweep("[200, 450, 400]"), f, 1, /*resume=*/true), ResumeMismatch);
  EXPECT_EQ(read_text(f.csv), csv);
  write_text(f.jsonl, jsonl);
  std::filesystem::remove(f.csv);
  EXPECT_THROW(run(small_sweep("[200, 450, 400]"), f, 1, /*resume=*/true), ResumeMismatch);
  EXPECT_EQ(read_text(f.jsonl), jsonl);
}

}  // namespace
}  // namespace strait::sweep
