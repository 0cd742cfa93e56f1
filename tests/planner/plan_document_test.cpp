// planner/plan_document.hpp: table entries as a plan file writes them, tables written into
// a document, the canonical summary of what a plan decides, and plan documents parsed
// with errors that name the file.

#include <gtest/gtest.h>

#include "planner/plan_document.hpp"
#include "planner_test_support.hpp"
#include "sim/workload/layout.hpp"
#include "sim/workload/sharding.hpp"

namespace strait::planner {
namespace {

using namespace testing_support;
using sim::workload::ShardingType;
using sim::workload::TableSharding;

/// The summary of plan document `doc` for the small DLRM on one 8-GPU host.
Json summary_of(const PlanRequest& req, const std::string& doc) {
  const auto plan = parse_plan(Json::parse(doc), "plan.json", req.base.model);
  return plan_summary(plan, sim::workload::Layout::build(req.base.cluster, plan), req.base.model);
}

// A table entry is the type's name unless it has column slices, owners or hot rows.
TEST(PlanDocument, TableJsonIsATypeNameUnlessItNeedsAnObject) {
  EXPECT_EQ(table_json({ShardingType::kRowWise, 1, {}}), "row_wise");
  EXPECT_EQ(table_json({ShardingType::kDataParallel, 1, {}}), "data_parallel");
  EXPECT_EQ(table_json({ShardingType::kTableWise, 1, {3}}),
            Json::parse(R"({"type": "table_wise", "ranks": [3]})"));
  EXPECT_EQ(table_json({ShardingType::kColumnWise, 2, {}}),
            Json::parse(R"({"type": "column_wise", "column_shards": 2})"));
  EXPECT_EQ(table_json({ShardingType::kGrid, 2, {0, 8}}),
            Json::parse(R"({"type": "grid", "column_shards": 2, "ranks": [0, 8]})"));
  EXPECT_EQ(table_json({ShardingType::kRowWise, 1, {}, 1000}),
            Json::parse(R"({"type": "row_wise", "hot_rows": 1000})"));
}

// set_tables writes all four tables (dropping "/sparse/default", keeping the group), and
// the document parses back to the same shardings.
TEST(PlanDocument, SetTablesWritesEveryTableAndReadsBack) {
  const auto req = request_of("hgx-h100-8.json", kSmallDlrm, kSmallDlrmData);
  auto plan = req.base.plan;
  plan.sharding = {{ShardingType::kColumnWise, 2, {5, 2}},
                   {ShardingType::kTableRowWise, 1, {0}},
                   {ShardingType::kTableWise, 1, {7}},
                   {ShardingType::kDataParallel, 1, {}}};
  Json doc = Json::parse(R"({"sparse": {"group_size": 8, "placement": "host",
                                        "default": "table_wise"}})");
  set_tables(doc, plan, req.base.model);
  EXPECT_EQ(doc, Json::parse(R"({"sparse": {"group_size": 8, "placement": "host", "tables": {
      "big": {"type": "column_wise", "column_shards": 2, "ranks": [5, 2]},
      "wide": {"type": "table_row_wise", "ranks": [0]},
      "mid": {"type": "table_wise", "ranks": [7]},
      "tiny": "data_parallel"}}})"));
  const auto back = parse_plan(doc, "plan.json", req.base.model);
  for (std::size_t t = 0; t < 4; ++t) {
    EXPECT_EQ(back.sharding[t].type, plan.sharding[t].type) << t;
    EXPECT_EQ(back.sharding[t].column_shards, plan.sharding[t].column_shards) << t;
    EXPECT_EQ(back.sharding[t].ranks, plan.sharding[t].ranks) << t;
  }
  Json empty = Json::object();
  set_tables(empty, req.base.plan, req.base.model);
  EXPECT_EQ(empty, Json::parse(R"({"sparse": {"tables": {"big": "row_wise", "wide": "row_wise",
                                   "mid": "row_wise", "tiny": "row_wise"}}})"));
}

// Explicit ranks in a plan file place the slices there: table "big" as two column slices
// on members 5 and 2, "mid" whole on member 7.
TEST(PlanDocument, ExplicitRanksPlaceSlicesExactly) {
  const auto req = request_of("hgx-h100-8.json", kSmallDlrm, kSmallDlrmData);
  const Json doc = Json::parse(R"({"sparse": {"group_size": 8, "placement": "host",
    "tables": {"big": {"type": "column_wise", "column_shards": 2, "ranks": [5, 2]},
               "mid": {"type": "table_wise", "ranks": [7]}}}})");
  const auto plan = parse_plan(doc, "plan.json", req.base.model);
  const auto map = sim::workload::ShardMap::build(req.base.model, plan, 8, 8);
  auto holds = [&](int member, int table) {
    for (const auto& s : map.member_shards[static_cast<std::size_t>(member)]) {
      if (s.table == table && s.row_fraction == 1) return true;
    }
    return false;
  };
  EXPECT_TRUE(holds(5, 0));
  EXPECT_TRUE(holds(2, 0));
  EXPECT_TRUE(holds(7, 2));
  EXPECT_EQ(table_json(plan.sharding[0]).dump(),
            R"({"column_shards":2,"ranks":[5,2],"type":"column_wise"})");
}

