#include "cli/options.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <fmt/format.h>

#include "sim/core/atomic_file.hpp"
#include "sim/core/config_node.hpp"
#include "sim/core/error.hpp"
#include "sim/workload/work_estimate.hpp"

namespace strait::cli {

bool json_to_stdout(const std::vector<std::string>& args) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--json=-" || (args[i] == "--json" && i + 1 < args.size() && args[i + 1] == "-"))
      return true;
  }
  return false;
}

void write_json(const std::string& path, const std::string& text) {
  if (path != "-") {
    write_file_atomically(path, text);
    return;
  }
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
}

void refuse_overwriting_inputs(const std::string& command,
                               const std::vector<std::pair<std::string, std::string>>& outputs,
                               const std::vector<std::string>& inputs) {
  for (const auto& [option, path] : outputs) {
    std::error_code error;
    if (path == "-" || !std::filesystem::exists(path, error)) continue;
    for (const auto& input : inputs) {
      if (std::filesystem::exists(input, error) && std::filesystem::equivalent(path, input, error))
        throw UsageError(
            fmt::format("{}: {} {} is one of the run's inputs ({}); write the output elsewhere",
                        command, option, path, input));
    }
  }
}

std::vector<std::string> scenario_inputs(const std::string& scenario_file) {
  std::vector<std::string> files = {scenario_file};
  std::ifstream in(scenario_file);
  const Json doc = Json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object()) return files;
  const auto base = std::filesystem::path(scenario_file).parent_path();
  for (const char* part : {"cluster", "model", "data", "plan"}) {
    if (doc.contains(part) && doc[part].is_string())
      files.push_back((base / doc[part].get<std::string>()).lexically_normal().string());
  }
  return files;
}

bool parse_options(const std::string& command, const std::string& usage,
                   const std::vector<std::string>& args, const po::options_description& options,
                   const po::positional_options_description& positional, po::variables_map& vm) {
  po::options_description all = options;
  all.add_options()("help,h", "show this help");
  try {
    // No prefix guessing: `--json x` must not quietly become `--jsonl x`.
    const int style =
        po::command_line_style::default_style & ~po::command_line_style::allow_guessing;
    po::store(po::command_line_parser(args).options(all).positional(positional).style(style).run(),
              vm);
    if (vm.count("help")) {
      std::cout << "usage: strait " << command << " " << usage << "\n\n" << all << "\n";
      return false;
    }
    po::notify(vm);
  } catch (const po::error& e) {
    throw UsageError(fmt::format("{}: {} (see 'strait {} --help')", command, e.what(), command));
  }
  return true;
}

void apply_max_work(const std::string& command, const po::variables_map& vm,
                    sim::workload::TrainingScenario& scenario) {
  if (!vm.count("max-work")) return;
  const double items = vm["max-work"].as<double>();
  if (!sim::workload::valid_max_work(items))
    throw UsageError(
        fmt::format("{}: --max-work: expected 1 .. 1e15 work items, got {}", command, items));
  scenario.max_work = items;
}

}  // namespace strait::cli
