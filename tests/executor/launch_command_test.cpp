// strait plan --launch, then strait exec LAUNCH.json: the launch plan names its job, and the
// executor refuses a launch plan that does not match what it would run.

#include <cstdlib>
#include <filesystem>
#include <utility>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "mpirun.hpp"
#include "strait_process.hpp"

namespace strait::cli::testing {
namespace {

namespace fs = std::filesystem;

// A copy of the dlrm-tiny-cpu scenario and its files in a fresh folder, so a test can
// edit them; returns the scenario's path.
std::string copy_scenario(const std::string& folder) {
  fs::create_directories(folder);
  const fs::path root = STRAIT_SOURCE_DIR;
  const std::pair<const char*, const char*> parts[] = {
      {"clusters/localhost-cpu.json", "cluster.json"},
      {"models/dlrm-tiny.json", "model.json"},
      {"data/dlrm-tiny.json", "data.json"},
      {"plans/dlrm-tiny-cpu.json", "plan.json"}};
  for (const auto& [from, to] : parts) {
    fs::copy_file(root / "configs" / from, fs::path(folder) / to,
                  fs::copy_options::overwrite_existing);
  }
  const auto scenario = folder + "/scenario.json";
  write_text(scenario, R"({"name": "tiny", "cluster": "cluster.json", "model": "model.json",
    "data": "data.json", "plan": "plan.json", "steps": 2, "seed": 3})");
  return scenario;
}

// Plans `scenario` for a second and writes its launch plan to `launch`.
void plan_launch(const std::string& scenario, const std::string& launch) {
  const auto r = run_strait({"plan", scenario, "--budget", "1s", "--launch", launch});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
}

TEST(LaunchCommand, TheLaunchPlanNamesItsJobRelativeToItself) {
  const auto folder = temp_path("job");
  const auto scenario = copy_scenario(folder);
  fs::create_directories(folder + "/out");
  const auto launch = folder + "/out/launch.json";
  plan_launch(scenario, launch);
  const auto doc = read_json(launch);
  const auto& job = doc["job"];
  EXPECT_EQ(job["cluster"], "../cluster.json");
  EXPECT_EQ(job["model"], "../model.json");
  EXPECT_EQ(job["data"], "../data.json");
  // The steps the planner simulated the plan for: the scenario's 2, or two steady steps
  // past the warm-up (1) and the drain (pipeline depth - 1).
  const Json::json_pointer depth_key("/schedule/pipeline_depth");
  const int depth = job["plan"].contains(depth_key) ? job["plan"][depth_key].get<int>() : 1;
  EXPECT_EQ(job["steps"], std::max(2, depth + 2));
  EXPECT_EQ(job["seed"], 3);
  EXPECT_EQ(job["name"], "tiny");
  ASSERT_TRUE(job["plan"].is_object());
}

TEST(LaunchCommand, RefusesALaunchPlanWhoseModelChangedSincePlanning) {
  const auto folder = temp_path("changed");
  const auto scenario = copy_scenario(folder);
  const auto launch = folder + "/launch.json";
  plan_launch(scenario, launch);
  // One more row in one table changes the fingerprint.
  auto model = read_json(folder + "/model.json");
  model["embedding"]["tables"][0]["rows"] = model["embedding"]["tables"][0]["rows"].get<int>() + 1;
  write_text(folder + "/model.json", model.dump());
  const auto r = run_strait({"exec", launch});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(contains(r.err, launch + ": /fingerprint: the launch plan was made for fnv1a64:"));
  EXPECT_TRUE(contains(r.err, "re-run strait plan"));
}

TEST(LaunchCommand, RefusesALaunchPlanWhoseProcessGroupsDiffer) {
  const auto folder = temp_path("groups");
  const auto scenario = copy_scenario(folder);
  const auto launch = folder + "/launch.json";
  plan_launch(scenario, launch);
  auto doc = read_json(launch);
  doc["process_groups"]["all"] = {1, 0};
  write_text(launch, doc.dump());
  const auto r = run_strait({"exec", launch});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(contains(r.err,
                       "/process_groups/all: expected ranks [0, 1] for group 'all', got "
                       "[1, 0]"));
}

TEST(LaunchCommand, RefusesAScenarioThatIsNotTheLaunchPlansJob) {
  const auto folder = temp_path("other");
  const auto launch = folder + "/launch.json";
  fs::create_directories(folder);
  plan_launch("configs/scenarios/dlrm-tiny-cpu.json", launch);
  const auto r = run_strait({"exec", "configs/scenarios/hstu-tiny-cpu.json", "--launch", launch});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(contains(r.err, launch + ": /fingerprint: the launch plan was made for"));
}

TEST(LaunchCommand, RefusesALaunchPlanWithoutAJob) {
  const auto folder = temp_path("nojob");
  const auto launch = folder + "/launch.json";
  fs::create_directories(folder);
  plan_launch("configs/scenarios/dlrm-tiny-cpu.json", launch);
  auto doc = read_json(launch);
  doc.erase("job");
  write_text(launch, doc.dump());
  const auto r = run_strait({"exec", launch});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(contains(r.err, "expected a \"job\" object"));
}

// Issue 11: the launch plan `strait plan` wrote runs under mpirun as it is.
TEST(LaunchCommand, ExecRunsTheLaunchPlanThePlannerWrote) {
  if (!have_mpirun()) GTEST_SKIP() << "MPI is not installed (scripts/setup.sh installs it)";
  const auto folder = temp_path("run");
  const auto scenario = copy_scenario(folder);
  const auto launch = folder + "/launch.json";
  plan_launch(scenario, launch);
  const auto out = folder + "/measured.json";
  const auto log = folder + "/exec.log";
  ASSERT_EQ(mpirun(2, fmt::format("{} --out {}", launch, out), log), 0) << read_text(log);
  const auto fingerprint = read_json(launch)["fingerprint"].get<std::string>();
  const auto measured = read_json(out);
  EXPECT_EQ(measured["launch_plan"]["fingerprint"], fingerprint);
  EXPECT_EQ(measured["steps"], read_json(launch)["job"]["steps"]);
  EXPECT_TRUE(contains(read_text(log), fmt::format("fingerprint {} matches", fingerprint)));
}

}  // namespace
}  // namespace strait::cli::testing
