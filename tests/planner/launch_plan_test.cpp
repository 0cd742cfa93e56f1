// planner/launch_plan.hpp: the launch plan of a plan, field by field on two hosts of two
// GPUs, and its ranks, groups and lines on three datacenters. How each launcher places
// the ranks its lines start: planner_launch_test.cpp.

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "planner/launch_lines.hpp"
#include "planner/launch_plan.hpp"
#include "planner/plan_document.hpp"
#include "planner/torchrec_settings.hpp"
#include "planner_test_support.hpp"

namespace strait::planner {
namespace {

using namespace testing_support;

/// One datacenter "dc0" of two rail-optimized hosts of 2 GPUs with `nics` NICs each.
Json two_by_two(int nics = 2) {
  Json c = Json::parse(R"({"name": "two-by-two",
    "defaults": {"host": {"gpus": 2, "gpu_type": "H100-SXM",
                          "nvlink": {"bandwidth": "450 GB/s", "latency": "1 us"},
                          "nic": {"bandwidth": "400 Gb/s", "latency": "1 us"},
                          "pcie": {"bandwidth": "64 GB/s", "latency": "0.5 us"},
                          "rail_optimized": true},
                 "network": {"hosts_per_leaf": 16, "link_latency": "1 us"}},
    "datacenters": [{"name": "dc0", "hosts": 2}]})");
  c["defaults"]["host"]["nics"] = nics;
  return c;
}

Json launch_of(const sim::workload::TrainingScenario& sc, const Json& doc,
               const LaunchOptions& options = {}) {
  return launch_plan_json(parse_plan(doc, "plan.json", sc.model), doc, sc, options);
}

sim::workload::TrainingScenario scenario_on(const Json& cluster, const Json& plan) {
  return scenario_of(cluster, Json::parse(kSmallDlrm), Json::parse(kSmallDlrmData), plan);
}

// Ranks 0-1 on dc0/host0 (hostname dc0-host0), 2-3 on dc0/host1, each host's GPUs 0 and 1.
TEST(LaunchPlan, TwoHostsOfTwoGpusFieldByField) {
  const Json doc = Json::parse(R"({"sparse": {"group_size": 2, "placement": "host"}})");
  const auto sc = scenario_on(two_by_two(), doc);
  const Json launch = launch_of(sc, doc);
  EXPECT_EQ(launch["world_size"], 4);
  EXPECT_EQ(launch["nodes"], 2);
  EXPECT_EQ(launch["hosts"], Json::parse(R"([
      {"hostname": "dc0-host0", "host": "dc0/host0", "datacenter": "dc0", "node_rank": 0,
       "first_rank": 0, "ranks": 2, "gpus": 2},
      {"hostname": "dc0-host1", "host": "dc0/host1", "datacenter": "dc0", "node_rank": 1,
       "first_rank": 2, "ranks": 2, "gpus": 2}])"));
  EXPECT_EQ(launch["ranks"][3], Json::parse(R"({"rank": 3, "host": "dc0/host1",
      "hostname": "dc0-host1", "local_rank": 1, "gpu": 3, "datacenter": "dc0"})"));
  EXPECT_EQ(launch["ranks"][0]["local_rank"], 0);
  EXPECT_EQ(launch["process_groups"]["all"], Json::parse("[0, 1, 2, 3]"));
  EXPECT_EQ(launch["process_groups"]["sparse_mp/0"], Json::parse("[0, 1]"));
  EXPECT_EQ(launch["process_groups"]["sparse_mp/1"], Json::parse("[2, 3]"));
  EXPECT_EQ(launch["process_groups"]["sparse_mp_replica/0"], Json::parse("[0, 2]"));
  EXPECT_EQ(launch["process_groups"]["sparse_mp_replica/1"], Json::parse("[1, 3]"));
  EXPECT_EQ(launch["env"]["system"]["NCCL_CROSS_NIC"]["value"], "0");
  EXPECT_EQ(launch["env"]["tuning"], Json::object());
  EXPECT_EQ(launch["entrypoint"], kPlaceholderEntrypoint);
  const auto lines = launch_lines({{"dc0-host0", 2, 2}, {"dc0-host1", 2, 2}},
                                  {{"NCCL_CROSS_NIC", "0"}}, kPlaceholderEntrypoint);
  EXPECT_EQ(launch["launch"]["torchrun"], Json(lines.torchrun));
  EXPECT_EQ(launch["launch"]["srun"], *lines.srun);
  EXPECT_EQ(launch["launch"]["mpirun"], lines.mpirun);
  EXPECT_FALSE(launch.contains("launch_refused"));
  EXPECT_EQ(launch["files"],
            Json::parse(R"({"hostfile.txt": "dc0-host0 slots=2\ndc0-host1 slots=2\n"})"));
  EXPECT_EQ(launch["torchrec"], torchrec_settings(sc.plan, sc.model));
  EXPECT_EQ(launch["notes"].size(), 2u);
  EXPECT_EQ(launch["fingerprint"], fingerprint(sc, doc));
}

// NCCL_CROSS_NIC is set only where every host is rail-optimized with several NICs.
TEST(LaunchPlan, OneNicPerHostSetsNoEnvironment) {
  const auto sc = scenario_on(two_by_two(1), Json::object());
  const Json launch = launch_of(sc, Json::object());
  EXPECT_EQ(launch["env"], Json::parse(R"({"system": {}, "tuning": {}})"));
  EXPECT_EQ(launch["launch"]["mpirun"],
            "mpirun -np 4 --hostfile hostfile.txt --map-by slot --bind-to none python " +
                std::string(kPlaceholderEntrypoint));
}

// The notes say what the program must do: SM-free communication and hierarchical sync add
// one note each; a scenario without configs says what its fingerprint covers.
TEST(LaunchPlan, NotesSayWhatTheProgramMustDo) {
  const Json doc = Json::parse(R"({"schedule": {"sm_free_comm": true,
                                                "cross_dc_sync": "hierarchical"}})");
  const Json launch = launch_of(scenario_on(two_by_two(), doc), doc, {"-m trainer"});
  ASSERT_EQ(launch["notes"].size(), 4u);
  EXPECT_NE(launch["notes"][2].get<std::string>().find("NCCL_CTA_POLICY_ZERO"), std::string::npos);
  EXPECT_NE(launch["notes"][3].get<std::string>().find("hierarchical cross-datacenter sync"),
            std::string::npos);
  EXPECT_EQ(launch["entrypoint"], "-m trainer");

  const auto req = request_of(two_by_two().dump(), kSmallDlrm, kSmallDlrmData);
  const Json bare = launch_plan_json(req.base.plan, Json::object(), req.base);
  ASSERT_EQ(bare["notes"].size(), 3u);
  EXPECT_EQ(bare["notes"][2],
            "the fingerprint covers the plan document only: the cluster, model and data were not "
            "read from config files");
}

