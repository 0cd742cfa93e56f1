// planner/search_space.hpp: the dimensions and their choices for a model and a cluster,
// the size of the space, what constraints and a baseline do to it, and the plan documents
// its points, neighbours and descriptions make.

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "planner/search_space.hpp"
#include "planner_test_support.hpp"

namespace strait::planner {
namespace {

using namespace testing_support;

Constraints constraints_of(const PlanRequest& req, const std::string& json) {
  return Constraints::from_config(ConfigNode(Json::parse(json), "constraints.json"),
                                  req.base.model);
}

SearchSpace space_of(const PlanRequest& req, const Constraints& c, const Json& baseline = nullptr) {
  return SearchSpace(req.base.cluster, req.base.layout.world, req.base.model, c, baseline);
}

std::vector<std::string> names(const SearchSpace& s) {
  std::vector<std::string> out;
  for (const auto& d : s.dimensions()) out.push_back(d.name);
  return out;
}

std::vector<std::string> labels(const Dimension& d) {
  std::vector<std::string> out;
  for (const auto& c : d.choices) out.push_back(c.label);
  return out;
}

const Dimension& dimension(const SearchSpace& s, const std::string& name) {
  for (const auto& d : s.dimensions()) {
    if (d.name == name) return d;
  }
  throw std::runtime_error("no dimension " + name);
}

// One 8-GPU host, the small DLRM (four tables of dim 64), no constraints:
//   sparse_group   8@host (host = rack = datacenter = world: one size)     1
//   table:<name>   row_wise, table_wise, table_row_wise, data_parallel,
//                  column_wise x2, grid x2 (x4 would leave 16 < 32 columns)  6 each
//   dense          ddp 25 MiB, ddp 100 MiB, fsdp world (no HSDP in one host) 3
//   pipeline_depth 1, 2, 3; priorities equal, embedding first, dense first;
//   sm_free_comm   off, on                                                3, 3, 2
// No replica sync (no group smaller than the world), no cross-DC sync, no CP, no MoE:
// 6^4 x 3 x 3 x 3 x 2 = 1,296 x 54 = 69,984 points.
TEST(SearchSpace, OneHostHasTheseDimensionsAndSize) {
  const auto req = request_of("hgx-h100-8.json", kSmallDlrm, kSmallDlrmData);
  const auto space = space_of(req, req.constraints);
  EXPECT_EQ(names(space), (std::vector<std::string>{
                              "sparse_group", "table:big", "table:wide", "table:mid", "table:tiny",
                              "dense", "pipeline_depth", "priorities", "sm_free_comm"}));
  EXPECT_EQ(labels(dimension(space, "sparse_group")), (std::vector<std::string>{"8@host"}));
  EXPECT_EQ(labels(dimension(space, "table:mid")),
            (std::vector<std::string>{"row_wise", "table_wise", "table_row_wise", "data_parallel",
                                      "column_wise x2", "grid x2"}));
  EXPECT_EQ(labels(dimension(space, "dense")),
            (std::vector<std::string>{"ddp 25 MiB", "ddp 100 MiB", "fsdp world"}));
  EXPECT_EQ(labels(dimension(space, "priorities")),
            (std::vector<std::string>{"equal", "embedding first", "dense first"}));
  EXPECT_EQ(space.size(), 69984.0);
  EXPECT_EQ(space.start(), std::vector<int>(9, 0));
}

// Three datacenters of two 8-GPU hosts (48 GPUs, one leaf per datacenter): host 8,
// rack 16, datacenter 16, world 48.
//   sparse_group  8@host, 16@rack, 48@cluster (32 does not divide 48)               3
//   replica_sync  every 1; every 10, 100, 1000 with staleness 1 or 4              7
//   dense         ddp 25 / 100 MiB, hsdp 8@host, fsdp world                       4
//   cross_dc_sync flat, hierarchical, overlapped                                  3
// 3 x 7 x 6^4 x 4 x 3 x 3 x 2 x 3 = 5,878,656. Groups that may not span datacenters
// drop 48@cluster and turn FSDP over the world into HSDP over a datacenter:
// 2 x 7 x 6^4 x 4 x 54 = 3,919,104.
TEST(SearchSpace, ThreeDatacentersAddReplicaSyncHsdpAndCrossDatacenterSync) {
  const auto req = request_of(kThreeDc, kSmallDlrm, kSmallDlrmData);
  const auto space = space_of(req, req.constraints);
  EXPECT_EQ(labels(dimension(space, "sparse_group")),
            (std::vector<std::string>{"8@host", "16@rack", "48@cluster"}));
  EXPECT_EQ(labels(dimension(space, "replica_sync")),
            (std::vector<std::string>{"every 1 staleness 1", "every 10 staleness 1",
                                      "every 10 staleness 4", "every 100 staleness 1",
                                      "every 100 staleness 4", "every 1000 staleness 1",
                                      "every 1000 staleness 4"}));
  EXPECT_EQ(labels(dimension(space, "dense")),
            (std::vector<std::string>{"ddp 25 MiB", "ddp 100 MiB", "hsdp 8@host", "fsdp world"}));
  EXPECT_EQ(labels(dimension(space, "cross_dc_sync")),
            (std::vector<std::string>{"flat", "hierarchical", "overlapped"}));
  EXPECT_EQ(space.size(), 5878656.0);

  const auto inside = space_of(req, constraints_of(req, R"({"may_span_datacenters": []})"));
  EXPECT_EQ(labels(dimension(inside, "sparse_group")),
            (std::vector<std::string>{"8@host", "16@rack"}));
  EXPECT_EQ(
      labels(dimension(inside, "dense")),
      (std::vector<std::string>{"ddp 25 MiB", "ddp 100 MiB", "hsdp 8@host", "hsdp 16@datacenter"}));
  EXPECT_EQ(inside.size(), 3919104.0);
}

// HSTU with one sequence table of dim 256 on one host: the table may also split in 4
// columns (64 >= 32): 7 choices; context parallelism none or degree 2, 4, 8 by all-gather
// or all-to-all: 7; sample balancing none, greedy, karmarkar_karp: 3.
// 7 x 7 x 3 x 3 x 3 x 2 x 3 = 7,938 points.
TEST(SearchSpace, HstuAddsContextParallelismAndLoadBalancing) {
  const char* model = R"({"name": "h", "embedding": {"tables": [
      {"name": "item", "rows": 100000, "dim": 256, "pooling": "sequence"}]},
    "dense": {"hstu": {"layers": 2, "model_dim": 256, "heads": 2, "head_dim": 64,
                       "linear_dim": 64, "negatives": 16}}})";
  const char* data = R"({"name": "d", "batch_size": {"per_rank": 8},
    "sequence_length": {"distribution": "fixed", "value": 512}, "max_length": 512})";
  const auto req = request_of("hgx-h100-8.json", model, data);
  const auto space = space_of(req, req.constraints);
  EXPECT_EQ(names(space), (std::vector<std::string>{"sparse_group", "table:item",
                                                    "context_parallel", "dense", "pipeline_depth",
                                                    "priorities", "sm_free_comm", "load_balance"}));
  EXPECT_EQ(labels(dimension(space, "table:item")),
            (std::vector<std::string>{"row_wise", "table_wise", "table_row_wise", "data_parallel",
                                      "column_wise x2", "grid x2", "column_wise x4"}));
  EXPECT_EQ(labels(dimension(space, "context_parallel")),
            (std::vector<std::string>{"none", "2 all_gather", "2 all_to_all", "4 all_gather",
                                      "4 all_to_all", "8 all_gather", "8 all_to_all"}));
  EXPECT_EQ(labels(dimension(space, "load_balance")),
            (std::vector<std::string>{"none", "greedy", "karmarkar_karp"}));
  EXPECT_EQ(space.size(), 7938.0);
}

