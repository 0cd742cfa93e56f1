// SweepSpec: how a sweep file becomes points (product order, ranges, groups, samples,
// filters, units) and how its mistakes are reported (file, JSON pointer, expectation).
// The base scenario is configs/scenarios/dlrm-8gpu.json (one HGX host, 8 GPUs).

#include <set>
#include <string>

#include <gtest/gtest.h>

#include "sim/core/error.hpp"
#include "sweep/sweep_spec.hpp"

namespace strait::sweep {
namespace {

const std::string kSweepFile = std::string(STRAIT_SOURCE_DIR) + "/configs/sweeps/test.json";

// A sweep over the bundled 8-GPU scenario; `body` holds the keys after "scenario".
SweepSpec spec_of(const std::string& body) {
  return SweepSpec::from_config(ConfigNode(
      Json::parse(R"({"scenario": "../scenarios/dlrm-8gpu.json", )" + body + "}"), kSweepFile));
}

// The message of the ConfigError that `body` raises, or "" when it raises none.
std::string error_of(const std::string& body) {
  try {
    spec_of(body);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

std::vector<std::string> column(const SweepSpec& s, std::size_t axis) {
  std::vector<std::string> out;
  for (const auto& p : s.points()) out.push_back(format_axis_value(p.values.at(axis)));
  return out;
}

TEST(SweepSpec, AxesCombineAsAProductWithTheFirstAxisSlowest) {
  const auto s = spec_of(R"("axes": [
      {"name": "a", "pointer": "/scenario/seed", "values": [1, 2]},
      {"name": "b", "pointer": "/scenario/mode", "values": ["flow", "analytical", "flow"]}])");
  ASSERT_EQ(s.points().size(), 6u);
  EXPECT_EQ(column(s, 0), (std::vector<std::string>{"1", "1", "1", "2", "2", "2"}));
  EXPECT_EQ(column(s, 1),
            (std::vector<std::string>{"flow", "analytical", "flow", "flow", "analytical", "flow"}));
  EXPECT_EQ(s.points()[4].index, 4u);
  EXPECT_EQ(s.axis_names(), (std::vector<std::string>{"a", "b"}));
}

TEST(SweepSpec, LinearAndLogRangesIncludeBothEnds) {
  // linear 0..1 in 5: 0, 0.25, 0.5, 0.75, 1; log 64..16384 in 9: powers of two (2^6..2^14).
  const auto s = spec_of(R"("axes": [
      {"name": "x", "pointer": "/scenario/hardware", "linear": {"from": 0, "to": 1, "count": 5}},
      {"name": "n", "log": {"from": 64, "to": 16384, "count": 9}, "integer": true,
       "pointer": "/scenario/seed"}])");
  ASSERT_EQ(s.points().size(), 45u);
  std::vector<std::string> x, gpus;
  for (std::size_t i = 0; i < 45; i += 9) x.push_back(format_axis_value(s.points()[i].values[0]));
  for (std::size_t i = 0; i < 9; ++i) gpus.push_back(format_axis_value(s.points()[i].values[1]));
  EXPECT_EQ(x, (std::vector<std::string>{"0", "0.25", "0.5", "0.75", "1"}));
  EXPECT_EQ(gpus, (std::vector<std::string>{"64", "128", "256", "512", "1024", "2048", "4096",
                                            "8192", "16384"}));
}

TEST(SweepSpec, AUnitTurnsNumbersIntoQuantitiesAtEveryPointer) {
  const auto s = spec_of(R"("axes": [{"name": "nvlink_gbs", "unit": "GB/s", "values": [100, 450.5],
      "pointer": ["/cluster/defaults/host/nvlink/bandwidth", "/cluster/defaults/host/pcie/bandwidth"]}])");
  ASSERT_EQ(s.points().size(), 2u);
  const auto& edits = s.points()[1].edits;
  ASSERT_EQ(edits.size(), 2u);
  EXPECT_EQ(edits[0].part, "cluster");
  EXPECT_EQ(edits[0].pointer, "/defaults/host/nvlink/bandwidth");
  EXPECT_EQ(edits[0].value, Json("450.5 GB/s"));
  EXPECT_EQ(edits[1].pointer, "/defaults/host/pcie/bandwidth");
  EXPECT_EQ(s.points()[1].values[0], Json(450.5));
}

