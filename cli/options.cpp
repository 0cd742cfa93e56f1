#include "cli/options.hpp"

#include <iostream>

#include <fmt/format.h>

#include "sim/core/error.hpp"

namespace strait::cli {

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

}  // namespace strait::cli