// The empty plan on 8 GPUs, every default written out: DDP with 25 MiB = 26,214,400-byte
// buckets, no context parallelism or MoE (groups of 1: "none"), one model-parallel group
// of all 8 ranks at the cluster level, every table row-wise, depth 1, equal priorities
// (seven classes), flat cross-datacenter sync, no balancing.
TEST(PlanDocument, PlanSummaryWritesEveryDefaultOut) {
  const auto req = request_of("hgx-h100-8.json", kSmallDlrm, kSmallDlrmData);
  const Json row_wise = Json::parse(R"({"type": "row_wise", "column_shards": 1, "hot_rows": 0})");
  Json expected = Json::parse(R"({"ranks": 8,
    "dense": {"parallelism": "ddp", "bucket_size": 26214400},
    "context_parallel": {"group_size": 1, "placement": "none", "degree": 1, "mode": "all_gather"},
    "sparse": {"group_size": 8, "placement": "cluster", "replica_sync_every": 1,
               "replica_sync_staleness": 1,
               "comm_precision": {"forward": "weights", "backward": "weights"}},
    "moe": {"group_size": 1, "placement": "none"},
    "schedule": {"pipeline_depth": 1, "pipelined": "sparse_forward",
                 "priorities": [0, 0, 0, 0, 0, 0, 0], "sm_free_comm": false,
                 "cross_dc_sync": "flat", "load_balance": {"method": "none", "scope": "cluster"}}})");
  expected["sparse"]["tables"] = {
      {"big", row_wise}, {"wide", row_wise}, {"mid", row_wise}, {"tiny", row_wise}};
  EXPECT_EQ(summary_of(req, "{}"), expected);
  // The same job spelled otherwise: the bucket in bytes, the defaults named.
  EXPECT_EQ(summary_of(req, R"({"dense": {"parallelism": "ddp", "bucket_size": 26214400},
                               "sparse": {"default": "row_wise"},
                               "schedule": {"pipeline_depth": 1, "cross_dc_sync": "flat"}})"),
            expected);
}

// What differs is what the summary shows: DDP's grad_sync and comm_precision, FSDP's
// group instead of a bucket, embedding (classes 0-2) before dense (class 3), a column split.
TEST(PlanDocument, PlanSummaryShowsWhatAPlanDecides) {
  const auto req = request_of("hgx-h100-8.json", kSmallDlrm, kSmallDlrmData);
  const Json ddp = summary_of(req, R"({"dense": {"parallelism": "ddp", "grad_sync": "grouped",
      "comm_precision": "fp16"}, "schedule": {"priorities": {"embedding": 0, "dense": 1}},
      "sparse": {"tables": {"big": {"type": "column_wise", "column_shards": 2}}}})");
  EXPECT_EQ(ddp["dense"], Json::parse(R"({"parallelism": "ddp", "bucket_size": 26214400,
                                          "grad_sync": "grouped", "comm_precision": "fp16"})"));
  EXPECT_EQ(ddp["schedule"]["priorities"], Json::parse("[0, 0, 0, 1, 0, 0, 0]"));
  EXPECT_EQ(ddp["sparse"]["tables"]["big"],
            Json::parse(R"({"type": "column_wise", "column_shards": 2, "hot_rows": 0})"));
  const Json fsdp = summary_of(
      req, R"({"dense": {"parallelism": "fsdp", "group_size": 4, "placement": "host"}})");
  EXPECT_EQ(fsdp["dense"],
            Json::parse(R"({"parallelism": "fsdp", "group_size": 4, "placement": "host"})"));
}

TEST(PlanDocument, ParsePlanErrorsNameTheFileAndPointer) {
  const auto req = request_of("hgx-h100-8.json", kSmallDlrm, kSmallDlrmData);
  const auto msg = error_of([&] {
    parse_plan(Json::parse(R"({"sparse": {"tables": {"mid": "rows_wise"}}})"), "my-plan.json",
               req.base.model);
  });
  EXPECT_NE(msg.find("my-plan.json: /sparse/tables/mid"), std::string::npos) << msg;
  EXPECT_NE(msg.find("did you mean \"row_wise\""), std::string::npos) << msg;
}

}  // namespace
}  // namespace strait::planner
