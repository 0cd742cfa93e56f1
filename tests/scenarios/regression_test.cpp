// Scenario regression tests: every folder tests/scenarios/<name>/ holds `command.json`
// (the strait arguments, run from the repository root, and a relative tolerance) and
// `expected.json` (the --json output the last accepted version produced, without its
// wall-clock keys). A change of physics, defaults or bundled configs shows up here as a
// difference, named by JSON pointer. Re-record deliberately with STRAIT_RECORD=1 (see
// README.md) and review the diff of expected.json like code.

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "../cli/strait_process.hpp"

namespace strait::scenarios {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const fs::path kRoot = fs::path(STRAIT_SOURCE_DIR) / "tests" / "scenarios";
constexpr const char* kWallKeys[] = {"sim_wall_s", "build_wall_s", "wall_s"};

void drop_wall_clock(json& j) {
  if (!j.is_object()) return;
  for (const char* key : kWallKeys) j.erase(key);
  for (auto& [key, value] : j.items()) drop_wall_clock(value);
}

// Appends a line per difference between `expected` and `actual` at `pointer`.
void compare(const json& expected, const json& actual, double tolerance, const std::string& pointer,
             std::vector<std::string>& out) {
  if (expected.is_number() && actual.is_number()) {
    const double e = expected.get<double>(), a = actual.get<double>();
    if (std::fabs(a - e) > tolerance * std::max(std::fabs(e), 1e-300) && std::fabs(a - e) > 1e-12) {
      out.push_back(pointer + ": expected " + expected.dump() + ", got " + actual.dump());
    }
    return;
  }
  if (expected.type() != actual.type()) {
    out.push_back(pointer + ": expected " + expected.dump() + ", got " + actual.dump());
    return;
  }
  if (expected.is_object()) {
    for (const auto& [key, value] : expected.items()) {
      if (!actual.contains(key)) {
        out.push_back(pointer + "/" + key + ": missing");
      } else {
        compare(value, actual[key], tolerance, pointer + "/" + key, out);
      }
    }
    for (const auto& [key, value] : actual.items()) {
      if (!expected.contains(key)) out.push_back(pointer + "/" + key + ": not expected");
    }
  } else if (expected.is_array()) {
    if (expected.size() != actual.size()) {
      out.push_back(pointer + ": expected " + std::to_string(expected.size()) + " elements, got " +
                    std::to_string(actual.size()));
      return;
    }
    for (std::size_t i = 0; i < expected.size(); ++i) {
      compare(expected[i], actual[i], tolerance, pointer + "/" + std::to_string(i), out);
    }
  } else if (expected != actual) {
    out.push_back(pointer + ": expected " + expected.dump() + ", got " + actual.dump());
  }
}

std::vector<std::string> scenario_names() {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(kRoot)) {
    if (entry.is_directory() && fs::exists(entry.path() / "command.json")) {
      names.push_back(entry.path().filename().string());
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

class ScenarioRegression : public ::testing::TestWithParam<std::string> {};

TEST_P(ScenarioRegression, MatchesItsRecordedResults) {
  const fs::path dir = kRoot / GetParam();
  const json command = json::parse(std::ifstream(dir / "command.json"));
  const double tolerance = command.value("tolerance", 1e-9);
  std::vector<std::string> args = command.at("args").get<std::vector<std::string>>();
  const std::string out = cli::testing::temp_path(GetParam() + ".json");
  args.push_back("--json");
  args.push_back(out);
  const auto run = cli::testing::run_strait(args);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  json actual = cli::testing::read_json(out);
  drop_wall_clock(actual);
  const fs::path expected_path = dir / "expected.json";
  if (const char* record = std::getenv("STRAIT_RECORD");
      record != nullptr && std::string(record) == "1") {
    std::ofstream(expected_path) << actual.dump(2) << "\n";
    GTEST_SKIP() << "recorded " << expected_path;
  }
  ASSERT_TRUE(fs::exists(expected_path))
      << "no " << expected_path << ": record it with STRAIT_RECORD=1";
  const json expected = json::parse(std::ifstream(expected_path));
  std::vector<std::string> differences;
  compare(expected, actual, tolerance, "", differences);
  std::string report;
  for (std::size_t i = 0; i < differences.size() && i < 20; ++i) report += "\n  " + differences[i];
  EXPECT_TRUE(differences.empty())
      << differences.size() << " differences (tolerance " << tolerance << "):" << report;
}

INSTANTIATE_TEST_SUITE_P(Bundled, ScenarioRegression, ::testing::ValuesIn(scenario_names()),
                         [](const auto& param_info) {
                           std::string name = param_info.param;
                           for (char& c : name) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace strait::scenarios
