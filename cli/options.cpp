#include "cli/options.hpp"

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
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

void prepare_outputs(const std::string& command, const po::variables_map& vm,
                     const std::vector<OutputOption>& outputs) {
  namespace fs = std::filesystem;
  const auto same_file = [](const std::string& a, const std::string& b) {
    std::error_code error;
    const auto ca = fs::weakly_canonical(a, error);
    const auto cb = error ? fs::path() : fs::weakly_canonical(b, error);
    if (error) return fs::path(a).lexically_normal() == fs::path(b).lexically_normal();
    return ca == cb;
  };
  const OutputOption* to_stdout = nullptr;
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const auto& option = outputs[i];
    if (!vm.count(option.name)) continue;
    const auto path = vm[option.name].as<std::string>();
    if (path == "-") {
      if (option.no_stdout != nullptr)
        throw UsageError(fmt::format("{}: --{} -: standard output cannot take {}", command,
                                     option.name, option.no_stdout));
      // Two outputs on one stream would be one unreadable mixture.
      if (to_stdout != nullptr)
        throw UsageError(fmt::format(
            "{}: --{} and --{} both write to standard output (-); send one of them to a file",
            command, to_stdout->name, option.name));
      to_stdout = &option;
      continue;
    }
    for (std::size_t j = 0; j < i; ++j) {
      const auto& other = outputs[j];
      if (vm.count(other.name) && same_file(vm[other.name].as<std::string>(), path))
        throw UsageError(fmt::format("{}: --{} and --{} both write {}; name two files", command,
                                     other.name, option.name, path));
    }
  }
  // Standard output then carries that output alone: the report goes to standard error.
  if (to_stdout != nullptr) std::cout.rdbuf(std::cerr.rdbuf());
}

namespace {

void flush_stdout() {
  if (std::fflush(stdout) != 0 || std::ferror(stdout) != 0)
    throw IoError("standard output: write failed");
}

}  // namespace

void write_json(const std::string& path, const std::string& text) {
  if (path != "-") {
    write_file_atomically(path, text);
    return;
  }
  std::fwrite(text.data(), 1, text.size(), stdout);
  flush_stdout();
}

void write_output(const std::string& path, const std::function<void(const std::string&)>& write) {
  namespace fs = std::filesystem;
  if (path != "-") {
    write(path);
    return;
  }
  // The library's writer takes a path (and writes atomically): it writes a temporary file,
  // which is then copied to standard output.
  std::string temporary = (fs::temp_directory_path() / "strait-stdout-XXXXXX").string();
  const int fd = ::mkstemp(temporary.data());
  if (fd < 0)
    throw IoError(fmt::format("{}: cannot create a temporary file for standard output", temporary));
  ::close(fd);
  struct Remove {
    std::string path;
    ~Remove() {
      std::error_code ignored;
      fs::remove(path, ignored);
    }
  } remove{temporary};
  write(temporary);
  std::ifstream in(temporary, std::ios::binary);
  if (!in) throw IoError(fmt::format("{}: cannot open file for reading", temporary));
  std::vector<char> buffer(1 << 16);
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    const auto n = static_cast<std::size_t>(in.gcount());
    if (n > 0 && std::fwrite(buffer.data(), 1, n, stdout) != n)
      throw IoError("standard output: write failed");
  }
  flush_stdout();
}

std::string wrote(const std::string& path, const std::string& what) {
  return path == "-" ? std::string() : fmt::format("wrote {} ({})\n", path, what);
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

namespace {

// The options a user types, "--name" in --help order; positional arguments are left out
// (the usage line names them).
std::vector<std::string> option_names(const po::options_description& options,
                                      const po::positional_options_description& positional) {
  std::vector<std::string> positional_names;
  for (unsigned i = 0; i < positional.max_total_count() && i < 16; ++i)
    positional_names.push_back(positional.name_for_position(i));
  std::vector<std::string> names;
  for (const auto& o : options.options()) {
    const auto& name = o->long_name();
    if (std::find(positional_names.begin(), positional_names.end(), name) == positional_names.end())
      names.push_back("--" + name);
  }
  return names;
}

// "a, b or c"
std::string one_of(const std::vector<std::string>& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i)
    out += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  return out;
}

// An unknown option, with what the user may have meant: the options it abbreviates (never
// taken for them), else the closest one, else all of them.
std::string unknown_option_text(const std::string& typed, const std::vector<std::string>& names) {
  const bool long_form = typed.rfind("--", 0) == 0 && typed.size() > 2;
  std::vector<std::string> extended;
  if (long_form) {
    for (const auto& name : names)
      if (name.rfind(typed, 0) == 0) extended.push_back(name);
  }
  if (!extended.empty())
    return fmt::format("unknown option '{}'; options are not abbreviated: did you mean {}?", typed,
                       one_of(extended));
  std::vector<std::string> bare;  // the closeness of names, not of their dashes
  bare.reserve(names.size());
  for (const auto& name : names) bare.push_back(name.substr(2));
  const auto closest = long_form ? closest_match(typed.substr(2), bare) : std::string();
  if (!closest.empty())
    return fmt::format("unknown option '{}'; did you mean --{}?", typed, closest);
  std::string all;
  for (const auto& name : names) all += (all.empty() ? "" : ", ") + name;
  return fmt::format("unknown option '{}'; the options are {}", typed, all);
}

}  // namespace

void bad_option_value(const std::string& command, const std::string& option,
                      const std::string& text, const std::string& expected) {
  throw UsageError(fmt::format("{}: --{}: expected {}, got '{}'", command, option, expected, text));
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
  } catch (const po::unknown_option& e) {
    throw UsageError(fmt::format(
        "{}: {} (see 'strait {} --help')", command,
        unknown_option_text(e.get_option_name(), option_names(all, positional)), command));
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
