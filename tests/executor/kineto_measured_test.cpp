// Kineto traces as MEASURED: the fixture job in tests/executor/data/kineto/ read and compared
// with its hand-written simulated trace; every expectation below is computed by hand.
//
// The job (2 ranks x ProfilerStep#5, #6; times in us; a_rank1.json sorts first but says
// distributedInfo.rank 1):
//   rank 0 (CPU steps [1000, 1100) and [1100, 1200): kernels belong to the step that
//     launched them, though they run later): step 5: gemm 100, flash fwd 50, embedding
//     lookup 40, elementwise 10, ncclKernel_AllReduce 60, ncclDevKernel_SendRecv
//     ("all_to_allv") 30, a Triton kernel 10, from 1100 to 1400; step 6: gemm 120, 50, 40,
//     10, all-reduce 80, 30, 10, from 2100 to 2440.
//     GPU time 300 and 340; compute (no NCCL) 210 and 230.
//   rank 1 (GPU steps only): step 5: gemm 200, flash bwd 40, embedding update 20,
//     all-reduce 60, send/recv 30, Adam 20, 1100 to 1470; step 6: 200, 40, 20, all-reduce
//     100, 30, 20, 2100 to 2510. GPU time 370 and 410; compute 280 and 280.
// Job step time (max over ranks): 370, 410 -> mean 0.39 ms, p50 0.39, p99 0.37 + 0.99 x 0.04.
// Compute, average rank per step: (210 + 230 + 280 + 280) / 4 = 250 us.
// Families (per op median over steps, summed over ranks): gemm 110 + 200 = 310 us,
// attention_fwd 50, attention_bwd 40, embedding_lookup 40, embedding_update 20,
// elementwise 10, optimizer 20. Collectives: all_reduce 70 + 80 = 150, all_to_all(v) 60.
//
// The simulation (simulated.json, simulated-trace.json; 2 ranks x 2 steps, the same each
// step): rank 0 mlp_fwd gemm 100, attn 60, emb 40, act 10, dense_ar all_reduce 70, a2a
// all_to_allv 30; rank 1 mlp_bwd gemm 200, attn_bwd 40, emb_upd 20, dense_ar 100, a2a
// all_to_all 30, adam 20. Step time 0.4 (p50 0.4, p99 0.42), compute 0.26 ms.
// Errors: step mean 0.4 / 0.39 - 1; compute 0.26 / 0.25 - 1 = 0.04; gemm 300 / 310 - 1;
// attention_fwd 60 / 50 - 1 = 0.2; the other families 0; MAPE (100/31 + 20) / 7 percent.
// all_reduce 170 / 150 - 1; all_to_all(v) 0. Largest op error: rank 1, step 0 (ProfilerStep#5),
// all-reduce 100 vs 60.

#include "executor/kineto_measured.hpp"

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "executor/comparison.hpp"
#include "sim/core/error.hpp"
#include "traces/kineto_reader.hpp"

