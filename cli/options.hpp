#pragma once
// Boost.Program_options glue shared by the subcommands: parsing with UsageError on
// mistakes, and --help text.

#include <string>
#include <utility>
#include <vector>

#include <boost/program_options.hpp>

#include "sim/workload/scenario.hpp"

namespace strait::cli {

namespace po = boost::program_options;

/// True when `args` ask for a command's JSON on standard output (`--json -`, `--json=-`):
/// main() then sends the human report to standard error, so stdout is the JSON alone.
bool json_to_stdout(const std::vector<std::string>& args);

/// Writes a command's JSON result to `path` (atomically), or to standard output for "-".
void write_json(const std::string& path, const std::string& text);

/// Refuses (UsageError) to write an output over one of the run's input files: `outputs`
/// pairs an option's name with the file it writes ("-" and absent files pass), `inputs`
/// lists the files the run reads. `simulate s.json --json s.json` overwrote the scenario.
void refuse_overwriting_inputs(const std::string& command,
                               const std::vector<std::pair<std::string, std::string>>& outputs,
                               const std::vector<std::string>& inputs);

/// The files a scenario file reads: itself and the cluster, model, data and plan files it
/// names (inline parts are the scenario file).
std::vector<std::string> scenario_inputs(const std::string& scenario_file);

/// Applies --max-work (work items a run may take, work_estimate.hpp) to `scenario`;
/// UsageError outside 1 .. 1e15.
void apply_max_work(const std::string& command, const po::variables_map& vm,
                    sim::workload::TrainingScenario& scenario);

/// Parses `args` for `command`; prints help and returns false when --help was given.
bool parse_options(const std::string& command, const std::string& usage,
                   const std::vector<std::string>& args, const po::options_description& options,
                   const po::positional_options_description& positional, po::variables_map& vm);

}  // namespace strait::cli
