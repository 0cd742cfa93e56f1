// planner/detail/candidate_pool.hpp: every plan the search builds, once: points and
// documents parsed, laid out, placed and checked against the constraints; two routes to
// one document are one candidate.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "planner/detail/candidate_pool.hpp"
#include "planner/plan_document.hpp"
#include "planner_test_support.hpp"

namespace strait::planner {
namespace {

using namespace testing_support;
using detail::CandidatePool;

/// A request, its table costs and search space, and a pool over them (host size 8).
struct Pool {
  explicit Pool(PlanRequest r)
      : req(std::move(r)),
        costs(req.base, bundled_cost()),
        space(req.base.cluster, req.base.layout.world, req.base.model, req.constraints, nullptr),
        pool(req, costs, space, 8) {}
  PlanRequest req;
  TableCosts costs;
  SearchSpace space;
  CandidatePool pool;
};

// The start point: all four tables row-wise (nothing to place), one group of 8.
TEST(CandidatePool, APointIsBuiltOnceAndLaidOut) {
  Pool p(request_of("hgx-h100-8.json", kSmallDlrm, kSmallDlrmData));
  const auto start = p.space.start();
  const std::size_t id = p.pool.point(start);
  EXPECT_EQ(id, 0u);
  const auto& c = p.pool[id];
  EXPECT_TRUE(c.valid);
  EXPECT_TRUE(c.usable());
  EXPECT_EQ(c.point, start);
  EXPECT_EQ(c.ranked.label, "start point");
  EXPECT_EQ(c.ranked.document, p.space.compose(start));
  EXPECT_EQ(c.layout.world, 8);
  EXPECT_EQ(c.layout.sparse.size, 8);
  EXPECT_EQ(p.pool.point(start), 0u);
  EXPECT_EQ(p.pool.size(), 1u);
}

// big table-wise and mid column-wise x2 (dimensions 1 and 3), the others row-wise: the
// placement (table_placement.hpp) puts big, the costlier slice (163,840 ids of 64 columns
// against 40,960 of 32), on member 0 and mid's slices on the next least loaded, 1 and 2;
// the document records them. The same document given again, placed or not, is the same
// candidate, with its first label.
TEST(CandidatePool, APointsSlicesArePlacedAndItsDocumentIsTheKey) {
  Pool p(request_of("hgx-h100-8.json", kSmallDlrm, kSmallDlrmData));
  auto point = p.space.start();
  point[1] = 1;  // table:big=table_wise
  point[3] = 4;  // table:mid=column_wise x2
  const std::size_t id = p.pool.point(point);
  const auto& c = p.pool[id];
  ASSERT_TRUE(c.valid) << c.error;
  EXPECT_EQ(c.ranked.label, "table:big=table_wise, table:mid=column_wise x2");
  EXPECT_EQ(c.ranked.document["sparse"]["tables"],
            Json::parse(R"({"big": {"type": "table_wise", "ranks": [0]}, "wide": "row_wise",
                            "mid": {"type": "column_wise", "column_shards": 2, "ranks": [1, 2]},
                            "tiny": "row_wise"})"));
  EXPECT_EQ(c.ranked.plan.sharding[0].ranks, (std::vector<int>{0}));
  EXPECT_EQ(c.ranked.plan.sharding[2].ranks, (std::vector<int>{1, 2}));
  EXPECT_EQ(p.pool.document(p.space.compose(point), "again", true), id);
  EXPECT_EQ(p.pool.document(c.ranked.document, "as placed", false), id);
  EXPECT_EQ(p.pool[id].ranked.label, "table:big=table_wise, table:mid=column_wise x2");
  EXPECT_EQ(p.pool.size(), 1u);
  // Another document is another candidate, unplaced when asked so.
  const std::size_t other =
      p.pool.document(Json::parse(R"({"sparse": {"tables": {"big": "table_wise"}}})"), "x", false);
  EXPECT_EQ(other, 1u);
  EXPECT_TRUE(p.pool[other].ranked.plan.sharding[0].ranks.empty());
  EXPECT_EQ(p.pool.size(), 2u);
}

// The scenario's plan file names itself, describes itself and sets a default sharding;
// the start point composed from it writes each table: the same job, one candidate (priced
// and simulated once), with the start point's label. A different default is another plan.
TEST(CandidatePool, DocumentsOfTheSamePlanAreOneCandidate) {
  Pool p(request_of("hgx-h100-8.json", kSmallDlrm, kSmallDlrmData));
  const std::size_t start = p.pool.point(p.space.start());
  const Json scenario = Json::parse(R"({"name": "dlrm", "description": "hand-written",
      "sparse": {"group_size": 8, "placement": "host", "default": "row_wise"}})");
  EXPECT_EQ(p.pool.document(scenario, "scenario plan", false), start);
  EXPECT_EQ(p.pool[start].ranked.label, "start point");
  EXPECT_EQ(p.pool.size(), 1u);
  const Json other = Json::parse(R"({"name": "dlrm", "sparse": {"default": "table_wise"}})");
  EXPECT_NE(p.pool.document(other, "table-wise", false), start);
  EXPECT_EQ(p.pool.size(), 2u);
}

// A table-wise slice placed on member 0 by the pool, and the same document without an
// owner, which the shard map's greedy placement also puts on member 0 (the least loaded,
// lowest index): one plan. An owner elsewhere is another.
TEST(CandidatePool, AnExplicitOwnerAndTheGreedyPlacementOfTheSameMemberAreOneCandidate) {
  Pool p(request_of("hgx-h100-8.json", kSmallDlrm, kSmallDlrmData));
  auto point = p.space.start();
  point[1] = 1;  // table:big=table_wise
  const std::size_t id = p.pool.point(point);
  ASSERT_EQ(p.pool[id].ranked.plan.sharding[0].ranks, (std::vector<int>{0}));
  const Json unplaced = Json::parse(
      R"({"sparse": {"group_size": 8, "placement": "host", "tables": {"big": "table_wise"}}})");
  EXPECT_EQ(p.pool.document(unplaced, "unplaced", false), id);
  const Json elsewhere = Json::parse(R"({"sparse": {"group_size": 8, "placement": "host",
      "tables": {"big": {"type": "table_wise", "ranks": [3]}}}})");
  EXPECT_NE(p.pool.document(elsewhere, "on member 3", false), id);
}