namespace strait::executor {
namespace {

using calibration::KernelNameFamily;
using sim::network::CollectiveOp;

const std::string kData = std::string(STRAIT_SOURCE_DIR) + "/tests/executor/data/kineto";

ConfigNode simulated_result() { return load_config(kData + "/simulated.json"); }

traces::Timeline simulated_trace() {
  return traces::read_kineto_trace(kData + "/simulated-trace.json",
                                   {.pid_as_rank = true, .origin_us = 0.0});
}

KinetoRun fixture_job() { return read_kineto_run(kineto_trace_files({kData + "/job"})); }

const ComparedFigure& figure(const std::vector<ComparedFigure>& fs, const std::string& name) {
  for (const auto& f : fs)
    if (f.name == name) return f;
  throw std::runtime_error("no figure " + name);
}

std::string write_trace(const std::string& name, const std::string& events) {
  const auto dir = std::filesystem::path(::testing::TempDir()) / "kineto_measured_test";
  std::filesystem::create_directories(dir);
  const auto path = (dir / name).string();
  std::ofstream(path) << R"({"traceEvents": [)" << events << "]}";
  return path;
}

TEST(KinetoMeasured, ReadsStepsComputeAndKernelsOfEachRank) {
  const auto run = fixture_job();
  ASSERT_EQ(run.ranks.size(), 2u);
  const auto& r0 = run.ranks.at(0);
  EXPECT_EQ(std::filesystem::path(r0.file).filename(), "b_rank0.json");
  EXPECT_EQ(r0.step_numbers, (std::vector<std::int64_t>{5, 6}));
  ASSERT_EQ(r0.step_ms.size(), 2u);
  EXPECT_NEAR(r0.step_ms[0], 0.300, 1e-9);
  EXPECT_NEAR(r0.step_ms[1], 0.340, 1e-9);
  EXPECT_NEAR(r0.compute_ms[0], 0.210, 1e-9);
  EXPECT_NEAR(r0.compute_ms[1], 0.230, 1e-9);
  ASSERT_EQ(r0.kernels.size(), 12u);  // the Triton kernels are of no family
  EXPECT_EQ(r0.kernels[0].family, KernelNameFamily::kGemm);
  EXPECT_EQ(r0.kernels[0].step, 0);
  EXPECT_EQ(r0.kernels[4].name, "ncclKernel_AllReduce_RING_LL_Sum_float");
  EXPECT_EQ(r0.kernels[4].collective, CollectiveOp::kAllReduce);
  EXPECT_EQ(r0.kernels[5].collective, CollectiveOp::kAllToAllV);  // "Collective name"
  EXPECT_EQ(r0.kernels[6].step, 1);
  EXPECT_NEAR(r0.kernels[6].ms, 0.120, 1e-9);

  const auto& r1 = run.ranks.at(1);
  EXPECT_NEAR(r1.step_ms[0], 0.370, 1e-9);
  EXPECT_NEAR(r1.step_ms[1], 0.410, 1e-9);
  EXPECT_NEAR(r1.compute_ms[0], 0.280, 1e-9);
  EXPECT_NEAR(r1.compute_ms[1], 0.280, 1e-9);
  ASSERT_EQ(r1.kernels.size(), 12u);
  EXPECT_EQ(r1.kernels[1].family, KernelNameFamily::kAttentionBackward);
  EXPECT_EQ(r1.kernels[2].family, KernelNameFamily::kEmbeddingUpdate);
  EXPECT_EQ(r1.kernels[5].family, KernelNameFamily::kOptimizer);
  EXPECT_EQ(run.unknown_kernels.at("triton_poi_fused_add_mul_0"), 2);
}

TEST(KinetoMeasured, ComparesStepTimeComputeFamiliesAndCollectives) {
  const auto c =
      compare_with_kineto(simulated_result(), simulated_trace(), "sim-trace.json", fixture_job());
  EXPECT_EQ(c.scenario, "kineto-fixture");
  EXPECT_TRUE(c.comm_by_op);
  ASSERT_EQ(c.step_time.size(), 3u);
  EXPECT_NEAR(c.step_time[0].measured_ms, 0.39, 1e-9);
  EXPECT_NEAR(*c.step_time[0].error(), 0.4 / 0.39 - 1, 1e-9);
  EXPECT_NEAR(c.step_time[1].measured_ms, 0.39, 1e-9);
  EXPECT_NEAR(c.step_time[2].measured_ms, 0.37 + 0.99 * 0.04, 1e-9);
  ASSERT_EQ(c.breakdown.size(), 1u);  // exposed_dense_sync, bubble, ...: no measured figure
  EXPECT_EQ(c.breakdown[0].name, "compute");
  EXPECT_NEAR(c.breakdown[0].measured_ms, 0.25, 1e-9);
  EXPECT_NEAR(*c.breakdown[0].error(), 0.04, 1e-9);

  ASSERT_EQ(c.families.size(), 7u);
  EXPECT_NEAR(figure(c.families, "gemm").measured_ms, 0.31, 1e-9);
  EXPECT_NEAR(figure(c.families, "gemm").simulated_ms, 0.30, 1e-9);
  EXPECT_NEAR(*figure(c.families, "attention_fwd").error(), 0.2, 1e-9);
  for (const char* f :
       {"attention_bwd", "embedding_lookup", "embedding_update", "elementwise", "optimizer"})
    EXPECT_NEAR(*figure(c.families, f).error(), 0.0, 1e-9) << f;
  EXPECT_NEAR(figure(c.families, "optimizer").measured_ms, 0.02, 1e-9);
  EXPECT_NEAR(*mape_percent(c.families), (100.0 / 31 + 20) / 7, 1e-6);

  ASSERT_EQ(c.purposes.size(), 2u);
  EXPECT_EQ(c.purposes[0].name, "all_reduce");
  EXPECT_NEAR(c.purposes[0].measured_ms, 0.15, 1e-9);
  EXPECT_NEAR(c.purposes[0].simulated_ms, 0.17, 1e-9);
  EXPECT_EQ(c.purposes[1].name, "all_to_all(v)");
  EXPECT_NEAR(c.purposes[1].measured_ms, 0.06, 1e-9);
  EXPECT_NEAR(*c.purposes[1].error(), 0.0, 1e-9);

  EXPECT_EQ(c.matched_ops, 24u);
  EXPECT_EQ(c.unmatched_ops, 0u);
  ASSERT_FALSE(c.top_ops.empty());
  const auto& top = c.top_ops[0];
  EXPECT_EQ(top.rank, 1);
  EXPECT_EQ(top.step, 0);
  EXPECT_EQ(top.name, "dense_ar");
  EXPECT_EQ(top.measured_name, "ncclKernel_AllReduce_RING_LL_Sum_float");
  EXPECT_NEAR(top.simulated_ms, 0.1, 1e-9);
  EXPECT_NEAR(top.measured_ms, 0.06, 1e-9);
  EXPECT_EQ(c.top_ops[1].name, "mlp_fwd");  // rank 0, step 1: 100 vs 120
  EXPECT_EQ(c.top_ops[1].measured_name, "ampere_sgemm_128x64_tn");
  ASSERT_EQ(c.notes.size(), 1u);
  EXPECT_NE(c.notes[0].find("2 kernels of no known family"), std::string::npos) << c.notes[0];

  const auto j = comparison_json(c);
  EXPECT_TRUE(j.contains("comm_ops"));
  EXPECT_FALSE(j.contains("comm_purposes"));
  EXPECT_EQ(j["top_ops"][0]["measured_name"], "ncclKernel_AllReduce_RING_LL_Sum_float");
}

// A simulation of one step against the two profiler steps: the first (ProfilerStep#5) only,
// so gemm is 100 + 200 us and the step time 370 us; a note says so.
TEST(KinetoMeasured, ComparesTheFirstStepsWhenTheTraceHasMoreThanTheSimulation) {
  const auto full = simulated_trace();
  traces::Timeline one_step;
  for (const auto& s : full.spans()) {
    if (s.start >= Time::from_us(1000)) continue;
    one_step.add_span(s.rank, full.track_name(s.track), full.name_of(s.name),
                      full.name_of(s.category), s.start, s.end, {traces::Arg("step", 0)});
  }
  const auto c = compare_with_kineto(simulated_result(), one_step, "one.json", fixture_job());
  EXPECT_NEAR(c.step_time[0].measured_ms, 0.37, 1e-9);
  EXPECT_NEAR(figure(c.families, "gemm").measured_ms, 0.30, 1e-9);
  EXPECT_EQ(c.matched_ops, 8u);  // collectives lost their "op" arg: "other", unmatched
  ASSERT_FALSE(c.notes.empty());
  EXPECT_EQ(c.notes[0],
            "the Kineto traces have 2 profiler steps (ProfilerStep#5..#6), the simulated trace 1: "
            "compared the first 1");
}

TEST(KinetoMeasured, RefusesATraceWithoutProfilerSteps) {
  const auto path = write_trace(
      "no-steps.json",
      R"({"ph": "X", "cat": "kernel", "name": "ampere_sgemm", "pid": 0, "tid": 7, "ts": 0,
          "dur": 5})");
  try {
    read_kineto_run({path});
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.file(), path);
    EXPECT_NE(e.expectation().find("\"ProfilerStep#N\" annotations"), std::string::npos);
  }
}

