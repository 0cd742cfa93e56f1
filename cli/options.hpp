#pragma once
// Boost.Program_options glue shared by the subcommands: parsing with UsageError on
// mistakes, --help text, and the rules every output option follows ("-" is standard
// output or refused, never a file named "-"; each file written is named after the report).

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <boost/program_options.hpp>

#include "sim/core/enum_names.hpp"
#include "sim/workload/scenario.hpp"

namespace strait::cli {

namespace po = boost::program_options;

/// One option of a command that writes a file. `no_stdout` is why its "-" cannot mean
/// standard output (a directory, a file that is appended to and read back); nullptr when
/// it can.
struct OutputOption {
  const char* name;  ///< without the dashes
  const char* no_stdout = nullptr;
};

/// Checks a command's output options before anything runs: a refused "-" and two options
/// naming the same file (or both "-") are UsageErrors. When one output goes to standard
/// output the report (std::cout) goes to standard error, so stdout carries that output
/// alone; main() restores std::cout.
void prepare_outputs(const std::string& command, const po::variables_map& vm,
                     const std::vector<OutputOption>& outputs);

/// Writes a command's JSON result to `path` (atomically), or to standard output for "-".
void write_json(const std::string& path, const std::string& text);

/// Writes an output through `write`, a writer that takes a path (a library's, which writes
/// atomically); for "-" it writes a temporary file and copies it to standard output.
void write_output(const std::string& path, const std::function<void(const std::string&)>& write);

/// The line a command prints for each file it wrote, after its report:
/// "wrote PATH (WHAT)\n"; empty for "-" (standard output is the output itself).
std::string wrote(const std::string& path, const std::string& what);

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

/// Throws the UsageError of enum_option: "COMMAND: --OPTION: expected EXPECTED, got 'TEXT'".
[[noreturn]] void bad_option_value(const std::string& command, const std::string& option,
                                   const std::string& text, const std::string& expected);

/// Option --`option`'s value `text` as an E, by the enum's name table (enum_names.hpp);
/// else a UsageError: "COMMAND: --OPTION: expected a or b, got 'TEXT'" for two names,
/// "expected one of a, b, c, got 'TEXT'" for more.
template <NamedEnum E>
E enum_option(const std::string& command, const std::string& option, const std::string& text) {
  if (const auto value = parse_enum<E>(text)) return *value;
  const auto names = enum_name_vector<E>();
  bad_option_value(
      command, option, text,
      names.size() == 2 ? enum_name_list<E>("", " or ") : "one of " + enum_name_list<E>());
}

/// Parses `args` for `command`; prints help and returns false when --help was given. An
/// option is never guessed from a prefix: an unknown one is a UsageError naming the
/// options it abbreviates, else the closest option, else every valid option.
bool parse_options(const std::string& command, const std::string& usage,
                   const std::vector<std::string>& args, const po::options_description& options,
                   const po::positional_options_description& positional, po::variables_map& vm);

}  // namespace strait::cli
