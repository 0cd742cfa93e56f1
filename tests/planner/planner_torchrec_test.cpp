// TorchRec sharding plans (planner/torchrec_plan.hpp): the form TorchRec's _serialize()
// writes, read back with its shards checked against what strait simulates.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "planner/plan_document.hpp"
#include "planner/torchrec_plan.hpp"
#include "planner_test_support.hpp"

namespace strait::planner {
namespace {

using namespace testing_support;
using sim::workload::ShardingType;
using sim::workload::TableSharding;

// One table per sharding type; "rw" has 1003 rows, so TorchRec's row blocks are uneven.
const char* kSixTables = R"({"name": "six-tables",
  "embedding": {"tables": [
    {"name": "tw", "rows": 1000, "dim": 64}, {"name": "rw", "rows": 1003, "dim": 64},
    {"name": "cw", "rows": 2000, "dim": 64}, {"name": "twrw", "rows": 5000, "dim": 64},
    {"name": "grid", "rows": 4001, "dim": 64}, {"name": "dp", "rows": 100, "dim": 64}]},
  "dense": {"dense_features": 13, "bottom_mlp": {"layers": [128, 64]},
            "interaction": {"type": "dot"}, "top_mlp": {"layers": [64, 1]}}})";
const char* kSixTablesData = R"({"name": "six-data", "batch_size": {"per_rank": 256},
  "pooling_factors": {"default": {"distribution": "fixed", "value": 2}}})";

// The three-datacenter cluster (48 GPUs, hosts of 8) with model-parallel groups of 16.
sim::workload::TrainingScenario six_tables_in_groups_of_16() {
  const auto req = request_of(kThreeDc, kSixTables, kSixTablesData);
  const auto plan =
      parse_plan(Json::parse(R"({"sparse": {"group_size": 16, "placement": "datacenter"}})"),
                 "plan.json", req.base.model);
  return scenario_for(req.base, plan);
}

std::vector<TableSharding> every_type() {
  return {{ShardingType::kTableWise, 1, {3}},     {ShardingType::kRowWise, 1, {}},
          {ShardingType::kColumnWise, 2, {5, 2}}, {ShardingType::kTableRowWise, 1, {8}},
          {ShardingType::kGrid, 2, {0, 8}},       {ShardingType::kDataParallel, 1, {}}};
}

// The TorchRec file strait writes for every_type() on six_tables_in_groups_of_16().
Json written(const TorchRecModules& modules = {}) {
  const auto sc = six_tables_in_groups_of_16();
  auto plan = sc.plan;
  plan.sharding = every_type();
  return torchrec_plan_json(plan, sc, TableCosts(sc, bundled_cost()), modules);
}

// parse + apply as `strait simulate --torchrec` does, on the cluster.
sim::workload::ParallelPlan read_and_apply(const Json& tr) {
  const auto sc = six_tables_in_groups_of_16();
  const auto parsed = parse_torchrec_plan(ConfigNode(tr, "sharding.json"), sc.model);
  Json document = Json::object();
  return apply_torchrec_plan(document, sc.plan, parsed, sc.model, &sc.cluster);
}

#define EXPECT_HAS(msg, text) EXPECT_NE((msg).find(text), std::string::npos) << (msg)

Json& table(Json& tr, const char* name) { return tr["plan"]["embedding_bag_collection"][name]; }

// Written, read and applied, every sharding type comes back as it was: the same type,
// column slices and ranks (row_wise and data_parallel have none), in groups of 16. Row
// blocks are TorchRec's: 1003 rows over 16 ranks are 15 blocks of ceil(1003/16) = 63 rows
// and one of 1003 - 15 x 63 = 58.
TEST(PlannerTorchRec, WrittenPlanReadsAndAppliesToTheSameSharding) {
  Json tr = written();
  EXPECT_EQ(table(tr, "rw")["shards"][15]["shard_offsets"], Json::parse("[945, 0]"));
  EXPECT_EQ(table(tr, "rw")["shards"][15]["shard_sizes"], Json::parse("[58, 64]"));
  EXPECT_EQ(table(tr, "grid")["shards"][9]["placement"], "rank:9/cuda:1");
  EXPECT_FALSE(table(tr, "dp").contains("shards"));
  const auto applied = read_and_apply(tr);
  EXPECT_EQ(applied.sparse.size, 16);
  const auto expected = every_type();
  for (std::size_t t = 0; t < expected.size(); ++t) {
    EXPECT_EQ(applied.sharding[t].type, expected[t].type) << t;
    EXPECT_EQ(applied.sharding[t].column_shards, expected[t].column_shards) << t;
    EXPECT_EQ(applied.sharding[t].ranks, expected[t].ranks) << t;
  }
}