TEST(KinetoMeasured, RefusesATraceWithoutKernels) {
  const auto path = write_trace(
      "no-kernels.json",
      R"({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#0", "pid": 1, "tid": 1,
          "ts": 0, "dur": 5})");
  try {
    read_kineto_run({path});
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.file(), path);
    EXPECT_NE(e.expectation().find("GPU kernel events (cat \"kernel\")"), std::string::npos);
  }
}

TEST(KinetoMeasured, RefusesARankTheSimulatedTraceHasAndNoTraceIsOf) {
  const auto rank0 = read_kineto_run({kData + "/job/b_rank0.json"});
  try {
    compare_with_kineto(simulated_result(), simulated_trace(), "sim-trace.json", rank0);
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.file(), kData + "/job/b_rank0.json");
    EXPECT_EQ(e.expectation(),
              "expected a Kineto trace of rank 1 (traced in sim-trace.json); these traces are of "
              "ranks 0");
  }
}

TEST(KinetoMeasured, RefusesTwoTracesOfOneRank) {
  const auto rank0 = kData + "/job/b_rank0.json";
  EXPECT_THROW(
      {
        try {
          read_kineto_run({rank0, rank0});
        } catch (const ConfigError& e) {
          EXPECT_EQ(e.pointer(), "/distributedInfo/rank");
          EXPECT_NE(e.expectation().find("is rank 0 too"), std::string::npos);
          throw;
        }
      },
      ConfigError);
  EXPECT_THROW(kineto_trace_files({kData + "/no-such-dir"}), IoError);
}

}  // namespace
}  // namespace strait::executor