// A group of 3 cannot divide 8 ranks: the candidate is kept, invalid, with the reason.
TEST(CandidatePool, ADocumentTheClusterCannotHoldIsInvalidWithTheReason) {
  Pool p(request_of("hgx-h100-8.json", kSmallDlrm, kSmallDlrmData));
  const Json doc = Json::parse(R"({"sparse": {"group_size": 3}})");
  const auto& c = p.pool[p.pool.document(doc, "bad", false)];
  EXPECT_FALSE(c.valid);
  EXPECT_FALSE(c.usable());
  EXPECT_NE(c.error.find("divides the 8 ranks"), std::string::npos) << c.error;
  EXPECT_EQ(c.ranked.document, doc);
  EXPECT_EQ(c.ranked.label, "bad");
}

// A valid plan the constraints rule out is built, and excluded with the constraint.
TEST(CandidatePool, APlanThatBreaksAConstraintIsExcluded) {
  Pool p(request_of("hgx-h100-8.json", kSmallDlrm, kSmallDlrmData,
                    R"({"forbid_sharding": {"big": ["table_wise"]}})"));
  const auto& c = p.pool[p.pool.document(
      Json::parse(R"({"sparse": {"tables": {"big": "table_wise"}}})"), "scenario plan", true)];
  EXPECT_TRUE(c.valid);
  EXPECT_FALSE(c.usable());
  EXPECT_EQ(c.excluded.rfind("constraints.json: /forbid_sharding", 0), 0u) << c.excluded;
  EXPECT_NE(c.excluded.find("\"big\""), std::string::npos) << c.excluded;
}

// A job on 4 of the 8 GPUs: every document says so; a group as large as the job leaves no
// replicas, so replica sync keys are dropped.
TEST(CandidatePool, DocumentsOfAJobOnFewerGpusNameTheirRanks) {
  auto req = request_of("hgx-h100-8.json", kSmallDlrm, kSmallDlrmData);
  req.base = scenario_for(req.base,
                          parse_plan(Json::parse(R"({"ranks": 4})"), "plan.json", req.base.model));
  Pool p(std::move(req));
  const auto& c = p.pool[p.pool.document(Json::parse(R"({"sparse": {"group_size": 4,
      "placement": "host", "replica_sync_every": 10, "replica_sync_staleness": 4}})"),
                                         "four", false)];
  ASSERT_TRUE(c.valid) << c.error;
  EXPECT_EQ(c.ranked.document,
            Json::parse(R"({"ranks": 4, "sparse": {"group_size": 4, "placement": "host"}})"));
  EXPECT_EQ(c.layout.world, 4);
}

}  // namespace
}  // namespace strait::planner
