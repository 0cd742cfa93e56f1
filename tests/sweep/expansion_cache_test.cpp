// ExpansionCache and the reuse of an expansion across points that differ only in the
// network's performance: the key, building once per key, and, on every bundled training
// scenario in both network modes, a replay of the base scenario's expansion on a cluster
// whose every link has another bandwidth and latency giving exactly the report of a run
// from scratch.

#include "sweep/detail/expansion_cache.hpp"

#include <atomic>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <thread>

#include <gtest/gtest.h>

#include "sim/cost/profile_set.hpp"
#include "sim/run/training_report_json.hpp"
#include "sim/run/training_run.hpp"
#include "strait_process.hpp"
#include "sweep/scenario_edit.hpp"
#include "sweep/sweep.hpp"
#include "sweep_test_support.hpp"

namespace strait::sweep::detail {
namespace {

namespace fs = std::filesystem;
using sim::network::NetworkMode;
using sim::run::TrainingExpansion;

const std::string kProfiles = std::string(STRAIT_SOURCE_DIR) + "/configs/profiles";

TEST(ExpansionCache, NetworkOnlyEditsAreALinksBandwidthOrLatency) {
  EXPECT_TRUE(ExpansionCache::network_only({"cluster", "/cross_dc/0/bandwidth", {}}));
  EXPECT_TRUE(ExpansionCache::network_only({"cluster", "/cross_dc/2/latency", {}}));
  EXPECT_TRUE(ExpansionCache::network_only({"cluster", "/defaults/host/nvlink/bandwidth", {}}));
  EXPECT_TRUE(ExpansionCache::network_only({"cluster", "/defaults/link_latency", {}}));
  EXPECT_FALSE(ExpansionCache::network_only({"cluster", "/cross_dc/0/count", {}}));
  EXPECT_FALSE(ExpansionCache::network_only({"cluster", "/defaults/host/gpus", {}}));
  EXPECT_FALSE(ExpansionCache::network_only({"model", "/bandwidth", {}}));
  EXPECT_FALSE(ExpansionCache::network_only({"scenario", "/latency", {}}));
}

TEST(ExpansionCache, TheKeyLeavesOutNetworkOnlyEdits) {
  const Edit steps{"scenario", "/steps", 2};
  const Edit wan{"cluster", "/cross_dc/0/bandwidth", "100 Gb/s"};
  const Edit slower{"cluster", "/cross_dc/0/bandwidth", "10 Gb/s"};
  const Edit batch{"data", "/batch_size/per_rank", 512};
  EXPECT_EQ(ExpansionCache::key({steps, wan}), ExpansionCache::key({steps, slower}));
  EXPECT_EQ(ExpansionCache::key({steps, wan}), ExpansionCache::key({steps}));
  EXPECT_NE(ExpansionCache::key({steps, wan}), ExpansionCache::key({steps, batch, wan}));
  EXPECT_NE(ExpansionCache::key({{"scenario", "/steps", 3}}), ExpansionCache::key({steps}));
}

TrainingExpansion empty_expansion() { return TrainingExpansion(NetworkMode::kAnalytical, false); }

TEST(ExpansionCache, BuildsOncePerKeyAndKeepsTheLastUsed) {
  ExpansionCache cache(2);
  int builds = 0;
  const auto build = [&] {
    ++builds;
    return empty_expansion();
  };
  const auto a = cache.get("a", build);
  EXPECT_EQ(cache.get("a", build), a);
  EXPECT_EQ(builds, 1);
  cache.get("b", build);
  cache.get("a", build);  // a is now the last used, b the one before
  cache.get("c", build);  // evicts b
  EXPECT_EQ(builds, 3);
  EXPECT_EQ(cache.get("a", build), a);
  cache.get("b", build);
  EXPECT_EQ(builds, 4);
}

TEST(ExpansionCache, ThreadsAskingForOneKeyShareOneBuild) {
  ExpansionCache cache;
  std::atomic<int> builds{0};
  const auto build = [&] {
    ++builds;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    return empty_expansion();
  };
  ExpansionCache::Expansion first, second;
  std::thread t([&] { first = cache.get("k", build); });
  second = cache.get("k", build);
  t.join();
  EXPECT_EQ(builds.load(), 1);
  EXPECT_EQ(first, second);
}

TEST(ExpansionCache, ABuildThatFailsFailsEveryPointOfItsKey) {
  ExpansionCache cache;
  const auto fail = []() -> TrainingExpansion { throw Error("no such plan"); };
  EXPECT_THROW(cache.get("k", fail), Error);
  EXPECT_THROW(cache.get("k", [] { return empty_expansion(); }), Error);
}

// Every link bandwidth and latency of a cluster document, as edits to other values.
void network_edits(const Json& value, const std::string& pointer, std::vector<Edit>& out) {
  if (value.is_object()) {
    for (const auto& [key, child] : value.items()) {
      const std::string at = pointer + "/" + key;
      if (key == "bandwidth" && child.is_string()) {
        out.push_back({"cluster", at, "37 GB/s"});
      } else if ((key == "latency" || key == "link_latency") && child.is_string()) {
        out.push_back({"cluster", at, "7 us"});
      } else {
        network_edits(child, at, out);
      }
    }
  } else if (value.is_array()) {
    for (std::size_t i = 0; i < value.size(); ++i)
      network_edits(value[i], pointer + "/" + std::to_string(i), out);
  }
}

Json load(const fs::path& path) {
  std::ifstream in(path);
  return Json::parse(in);
}

Json without_wall_times(Json report) {
  report.erase("build_wall_s");
  report.erase("sim_wall_s");
  return report;
}

TEST(ExpansionReuse, ReplaysAsARunFromScratchOnEveryBundledScenario) {
  const sim::cost::CostModel profiles(sim::cost::load_profile_dir(kProfiles));
  int scenarios = 0;
  for (const auto& entry :
       fs::directory_iterator(fs::path(STRAIT_SOURCE_DIR) / "configs/scenarios")) {
    const auto name = entry.path().stem().string();
    // Collectives only; and the 16k and 131k GPU jobs, minutes each (bench/README.md).
    if (name == "collectives-3dc" || name == "hstu-16k-4dc" || name == "hstu-131k-4dc") continue;
    const Document scenario{load(entry.path()), entry.path().string()};
    const std::vector<Edit> two_steps = {{"scenario", "/steps", 2}};
    const auto base = edit_scenario(scenario, {}, two_steps);
    std::vector<Edit> edits = two_steps;
    network_edits(base.parts.cluster.json(), "", edits);
    ASSERT_GT(edits.size(), 1u) << name;
    const auto edited_configs = edit_scenario(scenario, {}, edits);
    const auto expanded = sim::workload::TrainingScenario::from_config(base.scenario, base.parts);
    const auto edited =
        sim::workload::TrainingScenario::from_config(edited_configs.scenario, edited_configs.parts);
    for (const auto mode : {NetworkMode::kAnalytical, NetworkMode::kFlow}) {
      sim::run::TrainingRunOptions options;
      options.mode = mode;
      const auto expansion = sim::run::expand_training(expanded, profiles, options);
      const auto reused = sim::run::run_training(expansion, edited, profiles, options);
      const auto fresh = sim::run::run_training(edited, profiles, options);
      EXPECT_EQ(without_wall_times(sim::run::training_report_json(reused)),
                without_wall_times(sim::run::training_report_json(fresh)))
          << name << " in " << sim::network::to_string(mode) << " mode";
    }
    ++scenarios;
  }
  EXPECT_GE(scenarios, 12);
}

TEST(ExpansionReuse, IsRefusedForAnotherModeOrATimeline) {
  const auto scenario = sim::workload::TrainingScenario::load(std::string(STRAIT_SOURCE_DIR) +
                                                              "/configs/scenarios/dlrm-1gpu.json");
  const sim::cost::CostModel profiles(sim::cost::load_profile_dir(kProfiles));
  sim::run::TrainingRunOptions analytical;
  analytical.mode = NetworkMode::kAnalytical;
  const auto expansion = sim::run::expand_training(scenario, profiles, analytical);
  sim::run::TrainingRunOptions flow;
  flow.mode = NetworkMode::kFlow;
  EXPECT_THROW(sim::run::run_training(expansion, scenario, profiles, flow), Error);
}

// A sweep over the NVLink bandwidth (every point one expansion) writes the same rows with
// and without reuse.
TEST(ExpansionReuse, ASweepWritesTheSameRowsWithAndWithout) {
  const auto spec = SweepSpec::from_config(
      ConfigNode(Json::parse(R"({
        "scenario": "../scenarios/dlrm-8gpu.json", "set": {"/scenario/steps": 2},
        "axes": [{"name": "nvlink_gbs", "pointer": "/cluster/defaults/host/nvlink/bandwidth",
                  "unit": "GB/s", "values": [50, 100, 450]},
                 {"name": "batch", "pointer": "/data/batch_size/per_rank", "values": [256, 512]}]})"),
                 std::string(STRAIT_SOURCE_DIR) + "/configs/sweeps/test.json"));
  std::string csv[2], jsonl[2];
  for (int reuse = 0; reuse < 2; ++reuse) {
    SweepOptions o;
    o.csv_path = cli::testing::temp_path("reuse.csv");
    o.jsonl_path = cli::testing::temp_path("reuse.jsonl");
    o.threads = 2;
    o.default_profiles_dir = kProfiles;
    o.reuse_expansions = reuse == 1;
    const auto summary = run_sweep(spec, o);
    EXPECT_EQ(summary.progress.failed, 0u);
    csv[reuse] = testing::csv_without_wall_times(o.csv_path);
    jsonl[reuse] = testing::jsonl_without_wall_times(o.jsonl_path);
  }
  EXPECT_EQ(testing::lines(csv[1]).size(), 7u);
  EXPECT_EQ(csv[1], csv[0]);
  EXPECT_EQ(jsonl[1], jsonl[0]);
}

}  // namespace
}  // namespace strait::sweep::detail