// Launch plan on the three-datacenter test cluster (48 GPUs): 6 nodes of 8, the groups of
// the layout, and a fingerprint that changes with the plan.
TEST(LaunchPlan, ListsRanksGroupsAndLinesOnThreeDatacenters) {
  const auto req = request_of(kThreeDc, kSmallDlrm, kSmallDlrmData);
  const Json doc = Json::parse(R"({"sparse": {"group_size": 16, "placement": "datacenter"}})");
  const auto plan = parse_plan(doc, "plan.json", req.base.model);
  const Json launch = launch_plan_json(plan, doc, req.base);
  EXPECT_EQ(launch["world_size"], 48);
  EXPECT_EQ(launch["nodes"], 6);
  EXPECT_EQ(launch["ranks"][17]["local_rank"], 1);
  EXPECT_EQ(launch["ranks"][17]["datacenter"], "b");
  EXPECT_EQ(launch["process_groups"]["sparse_mp/1"].size(), 16u);
  EXPECT_EQ(launch["process_groups"]["sparse_mp_replica/0"], Json::parse("[0, 16, 32]"));
  EXPECT_EQ(launch["launch"]["torchrun"].size(), 6u);
  EXPECT_NE(launch["launch"]["torchrun"][1].get<std::string>().find("--node-rank=1"),
            std::string::npos);
  EXPECT_NE(fingerprint(req.base, doc), fingerprint(req.base, Json::object()));
  EXPECT_EQ(fingerprint(req.base, doc), launch["fingerprint"]);
}

}  // namespace
}  // namespace strait::planner
