// strait exec end to end: under mpirun with 2 ranks on the bundled tiny CPU scenario, and
// its refusals. The MPI tests skip where MPI is not built or mpirun is missing.

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <set>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "executor/cpu_executor.hpp"
#include "strait_process.hpp"

namespace strait::cli::testing {
namespace {

bool have_mpirun() {
  const std::string mpiexec = STRAIT_MPIEXEC;
  return executor::mpi_available() && !mpiexec.empty() && std::filesystem::exists(mpiexec);
}

int mpirun(int ranks, const std::string& args, const std::string& log) {
  const auto command =
      fmt::format("cd {} && {} --allow-run-as-root --oversubscribe -np {} {} exec {} >{} 2>&1",
                  STRAIT_SOURCE_DIR, STRAIT_MPIEXEC, ranks, STRAIT_BINARY, args, log);
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(ExecCommand, TwoRanksRunDlrmTinyAndWriteAResultAndATrace) {
  if (!have_mpirun()) GTEST_SKIP() << "MPI is not installed (scripts/setup.sh installs it)";
  const auto out = temp_path("result.json"), trace = temp_path("trace.json"),
             log = temp_path("exec.log");
  ASSERT_EQ(
      mpirun(2, fmt::format("configs/scenarios/dlrm-tiny-cpu.json --out {} --trace {}", out, trace),
             log),
      0)
      << read_text(log);
  EXPECT_TRUE(contains(
      read_text(log),
      "strait exec: scenario 'dlrm-tiny-cpu', 2 ranks, 3 steps measured after 1 warm-up run(s)"));

  const auto result = read_json(out);
  EXPECT_EQ(result["scenario"], "dlrm-tiny-cpu");
  EXPECT_EQ(result["gpus"], 2);
  EXPECT_EQ(result["steps"], 3);
  EXPECT_EQ(result["warmup_runs"], 1);
  ASSERT_EQ(result["step_times_ms"].size(), 3u);
  for (const auto& s : result["step_times_ms"]) EXPECT_GT(s.get<double>(), 0);
  EXPECT_GT(result["step_time_ms"].get<double>(), 0);
  EXPECT_GT(result["breakdown_ms"]["compute"].get<double>(), 0);

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

TEST(ExecCommand, RefusesAClusterOfGpus) {
  const auto r = run_strait({"exec", "configs/scenarios/dlrm-8gpu.json"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(contains(r.err, "only the CPU backend exists yet"));
}

}  // namespace
}  // namespace strait::cli::testing
