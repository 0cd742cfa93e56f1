// write_kineto_trace: the fields Holistic Trace Analysis and other Kineto readers use, on a
// hand-built timeline (exact values) and on the bundled dlrm-tiny-cpu scenario (the path
// `strait simulate --trace-format kineto` takes), read back by strait's own Kineto reader
// and calibration importer.

#include "traces/kineto_trace_writer.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "calibration/kineto_import.hpp"
#include "sim/core/config_node.hpp"
#include "sim/core/error.hpp"
#include "sim/run/training_run.hpp"
#include "sim/workload/scenario.hpp"
#include "traces/kineto_reader.hpp"

namespace strait::traces {
namespace {

using nlohmann::json;

std::string temp_dir(const std::string& name) {
  const auto dir = std::filesystem::path(testing::TempDir()) / name;
  std::filesystem::remove_all(dir);
  return dir.string();
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

json read_json(const std::string& path) { return json::parse(read_text(path)); }

std::vector<json> events_of(const json& trace, std::string_view ph, std::string_view cat = "") {
  std::vector<json> out;
  for (const json& e : trace["traceEvents"]) {
    if (e["ph"] == ph && (cat.empty() || e.value("cat", "") == cat)) out.push_back(e);
  }
  return out;
}

Time us(double v) { return Time::from_us(v); }

// Rank 0 of a 2-rank job: step 0 runs a GEMM [10, 30) us and an elementwise loss [30, 32)
// on "compute", waits for its peer [32, 40) and all-reduces 4 MiB on "dp" (2 ranks)
// [40, 90) on "dense_comm"; step 1 runs a GEMM [100, 120), an all-to-all-v of 1002 bytes
// [120, 130) and an all-gather of 4096 bytes [130, 140) on "sparse" (2 ranks). Rank 1 has
// one GEMM (the all-gather names its op the nccl-tests way, "allgather"). Expected: 6 kernels (the
// wait is no GPU work); the all-reduce moves 1,048,576 floats each way, the all-to-all-v 1002 bytes
// ("Byte", not a whole number of floats), the all-gather 512 floats in and 1024 out.
Timeline small_timeline() {
  Timeline t;
  t.add_span(0, "compute", "mlp/fwd", "gemm", us(10), us(30),
             {Arg("step", 0), Arg("flops", 1e9), Arg("hbm_bytes", 1e6)});
  t.add_span(0, "compute", "loss", "elementwise", us(30), us(32), {Arg("step", 0)});
  t.add_span(0, "dense_comm", "wait for peers", "dense_sync", us(32), us(40));
  t.add_span(0, "dense_comm", "grad_sync", "dense_sync", us(40), us(90),
             {Arg("step", 0), Arg("bytes", 4 << 20), Arg("op", "all_reduce"), Arg("group", "dp"),
              Arg("group_size", 2)});
  t.add_span(0, "compute", "mlp/fwd", "gemm", us(100), us(120), {Arg("step", 1)});
  t.add_span(0, "compute", "output_dist", "output_dist", us(120), us(130),
             {Arg("step", 1), Arg("bytes", 1002), Arg("op", "all_to_allv"), Arg("group", "sparse"),
              Arg("group_size", 2)});
  t.add_span(0, "dense_comm", "gather", "context_parallel", us(130), us(140),
             {Arg("step", 1), Arg("bytes", 4096), Arg("op", "allgather"), Arg("group", "sparse"),
              Arg("group_size", 2)});
  t.add_span(1, "compute", "mlp/fwd", "gemm", us(12), us(33), {Arg("step", 0)});
  return t;
}

const KinetoDevice kH100{
    .id = 3, .name = "H100-SXM", .total_memory = 85'520'809'984, .sm_count = 132};

json written_small_trace() {
  const std::string path = temp_dir("kineto-small.json");
  write_kineto_trace(small_timeline(), path, {.rank = 0, .world_size = 2, .device = kH100});
  return read_json(path);
}

const json* kernel_named(const std::vector<json>& kernels, std::string_view strait_op) {
  for (const json& k : kernels) {
    if (k["args"].value("strait op", "") == strait_op) return &k;
  }
  return nullptr;
}

TEST(KinetoTraceWriter, WritesTheTopLevelFieldsOfAPyTorchTrace) {
  const json trace = written_small_trace();
  EXPECT_EQ(trace["schemaVersion"], 1);
  EXPECT_EQ(trace["distributedInfo"]["backend"], "nccl");
  EXPECT_EQ(trace["distributedInfo"]["rank"], 0);
  EXPECT_EQ(trace["distributedInfo"]["world_size"], 2);
  ASSERT_EQ(trace["deviceProperties"].size(), 1u);
  const json& device = trace["deviceProperties"][0];
  EXPECT_EQ(device["id"], 3);
  EXPECT_EQ(device["name"], "H100-SXM");
  EXPECT_EQ(device["totalGlobalMem"], 85'520'809'984);
  EXPECT_EQ(device["computeMajor"], 9);
  EXPECT_EQ(device["computeMinor"], 0);
  EXPECT_EQ(device["numSms"], 132);
  EXPECT_EQ(trace["displayTimeUnit"], "ms");
  EXPECT_TRUE(trace["baseTimeNanoseconds"].is_number_integer());
}

// Every kernel has device, stream and correlation; its launch has the same correlation and
// starts no later than it, inside a cpu_op with the same External id; an ac2g flow links them.
// The first GEMM (at 10 us) is launched from max(0, 10 - 5) = 5 us: op [5, 9], launch
// [5.5, 8.5].
TEST(KinetoTraceWriter, LinksEveryKernelToItsLaunchByCorrelationAndFlow) {
  const json trace = written_small_trace();
  const auto kernels = events_of(trace, "X", "kernel");
  ASSERT_EQ(kernels.size(), 6u);  // "wait for peers" is left out
  std::map<std::int64_t, json> launches, ops, starts, finishes;
  for (const json& e : events_of(trace, "X", "cuda_runtime"))
    launches[e["args"]["correlation"]] = e;
  for (const json& e : events_of(trace, "X", "cpu_op")) ops[e["args"]["External id"]] = e;
  for (const json& e : events_of(trace, "s")) starts[e["id"]] = e;
  for (const json& e : events_of(trace, "f")) finishes[e["id"]] = e;
  EXPECT_EQ(launches.size(), 6u);
  EXPECT_EQ(starts.size(), 6u);
  EXPECT_EQ(finishes.size(), 6u);
  std::set<std::int64_t> correlations;
  for (const json& k : kernels) {
    const json& args = k["args"];
    ASSERT_TRUE(args.contains("device") && args.contains("stream") && args.contains("correlation"));
    EXPECT_EQ(args["device"], 3);
    EXPECT_EQ(k["pid"], 3);
    EXPECT_EQ(k["tid"], args["stream"]);
    const std::int64_t c = args["correlation"];
    EXPECT_TRUE(correlations.insert(c).second) << "correlation " << c << " used twice";
    ASSERT_TRUE(launches.contains(c));
    const json& launch = launches[c];
    EXPECT_EQ(launch["name"], "cudaLaunchKernel");
    EXPECT_LE(launch["ts"].get<double>(), k["ts"].get<double>());
    const json& op = ops.at(args["External id"]);
    EXPECT_LE(op["ts"].get<double>(), launch["ts"].get<double>());
    EXPECT_GE(op["ts"].get<double>() + op["dur"].get<double>(),
              launch["ts"].get<double>() + launch["dur"].get<double>());
    ASSERT_TRUE(starts.contains(c) && finishes.contains(c));
    EXPECT_EQ(starts[c]["cat"], "ac2g");
    EXPECT_EQ(starts[c]["ts"], launch["ts"]);
    EXPECT_EQ(starts[c]["pid"], launch["pid"]);
    EXPECT_EQ(starts[c]["tid"], launch["tid"]);
    EXPECT_EQ(finishes[c]["bp"], "e");
    EXPECT_EQ(finishes[c]["ts"], k["ts"]);
    EXPECT_EQ(finishes[c]["pid"], k["pid"]);
    EXPECT_EQ(finishes[c]["tid"], k["tid"]);
  }
  const json* gemm = kernel_named(kernels, "mlp/fwd");
  ASSERT_NE(gemm, nullptr);
  const json& first_launch = launches[(*gemm)["args"]["correlation"]];
  EXPECT_EQ(first_launch["ts"], 5.5);
  EXPECT_EQ(first_launch["dur"], 3);
  EXPECT_EQ(ops[(*gemm)["args"]["External id"]]["ts"], 5);
  EXPECT_EQ(ops[(*gemm)["args"]["External id"]]["dur"], 4);
}

// Kernel times are the simulated spans' exactly; names follow the kernel kind; streams are
// 7 for "compute" and 20 for the next track with GPU work ("dense_comm").
TEST(KinetoTraceWriter, KernelsKeepTheSimulatedTimesAndCarryLibraryNames) {
  const auto kernels = events_of(written_small_trace(), "X", "kernel");
  const json* gemm = kernel_named(kernels, "mlp/fwd");
  const json* loss = kernel_named(kernels, "loss");
  const json* sync = kernel_named(kernels, "grad_sync");
  ASSERT_TRUE(gemm && loss && sync);
  EXPECT_EQ((*gemm)["ts"], 10);
  EXPECT_EQ((*gemm)["dur"], 20);
  EXPECT_EQ((*gemm)["args"]["stream"], 7);
  EXPECT_EQ((*gemm)["args"]["step"], 0);
  EXPECT_EQ((*gemm)["args"]["strait kind"], "gemm");
  EXPECT_EQ((*gemm)["args"]["strait flops"], 1e9);
  EXPECT_NE((*gemm)["name"].get<std::string>().find("sm90_xmma_gemm"), std::string::npos);
  EXPECT_EQ((*loss)["dur"], 2);
  EXPECT_NE((*loss)["name"].get<std::string>().find("vectorized_elementwise_kernel"),
            std::string::npos);
  EXPECT_EQ((*sync)["ts"], 40);
  EXPECT_EQ((*sync)["dur"], 50);
  EXPECT_EQ((*sync)["args"]["stream"], 20);
}

TEST(KinetoTraceWriter, NcclKernelsCarryRecordParamCommsMetadata) {
  const auto kernels = events_of(written_small_trace(), "X", "kernel");
  const json* all_reduce = kernel_named(kernels, "grad_sync");
  const json* all_to_all = kernel_named(kernels, "output_dist");
  const json* all_gather = kernel_named(kernels, "gather");
  ASSERT_TRUE(all_reduce && all_to_all && all_gather);
  EXPECT_EQ((*all_reduce)["name"],
            "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)");
  const json& ar = (*all_reduce)["args"];
  EXPECT_EQ(ar["Collective name"], "allreduce");
  EXPECT_EQ(ar["In msg nelems"], 1'048'576);  // 4 MiB of floats
  EXPECT_EQ(ar["Out msg nelems"], 1'048'576);
  EXPECT_EQ(ar["Group size"], 2);
  EXPECT_EQ(ar["dtype"], "Float");
  EXPECT_EQ(ar["Process Group Name"], "dp");
  EXPECT_EQ(ar["strait purpose"], "dense_sync");
  EXPECT_EQ(ar["strait bytes"], 4 << 20);

  EXPECT_EQ((*all_to_all)["name"], "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)");
  const json& a2a = (*all_to_all)["args"];
  EXPECT_EQ(a2a["Collective name"], "all_to_allv");
  EXPECT_EQ(a2a["dtype"], "Byte");
  EXPECT_EQ(a2a["In msg nelems"], 1002);
  EXPECT_EQ(a2a["Process Group Name"], "sparse");

  EXPECT_EQ((*all_gather)["name"],
            "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)");
  const json& ag = (*all_gather)["args"];
  EXPECT_EQ(ag["Collective name"], "_allgather_base");
  EXPECT_EQ(ag["In msg nelems"], 512);  // 4096 B gathered from 2 ranks of 512 floats
  EXPECT_EQ(ag["Out msg nelems"], 1024);
}

// Step 0's kernels run [10, 90) us, step 1's [100, 140). On the CPU, step 0 starts at its
// first launch (5 us) and runs until step 1's first launch (95 us).
TEST(KinetoTraceWriter, WritesAProfilerStepPerStepOnCpuAndGpu) {
  const json trace = written_small_trace();
  std::map<std::string, json> cpu, gpu;
  for (const json& e : events_of(trace, "X", "user_annotation")) cpu[e["name"]] = e;
  for (const json& e : events_of(trace, "X", "gpu_user_annotation")) gpu[e["name"]] = e;
  ASSERT_EQ(cpu.size(), 2u);
  ASSERT_EQ(gpu.size(), 2u);
  EXPECT_EQ(gpu["ProfilerStep#0"]["ts"], 10);
  EXPECT_EQ(gpu["ProfilerStep#0"]["dur"], 80);
  EXPECT_EQ(gpu["ProfilerStep#1"]["ts"], 100);
  EXPECT_EQ(gpu["ProfilerStep#1"]["dur"], 40);
  EXPECT_EQ(cpu["ProfilerStep#0"]["ts"], 5);
  EXPECT_EQ(cpu["ProfilerStep#0"]["dur"], 90);
  EXPECT_EQ(cpu["ProfilerStep#1"]["ts"], 95);
}

TEST(KinetoTraceWriter, OutputIsDeterministic) {
  const std::string a = temp_dir("kineto-a.json"), b = temp_dir("kineto-b.json");
  write_kineto_trace(small_timeline(), a, {.rank = 0, .world_size = 2, .device = kH100});
  write_kineto_trace(small_timeline(), b, {.rank = 0, .world_size = 2, .device = kH100});
  EXPECT_EQ(read_text(a), read_text(b));
}

TEST(KinetoTraceWriter, UnwritablePathsThrowIoErrorNamingTheFile) {
  try {
    write_kineto_trace(small_timeline(), "/nonexistent-dir/rank-0.json", {});
    FAIL() << "expected IoError";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent-dir/rank-0.json"), std::string::npos);
  }
  const std::string file = temp_dir("kineto-not-a-dir");
  std::ofstream(file) << "x";
  try {
    write_kineto_trace_directory(small_timeline(), file, {});
    FAIL() << "expected IoError";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find(file), std::string::npos);
  }
}

// Round trip: strait's Kineto reader gives back the kernels at the simulated times, and the
// calibration importer counts the NCCL kernels as collectives of the right size and ranks.
TEST(KinetoTraceWriter, ReaderAndImporterReadTheTraceBack) {
  const std::string dir = temp_dir("kineto-dir");
  const auto paths = write_kineto_trace_directory(
      small_timeline(), dir, {.world_size = 2, .device_of = [](int) { return kH100; }});
  ASSERT_EQ(paths.size(), 2u);
  EXPECT_EQ(paths[0], (std::filesystem::path(dir) / "rank-0.json").string());
  EXPECT_EQ(read_json(paths[1])["distributedInfo"]["rank"], 1);

  const Timeline back = read_kineto_trace(paths[0], {.origin_us = 0.0});
  std::map<std::pair<Time, Time>, std::string> kernels;
  for (const Span& s : back.spans()) {
    if (back.name_of(s.category) != "kernel") continue;
    for (const SpanArg& a : back.args(s)) {
      if (back.name_of(a.key) == "strait op") {
        kernels[{s.start, s.end}] = back.name_of(std::get<InternedString>(a.value).id);
      }
    }
  }
  const std::map<std::pair<Time, Time>, std::string> expected = {
      {{us(10), us(30)}, "mlp/fwd"},       {{us(30), us(32)}, "loss"},
      {{us(40), us(90)}, "grad_sync"},     {{us(100), us(120)}, "mlp/fwd"},
      {{us(120), us(130)}, "output_dist"}, {{us(130), us(140)}, "gather"}};
  EXPECT_EQ(kernels, expected);

  calibration::KinetoImportStats stats;
  const auto set = calibration::import_kineto(paths[0], {}, &stats);
  std::map<std::string, std::pair<std::int64_t, int>> collectives;  // family -> bytes, ranks
  for (const auto& m : set.records) {
    if (m.family.is_collective()) collectives[m.family.name()] = {m.shape_int("bytes"), m.ranks()};
  }
  ASSERT_EQ(collectives.size(), 3u);
  for (const auto& [name, count] : stats.unrecognised_by_name) {
    EXPECT_EQ(name.find("nccl"), std::string::npos) << name << " not recognised";
  }
  for (const auto& [family, size] : collectives) {
    EXPECT_EQ(size.second, 2) << family;
    EXPECT_TRUE(size.first == 4 << 20 || size.first == 1002 || size.first == 4096) << family;
  }
}

// The bundled 2-rank CPU scenario (DDP all-reduce, all-to-all(v) embedding dists), simulated and
// written the way `strait simulate
// --trace-format kineto` does: one file per rank, each kernel the simulated span, each
// NCCL kernel's element count and group size those of its collective, a ProfilerStep per step.
TEST(KinetoTraceWriter, BundledScenarioWritesOneConsistentTracePerRank) {
  const auto scenario = sim::workload::TrainingScenario::from_config(
      load_config(STRAIT_SOURCE_DIR "/configs/scenarios/dlrm-tiny-cpu.json"));
  const auto cost = sim::run::load_cost_model(scenario, STRAIT_SOURCE_DIR "/configs/profiles");
  Timeline timeline;
  sim::run::TrainingRunOptions options;
  options.timeline = &timeline;
  options.trace_ranks = {0, 1};
  const auto report = sim::run::run_training(scenario, cost, options);
  ASSERT_EQ(report.gpus, 2);
  const std::string dir = temp_dir("kineto-dlrm-tiny");
  const auto paths = write_kineto_trace_directory(
      timeline, dir,
      {.world_size = report.gpus, .device_of = [&](int rank) {
         const auto& gpu = scenario.cluster.gpu(rank);
         const auto& spec = cost.device(gpu.type);
         return KinetoDevice{gpu.local_index, gpu.type, spec.hbm_capacity, spec.sm_count};
       }});
  ASSERT_EQ(paths.size(), 2u);
  int collectives_seen = 0;
  for (int r = 0; r < 2; ++r) {
    const json trace = read_json(paths[static_cast<std::size_t>(r)]);
    EXPECT_EQ(trace["distributedInfo"]["rank"], r);
    EXPECT_EQ(trace["distributedInfo"]["world_size"], 2);
    // The simulated GPU work of rank r: every span but "wait for peers", by start time.
    std::multiset<std::pair<std::int64_t, std::int64_t>> simulated;  // start, end (ps)
    for (const Span& s : timeline.spans()) {
      if (s.rank != r || timeline.name_of(s.name) == "wait for peers") continue;
      simulated.insert({s.start.ps(), s.end.ps()});
    }
    const Timeline back = read_kineto_trace(paths[static_cast<std::size_t>(r)], {.origin_us = 0.0});
    std::multiset<std::pair<std::int64_t, std::int64_t>> written;
    for (const Span& s : back.spans()) {
      if (back.name_of(s.category) == "kernel") written.insert({s.start.ps(), s.end.ps()});
    }
    EXPECT_EQ(written, simulated) << "rank " << r;
    std::set<std::string> steps;
    for (const json& e : events_of(trace, "X", "user_annotation")) steps.insert(e["name"]);
    std::set<std::string> expected;
    for (int k = 0; k < scenario.steps; ++k) expected.insert("ProfilerStep#" + std::to_string(k));
    EXPECT_EQ(steps, expected);
    std::set<std::int64_t> launched;
    for (const json& e : events_of(trace, "X", "cuda_runtime"))
      launched.insert(e["args"]["correlation"].get<std::int64_t>());
    for (const json& k : events_of(trace, "X", "kernel")) {
      EXPECT_TRUE(launched.contains(k["args"]["correlation"].get<std::int64_t>()));
      const json& a = k["args"];
      if (!a.contains("Collective name")) continue;
      ++collectives_seen;
      EXPECT_EQ(k["name"].get<std::string>().rfind("ncclDevKernel_", 0), 0u);
      EXPECT_EQ(a["Group size"], a["strait group_size"]);
      const std::int64_t element = a["dtype"] == "Float" ? 4 : 1;
      const std::int64_t nelems =
          a["Collective name"] == "_allgather_base" ? a["Out msg nelems"] : a["In msg nelems"];
      EXPECT_EQ(nelems * element, a["strait bytes"].get<std::int64_t>()) << k.dump();
    }
  }
  EXPECT_GT(collectives_seen, 0);
  calibration::KinetoImportStats stats;
  const auto set = calibration::import_kineto(paths[0], {}, &stats);
  EXPECT_TRUE(std::any_of(set.records.begin(), set.records.end(),
                          [](const auto& m) { return m.family.is_collective(); }));
  for (const auto& [name, count] : stats.unrecognised_by_name) {
    EXPECT_EQ(name.find("nccl"), std::string::npos) << name << " not recognised";
  }
}

}  // namespace
}  // namespace strait::traces
