// strait: simulator and planner for recommendation-model training on GPU clusters.
// Dispatches to subcommands; the only place that prints errors and chooses exit codes.

#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/command.hpp"
#include "sim/core/error.hpp"

namespace {

void print_help() {
  std::cout << "usage: strait <command> [options]   (strait <command> --help for its options)\n\n"
               "commands:\n";
  for (const auto& c : strait::cli::commands())
    std::cout << fmt::format("  {:<12} {}\n", c.name, c.summary);
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    print_help();
    return args.empty() ? 2 : 0;
  }
  if (args[0] == "--version") {
    std::cout << "strait 0.1.0\n";
    return 0;
  }
  // A command whose output goes to standard output (`--json -`) sends its report to stderr
  // (prepare_outputs); std::cout gets its own buffer back however the command ends.
  std::streambuf* const report = std::cout.rdbuf();
  struct Restore {
    std::streambuf* buffer;
    ~Restore() { std::cout.rdbuf(buffer); }
  } restore{report};
  try {
    for (const auto& c : strait::cli::commands()) {
      if (args[0] == c.name) return c.run(std::vector<std::string>(args.begin() + 1, args.end()));
    }
    throw strait::UsageError(fmt::format("unknown command '{}' (see 'strait --help')", args[0]));
  } catch (const strait::UsageError& e) {
    std::cerr << "strait: " << e.what() << "\n";
    return 2;
  } catch (const strait::Error& e) {
    std::cerr << "strait: error: " << e.what() << "\n";
    return 1;
  } catch (const std::bad_alloc&) {
    std::cerr << "strait: error: out of memory\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "strait: internal error: " << e.what() << "\n";
    return 3;
  }
}
