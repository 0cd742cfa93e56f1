// strait sweep SWEEP.json: runs every point of a sweep on this machine's cores (oneTBB) or
// over the ranks of an MPI job (cli/sweep_mpi_command.cpp, in strait-mpi), writing a CSV and a JSON
// Lines file; --resume continues an interrupted sweep. A progress bar goes to stderr when it is a
// terminal.

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include <fmt/format.h>

#include "cli/command.hpp"
#include "cli/mpi_program.hpp"
#include "cli/options.hpp"
#include "cli/progress_line.hpp"
#include "cli/sweep_command.hpp"
#include "sim/core/bundled_configs.hpp"
#include "sim/core/error.hpp"
#include "sweep/sweep.hpp"

namespace strait::cli {
namespace {

std::atomic<bool> g_stop{false};
static_assert(std::atomic<bool>::is_always_lock_free, "set from a signal handler");

// The first Ctrl-C (or SIGTERM) lets the points in flight finish and their rows be written;
// the handler then resets, so a second one ends the process at once (the files stay
// valid either way: rows are written whole).
void request_stop(int) { g_stop.store(true); }

void install_stop_handlers() {
  struct sigaction action {};
  action.sa_handler = request_stop;
  action.sa_flags = SA_RESETHAND;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

// The counts first, then a bar of what room is left (progress_line.hpp).
void draw_progress(const sweep::SweepProgress& p) {
  const double fraction = p.total ? static_cast<double>(p.done) / static_cast<double>(p.total) : 1;
  const double rate = p.elapsed_s > 0 ? static_cast<double>(p.ran) / p.elapsed_s : 0;
  const std::string eta =
      rate > 0 ? format_eta(static_cast<double>(p.total - p.done) / rate) : std::string("?");
  draw_progress_line(fmt::format("{}/{} points  {:.2f} points/s  ETA {}  {} failed", p.done,
                                 p.total, rate, eta, p.failed),
                     fraction);
}

void list_points(const sweep::SweepSpec& spec) {
  std::cout << fmt::format("sweep '{}': {} points over {}\n", spec.name(), spec.points().size(),
                           spec.scenario_file());
  for (const auto& p : spec.points()) {
    std::cout << fmt::format("  {:>6}", p.index);
    for (std::size_t k = 0; k < p.values.size(); ++k)
      std::cout << fmt::format("  {}={}", spec.axis_names()[k],
                               sweep::format_axis_value(p.values[k]));
    std::cout << "\n";
  }
}

sweep::SweepOptions sweep_options(const po::variables_map& vm, const sweep::SweepSpec& spec) {
  sweep::SweepOptions options;
  options.csv_path = vm.count("csv") ? vm["csv"].as<std::string>() : spec.name() + ".csv";
  options.jsonl_path =
      vm.count("jsonl")
          ? vm["jsonl"].as<std::string>()
          : std::filesystem::path(options.csv_path).replace_extension(".jsonl").string();
  if (options.jsonl_path == options.csv_path)
    throw UsageError("sweep: --csv and --jsonl must be different files");
  auto inputs = scenario_inputs(spec.scenario_file());
  inputs.push_back(spec.file());
  refuse_overwriting_inputs("sweep", {{"--csv", options.csv_path}, {"--jsonl", options.jsonl_path}},
                            inputs);
  options.threads = vm["threads"].as<int>();
  if (options.threads < 0) throw UsageError("sweep: --threads: expected 0 (all cores) or more");
  options.resume = vm.count("resume") > 0;
  options.default_profiles_dir =
      vm.count("profiles") ? vm["profiles"].as<std::string>() : bundled_profiles_dir().string();
  options.stop = &g_stop;
  return options;
}

}  // namespace

int sweep_points(const std::vector<std::string>& args, const SweepRunner& runner,
                 const char* workers) {
  po::options_description desc("options");
  desc.add_options()("sweep", po::value<std::string>()->required(),
                     "sweep file (configs/sweeps/*.json)")(
      "csv", po::value<std::string>(), "CSV output, one row per point (default: NAME.csv)")(
      "jsonl", po::value<std::string>(),
      "JSON Lines output, each point's full report (default: the CSV's name with .jsonl)")(
      "threads", po::value<int>()->default_value(0), "threads to run points on (0: all cores)")(
      "resume", "continue the existing outputs: skip the points they already hold")(
      "profiles", po::value<std::string>(),
      "calibration profiles directory (default: configs/profiles)")(
      "list", "print the sweep's points and exit");
  po::positional_options_description positional;
  positional.add("sweep", 1);
  po::variables_map vm;
  if (!parse_options("sweep", "SWEEP.json [options]   (or: mpirun -np N strait sweep ...)", args,
                     desc, positional, vm))
    return 0;
  // Rows are appended as points finish and --resume reads them back: files, not a stream.
  prepare_outputs("sweep", vm,
                  {{"csv",
                    "a sweep's CSV: rows are appended as points finish and --resume "
                    "reads them back; name a file"},
                   {"jsonl",
                    "a sweep's JSON Lines: rows are appended as points finish and "
                    "--resume reads them back; name a file"}});
  // The whole sweep file is checked before any point runs: its form here, its values by
  // run_sweep before it touches a file (and here for --list, a dry run).
  const auto spec = sweep::SweepSpec::load(vm["sweep"].as<std::string>());
  if (vm.count("list")) {
    sweep::check_values(spec);
    list_points(spec);
    return 0;
  }
  auto options = sweep_options(vm, spec);
  int rank = 0;
  const bool terminal = stderr_is_terminal();
  if (terminal) options.progress = draw_progress;
  install_stop_handlers();
  const auto summary = runner(spec, options, rank);
  if (rank != 0) return 0;
  if (terminal) std::fprintf(stderr, "\n");
  const auto& p = summary.progress;
  std::cout << fmt::format(
      "strait sweep: '{}': {} of {} points written ({} run now, {} failed) in {:.1f} s, {:.2f} "
      "points/s on {} {}\n",
      spec.name(), p.done, p.total, p.ran, p.failed, p.elapsed_s,
      p.elapsed_s > 0 ? static_cast<double>(p.ran) / p.elapsed_s : 0.0, summary.workers, workers);
  std::cout << wrote(options.csv_path, "CSV, a row per point")
            << wrote(options.jsonl_path, "JSON Lines, each point's full report");
  if (summary.interrupted) {
    std::cout << "  interrupted: continue with --resume\n";
    return 130;
  }
  return 0;
}

int run_sweep(const std::vector<std::string>& args) {
  if (sweep::launched_by_mpi()) return sweep_on_mpi_ranks(args);
  return sweep_points(
      args,
      [](const sweep::SweepSpec& spec, const sweep::SweepOptions& options, int&) {
        return sweep::run_sweep(spec, options);
      },
      "threads");
}

}  // namespace strait::cli
