// strait calibrate run | fit | report | import-kineto: measures kernels and collectives,
// fits a calibration profile from the measurements, shows how well it fits, and turns a
// PyTorch profiler trace into measurements.

#include <malloc.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <iostream>

#include <fmt/format.h>

#include "calibration/fit.hpp"
#include "calibration/kineto_import.hpp"
#include "calibration/profile_report.hpp"
#include "calibration/suite.hpp"
#include "cli/command.hpp"
#include "cli/options.hpp"
#include "sim/core/error.hpp"
#include "sim/core/quantity.hpp"

namespace strait::cli {
namespace {

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const auto comma = text.find(',', start);
    const std::string item = text.substr(start, comma == std::string::npos ? comma : comma - start);
    if (!item.empty()) out.push_back(item);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

// Freed memory stays in the process (no mmap for large blocks, no trimming), as HPC
// runtimes arrange: MPI's temporary reduction buffers are then reused instead of being
// mapped and page-faulted on every call, which made large CPU collectives 10-40x slower
// and bimodal (depending on glibc's moving mmap threshold) on sandboxed hosts.
void keep_freed_memory() {
  mallopt(M_MMAP_MAX, 0);
  mallopt(M_TRIM_THRESHOLD, -1);
}

int calibrate_run(const std::vector<std::string>& args) {
  po::options_description desc("options");
  desc.add_options()(
      "backend", po::value<std::string>()->default_value("cpu"),
      "cpu (Eigen, reference kernels, MPI) or cuda (cuBLAS, strait's kernels, NCCL)")(
      "out", po::value<std::string>()->required(), "measurement file to write (JSON)")(
      "families", po::value<std::string>(),
      "comma-separated families to run (default: all), e.g. gemm,all_reduce")(
      "max-bytes", po::value<std::string>()->default_value("1 GiB"),
      "largest collective size (nccl-tests convention)")(
      "quick", "a few shapes per family (a smoke run)")("no-collectives", "kernels only");
  po::positional_options_description positional;
  po::variables_map vm;
  if (!parse_options("calibrate run",
                     "--backend cpu|cuda --out M.json [options]   "
                     "(collectives: mpirun -np N strait calibrate run ...)",
                     args, desc, positional, vm)) {
    return 0;
  }
  calibration::SuiteOptions options;
  options.backend = vm["backend"].as<std::string>();
  if (vm.count("families")) options.families = split_list(vm["families"].as<std::string>());
  for (const auto& f : options.families) {
    if (!calibration::Family::parse(f)) {
      throw UsageError(fmt::format("calibrate run: --families: unknown family \"{}\"; expected {}",
                                   f, calibration::Family::names()));
    }
  }
  const auto max_bytes = parse_bytes(vm["max-bytes"].as<std::string>());
  if (!max_bytes || *max_bytes < 8) {
    throw UsageError(
        "calibrate run: --max-bytes: expected a size of at least 8 B, e.g. \"256 MiB\"");
  }
  options.max_collective_bytes = *max_bytes;
  options.quick = vm.count("quick") > 0;
  options.collectives = vm.count("no-collectives") == 0;
  const std::string out = vm["out"].as<std::string>();
  const bool terminal = ::isatty(STDERR_FILENO) != 0;
  // Progress on rank 0: a line updated in place on a terminal; elsewhere (under mpirun
  // stderr is a pipe) a line at every tenth of a part. The records so far are saved every
  // 30 s, so a run that is stopped keeps what it measured: a valid measurement file with
  // fewer records, which `calibrate fit` takes.
  auto last_save = std::chrono::steady_clock::now();
  std::pair<int, int> last_tenth{-1, -1};  // (part size, tenth) last printed
  options.progress = [&](int done, int total, const calibration::MeasurementSet& so_far) {
    const std::string label = so_far.records.back().label();
    if (terminal) {
      std::fprintf(stderr, "\r  %d/%d  %-70.70s", done, total, label.c_str());
      std::fflush(stderr);
    } else if (const std::pair<int, int> tenth{total, done * 10 / total}; tenth != last_tenth) {
      std::fprintf(stderr, "strait calibrate: %d/%d cases  %s\n", done, total, label.c_str());
      std::fflush(stderr);
      last_tenth = tenth;
    }
    const auto now = std::chrono::steady_clock::now();
    if (now - last_save >= std::chrono::seconds(30)) {
      calibration::save_measurements(so_far, out);
      last_save = now;
    }
  };
  if (options.backend == "cpu") keep_freed_memory();
  const calibration::MeasurementSet set = calibration::run_suite(options);
  if (set.records.empty()) return 0;  // ranks other than 0
  if (terminal) std::fprintf(stderr, "\n");
  calibration::save_measurements(set, out);
  std::cout << fmt::format("wrote {} measurements ({} backend) to {}\n", set.records.size(),
                           set.backend, out);
  return 0;
}

int calibrate_fit(const std::vector<std::string>& args) {
  po::options_description desc("options");
  desc.add_options()("measurements", po::value<std::string>()->required(),
                     "measurement file (strait calibrate run or import-kineto)")(
      "out", po::value<std::string>()->required(), "profile file to write")(
      "gpu-type", po::value<std::string>(),
      "the device name cluster files use (default: CPU for the cpu backend)")(
      "base", po::value<std::string>(),
      "profile whose device peaks and unmeasured families are kept (e.g. the datasheet one)")(
      "cluster", po::value<std::string>(),
      "cluster the collectives ran on (default for cpu: configs/clusters/localhost-cpu.json)");
  po::positional_options_description positional;
  positional.add("measurements", 1);
  po::variables_map vm;
  if (!parse_options("calibrate fit", "M.json --out PROFILE.json [options]", args, desc, positional,
                     vm)) {
    return 0;
  }
  calibration::FitOptions options;
  const auto set = calibration::load_measurements(vm["measurements"].as<std::string>());
  options.measurements_file = vm["measurements"].as<std::string>();
  if (vm.count("gpu-type")) options.gpu_type = vm["gpu-type"].as<std::string>();
  if (vm.count("base")) options.base_profile = vm["base"].as<std::string>();
  if (vm.count("cluster")) {
    options.cluster_file = vm["cluster"].as<std::string>();
  } else if (set.backend == "cpu") {
    options.cluster_file = std::string(STRAIT_DEFAULT_CLUSTERS_DIR) + "/localhost-cpu.json";
  }
  const calibration::FitResult fit = calibration::fit_profile(set, options);
  calibration::save_profile(fit, vm["out"].as<std::string>());
  std::cout << calibration::format_fit_summary(fit);
  std::cout << fmt::format("wrote {}\n", vm["out"].as<std::string>());
  return 0;
}

int calibrate_report(const std::vector<std::string>& args) {
  po::options_description desc("options");
  desc.add_options()("profile", po::value<std::string>()->required(), "fitted profile")(
      "all", "list every measured shape, not only the worst per family");
  po::positional_options_description positional;
  positional.add("profile", 1);
  po::variables_map vm;
  if (!parse_options("calibrate report", "PROFILE.json [--all]", args, desc, positional, vm)) {
    return 0;
  }
  std::cout << calibration::format_profile_report(vm["profile"].as<std::string>(),
                                                  vm.count("all") > 0);
  return 0;
}

int calibrate_import_kineto(const std::vector<std::string>& args) {
  po::options_description desc("options");
  desc.add_options()("trace", po::value<std::string>()->required(),
                     "PyTorch profiler (Kineto) trace JSON")(
      "out", po::value<std::string>()->required(), "measurement file to write")(
      "device", po::value<std::string>(), "device name (default: from the trace)");
  po::positional_options_description positional;
  positional.add("trace", 1);
  po::variables_map vm;
  if (!parse_options("calibrate import-kineto", "TRACE.json --out M.json", args, desc, positional,
                     vm)) {
    return 0;
  }
  calibration::KinetoImportOptions options;
  if (vm.count("device")) options.device = vm["device"].as<std::string>();
  calibration::KinetoImportStats stats;
  const auto set = calibration::import_kineto(vm["trace"].as<std::string>(), options, &stats);
  calibration::save_measurements(set, vm["out"].as<std::string>());
  std::cout << fmt::format(
      "{} of {} GPU kernels recognised; {} measurement records written to {}\n", stats.recognised,
      stats.kernels, set.records.size(), vm["out"].as<std::string>());
  return 0;
}

}  // namespace

int run_calibrate(const std::vector<std::string>& args) {
  const std::string usage =
      "usage: strait calibrate run|fit|report|import-kineto [options]   (--help after each)\n"
      "  run            measure kernels and collectives on this machine (cpu or cuda)\n"
      "  fit            fit a calibration profile from measurements\n"
      "  report         measured vs fitted per family of a fitted profile\n"
      "  import-kineto  turn a PyTorch profiler trace into measurements\n";
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    std::cout << usage;
    return 0;
  }
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  if (args[0] == "run") return calibrate_run(rest);
  if (args[0] == "fit") return calibrate_fit(rest);
  if (args[0] == "report") return calibrate_report(rest);
  if (args[0] == "import-kineto") return calibrate_import_kineto(rest);
  throw UsageError(fmt::format("calibrate: unknown subcommand \"{}\"\n{}", args[0], usage));
}

}  // namespace strait::cli
