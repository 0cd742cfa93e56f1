#pragma once
// Runs the strait binary as a child process, the way a user would, and captures what it
// printed. Shared by the end-to-end tests of tests/cli/.

#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace strait::cli::testing {

/// What one run of `strait` did: its exit code (-1 when killed by a signal) and output.
struct StraitRun {
  int exit_code = -1;
  std::string out;  ///< everything written to stdout
  std::string err;  ///< everything written to stderr
};

/// The exit code of a run stopped at its time limit.
inline constexpr int kTimedOut = 124;

/// Runs `strait args...` from the repository root, so bundled relative paths resolve;
/// with `time_limit_s` > 0, a run past it is killed and reports kTimedOut.
StraitRun run_strait(const std::vector<std::string>& args, int time_limit_s = 0);
/// The same with another program (a copy of strait elsewhere, strait-mpi).
StraitRun run_program(const std::string& program, const std::vector<std::string>& args,
                      int time_limit_s = 0);

/// A fresh path under gtest's temporary directory, unique to this process and call.
std::string temp_path(const std::string& name);

/// Writes `text` to `path`, replacing it.
void write_text(const std::string& path, const std::string& text);

/// Reads a whole file; empty when it cannot be opened.
std::string read_text(const std::string& path);

/// Parses a JSON file; fails the current test (and returns null) when it is not JSON.
nlohmann::json read_json(const std::string& path);

/// Success when `text` contains `part`; the failure message shows both.
::testing::AssertionResult contains(const std::string& text, const std::string& part);

/// Success when `text` starts with `prefix`; the failure message shows both.
::testing::AssertionResult starts_with(const std::string& text, const std::string& prefix);

}  // namespace strait::cli::testing
