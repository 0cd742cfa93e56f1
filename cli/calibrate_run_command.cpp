// strait calibrate run: measures kernels and collectives on this machine (CPU or CUDA),
// as MPI ranks for the collectives. Part of strait-mpi (cli/mpi_program.hpp): it loads MPI,
// CUDA and NCCL, which the other commands never need.

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "calibration/suite.hpp"
#include "cli/calibrate_command.hpp"
#include "cli/mpi_program.hpp"
#include "cli/options.hpp"
#include "cli/progress_line.hpp"
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

// Progress on rank 0, shown before each case: on a terminal one line redrawn in place
// (part, cases done of all, ETA, the case running); elsewhere (under mpirun stderr is a
// pipe) a line when a part or a family starts. The records so far are saved at most every
// second, so a stopped run keeps what it measured (a valid measurement file with fewer
// records, which `calibrate fit` takes and `--resume` continues).
std::function<void(const calibration::SuiteProgress&)> calibrate_progress(const std::string& out) {
  struct State {
    std::chrono::steady_clock::time_point last_save = std::chrono::steady_clock::now();
    std::chrono::steady_clock::time_point part_start = last_save;
    std::string part, family;
    int first_done = 0;  // cases the part had done when this process started it
  };
  auto state = std::make_shared<State>();
  const bool terminal = stderr_is_terminal();
  return [state, terminal, out](const calibration::SuiteProgress& p) {
    const auto now = std::chrono::steady_clock::now();
    if (p.part != state->part) {
      state->part = p.part;
      state->part_start = now;
      state->first_done = p.done;
      state->family.clear();
    }
    const double elapsed = std::chrono::duration<double>(now - state->part_start).count();
    const int ran = p.done - state->first_done;
    const std::string eta =
        ran > 0 ? format_eta(elapsed / ran * (p.total - p.done)) : std::string("?");
    const std::string family = p.next.substr(0, p.next.find(' '));
    if (terminal) {
      draw_progress_line(fmt::format("{} {}/{}  ETA {}  {}", p.part, p.done, p.total, eta, p.next),
                         p.total ? static_cast<double>(p.done) / p.total : 1.0);
      if (p.next.empty()) end_progress_line();
    } else if (!family.empty() && family != state->family) {
      std::fprintf(stderr, "strait calibrate: %s %d/%d, ETA %s: %s\n", p.part, p.done, p.total,
                   eta.c_str(), family.c_str());
      std::fflush(stderr);
    }
    state->family = family;
    // Standard output ("-") takes the file once, at the end.
    if (out != "-" && now - state->last_save >= std::chrono::seconds(1) &&
        !p.so_far->records.empty()) {
      calibration::save_measurements(*p.so_far, out);
      state->last_save = now;
    }
  };
}
}  // namespace

int calibrate_run(const std::vector<std::string>& args) {
  po::options_description desc("options");
  desc.add_options()(
      "backend", po::value<std::string>()->default_value("cpu"),
      "cpu (Eigen, reference kernels, MPI) or cuda (cuBLAS, strait's kernels, NCCL)")(
      "out", po::value<std::string>()->required(),
      "measurement file to write (JSON; -: stdout at the end, the report to stderr, nothing "
      "saved while it runs)")(
      "families", po::value<std::string>(),
      "comma-separated families to run (default: all), e.g. gemm,all_reduce")(
      "max-bytes", po::value<std::string>()->default_value("1 GiB"),
      "largest collective size (nccl-tests convention)")(
      "quick", "a few shapes per family (a smoke run)")("no-collectives", "kernels only")(
      "resume", "continue a stopped run: keep the --out file's records, run only the rest");
  po::positional_options_description positional;
  po::variables_map vm;
  if (!parse_options("calibrate run",
                     "--backend cpu|cuda --out M.json [options]   "
                     "(collectives: mpirun -np N strait calibrate run ...)",
                     args, desc, positional, vm)) {
    return 0;
  }
  prepare_outputs(
      "calibrate run", vm,
      {{"out", vm.count("resume") ? "a run to --resume: it is read back; name a file" : nullptr}});
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
  if (vm.count("resume") && std::filesystem::exists(out)) {
    options.done = calibration::load_measurements(out);
    if (options.done.backend != options.backend)
      throw UsageError(fmt::format(
          "calibrate run: --resume: {} holds {} measurements, not {}: resume it with --backend "
          "{} or write to another --out",
          out, options.done.backend, options.backend, options.done.backend));
  }
  options.progress = calibrate_progress(out);
  if (options.backend == "cpu") keep_freed_memory();
  const calibration::MeasurementSet set = calibration::run_suite(options);
  if (set.records.empty()) return 0;  // ranks other than 0
  write_measurements(set, out);
  std::cout << wrote(out,
                     fmt::format("{} measurements, {} backend", set.records.size(), set.backend));
  return 0;
}

}  // namespace strait::cli
