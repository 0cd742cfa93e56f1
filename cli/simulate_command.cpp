// strait simulate SCENARIO: runs a scenario and prints its report; --json and --trace
// write machine-readable results and a Chrome/Perfetto trace (or, with --trace-format kineto,
// a directory of per-rank PyTorch profiler traces that Holistic Trace Analysis reads).

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <functional>
#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/command.hpp"
#include "cli/options.hpp"
#include "cli/training_report.hpp"
#include "planner/planner.hpp"
#include "planner/torchrec_plan.hpp"
#include "sim/core/atomic_file.hpp"
#include "sim/core/bundled_configs.hpp"
#include "sim/core/error.hpp"
#include "sim/core/quantity.hpp"
#include "sim/network/rank_set.hpp"
#include "sim/run/collective_report_json.hpp"
#include "sim/run/collective_scenario.hpp"
#include "sim/run/training_run.hpp"
#include "traces/chrome_trace_writer.hpp"
#include "traces/kineto_trace_writer.hpp"

namespace strait::cli {
namespace {

using sim::topology::LinkClass;

constexpr LinkClass kClasses[] = {LinkClass::kNvlink, LinkClass::kPcie, LinkClass::kScaleOut,
                                  LinkClass::kCrossDc};

void print_report(const sim::run::CollectiveScenario& s, const sim::run::ScenarioResult& r,
                  sim::network::NetworkMode mode) {
  std::cout << fmt::format(
      "strait simulate: scenario '{}' on cluster '{}' ({} GPUs, {} datacenters), {} mode\n\n",
      s.name, s.cluster.name(), s.cluster.gpu_count(), s.cluster.datacenters().size(),
      sim::network::to_string(mode));
  std::cout << fmt::format("  {:<22} {:<14} {:<12} {:>6} {:>11} {:>12} {:>12} {:>12} {:>9}\n",
                           "collective", "op", "algorithm", "ranks", "size", "start (us)",
                           "end (us)", "time (us)", "busbw");
  for (std::size_t i = 0; i < r.collectives.size(); ++i) {
    const auto& c = r.collectives[i];
    const auto& spec = s.collectives[i].spec;
    const double seconds = (c.end - c.start).to_s();
    const double busbw = seconds > 0 ? static_cast<double>(c.bytes) / seconds / 1e9 *
                                           sim::network::busbw_factor(spec.op, c.ranks)
                                     : 0.0;
    std::cout << fmt::format(
        "  {:<22} {:<14} {:<12} {:>6} {:>11} {:>12.2f} {:>12.2f} {:>12.2f} {:>6.1f} GB/s\n", c.name,
        sim::network::to_string(spec.op), sim::network::to_string(c.algorithm), c.ranks,
        format_bytes(static_cast<double>(c.bytes)), c.start.to_us(), c.end.to_us(),
        (c.end - c.start).to_us(), busbw);
  }
  std::cout << fmt::format("\n  makespan: {}\n", format_duration(r.makespan));
  std::cout << "  traffic over links:";
  for (auto c : kClasses) {
    std::cout << fmt::format("  {} {}", sim::topology::to_string(c),
                             format_bytes(r.traffic.bytes(c)));
  }
  std::cout << fmt::format("\n  simulation: {} events in {:.3f} s ({:.2f} M events/s)\n", r.events,
                           r.wall_s,
                           r.wall_s > 0 ? static_cast<double>(r.events) / r.wall_s / 1e6 : 0.0);
}

}  // namespace

namespace {

std::optional<sim::network::NetworkMode> mode_option(const po::variables_map& vm,
                                                     const char* command) {
  if (!vm.count("mode")) return std::nullopt;
  return enum_option<sim::network::NetworkMode>(command, "mode", vm["mode"].as<std::string>());
}

std::vector<int> trace_ranks(const po::variables_map& vm, const sim::topology::Cluster& cluster) {
  const auto text = vm["trace-ranks"].as<std::string>();
  // The default "0-7" on a cluster with fewer GPUs means all of them.
  return sim::network::parse_rank_set(text == "0-7" && cluster.gpu_count() < 8 ? "all" : text,
                                      cluster);
}

// --mode, --trace and --trace-ranks, the same for every kind of scenario.
template <typename Options>
void apply_run_options(const po::variables_map& vm, const sim::topology::Cluster& cluster,
                       traces::Timeline& timeline, Options& options) {
  options.mode = mode_option(vm, "simulate");
  if (vm.count("trace")) {
    options.timeline = &timeline;
    options.trace_ranks = trace_ranks(vm, cluster);
  }
}

// --trace-format: chrome (one file) or kineto (a directory of rank-<r>.json).
bool kineto_format(const po::variables_map& vm) {
  const auto format = vm["trace-format"].as<std::string>();
  if (format != "chrome" && format != "kineto") {
    throw UsageError(
        fmt::format("simulate: --trace-format: expected chrome or kineto, got '{}'", format));
  }
  return format == "kineto";
}

// `device_of` describes the GPU of a rank for the Kineto traces' deviceProperties.
void write_trace(const traces::Timeline& timeline, const po::variables_map& vm, int world_size,
                 const std::function<traces::KinetoDevice(int)>& device_of) {
  const auto path = vm["trace"].as<std::string>();
  if (!kineto_format(vm)) {
    write_output(path,
                 [&](const std::string& file) { traces::write_chrome_trace(timeline, file, {}); });
    std::cout << wrote(path, fmt::format("Chrome/Perfetto trace, {} spans; open it in "
                                         "ui.perfetto.dev",
                                         timeline.spans().size()));
    return;
  }
  const auto files = traces::write_kineto_trace_directory(
      timeline, path, {.world_size = world_size, .device_of = device_of});
  std::cout << wrote(path, fmt::format("{} Kineto traces rank-<r>.json, {} spans; HTA reads the "
                                       "directory",
                                       files.size(), timeline.spans().size()));
}

// --json: the result as JSON, to its file or standard output.
void write_result(const po::variables_map& vm, const nlohmann::json& result) {
  if (!vm.count("json")) return;
  const auto path = vm["json"].as<std::string>();
  write_json(path, result.dump(2) + "\n");
  std::cout << wrote(path, "result as JSON");
}

traces::KinetoDevice kineto_device(const sim::topology::Cluster& cluster, int rank) {
  const auto& gpu = cluster.gpu(rank);
  return {.id = gpu.local_index, .name = gpu.type, .total_memory = 0, .sm_count = 0};
}

int simulate_collectives(const ConfigNode& config, const po::variables_map& vm) {
  const auto scenario = sim::run::CollectiveScenario::from_config(config);
  sim::run::RunOptions options;
  traces::Timeline timeline;
  apply_run_options(vm, scenario.cluster, timeline, options);
  const auto mode = options.mode.value_or(scenario.mode);
  const auto result = sim::run::run_collective_scenario(scenario, options);
  print_report(scenario, result, mode);
  write_result(vm, sim::run::collective_report_json(scenario, result, mode));
  if (vm.count("trace")) {
    write_trace(timeline, vm, scenario.cluster.gpu_count(),
                [&](int rank) { return kineto_device(scenario.cluster, rank); });
  }
  return 0;
}

// --plan replaces the scenario's plan; --torchrec its sparse part (a TorchRec plan).
sim::workload::TrainingScenario load_training(const ConfigNode& config,
                                              const po::variables_map& vm) {
  auto scenario = sim::workload::TrainingScenario::from_config(config);
  if (!vm.count("plan") && !vm.count("torchrec")) return scenario;
  Json document =
      vm.count("plan") ? load_config(vm["plan"].as<std::string>()).json() : Json::object();
  auto plan = vm.count("plan")
                  ? sim::workload::ParallelPlan::load(vm["plan"].as<std::string>(), scenario.model)
                  : scenario.plan;
  if (vm.count("torchrec")) {
    if (!vm.count("plan")) {
      const auto node = config.at("plan");
      document =
          node.is_object()
              ? node.json()
              : load_config((std::filesystem::path(config.file()).parent_path() / node.as_string())
                                .lexically_normal()
                                .string())
                    .json();
    }
    const auto tr = planner::read_torchrec_plan(vm["torchrec"].as<std::string>(), scenario.model);
    plan = planner::apply_torchrec_plan(document, plan, tr, scenario.model, &scenario.cluster);
  }
  return planner::scenario_for(scenario, plan);
}

int simulate_training(const ConfigNode& config, const po::variables_map& vm) {
  auto scenario = load_training(config, vm);
  apply_max_work("simulate", vm, scenario);
  const auto cost =
      sim::run::load_cost_model(scenario, vm.count("profiles") ? vm["profiles"].as<std::string>()
                                                               : bundled_profiles_dir().string());
  sim::run::TrainingRunOptions options;
  traces::Timeline timeline;
  apply_run_options(vm, scenario.cluster, timeline, options);
  const bool terminal = ::isatty(STDERR_FILENO) != 0;
  if (terminal) {
    options.progress = [](Time t, std::uint64_t ops) {
      std::fprintf(stderr, "\r  simulating: %.3f ms simulated, %llu ops done", t.to_ms(),
                   static_cast<unsigned long long>(ops));
    };
  }
  const auto report = sim::run::run_training(scenario, cost, options);
  if (terminal) std::fprintf(stderr, "\r%60s\r", "");
  print_training_report(std::cout, report);
  write_result(vm, training_report_json(report));
  if (vm.count("trace")) {
    write_trace(timeline, vm, report.gpus, [&](int rank) {
      auto device = kineto_device(scenario.cluster, rank);
      const auto& spec = cost.device(device.name);
      device.total_memory = spec.hbm_capacity;
      device.sm_count = spec.sm_count;
      return device;
    });
  }
  return 0;
}

}  // namespace

int run_simulate(const std::vector<std::string>& args) {
  po::options_description desc("options");
  desc.add_options()("scenario", po::value<std::string>()->required(),
                     "scenario file (configs/scenarios/*.json)")(
      "mode", po::value<std::string>(),
      ("override the scenario's network mode: " +
       enum_name_list<sim::network::NetworkMode>("", " | "))
          .c_str())("profiles", po::value<std::string>(),
                    "calibration profiles directory (default: configs/profiles)")(
      "plan", po::value<std::string>(), "a plan file to run instead of the scenario's")(
      "max-work", po::value<double>(),
      "work items the run may take (default: the scenario's \"max_work\", else 2e8)")(
      "torchrec", po::value<std::string>(),
      "a TorchRec sharding plan for the sparse part (strait plan --torchrec writes one)")(
      "json", po::value<std::string>(),
      "write the result as JSON to this file (-: stdout, the report to stderr)")(
      "trace", po::value<std::string>(),
      "write a Chrome/Perfetto trace to this file (-: stdout; kineto: to this directory)")(
      "trace-format", po::value<std::string>()->default_value("chrome"),
      "chrome (one Perfetto file) | kineto (rank-<r>.json per traced rank, PyTorch profiler "
      "format)")("trace-ranks", po::value<std::string>()->default_value("0-7"),
                 "ranks to trace: all, 0-7,16, dc0, host:3, first:64, local:0");
  po::positional_options_description positional;
  positional.add("scenario", 1);
  po::variables_map vm;
  if (!parse_options("simulate", "SCENARIO.json [options]", args, desc, positional, vm)) return 0;
  // A bad --trace-format, or a "-" where a file must be, fails before the run.
  const bool kineto = kineto_format(vm);
  prepare_outputs("simulate", vm,
                  {{"json"},
                   {"trace", kineto ? "a Kineto trace, a directory of rank-<r>.json files; name a "
                                      "directory"
                                    : nullptr}});
  auto inputs = scenario_inputs(vm["scenario"].as<std::string>());
  for (const char* in : {"plan", "torchrec"})
    if (vm.count(in)) inputs.push_back(vm[in].as<std::string>());
  std::vector<std::pair<std::string, std::string>> outputs;
  for (const char* out : {"json", "trace"})
    if (vm.count(out)) outputs.emplace_back(std::string("--") + out, vm[out].as<std::string>());
  refuse_overwriting_inputs("simulate", outputs, inputs);
  const auto config = load_config(vm["scenario"].as<std::string>());
  if (config.is_object() && config.has("collectives")) return simulate_collectives(config, vm);
  return simulate_training(config, vm);
}

}  // namespace strait::cli
