#include "cli/options.hpp"

#include <cstdio>
#include <iostream>

#include <fmt/format.h>

#include "sim/core/atomic_file.hpp"
#include "sim/core/error.hpp"

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
