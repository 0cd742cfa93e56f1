// strait exec's start-up watchdog (issue 43): a rank that stops or stalls before the first
// step ends the job, naming the phase and, where it is known, the rank, instead of leaving
// the others waiting for ever. The test hook STRAIT_EXEC_STALL="RANK:init|setup"
// (executor/detail/rank_job.hpp) stalls one rank before MPI_Init or right after it.
// Its own binary, so that ctest's TIMEOUT (tests/executor/CMakeLists.txt) ends it should
// the watchdog ever hang; each run is also bounded (mpirun_bounded) and takes its limit
// plus mpirun's start and end (2-3 s here). Skipped without MPI or mpirun.

#include <chrono>
#include <filesystem>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "executor/cpu_executor.hpp"
#include "mpirun.hpp"
#include "strait_process.hpp"

namespace strait::cli::testing {
namespace {

constexpr auto kBound = std::chrono::seconds(90);  // far above the limits: a hang, not slowness

// Two ranks of the tiny CPU scenario with both outputs asked for, `stall` naming the
// stalled rank and stage, --startup-timeout `limit_s`; what the job printed.
struct StalledJob {
  BoundedRun run;
  std::string log;
  bool wrote_output = false;  // the result or the trace exists
};

StalledJob run_stalled(const std::string& stall, int limit_s) {
  const auto log = temp_path("exec.log"), out = temp_path("result.json"),
             trace = temp_path("trace.json");
  StalledJob job;
  job.run = mpirun_bounded(
      2,
      fmt::format("configs/scenarios/dlrm-tiny-cpu.json --startup-timeout {} --json {} --trace {}",
                  limit_s, out, trace),
      "STRAIT_EXEC_STALL=" + stall, log, kBound);
  job.log = read_text(log);
  job.wrote_output = std::filesystem::exists(out) || std::filesystem::exists(trace);
  return job;
}

// Rank 1 never reaches MPI_Init: Open MPI's MPI_Init waits for every process, so rank 0
// cannot know which one is missing; it ends itself and mpirun ends rank 1. Rank 0 waits
// in MPI_Init however slow the machine, so a short limit cannot make this test flaky.
TEST(ExecStartup, ARankThatNeverStartsMpiEndsTheJob) {
  if (!have_mpirun()) GTEST_SKIP() << "MPI is not installed (scripts/setup.sh installs it)";
  const auto job = run_stalled("1:init", 2);
  ASSERT_TRUE(job.run.finished) << "still running after 90 s (process group killed)\n" << job.log;
  EXPECT_NE(job.run.exit_code, 0) << job.log;
  EXPECT_TRUE(contains(job.log,
                       "start-up (MPI_Init) did not complete in 2 s: a peer did not arrive "
                       "(stopped or stalled before it)"));
  EXPECT_FALSE(job.wrote_output);
}

// Rank 1 stalls right after MPI_Init: rank 0 names it at the communicators' set-up. Both
// ranks must get through MPI_Init first (about a second here, more on a busy machine):
// a generous 10 s limit.
TEST(ExecStartup, RankZeroNamesARankStalledAfterMpiInit) {
  if (!have_mpirun()) GTEST_SKIP() << "MPI is not installed (scripts/setup.sh installs it)";
  const auto job = run_stalled("1:setup", 10);
  ASSERT_TRUE(job.run.finished) << "still running after 90 s (process group killed)\n" << job.log;
  EXPECT_NE(job.run.exit_code, 0) << job.log;
  EXPECT_TRUE(contains(job.log,
                       "strait exec: rank 0: start-up (communicators) did not complete in 10 s: "
                       "rank 1 did not arrive (stopped or stalled before it)"));
  EXPECT_FALSE(job.wrote_output);
}

// Rank 0 itself stalls: the others cannot hear from it and say so (10 s: as above).
TEST(ExecStartup, TheOthersNameRankZeroWhenItStalls) {
  if (!have_mpirun()) GTEST_SKIP() << "MPI is not installed (scripts/setup.sh installs it)";
  const auto job = run_stalled("0:setup", 10);
  ASSERT_TRUE(job.run.finished) << "still running after 90 s (process group killed)\n" << job.log;
  EXPECT_NE(job.run.exit_code, 0) << job.log;
  EXPECT_TRUE(contains(job.log,
                       "strait exec: rank 1: start-up (communicators) did not complete in 10 s: "
                       "rank 0 did not arrive (stopped or stalled before it)"));
  EXPECT_FALSE(job.wrote_output);
}

// Without --startup-timeout the limit is the job-wide waits' (cpu_executor.hpp): at least
// 300 s, since it also covers the peers' loading and preparation; none when collectives
// have none.
TEST(ExecStartup, TheDefaultLimitFollowsTheCollectiveTimeout) {
  EXPECT_EQ(executor::job_wait_limit_s(120), 300);
  EXPECT_EQ(executor::job_wait_limit_s(2), 300);
  EXPECT_EQ(executor::job_wait_limit_s(900), 900);
  EXPECT_EQ(executor::job_wait_limit_s(0), 0);
}

TEST(ExecStartup, RefusesANegativeStartupTimeout) {
  const auto r =
      run_strait({"exec", "configs/scenarios/dlrm-tiny-cpu.json", "--startup-timeout", "-1"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(contains(r.err, "exec: --startup-timeout: expected 0 or more seconds, got -1"));
}

}  // namespace
}  // namespace strait::cli::testing
