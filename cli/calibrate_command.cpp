// strait calibrate run | fit | report | import-kineto: measures kernels and collectives
// (run, in cli/calibrate_run_command.cpp), fits a calibration profile from the
// measurements, shows how well it fits, and turns a PyTorch profiler trace into
// measurements.

#include <filesystem>
#include <iostream>

#include <fmt/format.h>

#include "calibration/fit.hpp"
#include "calibration/kineto_import.hpp"
#include "calibration/profile_report.hpp"
#include "cli/calibrate_command.hpp"
#include "cli/command.hpp"
#include "cli/mpi_program.hpp"
#include "cli/options.hpp"
#include "sim/core/bundled_configs.hpp"
#include "sim/core/error.hpp"

namespace strait::cli {

// A measurement file, or for "-" the same JSON on standard output.
void write_measurements(const calibration::MeasurementSet& set, const std::string& path) {
  write_output(path, [&](const std::string& file) { calibration::save_measurements(set, file); });
}

namespace {

int calibrate_fit(const std::vector<std::string>& args) {
  po::options_description desc("options");
  desc.add_options()("measurements", po::value<std::string>()->required(),
                     "measurement file (strait calibrate run or import-kineto)")(
      "out", po::value<std::string>()->required(),
      "profile file to write (-: stdout, the report to stderr)")(
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
  prepare_outputs("calibrate fit", vm, {{"out"}});
  calibration::FitOptions options;
  const auto set = calibration::load_measurements(vm["measurements"].as<std::string>());
  options.measurements_file = vm["measurements"].as<std::string>();
  if (vm.count("gpu-type")) options.gpu_type = vm["gpu-type"].as<std::string>();
  if (vm.count("base")) options.base_profile = vm["base"].as<std::string>();
  if (vm.count("cluster")) {
    options.cluster_file = vm["cluster"].as<std::string>();
  } else if (set.backend == "cpu") {
    options.cluster_file = (bundled_configs_dir() / "clusters" / "localhost-cpu.json").string();
  }
  const calibration::FitResult fit = calibration::fit_profile(set, options);
  const auto out = vm["out"].as<std::string>();
  write_output(out, [&](const std::string& file) { calibration::save_profile(fit, file); });
  std::cout << calibration::format_fit_summary(fit);
  std::cout << wrote(
      out, fmt::format("calibration profile of gpu_type {}", fit.profile.device.gpu_type));
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
  // The trace read is named --kineto, as compare's: --trace always names a trace written.
  desc.add_options()("kineto", po::value<std::string>()->required(),
                     "PyTorch profiler (Kineto) trace JSON")(
      "out", po::value<std::string>()->required(),
      "measurement file to write (-: stdout, the report to stderr)")(
      "device", po::value<std::string>(), "device name (default: from the trace)");
  po::positional_options_description positional;
  positional.add("kineto", 1);
  po::variables_map vm;
  if (!parse_options("calibrate import-kineto", "TRACE.json --out M.json", args, desc, positional,
                     vm)) {
    return 0;
  }
  prepare_outputs("calibrate import-kineto", vm, {{"out"}});
  calibration::KinetoImportOptions options;
  if (vm.count("device")) options.device = vm["device"].as<std::string>();
  calibration::KinetoImportStats stats;
  const auto set = calibration::import_kineto(vm["kineto"].as<std::string>(), options, &stats);
  const auto out = vm["out"].as<std::string>();
  write_measurements(set, out);
  std::cout << fmt::format("{} of {} GPU kernels recognised\n", stats.recognised, stats.kernels);
  std::cout << wrote(out, fmt::format("{} measurements", set.records.size()));
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