// PyTorch's ShardMetadata has bucket_id_offset and num_buckets; _serialize() writes them
// null for ordinary tables, and they are read and ignored. Set, they mark a virtual (ZCH)
// table's bucket-wise shards, which strait cannot represent.
TEST(PlannerTorchRec, NullBucketKeysOfRecentTorchRecAreAcceptedAndSetOnesRefused) {
  Json tr = written();
  for (auto& [name, entry] : tr["plan"]["embedding_bag_collection"].items()) {
    if (!entry.contains("shards")) continue;
    for (auto& shard : entry["shards"]) {
      shard["bucket_id_offset"] = nullptr;
      shard["num_buckets"] = nullptr;
    }
  }
  EXPECT_EQ(read_and_apply(tr).sharding[2].ranks, (std::vector<int>{5, 2}));
  table(tr, "rw")["shards"][1]["num_buckets"] = 4;
  const auto msg = error_of([&] { read_and_apply(tr); });
  EXPECT_HAS(msg, "sharding.json: /plan/embedding_bag_collection/rw/shards/1/num_buckets");
  EXPECT_HAS(msg, "virtual (ZCH) table");
}

// fused_uvm_caching keeps the table in host memory behind an HBM cache; strait prices
// every lookup from HBM, so the kernel is refused rather than simulated as "fused".
TEST(PlannerTorchRec, UnmodelledComputeKernelIsRefusedListingTheAcceptedOnes) {
  Json tr = written();
  table(tr, "tw")["compute_kernel"] = "fused_uvm_caching";
  const auto msg = error_of([&] { read_and_apply(tr); });
  EXPECT_HAS(msg, "sharding.json: /plan/embedding_bag_collection/tw/compute_kernel");
  EXPECT_HAS(msg, "\"fused\" (sharded tables");
  EXPECT_HAS(msg, "\"dense\" (data_parallel)");
  EXPECT_HAS(msg, "got \"fused_uvm_caching\"");

  Json dp = written();
  table(dp, "dp")["compute_kernel"] = "fused";
  EXPECT_HAS(error_of([&] { read_and_apply(dp); }),
             "sharding.json: /plan/embedding_bag_collection/dp/compute_kernel");
}

// A dim-64 table cut 48 + 16: strait's column slices are equal (64 / 2 = 32 columns), so
// the file is refused rather than simulated as 32 + 32.
TEST(PlannerTorchRec, UnevenColumnShardsAreRefusedNotEvenedOut) {
  Json tr = written();
  table(tr, "cw")["shards"][0]["shard_sizes"] = {2000, 48};
  table(tr, "cw")["shards"][1]["shard_offsets"] = {0, 48};
  table(tr, "cw")["shards"][1]["shard_sizes"] = {2000, 16};
  const auto msg = error_of([&] { read_and_apply(tr); });
  EXPECT_HAS(msg, "sharding.json: /plan/embedding_bag_collection/cw/shards/0/shard_sizes");
  EXPECT_HAS(msg, "equal width dim/column_shards = 64/2 = 32 columns, got 48");
}

// Shards must tile the table as TorchRec cuts it: 1003 rows over 16 ranks start block 1 at
// row 63 (a block at row 64 leaves a gap) and give blocks 0..14 63 rows each (a balanced
// 11 x 63 + 5 x 62 split is not TorchRec's). A table_wise shard must hold all 1000 x 64.
TEST(PlannerTorchRec, ShardsThatDoNotTileTheTableAreRefusedWithTheExpectedBlock) {
  Json gap = written();
  table(gap, "rw")["shards"][1]["shard_offsets"] = {64, 0};
  auto msg = error_of([&] { read_and_apply(gap); });
  EXPECT_HAS(msg, "sharding.json: /plan/embedding_bag_collection/rw/shards/1/shard_offsets");
  EXPECT_HAS(msg, "expected row offset 63 and 63 rows (block 1 of 16");

  Json even = written();  // 11 x 63 + 5 x 62: balanced, but not TorchRec's blocks
  for (int i = 0, row = 0; i < 16; row += i < 11 ? 63 : 62, ++i) {
    table(even, "rw")["shards"][i]["shard_offsets"] = {row, 0};
    table(even, "rw")["shards"][i]["shard_sizes"] = {i < 11 ? 63 : 62, 64};
  }
  msg = error_of([&] { read_and_apply(even); });
  EXPECT_HAS(msg, "sharding.json: /plan/embedding_bag_collection/rw/shards/11/shard_sizes");
  EXPECT_HAS(msg, "expected row offset 693 and 63 rows");

  Json part = written();
  table(part, "tw")["shards"][0]["shard_sizes"] = {999, 64};
  msg = error_of([&] { read_and_apply(part); });
  EXPECT_HAS(msg, "sharding.json: /plan/embedding_bag_collection/tw/shards/0/shard_sizes");
  EXPECT_HAS(msg, "expected row offset 0 and 1000 rows (all of the table's rows)");
}