TEST(SweepSpec, SetEditsComeFirstInEveryPoint) {
  const auto s = spec_of(R"("set": {"/scenario/steps": 1, "/plan/dense/bucket_size": "8 MiB"},
      "axes": [{"name": "seed", "pointer": "/scenario/seed", "values": [3]}])");
  const auto& edits = s.points().at(0).edits;
  ASSERT_EQ(edits.size(), 3u);
  EXPECT_EQ(edits[0].part + edits[0].pointer, "plan/dense/bucket_size");
  EXPECT_EQ(edits[1].part + edits[1].pointer, "scenario/steps");
  EXPECT_EQ(edits[2].value, Json(3));
}

TEST(SweepSpec, ZippedAxesMoveTogether) {
  // zip of 3 pairs times an axis of 2: 6 points, pairs kept intact.
  const auto s = spec_of(R"("axes": [
      {"group": "size", "zip": [{"name": "hosts", "pointer": "/cluster/datacenters/0/hosts", "values": [1, 2, 4]},
                                {"name": "group", "pointer": "/plan/sparse/group_size", "values": [8, 16, 32]}]},
      {"name": "seed", "pointer": "/scenario/seed", "values": [1, 2]}])");
  ASSERT_EQ(s.points().size(), 6u);
  EXPECT_EQ(column(s, 0), (std::vector<std::string>{"1", "1", "2", "2", "4", "4"}));
  EXPECT_EQ(column(s, 1), (std::vector<std::string>{"8", "8", "16", "16", "32", "32"}));
}

TEST(SweepSpec, LatinHypercubePutsOneSampleInEveryStratum) {
  // 10 samples of x in [0, 10): sample i's stratum floor(x) covers 0..9 exactly once;
  // log-scaled y in [1, 1000): floor(3 log10 y / 3 * 10) likewise.
  const auto s = spec_of(R"("axes": [{"group": "lhs", "latin_hypercube": {"count": 10, "seed": 7},
      "axes": [{"name": "x", "pointer": "/scenario/seed", "from": 0, "to": 10},
               {"name": "y", "pointer": "/scenario/steps", "from": 1, "to": 1000, "scale": "log"}]}])");
  ASSERT_EQ(s.points().size(), 10u);
  std::set<int> xs, ys;
  for (const auto& p : s.points()) {
    xs.insert(static_cast<int>(p.values[0].get<double>()));
    ys.insert(static_cast<int>(std::log10(p.values[1].get<double>()) / 3 * 10));
  }
  EXPECT_EQ(xs.size(), 10u);
  EXPECT_EQ(ys.size(), 10u);
}

TEST(SweepSpec, RandomSamplesDependOnlyOnTheSeed) {
  auto body = [](int seed) {
    return R"("axes": [{"group": "r", "random": {"count": 5, "seed": )" + std::to_string(seed) +
           R"(}, "axes": [{"name": "x", "pointer": "/scenario/seed", "from": 2, "to": 3}]}])";
  };
  const auto a = column(spec_of(body(1)), 0), b = column(spec_of(body(1)), 0);
  const auto c = column(spec_of(body(2)), 0);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  for (const auto& v : a) {
    EXPECT_GE(std::stod(v), 2.0);
    EXPECT_LT(std::stod(v), 3.0);
  }
}

TEST(SweepSpec, FiltersDropPointsAndPointsAreRenumbered) {
  // 3 x 3 grid, keep a <= b and a != 2: (1,1) (1,2) (1,3) (3,3).
  const auto s = spec_of(R"("axes": [
      {"name": "a", "pointer": "/scenario/seed", "values": [1, 2, 3]},
      {"name": "b", "pointer": "/scenario/steps", "values": [1, 2, 3]}],
      "filters": [{"axis": "a", "op": "<=", "other_axis": "b"}, {"axis": "a", "op": "not_in", "value": [2]}])");
  ASSERT_EQ(s.points().size(), 4u);
  EXPECT_EQ(column(s, 0), (std::vector<std::string>{"1", "1", "1", "3"}));
  EXPECT_EQ(column(s, 1), (std::vector<std::string>{"1", "2", "3", "3"}));
  EXPECT_EQ(s.points()[3].index, 3u);
}

