// strait sweep end to end: the bundled quick sweep (configs/sweeps/dlrm-8gpu-quick.json,
// 24 points on one 8-GPU host) gives the same CSV serially, on 2 threads and on 2 MPI
// ranks; a sweep killed with SIGKILL and resumed ends with the same CSV as one that ran
// through; a bad sweep file fails before any point runs.

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "strait_process.hpp"
#include "sweep/detail/report_columns.hpp"
#include "sweep/sweep.hpp"
#include "sweep_test_support.hpp"

namespace strait::sweep {
namespace {

using testing::csv_without_wall_times;
using testing::lines;

using cli::testing::contains;
using cli::testing::read_text;
using cli::testing::run_strait;
using cli::testing::temp_path;
using cli::testing::write_text;

constexpr const char* kQuick = "configs/sweeps/dlrm-8gpu-quick.json";

// In a forked child: stdout and stderr to /dev/null, so the test's output stays readable.
void quiet() {
  const int null = ::open("/dev/null", O_WRONLY);
  ::dup2(null, STDOUT_FILENO);
  ::dup2(null, STDERR_FILENO);
}

/// Runs `sweep` on 2 MPI ranks into `csv`; false (and the log) when it fails.
::testing::AssertionResult sweep_on_mpi_ranks(const std::string& sweep, const std::string& csv) {
  const auto log = csv + ".log";
  const auto command = fmt::format(
      "cd {} && {} --allow-run-as-root --oversubscribe -np 2 {} sweep {} --csv {} >{} 2>&1",
      STRAIT_SOURCE_DIR, STRAIT_MPIEXEC, STRAIT_BINARY, sweep, csv, log);
  const int status = std::system(command.c_str());
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << read_text(log);
}

bool mpi_available() {
  const std::string mpiexec = STRAIT_MPIEXEC;
  return mpi_built() && !mpiexec.empty() && std::filesystem::exists(mpiexec);
}

TEST(SweepCommand, SerialThreadsAndMpiRanksWriteTheSameCsv) {
  const auto serial = temp_path("serial.csv"), threads = temp_path("threads.csv");
  const auto a = run_strait({"sweep", kQuick, "--threads", "1", "--csv", serial});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_TRUE(contains(a.out, "24 of 24 points written (24 run now, 0 failed)"));
  const auto b = run_strait({"sweep", kQuick, "--threads", "2", "--csv", threads});
  ASSERT_EQ(b.exit_code, 0) << b.err;
  EXPECT_TRUE(contains(b.out, "on 2 threads"));
  EXPECT_EQ(lines(read_text(serial)).size(), 25u);
  EXPECT_EQ(csv_without_wall_times(serial), csv_without_wall_times(threads));

  if (!mpi_available())
    GTEST_SKIP() << "MPI is not installed (scripts/setup.sh installs it): mpirun part skipped";
  const auto ranks = temp_path("mpi.csv");
  ASSERT_TRUE(sweep_on_mpi_ranks(kQuick, ranks));
  EXPECT_EQ(csv_without_wall_times(serial), csv_without_wall_times(ranks));
}

// The planner at a point counts its effort (evaluations), so a sweep with "plan_search"
// writes the same rows serially, on 2 threads and on 2 MPI ranks while the ranks share
// the cores with each other.
TEST(SweepCommand, PlannedPointsAreTheSameSeriallyOnThreadsAndOnMpiRanks) {
  constexpr const char* kPlanned = "configs/sweeps/dlrm-8gpu-plan.json";
  const auto serial = temp_path("plan-serial.csv"), threads = temp_path("plan-threads.csv");
  const auto a = run_strait({"sweep", kPlanned, "--threads", "1", "--csv", serial});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  const auto b = run_strait({"sweep", kPlanned, "--threads", "2", "--csv", threads});
  ASSERT_EQ(b.exit_code, 0) << b.err;
  EXPECT_EQ(lines(read_text(serial)).size(), 5u);
  EXPECT_EQ(csv_without_wall_times(serial), csv_without_wall_times(threads));

  if (!mpi_available())
    GTEST_SKIP() << "MPI is not installed (scripts/setup.sh installs it): mpirun part skipped";
  const auto ranks = temp_path("plan-mpi.csv");
  ASSERT_TRUE(sweep_on_mpi_ranks(kPlanned, ranks));
  EXPECT_EQ(csv_without_wall_times(serial), csv_without_wall_times(ranks));
}

TEST(SweepCommand, AnMpiJobThatCannotWriteStopsEveryRankWithTheError) {
  const std::string mpiexec = STRAIT_MPIEXEC;
  if (!mpi_built() || mpiexec.empty() || !std::filesystem::exists(mpiexec))
    GTEST_SKIP() << "MPI is not installed (scripts/setup.sh installs it)";
  // --resume onto files of another sweep: rank 0 refuses them and releases rank 1.
  const auto csv = temp_path("other.csv"), jsonl = temp_path("other.jsonl");
  const auto log = temp_path("other.log");
  write_text(csv, "point,x\n");
  write_text(jsonl, "");
  const auto command = fmt::format(
      "cd {} && {} --allow-run-as-root --oversubscribe -np 2 {} sweep {} --resume --csv {} "
      "--jsonl {} >{} 2>&1",
      STRAIT_SOURCE_DIR, mpiexec, STRAIT_BINARY, kQuick, csv, jsonl, log);
  const int status = std::system(command.c_str());
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) != 0);
  EXPECT_TRUE(contains(read_text(log), csv + ": its header is not this sweep's columns"));
  EXPECT_EQ(read_text(csv), "point,x\n");
}

