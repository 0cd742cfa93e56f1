#include "strait_process.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace strait::cli::testing {
namespace {

// Single-quotes `word` for /bin/sh.
std::string shell_quote(const std::string& word) {
  std::string out(1, '\'');
  for (char c : word) {
    if (c == '\'') {
      out.append("'\\''");
    } else {
      out.push_back(c);
    }
  }
  out.push_back('\'');
  return out;
}

}  // namespace

std::string temp_path(const std::string& name) {
  static int counter = 0;
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string test = info ? fmt::format("{}.{}", info->test_suite_name(), info->name()) : "none";
  // Parameterized test names contain '/': keep the file in TempDir itself.
  for (char& c : test) {
    if (c == '/') c = '_';
  }
  std::string path = fmt::format("{}/strait_cli_{}_{}_{}_{}", ::testing::TempDir(), test,
                                 ::getpid(), counter++, name);
  // Process ids wrap (32,768 on the CI machine): a file left by an earlier run of the same
  // test under the same pid would look like this run's (a sweep would resume from it).
  std::error_code ignored;
  std::filesystem::remove_all(path, ignored);
  return path;
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

nlohmann::json read_json(const std::string& path) {
  const std::string text = read_text(path);
  auto parsed = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded())
    ADD_FAILURE() << path << " is not valid JSON:\n" << text.substr(0, 2000);
  return parsed;
}

::testing::AssertionResult contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "expected to find\n  " << part << "\nin\n  " << text;
}

::testing::AssertionResult starts_with(const std::string& text, const std::string& prefix) {
  if (text.rfind(prefix, 0) == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "expected to start with\n  " << prefix << "\nbut got\n  " << text;
}

StraitRun run_strait(const std::vector<std::string>& args, int time_limit_s) {
  return run_program(STRAIT_BINARY, args, time_limit_s);
}

StraitRun run_program(const std::string& program, const std::vector<std::string>& args,
                      int time_limit_s) {
  const std::string out_path = temp_path("stdout.txt");
  const std::string err_path = temp_path("stderr.txt");
  // coreutils' timeout exits 124 when it stopped the run (KILL after a grace second).
  const std::string limit =
      time_limit_s > 0 ? fmt::format("timeout -k 1 {} ", time_limit_s) : std::string();
  std::string command =
      fmt::format("cd {} && {}{}", shell_quote(STRAIT_SOURCE_DIR), limit, shell_quote(program));
  for (const auto& a : args) {
    command.push_back(' ');
    command.append(shell_quote(a));
  }
  command += fmt::format(" </dev/null >{} 2>{}", shell_quote(out_path), shell_quote(err_path));
  const int status = std::system(command.c_str());
  StraitRun run;
  run.exit_code = status != -1 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (time_limit_s > 0 && run.exit_code == 128 + SIGKILL) run.exit_code = kTimedOut;
  run.out = read_text(out_path);
  run.err = read_text(err_path);
  std::remove(out_path.c_str());
  std::remove(err_path.c_str());
  return run;
}

}  // namespace strait::cli::testing
