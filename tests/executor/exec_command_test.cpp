// strait exec end to end: under mpirun with 2 ranks on the bundled tiny CPU scenario, and
// its refusals. The MPI tests skip where MPI is not built or mpirun is missing.

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <set>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "executor/cpu_executor.hpp"
#include "mpirun.hpp"
#include "strait_process.hpp"

namespace strait::cli::testing {
namespace {

TEST(ExecCommand, TwoRanksRunDlrmTinyAndWriteAResultAndATrace) {
  if (!have_mpirun()) GTEST_SKIP() << "MPI is not installed (scripts/setup.sh installs it)";
  const auto out = temp_path("result.json"), trace = temp_path("trace.json"),
             log = temp_path("exec.log");
  ASSERT_EQ(
      mpirun(2,
             fmt::format("configs/scenarios/dlrm-tiny-cpu.json --json {} --trace {}", out, trace),
             log),
      0)
      << read_text(log);
  EXPECT_TRUE(contains(
      read_text(log),
      "strait exec: scenario 'dlrm-tiny-cpu', 2 ranks, 10 steps measured after 1 warm-up run(s)"));

  const auto result = read_json(out);
  EXPECT_EQ(result["scenario"], "dlrm-tiny-cpu");
  EXPECT_EQ(result["gpus"], 2);
  EXPECT_EQ(result["steps"], 10);
  EXPECT_EQ(result["warmup_runs"], 1);
  ASSERT_EQ(result["step_times_ms"].size(), 10u);
  for (const auto& s : result["step_times_ms"]) EXPECT_GT(s.get<double>(), 0);
  EXPECT_GT(result["step_time_ms"].get<double>(), 0);
  EXPECT_GT(result["breakdown_ms"]["compute"].get<double>(), 0);
  // Both ranks share this machine, so the run says what other processes took of it.
  ASSERT_TRUE(result.contains("machine"));
  EXPECT_GE(result["machine"]["cores"].get<int>(), 1);
  EXPECT_GE(result["machine"]["other_busy_cores"].get<double>(), 0);
  EXPECT_GE(result["kernel_spread_percent"].get<double>(), 0);

  // Chrome JSON: complete events ("X") with non-negative times on both ranks' processes.
  const auto chrome = read_json(trace);
  ASSERT_TRUE(chrome.contains("traceEvents"));
  std::set<int> pids;
  for (const auto& e : chrome["traceEvents"]) {
    if (e["ph"] != "X") continue;
    pids.insert(e["pid"].get<int>());
    EXPECT_GE(e["ts"].get<double>(), 0);
    EXPECT_GE(e["dur"].get<double>(), 0);
  }
  EXPECT_EQ(pids, (std::set<int>{0, 1}));
}

TEST(ExecCommand, RefusesAWorldSizeOtherThanTheGraphsRanks) {
  if (!have_mpirun()) GTEST_SKIP() << "MPI is not installed (scripts/setup.sh installs it)";
  const auto log = temp_path("exec.log");
  EXPECT_NE(mpirun(1, "configs/scenarios/dlrm-tiny-cpu.json", log), 0);
  EXPECT_TRUE(contains(read_text(log),
                       "the op graph has 2 ranks but MPI started 1 processes (run mpirun -np 2)"));
}

// Issue 11: rank 2 of 4 killed mid-graph (op 30 of 63, in the second step of the warm-up
// run) ends the whole job, non-zero, with mpirun naming rank 2 and the survivors naming
// the op they were in. Ten times, as the issue asks (about 2 s a run).
TEST(ExecCommand, AKilledRankEndsTheJobAndTheOthersSayWhereTheyStopped) {
  if (!have_mpirun()) GTEST_SKIP() << "MPI is not installed (scripts/setup.sh installs it)";
  for (int attempt = 0; attempt < 10; ++attempt) {
    SCOPED_TRACE(fmt::format("run {}", attempt + 1));
    const auto log = temp_path("killed.log");
    const auto run = mpirun_bounded(4, "configs/scenarios/dlrm-tiny-cpu-4.json",
                                    "STRAIT_EXEC_KILL=2:30", log, std::chrono::seconds(60));
    const auto text = read_text(log);
    ASSERT_TRUE(run.finished) << "still running after 60 s (process group killed)\n" << text;
    EXPECT_NE(run.exit_code, 0) << text;
    EXPECT_TRUE(contains(text, "process rank 2 with PID"));
    bool survivor = false;
    for (int r : {0, 1, 3}) {
      survivor = survivor || contains(text, fmt::format("strait exec: rank {} stopped in op '", r));
    }
    EXPECT_TRUE(survivor) << "no surviving rank said where it stopped:\n" << text;
  }
}

// (mpirun's own "MPI_ABORT was invoked" notice is not asserted: it is sometimes lost to
// "ORTE_ERROR_LOG: Out of resource in file ../orte/util/show_help.c" as the job ends.)
TEST(ExecCommand, AnOpThatThrowsAbortsTheJobNamingTheRankAndTheOp) {
  if (!have_mpirun()) GTEST_SKIP() << "MPI is not installed (scripts/setup.sh installs it)";
  const auto log = temp_path("failed.log");
  const auto run = mpirun_bounded(4, "configs/scenarios/dlrm-tiny-cpu-4.json",
                                  "STRAIT_EXEC_FAIL=2:30", log, std::chrono::seconds(60));
  const auto text = read_text(log);
  ASSERT_TRUE(run.finished) << text;
  EXPECT_NE(run.exit_code, 0) << text;
  EXPECT_TRUE(contains(text,
                       "strait exec: rank 2 failed in op 'loss/fwd' (step 1): injected "
                       "failure (STRAIT_EXEC_FAIL)"));
}

TEST(ExecCommand, ACollectivePastTheTimeoutAbortsTheJob) {
  if (!have_mpirun()) GTEST_SKIP() << "MPI is not installed (scripts/setup.sh installs it)";
  const auto log = temp_path("timeout.log");
  const auto run =
      mpirun_bounded(4, "configs/scenarios/dlrm-tiny-cpu-4.json --collective-timeout 0.00001", "",
                     log, std::chrono::seconds(60));
  const auto text = read_text(log);
  ASSERT_TRUE(run.finished) << text;
  EXPECT_NE(run.exit_code, 0) << text;
  EXPECT_TRUE(contains(text, "(group sparse_mp, step 0) did not complete in 1e-05 s"));
}

TEST(ExecCommand, RefusesAClusterOfGpusWithTheCpuBackend) {
  const auto r = run_strait({"exec", "configs/scenarios/dlrm-8gpu.json", "--backend", "cpu"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(contains(r.err, "the cpu backend runs a cluster whose gpu_type is \"CPU\""));
}

}  // namespace
}  // namespace strait::cli::testing
