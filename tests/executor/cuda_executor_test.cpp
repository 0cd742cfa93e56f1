// strait exec --backend cuda: its refusals (no GPU needed) and, where the build has the
// CUDA backend, a device and mpirun, a tiny DLRM on an H100 cluster end to end. Without
// them the tests that need them skip, saying why.

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "executor/cpu_executor.hpp"
#include "executor/cuda_executor.hpp"
#include "kernels/device.hpp"
#include "mpirun.hpp"
#include "strait_process.hpp"

namespace strait::cli::testing {
namespace {

// dlrm-tiny on the first `ranks` (1 or 2) GPUs of configs/clusters/hgx-h100-8.json, 2 steps:
// DDP dense, tables table-wise (ranks 1) or row-wise over both (ranks 2).
std::string tiny_gpu_scenario(int ranks) {
  const std::string dir = temp_path("cuda-scenario");
  std::filesystem::create_directories(dir);
  write_text(dir + "/plan.json", fmt::format(R"({{"name": "dlrm-tiny-{0}gpu", "ranks": {0},
  "dense": {{"parallelism": "ddp", "bucket_size": "25 MiB"}},
  "sparse": {{"group_size": {0}, "placement": "host", "default": "{1}"}},
  "schedule": {{"pipeline_depth": 1, "priorities": {{"embedding": 0, "dense": 1}}}}}})",
                                             ranks, ranks == 1 ? "table_wise" : "row_wise"));
  write_text(
      dir + "/scenario.json",
      fmt::format(R"({{"name": "dlrm-tiny-h100", "cluster": "{0}/configs/clusters/hgx-h100-8.json",
  "model": "{0}/configs/models/dlrm-tiny.json", "data": "{0}/configs/data/dlrm-tiny.json",
  "plan": "plan.json", "steps": 2, "seed": 1, "mode": "flow"}})",
                  STRAIT_SOURCE_DIR));
  return dir + "/scenario.json";
}

TEST(CudaExecutor, RefusesAClusterOfCpusWithTheCudaBackend) {
  const auto r = run_strait({"exec", "configs/scenarios/dlrm-tiny-cpu.json", "--backend", "cuda"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(contains(r.err,
                       "exec: --backend cuda: rank 0 runs on a 'CPU' device; the cuda backend "
                       "runs a cluster of GPUs"));
}

TEST(CudaExecutor, RefusesABackendItDoesNotKnow) {
  const auto r = run_strait({"exec", "configs/scenarios/dlrm-8gpu.json", "--backend", "tpu"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(contains(r.err, "exec: --backend: expected cpu or cuda, got 'tpu'"));
}

TEST(CudaExecutor, ABuildWithoutCudaSaysSoForAGpuCluster) {
  if (executor::cuda_backend_available())
    GTEST_SKIP() << "this build has the CUDA backend (the refusal is for builds without it)";
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"exec", "configs/scenarios/dlrm-8gpu.json"},
           {"exec", "configs/scenarios/dlrm-8gpu.json", "--backend", "cuda"}}) {
    const auto r = run_strait(args);
    EXPECT_NE(r.exit_code, 0);
    EXPECT_TRUE(contains(r.err,
                         "strait exec: this build has no CUDA/NCCL (configure with CUDA to run "
                         "strait exec --backend cuda)"));
  }
}

TEST(CudaExecutor, WithoutADeviceEveryRankSaysSo) {
  if (!executor::cuda_backend_available()) GTEST_SKIP() << "this build has no CUDA/NCCL";
  if (kernels::cuda_device_count() > 0)
    GTEST_SKIP() << "a CUDA device is present (the refusal is for machines without one)";
  if (!have_mpirun()) GTEST_SKIP() << "MPI is not installed (scripts/setup.sh installs it)";
  const auto log = temp_path("exec.log");
  EXPECT_NE(mpirun(1, tiny_gpu_scenario(1) + " --backend cuda", log), 0);
  EXPECT_TRUE(contains(read_text(log),
                       "strait exec --backend cuda: no CUDA device found on rank 0 "
                       "(cudaGetDeviceCount)"));
}

// One rank per GPU (NCCL refuses two ranks on one device): 2 ranks where there are two
// GPUs, else 1. Every op ends at or after its start, every step takes time.
TEST(CudaExecutor, RunsATinyDlrmOnGpusAndEveryOpEndsAfterItStarts) {
  if (!executor::cuda_backend_available()) GTEST_SKIP() << "this build has no CUDA/NCCL";
  const int devices = kernels::cuda_device_count();
  if (devices == 0) GTEST_SKIP() << "no CUDA device on this machine";
  if (!have_mpirun()) GTEST_SKIP() << "MPI is not installed (scripts/setup.sh installs it)";
  const int ranks = devices >= 2 ? 2 : 1;
  const auto out = temp_path("result.json"), trace = temp_path("trace.json"),
             log = temp_path("exec.log");
  ASSERT_EQ(mpirun(ranks,
                   fmt::format("{} --backend cuda --out {} --trace {} --collective-timeout 60",
                               tiny_gpu_scenario(ranks), out, trace),
                   log),
            0)
      << read_text(log);
  EXPECT_TRUE(contains(read_text(log), "(cuda backend)"));
  const auto result = read_json(out);
  EXPECT_EQ(result["backend"], "cuda");
  EXPECT_EQ(result["gpus"], ranks);
  ASSERT_EQ(result["step_times_ms"].size(), 2u);
  for (const auto& s : result["step_times_ms"]) EXPECT_GT(s.get<double>(), 0);
  EXPECT_GT(result["breakdown_ms"]["compute"].get<double>(), 0);
  const auto chrome = read_json(trace);
  ASSERT_TRUE(chrome.contains("traceEvents"));
  int spans = 0;
  for (const auto& e : chrome["traceEvents"]) {
    if (e["ph"] != "X") continue;
    ++spans;
    EXPECT_GE(e["ts"].get<double>(), 0);
    EXPECT_GE(e["dur"].get<double>(), 0);
  }
  EXPECT_GT(spans, 0);
}

}  // namespace
}  // namespace strait::cli::testing
