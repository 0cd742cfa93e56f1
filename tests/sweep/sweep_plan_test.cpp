// The sweep's "plan_search": the planner at each point (or where its "when" filter holds),
// the best plan simulated as the point's result, the plan columns, and a search that finds
// nothing as an error row. The sweeps are configs/sweeps/dlrm-8gpu-plan.json (DLRM-v2 on
// one 8-GPU host, analytical mode, 2 steps: batch per rank 1024 | 4096 x planned false |
// true, about a second of planning per planned point) and one-point variants of it.

#include <algorithm>
#include <sstream>

#include <gtest/gtest.h>

#include "sim/core/error.hpp"
#include "strait_process.hpp"
#include "sweep/detail/report_columns.hpp"
#include "sweep/sweep.hpp"
#include "sweep_test_support.hpp"

namespace strait::sweep {
namespace {

using testing::csv_without_wall_times;
using testing::jsonl_without_wall_times;
using testing::lines;

using cli::testing::read_text;
using cli::testing::temp_path;
using cli::testing::write_text;

const std::string kPlanSweep =
    std::string(STRAIT_SOURCE_DIR) + "/configs/sweeps/dlrm-8gpu-plan.json";
const std::string kSweepFile = std::string(STRAIT_SOURCE_DIR) + "/configs/sweeps/test.json";
const std::string kProfiles = std::string(STRAIT_SOURCE_DIR) + "/configs/profiles";

struct Files {
  std::string csv, jsonl;
};

Files run(const SweepSpec& spec, int threads) {
  const Files f{temp_path("plan.csv"), temp_path("plan.jsonl")};
  SweepOptions o;
  o.csv_path = f.csv;
  o.jsonl_path = f.jsonl;
  o.threads = threads;
  o.default_profiles_dir = kProfiles;
  run_sweep(spec, o);
  return f;
}

// Rows as column name -> value (the header is row 0 of the file).
std::vector<std::map<std::string, std::string>> rows_of(const std::string& csv) {
  const auto all = lines(read_text(csv));
  const auto header = detail::split_csv_line(all.at(0));
  std::vector<std::map<std::string, std::string>> out;
  for (std::size_t i = 1; i < all.size(); ++i) {
    const auto fields = detail::split_csv_line(all[i]);
    EXPECT_EQ(fields.size(), header.size()) << all[i];
    std::map<std::string, std::string> row;
    for (std::size_t k = 0; k < header.size() && k < fields.size(); ++k) row[header[k]] = fields[k];
    out.push_back(std::move(row));
  }
  return out;
}

double number(const std::string& text) { return std::stod(text); }

TEST(SweepPlan, APlannedPointIsNoSlowerThanTheSameConfigurationOnItsOwnPlan) {
  const auto spec = SweepSpec::load(kPlanSweep);
  ASSERT_EQ(spec.points().size(), 4u);
  EXPECT_FALSE(spec.points()[0].plan_search);
  EXPECT_TRUE(spec.points()[1].plan_search);
  const auto serial = run(spec, 1);
  const auto rows = rows_of(serial.csv);
  ASSERT_EQ(rows.size(), 4u);
  for (const auto& name : detail::plan_columns()) EXPECT_TRUE(rows[0].count(name)) << name;
  for (std::size_t i = 0; i < 4; i += 2) {
    const auto& own = rows[i];
    const auto& planned = rows[i + 1];
    EXPECT_EQ(own.at("batch_per_rank"), planned.at("batch_per_rank"));
    EXPECT_EQ(own.at("error"), "");
    EXPECT_EQ(planned.at("error"), "");
    EXPECT_EQ(own.at("plan_searched"), "false");
    EXPECT_EQ(own.at("plan_found"), "");
    EXPECT_EQ(planned.at("plan_searched"), "true");
    EXPECT_EQ(planned.at("plan_found"), "true");
    EXPECT_EQ(planned.at("plan_budget_reached"), "false");
    // The planner prices the point's plan in the point's mode: the unplanned row's time.
    EXPECT_EQ(planned.at("plan_baseline_step_ms"), own.at("step_time_ms"));
    const double own_ms = number(own.at("step_time_ms"));
    const double planned_ms = number(planned.at("step_time_ms"));
    EXPECT_GT(planned_ms, 0);
    EXPECT_LE(planned_ms, own_ms);
    // The best plan simulates to the time the planner reported for it.
    EXPECT_NEAR(number(planned.at("plan_vs_baseline")), planned_ms / own_ms, 1e-12);
    // The bundled plan's summary: one 8-rank group, DDP, no CP, 26 tables.
    EXPECT_EQ(own.at("plan_sparse_group_size"), "8");
    EXPECT_EQ(own.at("plan_dense"), "ddp");
    EXPECT_EQ(own.at("plan_cp_degree"), "1");
    EXPECT_EQ(own.at("plan_tables"), "data_parallel:3 table_wise:17 row_wise:5 column_wise:1");
    EXPECT_FALSE(planned.at("plan_tables").empty());
  }
  // The JSON line holds the plan found, as a plan file.
  const auto planned_line = Json::parse(lines(read_text(serial.jsonl)).at(1));
  ASSERT_TRUE(planned_line.contains("plan_search"));
  EXPECT_EQ(planned_line["plan_search"]["found"], true);
  EXPECT_TRUE(planned_line["plan_search"]["plan"].contains("sparse"));
  EXPECT_FALSE(Json::parse(lines(read_text(serial.jsonl)).at(0)).contains("plan_search"));

  // One planner thread per point: two sweep threads write the same files.
  const auto threads = run(spec, 2);
  EXPECT_EQ(csv_without_wall_times(serial.csv), csv_without_wall_times(threads.csv));
  EXPECT_EQ(jsonl_without_wall_times(serial.jsonl), jsonl_without_wall_times(threads.jsonl));
}

TEST(SweepPlan, APointWhereNoPlanFitsIsAnErrorRowAndTheSweepGoesOn) {
  // 100 GiB kept free on 80 GiB H100s: no plan can fit. Point 0 searches, point 1 does not.
  const auto constraints = temp_path("headroom.json");
  write_text(constraints, R"({"memory_headroom": "100 GiB"})");
  const auto spec = SweepSpec::from_config(ConfigNode(Json::parse(R"({
      "scenario": "../scenarios/dlrm-8gpu.json",
      "set": {"/scenario/steps": 1, "/scenario/mode": "analytical"},
      "axes": [{"name": "planned", "values": [true, false]}],
      "plan_search": {"budget": 5, "constraints": ")" + constraints +
                                                                  R"(",
                      "when": {"axis": "planned", "op": "==", "value": true}}})"),
                                                      kSweepFile));
  const auto f = run(spec, 1);
  const auto rows = rows_of(f.csv);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].at("plan_searched"), "true");
  EXPECT_EQ(rows[0].at("plan_found"), "false");
  EXPECT_EQ(rows[0].at("step_time_ms"), "");
  EXPECT_EQ(rows[0].at("error").rfind("plan search: no plan fits in memory", 0), 0u)
      << rows[0].at("error");
  EXPECT_EQ(rows[1].at("error"), "");
  EXPECT_GT(number(rows[1].at("step_time_ms")), 0);
  const auto line = Json::parse(lines(read_text(f.jsonl)).at(0));
  EXPECT_EQ(line["plan_search"]["found"], false);
  EXPECT_TRUE(line.contains("error"));
}