// Ranks index the 16-rank group the "strait" block gives (else the 48-GPU world); one
// outside it is reported in the TorchRec file, where it is, with the valid range, not
// against the plan document it is copied into.
TEST(PlannerTorchRec, RankOutsideTheGroupIsReportedInTheTorchRecFile) {
  Json tr = written();
  table(tr, "tw")["ranks"] = {20};
  table(tr, "tw")["shards"][0]["placement"] = "rank:20/cuda:4";
  auto msg = error_of([&] { read_and_apply(tr); });
  EXPECT_HAS(msg, "sharding.json: /plan/embedding_bag_collection/tw/shards/0/placement");
  EXPECT_HAS(msg, "0..15; got 20");

  Json world = written();
  world.erase("strait");
  table(world, "rw")["shards"] = Json::array();  // 16 row blocks would not fill 48 ranks
  table(world, "rw")["sharding_type"] = "table_wise";
  table(world, "rw")["shards"].push_back(
      {{"shard_offsets", {0, 0}}, {"shard_sizes", {1003, 64}}, {"placement", "rank:0/cuda:0"}});
  table(world, "rw")["ranks"] = {0};
  table(world, "dp")["ranks"] = {0, 1, 48};
  msg = error_of([&] { read_and_apply(world); });
  EXPECT_HAS(msg, "sharding.json: /plan/embedding_bag_collection/dp/ranks/2");
  EXPECT_HAS(msg, "the 48-rank world (every GPU of the cluster), 0..47; got 48");
}

// Real jobs name modules by their path in the wrapped model; tables may sit under several
// modules, each table once.
TEST(PlannerTorchRec, TablesAreFoundUnderAnyModulePathAndOnlyOnce) {
  Json tr = written({"model.sparse.ebc", "model.sparse.ec"});
  ASSERT_TRUE(tr["plan"].contains("model.sparse.ebc"));
  Json& ebc = tr["plan"]["model.sparse.ebc"];
  tr["plan"]["sparse_arch.embedding_bag_collection"]["dp"] = ebc["dp"];
  ebc.erase("dp");
  EXPECT_EQ(read_and_apply(tr).sharding[5].type, ShardingType::kDataParallel);

  ebc["dp"] = tr["plan"]["sparse_arch.embedding_bag_collection"]["dp"];
  const auto msg = error_of([&] { read_and_apply(tr); });
  EXPECT_HAS(msg, "sharding.json: /plan/sparse_arch.embedding_bag_collection/dp");
  EXPECT_HAS(msg, "listed twice: also at /plan/model.sparse.ebc/dp");
}

