// strait compare SIMULATED MEASURED: the simulator against a real run. SIMULATED is
// `strait simulate --json`, MEASURED `strait exec --out`; with --sim-trace and
// --measured-trace (their --trace files) also per kernel family, per communication purpose
// and per op. --json writes the figures; --trace one Perfetto trace with both timelines.

#include <cmath>
#include <iostream>

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
    std::cout << fmt::format("    {:<32}{:>12.3f}{:>12.3f}{:>10}\n", f.name, f.simulated_ms,
                             f.measured_ms, error_text(f));
  }
}

void print_mape(const char* what, const std::vector<executor::ComparedFigure>& fs) {
  const auto m = executor::mape_percent(fs);
  std::cout << fmt::format("    MAPE over {}: {}\n", what,
                           m ? fmt::format("{:.1f}%", *m) : std::string("n/a"));
}

void print_report(const executor::Comparison& c) {
  std::cout << fmt::format("strait compare: scenario '{}', {} ranks\n", c.scenario, c.ranks);
  std::cout << fmt::format("  simulated {}\n  measured  {}\n", c.simulated_file, c.measured_file);
  std::cout << "  error = simulated / measured - 1\n";
  print_figures("step time (ms)", c.step_time);
  print_figures("breakdown, average rank per step (ms)", c.breakdown);
  if (!c.has_traces) return;
  print_figures("kernel families, ms per step, all ranks", c.families);
  print_mape("kernel families", c.families);
  print_figures("communication, ms per step, all ranks", c.purposes);
  print_mape("communication purposes", c.purposes);
  std::cout << fmt::format("\n  ops with the largest absolute error ({} matched, {} unmatched)\n",
                           c.matched_ops, c.unmatched_ops);
  std::cout << fmt::format("    {:>4} {:>4}  {:<36}{:>12}{:>12}{:>10}\n", "rank", "step", "op",
                           "sim (ms)", "meas (ms)", "|err| ms");
  for (const auto& op : c.top_ops) {
    const auto name = op.occurrence == 0 ? op.name : fmt::format("{} #{}", op.name, op.occurrence);
    std::cout << fmt::format("    {:>4} {:>4}  {:<36}{:>12.3f}{:>12.3f}{:>10.3f}\n", op.rank,
                             op.step, name, op.simulated_ms, op.measured_ms,
                             std::abs(op.simulated_ms - op.measured_ms));
  }
}

traces::Timeline read_trace(const std::string& path) {
  traces::KinetoReadOptions options;
  options.pid_as_rank = true;
  options.origin_us = 0.0;  // both runs start at time zero; keep their own offsets
  return traces::read_kineto_trace(path, options);
}

}  // namespace

int run_compare(const std::vector<std::string>& args) {
  po::options_description desc("options");
  desc.add_options()("simulated", po::value<std::string>()->required(),
                     "strait simulate --json result")(
      "measured", po::value<std::string>()->required(), "strait exec --out result")(
      "sim-trace", po::value<std::string>(), "strait simulate --trace of the same scenario")(
      "measured-trace", po::value<std::string>(), "strait exec --trace of the same run")(
      "json", po::value<std::string>(), "write the comparison as JSON to this file")(
      "trace", po::value<std::string>(),
      "write one Perfetto trace with both timelines as sibling processes");
  po::positional_options_description positional;
  positional.add("simulated", 1).add("measured", 1);
  po::variables_map vm;
  if (!parse_options("compare", "SIMULATED.json MEASURED.json [options]", args, desc, positional,
                     vm))
    return 0;
  if (vm.count("sim-trace") != vm.count("measured-trace"))
    throw UsageError("compare: give --sim-trace and --measured-trace together");
  if (vm.count("trace") && !vm.count("sim-trace"))
    throw UsageError("compare: --trace needs --sim-trace and --measured-trace");
  const auto simulated = load_config(vm["simulated"].as<std::string>());
  const auto measured = load_config(vm["measured"].as<std::string>());
  auto comparison = executor::compare_results(simulated, measured);
  std::optional<traces::Timeline> sim_trace, measured_trace;
  if (vm.count("sim-trace")) {
    const auto sim_path = vm["sim-trace"].as<std::string>();
    const auto measured_path = vm["measured-trace"].as<std::string>();
    sim_trace = read_trace(sim_path);
    measured_trace = read_trace(measured_path);
    executor::compare_traces(*sim_trace, sim_path, *measured_trace, measured_path, comparison);
  }
  print_report(comparison);
  if (vm.count("json")) {
    const auto path = vm["json"].as<std::string>();
    write_file_atomically(path, executor::comparison_json(comparison).dump(2) + "\n");
    std::cout << fmt::format("\n  comparison     {}\n", path);
  }
  if (vm.count("trace")) {
    const auto path = vm["trace"].as<std::string>();
    const auto both = executor::side_by_side(*sim_trace, *measured_trace);
    traces::write_chrome_trace(both, path, {});
    std::cout << fmt::format("  trace          {} ({} spans; open it in ui.perfetto.dev)\n", path,
                             both.spans().size());
  }
  return 0;
}

}  // namespace strait::cli
