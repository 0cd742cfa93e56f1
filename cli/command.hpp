#pragma once
// The subcommands of `strait`. Each takes its own arguments (after the subcommand name),
// prints its report to stdout, and throws strait::Error (or UsageError) on bad input.

#include <string>
#include <vector>

namespace strait::cli {

struct Command {
  const char* name;
  const char* summary;
  int (*run)(const std::vector<std::string>& args);
};

int run_collective(const std::vector<std::string>& args);
int run_simulate(const std::vector<std::string>& args);
int run_graph(const std::vector<std::string>& args);
int run_plan(const std::vector<std::string>& args);
int run_sweep(const std::vector<std::string>& args);
int run_calibrate(const std::vector<std::string>& args);
int run_exec(const std::vector<std::string>& args);
int run_compare(const std::vector<std::string>& args);

/// All subcommands, in the order `strait --help` lists them.
const std::vector<Command>& commands();

}  // namespace strait::cli