// A fixed key leaves its dimension one choice: the menu's when it is on it (pipeline depth
// 2), else the fixed value itself (a 50 MiB bucket); "/sparse/default" pins every table;
// a forbidden type leaves the menu. 1 x 1^4 x 1 x 1 x 3 x 2 = 6 points; with grid and
// table_row_wise forbidden instead of the tables fixed (and DDP with its default bucket,
// off the menu, and depth 1 fixed): 4^4 x 1 x 1 x 3 x 2 = 1,536.
TEST(SearchSpace, ConstraintsPinAndForbidChoices) {
  const auto req = request_of("hgx-h100-8.json", kSmallDlrm, kSmallDlrmData);
  const auto pinned =
      space_of(req, constraints_of(req, R"({"fix": {"schedule": {"pipeline_depth": 2},
                                           "dense": {"parallelism": "ddp", "bucket_size": "50 MiB"},
                                           "sparse": {"default": "table_wise"}}})"));
  EXPECT_EQ(labels(dimension(pinned, "pipeline_depth")), (std::vector<std::string>{"2"}));
  EXPECT_EQ(labels(dimension(pinned, "dense")), (std::vector<std::string>{"fixed"}));
  EXPECT_EQ(labels(dimension(pinned, "table:big")), (std::vector<std::string>{"table_wise"}));
  EXPECT_EQ(pinned.size(), 6.0);
  EXPECT_EQ(pinned.compose(pinned.start()), Json::parse(R"({"name": "strait-plan",
      "sparse": {"group_size": 8, "placement": "host", "tables": {"big": "table_wise",
                 "wide": "table_wise", "mid": "table_wise", "tiny": "table_wise"}},
      "dense": {"parallelism": "ddp", "bucket_size": "50 MiB"},
      "schedule": {"pipeline_depth": 2, "sm_free_comm": false}})"));

  const auto forbidden =
      space_of(req, constraints_of(req, R"({"forbid_sharding": {"*": ["grid", "table_row_wise"]},
                                   "fix": {"schedule": {"pipeline_depth": 1},
                                           "dense": {"parallelism": "ddp"}}})"));
  EXPECT_EQ(
      labels(dimension(forbidden, "table:tiny")),
      (std::vector<std::string>{"row_wise", "table_wise", "data_parallel", "column_wise x2"}));
  EXPECT_EQ(labels(dimension(forbidden, "dense")), (std::vector<std::string>{"fixed"}));
  EXPECT_EQ(forbidden.size(), 1536.0);
}