// The file alone (read_torchrec_file): what it states, entry by entry, without a model.
// Objects come as strait's reader keeps them, keys by name, so modules and tables are in
// that order whatever the text's (a written file's text already is); shards in list order.
// every_type() in groups of 16: rw's 1003 rows end in block 15 of 58 rows at row 945, on
// rank 15 of host 1 (cuda:7); dp lists the whole group and no shards.
TEST(PlannerTorchRec, TheFileAloneGivesItsEntriesInTheReadersOrder) {
  const TorchRecFile file = read_torchrec_file(ConfigNode(written(), "sharding.json"));
  EXPECT_EQ(file.group_size, 16);
  EXPECT_EQ(file.modules, (std::vector<std::string>{"embedding_bag_collection"}));
  std::vector<std::string> tables;
  for (const auto& e : file.entries) tables.push_back(e.module + "/" + e.table);
  EXPECT_EQ(tables, (std::vector<std::string>{
                        "embedding_bag_collection/cw", "embedding_bag_collection/dp",
                        "embedding_bag_collection/grid", "embedding_bag_collection/rw",
                        "embedding_bag_collection/tw", "embedding_bag_collection/twrw"}));
  const TorchRecEntry& rw = file.entries[3];
  EXPECT_EQ(rw.sharding_type, "row_wise");
  EXPECT_EQ(rw.compute_kernel, "fused");
  EXPECT_FALSE(rw.enforce_hbm.has_value());
  ASSERT_EQ(rw.shards.size(), 16u);
  const TorchRecShard& last = rw.shards[15];
  EXPECT_EQ(
      (std::vector<std::int64_t>{last.row_offset, last.column_offset, last.rows, last.columns}),
      (std::vector<std::int64_t>{945, 0, 58, 64}));
  EXPECT_EQ(last.placement, "rank:15/cuda:7");
  EXPECT_EQ(last.rank, 15);
  EXPECT_EQ(last.node.pointer(), "/plan/embedding_bag_collection/rw/shards/15");
  ASSERT_TRUE(rw.ranks.has_value());
  EXPECT_EQ(rw.ranks->at(15).rank, 15);
  const TorchRecEntry& dp = file.entries[1];
  EXPECT_EQ(dp.compute_kernel, "dense");
  EXPECT_TRUE(dp.shards.empty());
  EXPECT_EQ(dp.ranks->size(), 16u);

  const TorchRecFile text = read_torchrec_file(ConfigNode(Json::parse(R"({"plan": {
      "z.ebc": {"b": {"sharding_type": "data_parallel", "compute_kernel": "dense"},
                "a": {"sharding_type": "data_parallel", "compute_kernel": "dense"}},
      "m.ec": {},
      "a.ebc": {"c": {"sharding_type": "data_parallel", "compute_kernel": "dense"}}}})"),
                                                          "sharding.json"));
  EXPECT_EQ(text.group_size, 0);
  EXPECT_EQ(text.modules, (std::vector<std::string>{"a.ebc", "m.ec", "z.ebc"}));
  tables.clear();
  for (const auto& e : text.entries) tables.push_back(e.module + "/" + e.table);
  EXPECT_EQ(tables, (std::vector<std::string>{"a.ebc/c", "z.ebc/a", "z.ebc/b"}));
  EXPECT_FALSE(text.entries[0].ranks.has_value());
}

// Without a model a table of any name reads, and an error of the file alone is the one
// `simulate --torchrec` gives (text for text): here a placement without its local GPU.
TEST(PlannerTorchRec, TheFileAloneFailsOnItsOwnErrorsWithoutAModel) {
  Json tr = written();
  tr["plan"]["embedding_bag_collection"]["no_such_table"] = table(tr, "tw");
  EXPECT_EQ(read_torchrec_file(ConfigNode(tr, "sharding.json")).entries.size(), 7u);
  EXPECT_HAS(error_of([&] { read_and_apply(tr); }), "unknown table \"no_such_table\"");

  table(tr, "tw")["shards"][0]["placement"] = "rank:3";
  const auto alone = error_of([&] { read_torchrec_file(ConfigNode(tr, "sharding.json")); });
  EXPECT_EQ(alone,
            "sharding.json: /plan/embedding_bag_collection/tw/shards/0/placement: expected "
            "\"rank:R/cuda:L\" (a GPU), got \"rank:3\"");
  tr["plan"]["embedding_bag_collection"].erase("no_such_table");
  EXPECT_EQ(error_of([&] { read_and_apply(tr); }), alone);
}

// enforce_hbm and stochastic_rounding are kept when true or false and unset when null;
// anything else is refused. bounds_check_mode is read and ignored whatever it holds.
TEST(PlannerTorchRec, NumericsFlagsAreBooleansOrNullAndBoundsCheckModeIsIgnored) {
  Json tr = written();
  table(tr, "tw")["enforce_hbm"] = true;
  table(tr, "tw")["stochastic_rounding"] = nullptr;
  table(tr, "tw")["bounds_check_mode"] = "BoundsCheckMode.WARNING";
  table(tr, "dp")["stochastic_rounding"] = false;
  const TorchRecFile file = read_torchrec_file(ConfigNode(tr, "sharding.json"));
  EXPECT_EQ(file.entries[4].enforce_hbm, std::optional<bool>(true));
  EXPECT_FALSE(file.entries[4].stochastic_rounding.has_value());
  EXPECT_EQ(file.entries[1].stochastic_rounding, std::optional<bool>(false));
  EXPECT_EQ(read_and_apply(tr).sharding[0].ranks, (std::vector<int>{3}));

  table(tr, "tw")["enforce_hbm"] = 1;
  EXPECT_EQ(error_of([&] { read_and_apply(tr); }),
            "sharding.json: /plan/embedding_bag_collection/tw/enforce_hbm: expected true or "
            "false, got the number 1");
}

}  // namespace
}  // namespace strait::planner
