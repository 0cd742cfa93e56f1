// strait plan --entrypoint: what the launch plan's lines run. On the tiny CPU scenario
// (configs/scenarios/dlrm-tiny-cpu.json, 2 ranks on one host), 2 final-mode evaluations a
// run: every launcher line (torchrun, srun, mpirun) ends with the entrypoint in its form
// (planner/launch_lines.hpp), and the report says when the lines run the placeholder; the
// report's search summary carries the closed form's rank correlation.

#include <cstdio>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "strait_process.hpp"

namespace strait::cli::testing {
namespace {

using nlohmann::json;

constexpr const char* kTinyCpu = "configs/scenarios/dlrm-tiny-cpu.json";
constexpr const char* kPlaceholder = "train.py --plan plan.json --launch launch.json";
constexpr const char* kNotice = "launch lines run the placeholder entrypoint";

// `strait plan` on the tiny scenario with `options`, its launch plan written to a file.
struct PlanRun {
  StraitRun run;
  json launch;
};

PlanRun plan_with(const std::vector<std::string>& options) {
  const auto launch = temp_path("launch.json");
  std::vector<std::string> args = {"plan", kTinyCpu, "--evaluations", "2", "--launch", launch};
  args.insert(args.end(), options.begin(), options.end());
  PlanRun out{run_strait(args), json()};
  EXPECT_EQ(out.run.exit_code, 0) << out.run.err;
  if (out.run.exit_code == 0) out.launch = read_json(launch);
  return out;
}

// Each launcher line's text, named by launcher (one torchrun line per host).
std::vector<std::pair<std::string, std::string>> launcher_lines(const json& launch) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& line : launch["launch"]["torchrun"]) out.emplace_back("torchrun", line);
  out.emplace_back("srun", launch["launch"]["srun"]);
  out.emplace_back("mpirun", launch["launch"]["mpirun"]);
  return out;
}

// The times `part` occurs in `text`.
std::size_t count(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

// A command that names its Python: torchrun runs it under --no-python, srun and mpirun as
// given; the report says nothing of a placeholder.
TEST(CliPlanEntrypoint, ReachesEveryLauncherLine) {
  const std::string command = "python -m my_trainer --config c.yaml";
  const auto r = plan_with({"--entrypoint", command});
  ASSERT_TRUE(r.launch.is_object());
  EXPECT_EQ(r.launch["entrypoint"], command);
  const auto lines = launcher_lines(r.launch);
  ASSERT_EQ(lines.size(), 3u);  // one host: one torchrun line
  for (const auto& [launcher, line] : lines) {
    const std::string tail = launcher == "torchrun" ? " --no-python " + command : " " + command;
    EXPECT_TRUE(line.ends_with(tail)) << launcher << ": " << line;
    EXPECT_EQ(count(line, "my_trainer"), 1u) << line;
  }
  EXPECT_FALSE(contains(r.run.out + r.run.err, "placeholder"));
}

// A script (torchrun's own form) keeps "python" before it under srun and mpirun.
TEST(CliPlanEntrypoint, AScriptRunsWithPythonUnderSrunAndMpirun) {
  const auto r = plan_with({"--entrypoint", "my_train.py --epochs 2"});
  ASSERT_TRUE(r.launch.is_object());
  for (const auto& [launcher, line] : launcher_lines(r.launch)) {
    const std::string tail = launcher == "torchrun" ? " --master-port=29500 my_train.py --epochs 2"
                                                    : " python my_train.py --epochs 2";
    EXPECT_TRUE(line.ends_with(tail)) << launcher << ": " << line;
  }
}

// Without one, the lines run the placeholder and the report says so in one line, naming the
// option that replaces it, before the "wrote" lines.
TEST(CliPlanEntrypoint, WithoutOneTheReportNamesThePlaceholderOnce) {
  const auto r = plan_with({});
  ASSERT_TRUE(r.launch.is_object());
  EXPECT_EQ(r.launch["entrypoint"], kPlaceholder);
  for (const auto& [launcher, line] : launcher_lines(r.launch))
    EXPECT_TRUE(line.ends_with(kPlaceholder)) << launcher << ": " << line;
  EXPECT_EQ(count(r.run.out, kNotice), 1u) << r.run.out;
  const auto at = r.run.out.find(kNotice);
  const auto line = r.run.out.substr(at, r.run.out.find('\n', at) - at);
  EXPECT_TRUE(contains(line, std::string("\"") + kPlaceholder + "\""));
  EXPECT_TRUE(contains(line, "--entrypoint \""));
  EXPECT_LT(at, r.run.out.find("wrote "));
}

TEST(CliPlanEntrypoint, NoNoticeWithoutALaunchPlan) {
  const auto run = run_strait({"plan", kTinyCpu, "--evaluations", "2"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_FALSE(contains(run.out + run.err, "placeholder"));
}

// --program, the old name, still works and says it is deprecated in the help.
TEST(CliPlanEntrypoint, ProgramIsItsDeprecatedName) {
  const auto r = plan_with({"--program", "old.py"});
  ASSERT_TRUE(r.launch.is_object());
  EXPECT_EQ(r.launch["entrypoint"], "old.py");
  EXPECT_TRUE(r.launch["launch"]["mpirun"].get<std::string>().ends_with(" python old.py"));
  EXPECT_FALSE(contains(r.run.out, kNotice));

  const auto help = run_strait({"plan", "--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_TRUE(contains(help.out, "--program arg"));
  EXPECT_TRUE(contains(help.out, "deprecated name of --entrypoint"));
}

TEST(CliPlanEntrypoint, BothNamesOrABlankOneAreUsageErrors) {
  auto run = run_strait({"plan", kTinyCpu, "--entrypoint", "a.py", "--program", "b.py"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.err,
            "strait: plan: --entrypoint and --program (its deprecated name) exclude each other\n");
  run = run_strait({"plan", kTinyCpu, "--entrypoint", " "});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_TRUE(contains(run.err, "plan: --entrypoint: expected a command such as")) << run.err;
}

// The search summary says how well the closed form ranked the candidates it shares with
// an analytical simulation, with the JSON report's figures: Spearman's rho to two decimals
// over that many candidates (2 evaluations allow 16 analytical runs, so there are pairs).
TEST(CliPlanReport, SaysTheClosedFormsRankCorrelationAsTheJsonDoes) {
  const auto path = temp_path("outcome.json");
  const auto run = run_strait({"plan", kTinyCpu, "--evaluations", "2", "--json", path});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const json search = read_json(path)["search"];
  ASSERT_TRUE(search["closed_form_rank_correlation"].is_number()) << search.dump();
  const double rho = search["closed_form_rank_correlation"];
  const int pairs = search["rank_pairs"];
  EXPECT_GE(pairs, 3);
  char line[128];
  std::snprintf(line, sizeof line,
                "  closed form vs analytical: Spearman %.2f over %d candidates\n", rho, pairs);
  EXPECT_TRUE(contains(run.out, line));
}

}  // namespace
}  // namespace strait::cli::testing