// A fixed plan size is copied into every document.
TEST(SearchSpace, AFixedRankCountIsInEveryDocument) {
  const auto req = request_of("hgx-h100-8.json", kSmallDlrm, kSmallDlrmData);
  const auto space = space_of(req, constraints_of(req, R"({"fix": {"ranks": 4}})"));
  EXPECT_EQ(space.compose(space.start())["ranks"], 4);
}

// The baseline's values are the start: its 50 MiB bucket is a new dense choice (the last),
// "/sparse/default" table_wise starts big and wide there, mid's bare column_wise is the
// menu's column_wise x2, tiny's explicit ranks are no part of the choice. The start point
// composes to the baseline's values; 6^4 x 4 x 3 x 3 x 2 = 93,312 points.
TEST(SearchSpace, TheBaselineSeedsTheStartPoint) {
  const auto req = request_of("hgx-h100-8.json", kSmallDlrm, kSmallDlrmData);
  const Json baseline = Json::parse(R"({"sparse": {"default": "table_wise",
      "tables": {"mid": {"type": "column_wise"}, "tiny": {"type": "table_wise", "ranks": [3]}}},
      "dense": {"parallelism": "ddp", "bucket_size": "50 MiB"},
      "schedule": {"pipeline_depth": 2}})");
  const auto space = space_of(req, req.constraints, baseline);
  // sparse_group, big, wide, mid, tiny, dense, pipeline_depth, priorities, sm_free_comm
  EXPECT_EQ(space.start(), (std::vector<int>{0, 1, 1, 4, 1, 3, 1, 0, 0}));
  EXPECT_EQ(labels(dimension(space, "dense")).back(), "baseline");
  EXPECT_EQ(space.size(), 93312.0);
  EXPECT_EQ(space.compose(space.start()), Json::parse(R"({"name": "strait-plan",
      "sparse": {"group_size": 8, "placement": "host", "tables": {"big": "table_wise",
                 "wide": "table_wise", "mid": {"type": "column_wise", "column_shards": 2},
                 "tiny": "table_wise"}},
      "dense": {"parallelism": "ddp", "bucket_size": "50 MiB"},
      "schedule": {"pipeline_depth": 2, "sm_free_comm": false}})"));
  EXPECT_EQ(space.describe(space.start()), "start point");
  auto point = space.start();
  point[1] = 0;  // big row_wise
  point[6] = 2;  // pipeline depth 3
  point[7] = 1;  // embedding first
  EXPECT_EQ(space.describe(point),
            "table:big=row_wise, pipeline_depth=3, priorities=embedding first");
  const Json doc = space.compose(point);
  EXPECT_EQ(doc["sparse"]["tables"]["big"], "row_wise");
  EXPECT_EQ(doc["schedule"]["priorities"],
            Json::parse(R"({"embedding": 0, "context_parallel": 0, "moe": 0, "dense": 1,
                            "replica_sync": 2})"));
}

// Every choice of every dimension set in a document: 1 + 4 x 6 + 3 + 3 + 3 + 2 = 36
// neighbours in dimension order. A table's change keeps big's owner (rank 3); a group-size
// choice drops it; "equal" priorities remove the key.
TEST(SearchSpace, NeighboursSetOneDimensionEach) {
  const auto req = request_of("hgx-h100-8.json", kSmallDlrm, kSmallDlrmData);
  const auto space = space_of(req, req.constraints);
  const Json doc = Json::parse(R"({"sparse": {"group_size": 8, "placement": "host",
      "tables": {"big": {"type": "table_wise", "ranks": [3]}}},
      "schedule": {"priorities": {"dense": 0, "embedding": 1}}})");
  const auto n = space.neighbours(doc);
  ASSERT_EQ(n.size(), 36u);
  EXPECT_EQ(n[0].label, "sparse_group=8@host");
  EXPECT_EQ(n[0].dimension, 0u);
  EXPECT_EQ(n[0].document["sparse"]["tables"]["big"], Json::parse(R"({"type": "table_wise"})"));
  EXPECT_EQ(n[1].label, "table:big=row_wise");
  EXPECT_EQ(n[1].document["sparse"]["tables"]["big"], "row_wise");
  EXPECT_EQ(n[10].label, "table:wide=data_parallel");
  EXPECT_EQ(n[10].dimension, 2u);
  EXPECT_EQ(n[10].document["sparse"]["tables"]["wide"], "data_parallel");
  EXPECT_EQ(n[10].document["sparse"]["tables"]["big"]["ranks"], Json::parse("[3]"));
  EXPECT_EQ(n[31].label, "priorities=equal");
  EXPECT_EQ(n[31].document["schedule"], Json::object());
  EXPECT_EQ(n[35].label, "sm_free_comm=on");
  EXPECT_EQ(n[35].document["schedule"]["sm_free_comm"], true);
}

}  // namespace
}  // namespace strait::planner
