// BatchCache (sim/workload/batch_cache.hpp): a kept sampling is exactly sample_steps' for
// every scenario of its key, whatever else the plan changes; another key draws again.
//   - group size 4 against 8, pipeline depth 2: the key is the same, one draw;
//   - greedy against no balancing: two keys, two draws, each equal to sample_steps;
//   - steps are no key: more steps extend a kept sampling, fewer are its first steps,
//     each equal to sample_steps of that many;
//   - capacity 1: a dropped key is drawn again, identical to the first draw; capacity 2:
//     the least recently used is the one dropped;
//   - another base scenario is refused; the work limit is checked on a hit too.
#include <gtest/gtest.h>

#include <stdexcept>

#include "sim/workload/batch_cache.hpp"
#include "sim/workload/work_estimate.hpp"
#include "test_support.hpp"

namespace strait::sim::workload {
namespace {

using testing_support::kSmallHstu;
using testing_support::scenario_of;

const char* kData =
    R"({"batch_size": {"per_rank": 32}, "max_length": 8192,
        "sequence_length": {"distribution": "lognormal", "mean": 600, "sigma": 1.2}})";

TrainingScenario hstu8(const std::string& plan, int steps = 2) {
  return scenario_of("hgx-h100-8.json", kSmallHstu, kData, plan, steps);
}

void expect_same(const StepBatches& a, const StepBatches& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t s = 0; s < a.size(); ++s) {
    ASSERT_EQ(a[s].size(), b[s].size());
    for (std::size_t g = 0; g < a[s].size(); ++g) {
      EXPECT_EQ(a[s][g].lengths, b[s][g].lengths);
      EXPECT_EQ(a[s][g].ids, b[s][g].ids);
      EXPECT_EQ(a[s][g].cost, b[s][g].cost);
      EXPECT_EQ(a[s][g].samples, b[s][g].samples);
    }
  }
}

TEST(BatchCache, PlansThatSampleAlikeShareOneDraw) {
  BatchCache cache;
  const auto base = hstu8(R"({"schedule": {"load_balance": "greedy"}})");
  const auto grouped =
      hstu8(R"({"sparse": {"group_size": 4}, "schedule": {"load_balance": "greedy"}})");
  const auto piped = hstu8(R"({"schedule": {"load_balance": "greedy", "pipeline_depth": 2}})");
  const auto first = cache.get(base, base.steps);
  expect_same(*first, sample_steps(base, base.steps));
  EXPECT_EQ(cache.get(grouped, grouped.steps), first);
  EXPECT_EQ(cache.get(piped, piped.steps), first);
  expect_same(*first, sample_steps(grouped, grouped.steps));
  EXPECT_EQ(cache.draws(), 1);
}

TEST(BatchCache, BalancingIsAKey) {
  BatchCache cache;
  const auto greedy = hstu8(R"({"schedule": {"load_balance": "greedy"}})");
  const auto none = hstu8(R"({"schedule": {"load_balance": "none"}})");
  const auto a = cache.get(greedy, 2);
  const auto b = cache.get(none, 2);
  EXPECT_EQ(cache.draws(), 2);
  expect_same(*a, sample_steps(greedy, 2));
  expect_same(*b, sample_steps(none, 2));
  // Balancing moves samples between replicas: the two samplings differ.
  EXPECT_NE((*a)[0][0].lengths, (*b)[0][0].lengths);
}

TEST(BatchCache, MoreStepsExtendASamplingAndFewerAreItsFirst) {
  BatchCache cache;
  const auto none = hstu8(R"({"schedule": {"load_balance": "none"}})");
  const auto two = cache.get(none, 2);
  const auto four = cache.get(none, 4);  // steps 2 and 3 drawn after the kept two
  EXPECT_EQ(cache.draws(), 2);
  expect_same(*four, sample_steps(none, 4));
  const auto one = cache.get(none, 1);
  const auto again = cache.get(none, 4);
  EXPECT_EQ(cache.draws(), 2);
  expect_same(*one, sample_steps(none, 1));
  EXPECT_EQ(again, four);
  expect_same(*two, sample_steps(none, 2));
}

TEST(BatchCache, ADroppedSamplingIsDrawnAgainTheSame) {
  BatchCache cache(1);
  const auto greedy = hstu8(R"({"schedule": {"load_balance": "greedy"}})");
  const auto none = hstu8(R"({"schedule": {"load_balance": "none"}})");
  const auto first = cache.get(greedy, 2);
  cache.get(none, 2);  // drops greedy's
  const auto again = cache.get(greedy, 2);
  EXPECT_EQ(cache.draws(), 3);
  EXPECT_NE(again, first);
  expect_same(*again, *first);
}

TEST(BatchCache, TheLeastRecentlyUsedSamplingIsDropped) {
  BatchCache cache(2);
  const auto greedy = hstu8(R"({"schedule": {"load_balance": "greedy"}})");
  const auto none = hstu8(R"({"schedule": {"load_balance": "none"}})");
  const auto kk = hstu8(R"({"schedule": {"load_balance": "karmarkar_karp"}})");
  const auto kept = cache.get(greedy, 2);
  cache.get(none, 2);
  EXPECT_EQ(cache.get(greedy, 2), kept);  // used last now
  cache.get(kk, 2);                       // drops none's, not greedy's
  EXPECT_EQ(cache.get(greedy, 2), kept);
  EXPECT_EQ(cache.draws(), 3);
  cache.get(none, 2);
  EXPECT_EQ(cache.draws(), 4);
}

TEST(BatchCache, RefusesAnotherBaseAndChecksTheWorkLimitOnAHit) {
  BatchCache cache;
  auto sc = hstu8("{}");
  cache.get(sc, 2);
  auto other = sc;
  other.seed = sc.seed + 1;
  EXPECT_THROW(cache.get(other, 2), std::logic_error);
  sc.max_work = 10;  // below the ranks' work alone
  EXPECT_THROW(cache.get(sc, 2), WorkLimitError);
}

}  // namespace
}  // namespace strait::sim::workload