// The message of the ConfigError that a sweep with this "plan_search" raises.
std::string error_of(const std::string& plan_search) {
  try {
    SweepSpec::from_config(ConfigNode(Json::parse(R"({
        "scenario": "../scenarios/dlrm-8gpu.json",
        "axes": [{"name": "planned", "values": [true, false]}],
        "plan_search": )" + plan_search + "}"),
                                      kSweepFile));
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(SweepPlan, ABadPlanSearchBlockNamesTheFileTheKeyAndTheExpectation) {
  EXPECT_EQ(error_of(R"({"budget": "soon"})"),
            kSweepFile +
                ": /plan_search/budget: expected a positive duration up to 1e6 s such as "
                "\"10s\" or a number of seconds");
  // 1e308 s was converted to simulated time (undefined behaviour).
  EXPECT_EQ(error_of(R"({"budget": 1e308})"),
            kSweepFile +
                ": /plan_search/budget: expected a positive duration up to 1e6 s such as "
                "\"10s\" or a number of seconds");
  EXPECT_EQ(error_of(R"({"mode": "fast"})").rfind(kSweepFile + ": /plan_search/mode: ", 0), 0u);
  EXPECT_EQ(error_of(R"({"top": 0})"),
            kSweepFile + ": /plan_search/top: expected an integer in [1, 1048576], got 0");
  EXPECT_NE(error_of(R"({"constraints": "missing.json"})")
                .find(": /plan_search/constraints: constraints file '"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"when": {"axis": "plannd", "op": "==", "value": true}})")
                .find(": /plan_search/when/axis: unknown axis 'plannd' (did you mean 'planned'?)"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"budgt": 1})").find(": /plan_search"), std::string::npos);
  EXPECT_EQ(error_of(R"({"budget": "2s"})"), "");
}

}  // namespace
}  // namespace strait::sweep
