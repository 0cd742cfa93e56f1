// Mutated inputs, run as a user would: every outcome is a result or a clean error.
//
// Bundled scenarios are written as one file (cluster, model, data and plan inline), then
// mutated a few hundred times with a fixed seed: a key deleted, a value replaced by a
// wrong type, an extreme or fractional number, a bare number where a quantity is meant, a
// quantity past its range, a long string, or the file cut short. Each mutant runs under
// `strait simulate` with a time limit. The test fails if a run is killed by a signal, runs
// past its limit, prints "internal error", or fails without naming the file it read.

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "strait_process.hpp"

namespace strait::cli::testing {
namespace {

using nlohmann::json;

constexpr int kMutantsPerScenario = 100;
constexpr int kTimeLimitSeconds = 60;

// A scenario with its parts read in: one self-contained file to mutate.
json inline_scenario(const std::string& name) {
  const std::string dir = std::string(STRAIT_SOURCE_DIR) + "/configs/scenarios/";
  json doc = read_json(dir + name + ".json");
  for (const char* part : {"cluster", "model", "data", "plan"})
    doc[part] = read_json(dir + doc[part].get<std::string>());
  doc["steps"] = 2;  // enough for every path; the mutants stay quick
  doc["mode"] = "analytical";
  return doc;
}

// Every JSON pointer in `doc` (its root excluded).
void pointers(const json& doc, const std::string& at, std::vector<std::string>& out) {
  if (doc.is_object()) {
    for (const auto& [key, value] : doc.items()) {
      out.push_back(at + "/" + key);
      pointers(value, at + "/" + key, out);
    }
  } else if (doc.is_array()) {
    for (std::size_t i = 0; i < doc.size(); ++i) {
      out.push_back(at + "/" + std::to_string(i));
      pointers(doc[i], at + "/" + std::to_string(i), out);
    }
  }
}

// The values a mutation puts in place of one: wrong types, extremes, fractions, quantities
// without or past their units' range.
std::vector<json> replacements() {
  return {json(nullptr),
          json(true),
          json(""),
          json("furlongs"),
          json(std::string(10000, 'x')),
          json::array(),
          json::object(),
          json(-1),
          json(0),
          json(1.5),
          json(25),
          json(1e308),
          json(-1e308),
          json(4294967298LL),
          json(2147483648LL),
          json(9223372036854775807LL),
          json("1e300 s"),
          json("-5 GB/s"),
          json("1e-300 GB/s"),
          json("0 B"),
          json("64 MiB"),
          json("2 us")};
}

struct Mutant {
  std::string text;
  std::string what;  // for the failure message
};

std::vector<Mutant> mutants(const json& base, std::mt19937_64& rng) {
  std::vector<std::string> at;
  pointers(base, "", at);
  const auto values = replacements();
  std::vector<Mutant> out;
  const std::string text = base.dump(2);
  for (int i = 0; i < kMutantsPerScenario; ++i) {
    const int kind = static_cast<int>(rng() % 10);
    if (kind == 0) {  // the file cut short
      const std::size_t cut = rng() % text.size();
      out.push_back({text.substr(0, cut), fmt::format("cut at byte {}", cut)});
      continue;
    }
    const std::string pointer = at[rng() % at.size()];
    json doc = base;
    const json::json_pointer p(pointer);
    if (kind == 1) {  // a key or element deleted
      doc[p.parent_pointer()].is_object()
          ? static_cast<void>(doc[p.parent_pointer()].erase(p.back()))
          : doc[p.parent_pointer()].erase(std::stoul(p.back()));
      out.push_back({doc.dump(2), "deleted " + pointer});
      continue;
    }
    const json& v = values[rng() % values.size()];
    doc[p] = v;
    out.push_back({doc.dump(2), fmt::format("{} = {}", pointer, v.dump().substr(0, 40))});
  }
  return out;
}

class Fuzz : public ::testing::TestWithParam<std::string> {};

TEST_P(Fuzz, EveryMutantIsAResultOrACleanError) {
  std::mt19937_64 rng(20261127);  // fixed: the same mutants on every machine
  const json base = inline_scenario(GetParam());
  int results = 0, errors = 0;
  for (const Mutant& m : mutants(base, rng)) {
    const std::string file = temp_path("mutant.json");
    write_text(file, m.text);
    const auto run = run_strait({"simulate", file}, kTimeLimitSeconds);
    const std::string where = m.what + "\n" + run.err.substr(0, 400);
    ASSERT_NE(run.exit_code, kTimedOut) << "ran past " << kTimeLimitSeconds << " s: " << where;
    ASSERT_TRUE(run.exit_code == 0 || run.exit_code == 1 || run.exit_code == 2)
        << "exit " << run.exit_code << " (a signal?): " << where;
    EXPECT_EQ(run.err.find("internal error"), std::string::npos) << where;
    if (run.exit_code == 0) {
      ++results;
    } else {
      ++errors;
      EXPECT_TRUE(starts_with(run.err, "strait: error: " + file + ": ")) << where;
    }
    std::remove(file.c_str());
  }
  // Most mutants are refused, some still run (a value that stays valid).
  EXPECT_GT(errors, kMutantsPerScenario / 2);
  EXPECT_GT(results, 0);
}

INSTANTIATE_TEST_SUITE_P(Bundled, Fuzz, ::testing::Values("dlrm-8gpu", "hstu-1gpu", "dlrm-1gpu"),
                         [](const auto& param_info) {
                           std::string name = param_info.param;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

}  // namespace
}  // namespace strait::cli::testing
