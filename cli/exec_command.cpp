// strait exec SCENARIO: runs the scenario's op graph for real, one MPI process per rank
// (CPU backend), and reports measured step times; --json (older name --out) and --trace
// write the result in the shape of `strait simulate --json` and a Chrome/Perfetto trace in
// its layout. Part of strait-mpi (cli/mpi_program.hpp).

#include <iostream>
#include <numeric>

#include <fmt/format.h>

#include "cli/command.hpp"
#include "cli/mpi_program.hpp"
#include "cli/options.hpp"
#include "executor/cpu_executor.hpp"
#include "executor/cuda_executor.hpp"
#include "executor/launch_input.hpp"
#include "sim/core/atomic_file.hpp"
#include "sim/core/error.hpp"
#include "sim/workload/op_graph_builder.hpp"
#include "sim/workload/scenario.hpp"
#include "traces/chrome_trace_writer.hpp"

namespace strait::cli {
namespace {

// Rows of each embedding table the executor allocates: this rank's share of the model's
// rows (the shards it holds, on average), at least 64k as calibration measured.
std::int64_t table_rows(const sim::workload::TrainingScenario& scenario, int ranks) {
  std::int64_t rows = 0;
  for (const auto& t : scenario.model.tables) rows += t.rows;
  return std::max<std::int64_t>(std::int64_t{1} << 16, rows / std::max(1, ranks));
}

// The backend that runs the graph: --backend, else cpu when every rank's device is a "CPU",
// else cuda. Refuses a backend the cluster's devices cannot be run with.
std::string choose_backend(const sim::workload::TrainingScenario& scenario,
                           const sim::workload::OpGraph& graph, const po::variables_map& vm) {
  const sim::workload::RankOps* gpu_rank = nullptr;  // the first rank that is not a CPU
  const sim::workload::RankOps* cpu_rank = nullptr;
  for (const auto& r : graph.ranks) {
    auto& first = scenario.cluster.gpu(r.gpu).type == "CPU" ? cpu_rank : gpu_rank;
    if (first == nullptr) first = &r;
  }
  const std::string backend = vm.count("backend") ? vm["backend"].as<std::string>()
                              : gpu_rank          ? "cuda"
                                                  : "cpu";
  if (backend == "cpu" && gpu_rank != nullptr) {
    throw UsageError(fmt::format(
        "exec: rank {} runs on a '{}' GPU; the cpu backend runs a cluster whose gpu_type is "
        "\"CPU\" (e.g. configs/clusters/localhost-cpu.json); use --backend cuda",
        gpu_rank->rank, scenario.cluster.gpu(gpu_rank->gpu).type));
  }
  if (backend == "cuda" && cpu_rank != nullptr) {
    throw UsageError(fmt::format(
        "exec: --backend cuda: rank {} runs on a 'CPU' device; the cuda backend runs a cluster "
        "of GPUs (use --backend cpu for a cluster whose gpu_type is \"CPU\")",
        cpu_rank->rank));
  }
  if (backend != "cpu" && backend != "cuda")
    throw UsageError(fmt::format("exec: --backend: expected cpu or cuda, got '{}'", backend));
  if (backend == "cuda") executor::require_cuda_backend();
  return backend;
}

void print_summary(const nlohmann::json& result) {
  std::cout << fmt::format(
      "strait exec: scenario '{}', {} ranks, {} steps measured after {} warm-up run(s) ({} "
      "backend)\n\n",
      result["scenario"].get<std::string>(), result["gpus"].get<int>(), result["steps"].get<int>(),
      result["warmup_runs"].get<int>(), result["backend"].get<std::string>());
  if (result.contains("launch_plan")) {
    std::cout << fmt::format("  launch plan    {} (fingerprint {} matches)\n",
                             result["launch_plan"]["file"].get<std::string>(),
                             result["launch_plan"]["fingerprint"].get<std::string>());
  }
  std::cout << fmt::format("  step time      mean {:.3f} ms, p50 {:.3f} ms, p99 {:.3f} ms\n",
                           result["step_time_ms"].get<double>(),
                           result["step_time_p50_ms"].get<double>(),
                           result["step_time_p99_ms"].get<double>());
  const auto& steady = result["steady_state"];
  std::cout << fmt::format(
      "                 mean's 95% interval {:.3f} - {:.3f} ms over {} steps\n",
      steady["mean_ci95_ms"][0].get<double>(), steady["mean_ci95_ms"][1].get<double>(),
      steady["counted_steps"].get<int>());
  std::cout << fmt::format(
      "  kernels varied {:.1f}% across steps (IQR / median; a steady machine gives a few "
      "percent)\n",
      result["kernel_spread_percent"].get<double>());
  if (result.contains("machine")) {
    const double other = result["machine"]["other_busy_cores"].get<double>();
    std::cout << fmt::format(
        "  other processes kept {:.2f} of the machine's {} cores busy{}\n", other,
        result["machine"]["cores"].get<int>(),
        other > 0.25 ? " (the measurement is disturbed: run on an idle machine)" : "");
  }
  std::cout << "  steps (ms)    ";
  for (const auto& s : result["step_times_ms"])
    std::cout << fmt::format(" {:.3f}", s.get<double>());
  std::cout << "\n  average rank per step (ms):";
  for (const auto& [key, value] : result["breakdown_ms"].items()) {
    if (value.get<double>() > 0) std::cout << fmt::format("  {} {:.3f}", key, value.get<double>());
  }
  std::cout << "\n";
}

// The options of `strait exec`.
po::options_description exec_options() {
  po::options_description desc("options");
  desc.add_options()("scenario", po::value<std::string>()->required(),
                     "scenario file (configs/scenarios/*-cpu.json) or launch plan (strait plan "
                     "--launch)")(
      "launch", po::value<std::string>(),
      "launch plan the scenario must match (fingerprint, world size, process groups)")(
      "json", po::value<std::string>(),
      "write the measured result as JSON to this file, in simulate --json's keys (-: stdout, "
      "the report to stderr)")("out", po::value<std::string>(),
                               "the older name of --json (kept for scripts)")(
      "trace", po::value<std::string>(),
      "write a Chrome/Perfetto trace of all ranks to this file (-: stdout)")(
      "warmup", po::value<int>()->default_value(1),
      "untimed runs of the whole op graph first (first touch of buffers, MPI set-up)")(
      "collective-timeout", po::value<double>()->default_value(120.0),
      "seconds a collective may take before the job is aborted (0: no limit)")(
      "startup-timeout", po::value<double>(),
      "seconds the ranks may wait for each other before the first step (MPI_Init, the "
      "set-up, the start barrier) before the job is aborted, naming the ranks that did not "
      "arrive (default: max(--collective-timeout, 300), no limit when that is 0; 0: no limit)")(
      "backend", po::value<std::string>(),
      "cpu or cuda (default: cpu when every rank's gpu_type is \"CPU\", else cuda)");
  return desc;
}

// The warm-up runs and the watchdogs' limits the options ask for.
struct ExecLimits {
  int warmup = 1;
  double collective_timeout_s = 0;
  double startup_timeout_s = 0;
};

// --warmup, --collective-timeout and --startup-timeout, checked.
ExecLimits exec_limits(const po::variables_map& vm) {
  ExecLimits limits;
  limits.warmup = vm["warmup"].as<int>();
  if (limits.warmup < 0)
    throw UsageError(fmt::format("exec: --warmup: expected 0 or more, got {}", limits.warmup));
  limits.collective_timeout_s = vm["collective-timeout"].as<double>();
  if (!(limits.collective_timeout_s >= 0))
    throw UsageError(fmt::format("exec: --collective-timeout: expected 0 or more seconds, got {}",
                                 limits.collective_timeout_s));
  // A rank that stops or stalls before the first step would keep the others waiting for
  // ever (MPI_Init and the set-up wait for every rank): the start-up has its watchdog too.
  limits.startup_timeout_s = vm.count("startup-timeout")
                                 ? vm["startup-timeout"].as<double>()
                                 : executor::job_wait_limit_s(limits.collective_timeout_s);
  if (!(limits.startup_timeout_s >= 0))
    throw UsageError(fmt::format("exec: --startup-timeout: expected 0 or more seconds, got {}",
                                 limits.startup_timeout_s));
  return limits;
}

// Writes --json (or its older name --out) and --trace where asked, each with its line.
void write_exec_outputs(const po::variables_map& vm, const executor::MeasuredRun& run,
                        const nlohmann::json& result) {
  const char* json_key = vm.count("json") ? "json" : "out";
  if (vm.count(json_key)) {
    const auto path = vm[json_key].as<std::string>();
    write_json(path, result.dump(2) + "\n");
    std::cout << wrote(path, "measured result as JSON: strait compare's MEASURED");
  }
  if (vm.count("trace")) {
    traces::Timeline timeline;
    executor::add_to_timeline(run, timeline);
    const auto trace = vm["trace"].as<std::string>();
    write_output(trace,
                 [&](const std::string& file) { traces::write_chrome_trace(timeline, file, {}); });
    std::cout << wrote(trace, fmt::format("Chrome/Perfetto trace, {} spans; open it in "
                                          "ui.perfetto.dev",
                                          timeline.spans().size()));
  }
}

}  // namespace

int run_exec(const std::vector<std::string>& args) {
  const po::options_description desc = exec_options();
  po::positional_options_description positional;
  positional.add("scenario", 1);
  po::variables_map vm;
  if (!parse_options("exec", "SCENARIO.json | LAUNCH.json [options]  (under mpirun -np RANKS)",
                     args, desc, positional, vm))
    return 0;
  if (vm.count("json") && vm.count("out"))
    throw UsageError("exec: --json and --out name the same file (--out is its older name)");
  prepare_outputs("exec", vm, {{"json"}, {"out"}, {"trace"}});
  const ExecLimits limits = exec_limits(vm);
  keep_freed_memory();
  const auto input = executor::load_exec_input(
      vm["scenario"].as<std::string>(),
      vm.count("launch") ? std::optional(vm["launch"].as<std::string>()) : std::nullopt);
  const auto& scenario = input.scenario;
  const auto graph = sim::workload::build_op_graph(scenario);
  const std::string backend = choose_backend(scenario, graph, vm);
  const executor::MpiSession session(limits.startup_timeout_s);
  const auto rows = table_rows(scenario, static_cast<int>(graph.ranks.size()));
  auto run = backend == "cuda" ? executor::run_cuda_ranks(graph, session, rows, limits.warmup,
                                                          limits.collective_timeout_s)
                               : executor::run_cpu_ranks(graph, session, rows, limits.warmup,
                                                         limits.collective_timeout_s);
  if (session.rank() != 0) return 0;
  run.scenario = scenario.name;
  run.cluster = scenario.cluster.name();
  run.phases = sim::run::steady_state(scenario.plan);
  auto result = executor::measured_report_json(run);
  if (!input.launch_file.empty())
    result["launch_plan"] = {{"file", input.launch_file}, {"fingerprint", input.fingerprint}};
  print_summary(result);
  write_exec_outputs(vm, run, result);
  return 0;
}

}  // namespace strait::cli
