// scenario_edit.hpp: a pointer's edit of a scenario's documents, as sweeps and the Python
// module make them. The scenario is an inline one (its file named only for errors) and the
// bundled configs/scenarios/dlrm-8gpu.json with its part files.

#include <string>

#include <gtest/gtest.h>

#include "sim/core/error.hpp"
#include "sweep/scenario_edit.hpp"

namespace strait::sweep {
namespace {

const EditSource kSource{"where.json", "/set/x"};
const std::string kScenarioFile =
    std::string(STRAIT_SOURCE_DIR) + "/configs/scenarios/dlrm-8gpu.json";

// The ConfigError message that `f` throws, or "" when it throws none.
template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(ScenarioEdit, APointerSplitsIntoItsPartAndThePointerInsideIt) {
  const Edit e = parse_edit("/cluster/cross_dc/0/bandwidth", kSource);
  EXPECT_EQ(e.part, "cluster");
  EXPECT_EQ(e.pointer, "/cross_dc/0/bandwidth");
  EXPECT_FALSE(picks_part(e));
  EXPECT_TRUE(picks_part(parse_edit("/scenario/plan", kSource)));
  EXPECT_FALSE(picks_part(parse_edit("/scenario/steps", kSource)));
}

TEST(ScenarioEdit, ABadPointerIsAConfigErrorAtItsSource) {
  EXPECT_EQ(error_of([] { parse_edit("/nowhere/x", kSource); }),
            "where.json: /set/x: expected a JSON pointer starting with /scenario, /cluster, "
            "/model, /data or /plan, got '/nowhere/x'");
  EXPECT_EQ(error_of([] { parse_edit("/model", kSource); }),
            "where.json: /set/x: expected a pointer to a key inside /model, got '/model'");
  EXPECT_EQ(error_of([] { parse_edit("/scenario/plan/schedule", kSource); }),
            "where.json: /set/x: edit the plan through /plan/schedule rather than "
            "/scenario/plan...");
}

TEST(ScenarioEdit, OnlyTheLastKeyOfATargetMayBeNew) {
  const Json doc = Json::parse(R"({"a": {"b": 1}, "list": [1, 2]})");
  auto check = [&](const std::string& text) {
    return error_of([&] { check_edit_target(parse_edit(text, kSource), doc, "c.json", kSource); });
  };
  EXPECT_EQ(check("/cluster/a/new"), "");
  EXPECT_EQ(check("/cluster/list/1"), "");
  EXPECT_EQ(check("/cluster/a/b/c"),
            "where.json: /set/x: /cluster/a/b/c does not lead into c.json (its parent '/a/b' "
            "must exist)");
  EXPECT_EQ(check("/cluster/list/2"),
            "where.json: /set/x: /cluster/list/2 does not lead into c.json (its parent '/list' "
            "must exist and the index be in range)");
}

TEST(ScenarioEdit, EditsGoToTheScenarioAndToThePartFilesItNames) {
  const Document scenario{load_config(kScenarioFile).json(), kScenarioFile};
  Edit steps = parse_edit("/scenario/steps", kSource);
  steps.value = 2;
  Edit nvlink = parse_edit("/cluster/defaults/host/nvlink/bandwidth", kSource);
  nvlink.value = "300 GB/s";
  const auto edited = edit_scenario(scenario, {}, {steps, nvlink});
  EXPECT_EQ(edited.scenario.json().at("steps"), 2);
  EXPECT_EQ(edited.parts.cluster.file(),
            std::string(STRAIT_SOURCE_DIR) + "/configs/clusters/hgx-h100-8.json");
  EXPECT_EQ(edited.parts.cluster.json()["defaults"]["host"]["nvlink"]["bandwidth"], "300 GB/s");
  EXPECT_EQ(edited.parts.model.file(),
            std::string(STRAIT_SOURCE_DIR) + "/configs/models/dlrm-v2.json");
  // The documents given are the base: they stay as they were.
  EXPECT_EQ(scenario.json.at("steps"), 5);
}

TEST(ScenarioEdit, AnInlinePartIsEditedInPlaceAndNamesTheScenarioFile) {
  const Document scenario{Json::parse(R"({"cluster": {"name": "c", "nodes": 1}})"), "s.json"};
  Edit nodes = parse_edit("/cluster/nodes", kSource);
  nodes.value = 4;
  const ConfigNode node = edited_scenario_node(scenario, {nodes});
  const ConfigNode cluster = edited_part(node, {}, {nodes}, "cluster");
  EXPECT_EQ(cluster.file(), "s.json");
  EXPECT_EQ(cluster.json().at("nodes"), 4);
}

TEST(ScenarioEdit, APartFileThatDoesNotExistIsRefused) {
  EXPECT_EQ(error_of([] {
              part_file_path("plan", "../plans/no-such.json", "configs/scenarios/s.json", kSource);
            }),
            "where.json: /set/x: plan file 'configs/plans/no-such.json' does not exist");
  EXPECT_EQ(error_of([] { part_file_path("plan", 3, "configs/scenarios/s.json", kSource); }),
            "where.json: /set/x: expected the path of a plan file or an inline object");
  EXPECT_EQ(part_file_path("plan", Json::object(), "s.json", kSource), "");
  const ConfigNode node(Json::parse(R"({"plan": "no-such.json"})"), "configs/scenarios/s.json");
  EXPECT_EQ(error_of([&] { edited_part(node, {}, {}, "plan"); }),
            "configs/scenarios/s.json: /plan: plan file 'configs/scenarios/no-such.json' does not "
            "exist");
}

}  // namespace
}  // namespace strait::sweep
