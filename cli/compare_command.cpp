// strait compare SIMULATED MEASURED: the simulator against a real run. SIMULATED is
// `strait simulate --json`, MEASURED `strait exec --json`; with --sim-trace and
// --measured-trace (their --trace files) also per kernel family, per communication purpose
// and per op. --json writes the figures; --trace one Perfetto trace with both timelines.
// strait compare SIMULATED --sim-trace S --kineto PATH...: the measured run is a real job's
// PyTorch profiler traces (a file per rank, or a directory of them; executor/kineto_measured.hpp).

#include <cmath>
#include <iostream>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "cli/command.hpp"
#include "cli/options.hpp"
#include "executor/comparison.hpp"
#include "sim/core/atomic_file.hpp"
#include "sim/core/error.hpp"
#include "traces/chrome_trace_writer.hpp"
#include "traces/kineto_reader.hpp"

namespace strait::cli {
namespace {

std::string error_text(const executor::ComparedFigure& f) {
  const auto e = f.error();
  return e ? fmt::format("{:+.1f}%", 100 * *e) : std::string("n/a");
}

void print_figures(const std::string& title, const std::vector<executor::ComparedFigure>& fs) {
  std::cout << fmt::format("\n  {:<34}{:>12}{:>12}{:>10}\n", title, "simulated", "measured",
                           "error");
  for (const auto& f : fs) {
    if (f.simulated_ms == 0 && f.measured_ms == 0) continue;  // terms neither run has
    std::cout << fmt::format(
        "    {:<32}{:>12.3f}{:>12.3f}{:>10}{}\n", f.name, f.simulated_ms, f.measured_ms,
        error_text(f),
        executor::in_mape(f) || f.measured_ms <= 0 ? "" : "  (under 10 us: not in MAPE)");
  }
}

void print_mape(const char* what, const std::vector<executor::ComparedFigure>& fs) {
  const auto m = executor::mape_percent(fs);
  std::cout << fmt::format("    MAPE over {}: {}\n", what,
                           m ? fmt::format("{:.1f}%", *m) : std::string("n/a"));
}

// Kineto kernel names run to hundreds of characters (templates): the start is the kernel.
std::string shortened(const std::string& name, std::size_t width) {
  return name.size() <= width ? name : name.substr(0, width - 3) + "...";
}

std::string op_label(const executor::ComparedOp& op) {
  auto name = op.measured_name.empty()
                  ? op.name
                  : fmt::format("{} | {}", shortened(op.name, 20), shortened(op.measured_name, 28));
  return op.occurrence == 0 ? name : fmt::format("{} #{}", name, op.occurrence);
}

void print_report(const executor::Comparison& c) {
  std::cout << fmt::format("strait compare: scenario '{}', {} ranks\n", c.scenario, c.ranks);
  std::cout << fmt::format("  simulated {}\n  measured  {}\n", c.simulated_file, c.measured_file);
  std::cout << "  error = simulated / measured - 1\n";
  if (c.measured_kernel_spread_percent) {
    std::cout << fmt::format(
        "  measured kernels varied {:.1f}% across steps (IQR / median; a steady machine gives "
        "a few percent)\n",
        *c.measured_kernel_spread_percent);
  }
  print_figures("step time (ms)", c.step_time);
  if (c.measured_mean_ci95_ms && !c.step_time.empty()) {
    // Whether the simulated mean is one the measurement could have given.
    const auto [low, high] = *c.measured_mean_ci95_ms;
    const double simulated = c.step_time.front().simulated_ms;
    std::cout << fmt::format(
        "    the simulated mean is {} the measured mean's 95% interval, {:.3f} - {:.3f} ms "
        "({} steps)\n",
        simulated >= low && simulated <= high ? "inside" : "outside", low, high,
        c.measured_counted_steps);
  }
  print_figures("breakdown, average rank per step (ms)", c.breakdown);
  if (!c.has_traces) return;
  print_figures("kernel families, ms per step, all ranks", c.families);
  print_mape("kernel families", c.families);
  print_figures(c.comm_by_op ? "collectives, ms per step, all ranks"
                             : "communication, ms per step, all ranks",
                c.purposes);
  print_mape(c.comm_by_op ? "collectives" : "communication purposes", c.purposes);
  std::cout << fmt::format("\n  ops with the largest absolute error ({} matched, {} unmatched)\n",
                           c.matched_ops, c.unmatched_ops);
  const std::size_t width = c.comm_by_op ? 56 : 36;
  std::cout << fmt::format("    {:>4} {:>4}  {:<{}}{:>12}{:>12}{:>10}\n", "rank", "step",
                           c.comm_by_op ? "op (simulated | measured)" : "op", width, "sim (ms)",
                           "meas (ms)", "|err| ms");
  for (const auto& op : c.top_ops) {
    std::cout << fmt::format("    {:>4} {:>4}  {:<{}}{:>12.3f}{:>12.3f}{:>10.3f}\n", op.rank,
                             op.step, op_label(op), width, op.simulated_ms, op.measured_ms,
                             std::abs(op.simulated_ms - op.measured_ms));
  }
  if (!c.notes.empty()) std::cout << "\n  notes\n";
  for (const auto& note : c.notes) std::cout << "    " << note << "\n";
}

traces::Timeline read_trace(const std::string& path) {
  traces::KinetoReadOptions options;
  options.pid_as_rank = true;
  options.origin_us = 0.0;  // both runs start at time zero; keep their own offsets
  return traces::read_kineto_trace(path, options);
}

// Kineto mode: SIMULATED and its trace against a real job's profiler traces.
executor::Comparison compare_kineto(const po::variables_map& vm) {
  if (vm.count("measured") || vm.count("measured-trace"))
    throw UsageError("compare: --kineto replaces MEASURED.json and --measured-trace");
  if (!vm.count("sim-trace")) throw UsageError("compare: --kineto needs --sim-trace");
  if (vm.count("trace")) throw UsageError("compare: --trace is not available with --kineto");
  const auto simulated = load_config(vm["simulated"].as<std::string>());
  const auto sim_path = vm["sim-trace"].as<std::string>();
  const auto measured = executor::read_kineto_run(
      executor::kineto_trace_files(vm["kineto"].as<std::vector<std::string>>()));
  return executor::compare_with_kineto(simulated, read_trace(sim_path), sim_path, measured);
}

executor::Comparison compare_strait(const po::variables_map& vm,
                                    std::optional<traces::Timeline>& sim_trace,
                                    std::optional<traces::Timeline>& measured_trace) {
  if (!vm.count("measured")) throw UsageError("compare: give MEASURED.json, or --kineto PATH");
  if (vm.count("sim-trace") != vm.count("measured-trace"))
    throw UsageError("compare: give --sim-trace and --measured-trace together");
  if (vm.count("trace") && !vm.count("sim-trace"))
    throw UsageError("compare: --trace needs --sim-trace and --measured-trace");
  const auto simulated = load_config(vm["simulated"].as<std::string>());
  const auto measured = load_config(vm["measured"].as<std::string>());
  auto comparison = executor::compare_results(simulated, measured);
  if (vm.count("sim-trace")) {
    const auto sim_path = vm["sim-trace"].as<std::string>();
    const auto measured_path = vm["measured-trace"].as<std::string>();
    sim_trace = read_trace(sim_path);
    measured_trace = read_trace(measured_path);
    executor::compare_traces(*sim_trace, sim_path, *measured_trace, measured_path, comparison);
  }
  return comparison;
}

}  // namespace

int run_compare(const std::vector<std::string>& args) {
  po::options_description desc("options");
  desc.add_options()("simulated", po::value<std::string>()->required(),
                     "strait simulate --json result")("measured", po::value<std::string>(),
                                                      "strait exec --json result")(
      "sim-trace", po::value<std::string>(), "strait simulate --trace of the same scenario")(
      "measured-trace", po::value<std::string>(), "strait exec --trace of the same run")(
      "kineto", po::value<std::vector<std::string>>()->multitoken(),
      "PyTorch profiler (Kineto) traces of a real job instead of MEASURED: files, one per rank, "
      "or directories of them (*.json)")(
      "json", po::value<std::string>(),
      "write the comparison as JSON to this file (-: stdout, the report to stderr)")(
      "trace", po::value<std::string>(),
      "write one Perfetto trace with both timelines as sibling processes (-: stdout)");
  po::positional_options_description positional;
  positional.add("simulated", 1).add("measured", 1);
  po::variables_map vm;
  if (!parse_options("compare",
                     "SIMULATED.json MEASURED.json [options] | SIMULATED.json --sim-trace "
                     "S.json --kineto PATH... [options]",
                     args, desc, positional, vm))
    return 0;
  prepare_outputs("compare", vm, {{"json"}, {"trace"}});
  std::optional<traces::Timeline> sim_trace, measured_trace;
  const auto comparison =
      vm.count("kineto") ? compare_kineto(vm) : compare_strait(vm, sim_trace, measured_trace);
  print_report(comparison);
  if (vm.count("json")) {
    const auto path = vm["json"].as<std::string>();
    write_json(path, executor::comparison_json(comparison).dump(2) + "\n");
    std::cout << wrote(path, "comparison as JSON");
  }
  if (vm.count("trace")) {
    const auto path = vm["trace"].as<std::string>();
    const auto both = executor::side_by_side(*sim_trace, *measured_trace);
    write_output(path,
                 [&](const std::string& file) { traces::write_chrome_trace(both, file, {}); });
    std::cout << wrote(path, fmt::format("Chrome/Perfetto trace of both runs, {} spans; open it in "
                                         "ui.perfetto.dev",
                                         both.spans().size()));
  }
  return 0;
}

}  // namespace strait::cli