TEST(SweepCommand, ResumeAfterAKillEndsWithTheSameCsv) {
  // 4 x 4 x 3 = 48 points of a few milliseconds each, on one thread.
  const auto sweep = temp_path("kill.json");
  write_text(sweep, fmt::format(R"({{
      "scenario": "{}/configs/scenarios/dlrm-8gpu.json", "set": {{"/scenario/steps": 2}},
      "axes": [{{"name": "nvlink_gbs", "pointer": "/cluster/defaults/host/nvlink/bandwidth",
                 "unit": "GB/s", "values": [100, 200, 300, 450]}},
               {{"name": "batch", "pointer": "/data/batch_size/per_rank", "values": [256, 512, 1024, 2048]}},
               {{"name": "seed", "pointer": "/scenario/seed", "values": [1, 2, 3]}}]}})",
                                STRAIT_SOURCE_DIR));
  const auto full = temp_path("full.csv"), killed = temp_path("killed.csv");
  ASSERT_EQ(run_strait({"sweep", sweep, "--threads", "1", "--csv", full}).exit_code, 0);

  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    quiet();
    ::execl(STRAIT_BINARY, STRAIT_BINARY, "sweep", sweep.c_str(), "--threads", "1", "--csv",
            killed.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  // Kill it once a few rows are out (the header and 3 rows), long before its 48th.
  int status = 0;
  bool exited = false;
  while (lines(read_text(killed)).size() < 4 && !exited) {
    exited = ::waitpid(pid, &status, WNOHANG) == pid;
    std::this_thread::yield();
  }
  ASSERT_FALSE(exited) << "strait sweep ended before it could be killed";
  ::kill(pid, SIGKILL);
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status));
  const auto rows_at_kill = lines(read_text(killed)).size();
  EXPECT_LT(rows_at_kill, 49u);
  // Whatever the kill left, a half-written row too.
  write_text(killed, read_text(killed) + "47,450,20");

  const auto resumed = run_strait({"sweep", sweep, "--threads", "2", "--resume", "--csv", killed});
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_EQ(csv_without_wall_times(killed), csv_without_wall_times(full));
  EXPECT_EQ(lines(read_text(killed)).size(), 49u);
}

TEST(SweepCommand, CtrlCWritesThePointsInFlightAndExits130) {
  const auto sweep = temp_path("int.json");
  write_text(sweep, fmt::format(R"({{
      "scenario": "{}/configs/scenarios/dlrm-8gpu.json", "set": {{"/scenario/steps": 2}},
      "axes": [{{"name": "batch", "pointer": "/data/batch_size/per_rank", "linear": {{"from": 256, "to": 4096, "count": 40}}, "integer": true}}]}})",
                                STRAIT_SOURCE_DIR));
  const auto full = temp_path("full.csv"), stopped = temp_path("stopped.csv");
  ASSERT_EQ(run_strait({"sweep", sweep, "--threads", "1", "--csv", full}).exit_code, 0);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    quiet();
    ::execl(STRAIT_BINARY, STRAIT_BINARY, "sweep", sweep.c_str(), "--threads", "2", "--csv",
            stopped.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  int status = 0;
  bool exited = false;
  while (lines(read_text(stopped)).size() < 3 && !exited) {
    exited = ::waitpid(pid, &status, WNOHANG) == pid;
    std::this_thread::yield();
  }
  ASSERT_FALSE(exited) << "strait sweep ended before it could be interrupted";
  ::kill(pid, SIGINT);
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 130);
  // Whole rows only, each the same as in the run that went through.
  const auto rows = lines(read_text(stopped));
  EXPECT_LT(rows.size(), 41u);
  EXPECT_EQ(read_text(stopped).back(), '\n');
  EXPECT_EQ(csv_without_wall_times(stopped),
            csv_without_wall_times(full).substr(0, csv_without_wall_times(stopped).size()));
  const auto resumed = run_strait({"sweep", sweep, "--resume", "--csv", stopped});
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_EQ(csv_without_wall_times(stopped), csv_without_wall_times(full));
}

TEST(SweepCommand, ABadSweepFileFailsBeforeAnyPointRuns) {
  const auto sweep = temp_path("bad.json");
  const auto csv = temp_path("bad.csv");
  write_text(sweep, fmt::format(R"({{"scenario": "{}/configs/scenarios/dlrm-8gpu.json",
      "axes": [{{"name": "bw", "pointer": "/cluster/defaults/host/nvlnk/bandwidth", "values": [1]}}]}})",
                                STRAIT_SOURCE_DIR));
  const auto run = run_strait({"sweep", sweep, "--csv", csv});
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_TRUE(contains(run.err, sweep + ": /axes/0: /cluster/defaults/host/nvlnk/bandwidth does "
                                        "not lead into"));
  EXPECT_FALSE(std::filesystem::exists(csv));
}

TEST(SweepCommand, ListPrintsThePointsWithoutRunningThem) {
  const auto run = run_strait({"sweep", kQuick, "--list"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_TRUE(contains(run.out, "sweep 'dlrm-8gpu-quick': 24 points"));
  EXPECT_TRUE(
      contains(run.out, "23  nvlink_gbs=450  batch_per_rank=4096  network_mode=analytical"));
}

}  // namespace
}  // namespace strait::sweep