TEST(SweepSpec, AFilterWithAConditionAppliesWhereTheConditionHolds) {
  // 3 x 3 grid; where a == 3 keep b < 3: drops (3,3) only.
  const auto s = spec_of(R"("axes": [
      {"name": "a", "pointer": "/scenario/seed", "values": [1, 2, 3]},
      {"name": "b", "pointer": "/scenario/steps", "values": [1, 2, 3]}],
      "filters": [{"if": {"axis": "a", "op": "==", "value": 3}, "axis": "b", "op": "<", "value": 3}])");
  ASSERT_EQ(s.points().size(), 8u);
  EXPECT_EQ(format_axis_value(s.points()[7].values[1]), "2");
}

TEST(SweepSpec, AnAxisMayPickAnotherPartFile) {
  const auto s = spec_of(R"("axes": [{"name": "plan", "pointer": "/scenario/plan",
      "values": ["../plans/dlrm-8gpu.json"]},
      {"name": "bucket", "pointer": "/plan/dense/bucket_size", "values": ["8 MiB"]}])");
  EXPECT_EQ(s.points().size(), 1u);
  EXPECT_EQ(s.part_files().count(std::string(STRAIT_SOURCE_DIR) + "/configs/plans/dlrm-8gpu.json"),
            1u);
}

TEST(SweepSpec, MistakesNameTheFileThePointerAndTheExpectation) {
  const std::string file = kSweepFile + ": ";
  EXPECT_EQ(error_of(R"("axes": [{"name": "a", "pointer": "/clutser/x", "values": [1]}])"),
            file +
                "/axes/0/pointer: expected a JSON pointer starting with /scenario, /cluster, "
                "/model, /data or /plan, got '/clutser/x'");
  EXPECT_EQ(
      error_of(
          R"("axes": [{"name": "a", "pointer": "/cluster/defaults/hots/gpus", "values": [1]}])")
          .rfind(file + "/axes/0: /cluster/defaults/hots/gpus does not lead into", 0),
      0u);
  EXPECT_EQ(error_of(R"("axes": [{"name": "a", "pointer": "/scenario/seed", "valeus": [1]}])"),
            file + "/axes/0/valeus: unknown key; did you mean \"values\"?");
  EXPECT_EQ(
      error_of(
          R"("axes": [{"name": "a", "pointer": "/scenario/seed", "log": {"from": 0, "to": 4, "count": 3}}])"),
      file + "/axes/0/log/from: expected a number > 0 for a logarithmic range");
  EXPECT_EQ(
      error_of(
          R"("axes": [{"name": "a", "pointer": "/scenario/seed", "unit": "ms", "values": ["x"]}])"),
      file + "/axes/0: axis 'a' has a unit, so its values must be numbers, got \"x\"");
  EXPECT_EQ(
      error_of(
          R"("axes": [{"group": "g", "zip": [{"name": "a", "pointer": "/scenario/seed", "values": [1, 2]},
                                                         {"name": "b", "pointer": "/scenario/steps", "values": [1]}]}])"),
      file + "/axes/0/zip/1: expected 2 values like the group's first axis, got 1");
  EXPECT_EQ(error_of(R"("axes": [{"name": "a", "pointer": "/scenario/seed", "values": [1]}],
                        "filters": [{"axis": "b", "op": "==", "value": 1}])"),
            file + "/filters/0/axis: unknown axis 'b' (did you mean 'a'?)");
  EXPECT_EQ(
      error_of(R"("axes": [{"name": "step_time_ms", "pointer": "/scenario/seed", "values": [1]}])"),
      file + "/axes/0/name: 'step_time_ms' is a result column; give the axis another name");
  EXPECT_EQ(
      error_of(
          R"("axes": [{"name": "p", "pointer": "/scenario/plan", "values": ["../plans/nope.json"]}])"),
      file + "/axes/0: plan file '" + std::string(STRAIT_SOURCE_DIR) +
          "/configs/plans/nope.json' does not exist");
  EXPECT_EQ(error_of(R"("axes": [{"name": "a", "pointer": "/scenario/seed", "values": [1]}],
                        "filters": [{"axis": "a", "op": ">", "value": 5}])"),
            file + "/filters: the filters leave no point to run");
}

TEST(SweepSpec, AMissingScenarioFileIsAnErrorAtItsKey) {
  try {
    SweepSpec::from_config(
        ConfigNode(Json::parse(R"({"scenario": "nope.json", "axes": []})"), kSweepFile));
    FAIL() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.pointer(), "/scenario");
    EXPECT_NE(std::string(e.what()).find("does not exist"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace strait::sweep
