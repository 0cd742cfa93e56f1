#pragma once
// Boost.Program_options glue shared by the subcommands: parsing with UsageError on
// mistakes, and --help text.

#include <string>
#include <vector>

#include <boost/program_options.hpp>

namespace strait::cli {

namespace po = boost::program_options;

/// True when `args` ask for a command's JSON on standard output (`--json -`, `--json=-`):
/// main() then sends the human report to standard error, so stdout is the JSON alone.
bool json_to_stdout(const std::vector<std::string>& args);

/// Writes a command's JSON result to `path` (atomically), or to standard output for "-".
void write_json(const std::string& path, const std::string& text);

/// Parses `args` for `command`; prints help and returns false when --help was given.
bool parse_options(const std::string& command, const std::string& usage,
                   const std::vector<std::string>& args, const po::options_description& options,
                   const po::positional_options_description& positional, po::variables_map& vm);

}  // namespace strait::cli
