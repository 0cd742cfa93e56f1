// planner/launch_job.hpp: the job `strait exec LAUNCH.json` runs: the scenario's name,
// steps, seed and mode, the plan inline, each part by file (relative to the launch plan's
// folder) or inline, the hardware block and the profiles folder.

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "planner/launch_job.hpp"
#include "planner_test_support.hpp"
#include "sim/core/error.hpp"

namespace strait::planner {
namespace {

using namespace testing_support;

const Json kPlan = Json::parse(R"({"schedule": {"pipeline_depth": 2}})");

sim::workload::TrainingScenario two_dc_scenario() {
  return scenario_of(Json::parse(kTwoDcCluster), Json::parse(kSmallDlrm),
                     Json::parse(kSmallDlrmData), kPlan);
}

// Every part a file: paths relative to the launch plan's folder, through their absolute
// forms (/work/job/configs/x.json from /work/job/launch is ../configs/x.json).
// scenario_of reads "./scenario.json" with 1 step, seed 7, flow mode (the default).
TEST(LaunchJob, PartsByFileAreRelativeToTheLaunchPlansFolder) {
  const auto job = launch_job(two_dc_scenario(), kPlan,
                              {{"cluster", "/work/job/configs/cluster.json"},
                               {"model", "/work/job/launch/model.json"},
                               {"data", "/work/job/configs/../data/d.json"}},
                              nullptr, "/work/job/launch");
  EXPECT_EQ(job, Json::parse(R"({"name": "scenario", "steps": 1, "seed": 7, "mode": "flow",
      "plan": {"schedule": {"pipeline_depth": 2}},
      "cluster": "../configs/cluster.json", "model": "model.json", "data": "../data/d.json"})"));
}

// A part without a file is the scenario's config inline, as it was read.
TEST(LaunchJob, PartsWithoutAFileAreInline) {
  const auto job = launch_job(two_dc_scenario(), kPlan, {{"cluster", "/work/job/cluster.json"}},
                              nullptr, "/work/job");
  EXPECT_EQ(job["cluster"], "cluster.json");
  EXPECT_EQ(job["model"], Json::parse(kSmallDlrm));
  EXPECT_EQ(job["data"], Json::parse(kSmallDlrmData));
  EXPECT_FALSE(job.contains("hardware"));
  EXPECT_FALSE(job.contains("profiles"));
}

// The hardware block is copied; the profiles folder is relative like the parts.
TEST(LaunchJob, HardwareAndProfilesAreKept) {
  auto sc = two_dc_scenario();
  sc.profiles_dir = "/work/job/profiles";
  const Json hardware = Json::parse(R"({"kernel_noise_sigma": 0.1})");
  const auto job = launch_job(sc, kPlan, {}, hardware, "/work/job/launch");
  EXPECT_EQ(job["hardware"], hardware);
  EXPECT_EQ(job["profiles"], "../profiles");
}

// A scenario built from parsed parts has no config to write inline: the first part
// without a file is an error naming it.
TEST(LaunchJob, APartWithNeitherFileNorConfigIsAnError) {
  const auto req = request_of("hgx-h100-8.json", kSmallDlrm, kSmallDlrmData);
  std::string message = "no Error";
  try {
    launch_job(req.base, kPlan, {{"cluster", "/c.json"}}, nullptr, "/");
  } catch (const Error& e) {
    message = e.what();
  }
  EXPECT_EQ(message, "launch plan: the job's model has neither a file nor a config");
  const auto job =
      launch_job(req.base, kPlan,
                 {{"cluster", "/c.json"}, {"model", "/m.json"}, {"data", "/d.json"}}, nullptr, "/");
  EXPECT_EQ(job["name"], "small-dlrm");
  EXPECT_EQ(job["seed"], 7);
  EXPECT_EQ(job["data"], "d.json");
}

}  // namespace
}  // namespace strait::planner
