// Sampling and balancing, with hand-checkable expectations:
//   - the same seed gives the same batches; replicas get different lengths;
//   - a fixed length L = 256 gives every replica cost B (a L + b L^2) exactly;
//   - on a lognormal (sigma 1.2) length distribution over 8 replicas of 32 samples, greedy
//     (LPT) and Karmarkar-Karp balancing lower the largest replica cost and keep the total;
//     with a fixed length they change nothing;
//   - sample cost of the small HSTU (n = 2, d = 64, h = 2, dqk = dv = 32, neg = 16):
//     b = n h (dqk + dv) = 256, a = n (2 d h (2 dqk + 3 dv) + h (dqk + dv)) + 2 d neg
//       = 2 (2 x 64 x 2 x 160 + 128) + 2048 = 84224.
#include <gtest/gtest.h>

#include <cmath>

#include <algorithm>
#include <numeric>
#include <queue>
#include <random>

#include "sim/workload/batch.hpp"
#include "sim/workload/load_balance.hpp"
#include "test_support.hpp"

namespace strait::sim::workload {
namespace {

using testing_support::kSmallHstu;
using testing_support::scenario_of;

std::string data_with(const std::string& length) {
  return R"({"batch_size": {"per_rank": 32}, "max_length": 8192, "sequence_length": )" + length +
         "}";
}

TrainingScenario hstu8(const std::string& length, const std::string& balance = "none") {
  return scenario_of("hgx-h100-8.json", kSmallHstu, data_with(length),
                     R"({"schedule": {"load_balance": ")" + balance + R"("}})");
}

double max_cost(const std::vector<ReplicaBatch>& b) {
  double m = 0;
  for (const auto& r : b) m = std::max(m, r.cost);
  return m;
}

double total_cost(const std::vector<ReplicaBatch>& b) {
  double t = 0;
  for (const auto& r : b) t += r.cost;
  return t;
}

const char* kLognormal = R"({"distribution": "lognormal", "mean": 600, "sigma": 1.2})";

TEST(SampleCost, CoefficientsFollowHstuFlops) {
  const auto c =
      sample_cost(ModelConfig::from_config(ConfigNode(Json::parse(kSmallHstu), "m.json")));
  EXPECT_DOUBLE_EQ(c.b, 256);
  EXPECT_DOUBLE_EQ(c.a, 84224);
}

TEST(Sampling, IsDeterministicForASeedAndDiffersAcrossReplicas) {
  const auto sc = hstu8(kLognormal);
  const auto a = sample_step(sc, 0), b = sample_step(sc, 0), next = sample_step(sc, 1);
  ASSERT_EQ(a.size(), 8u);
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].lengths, b[i].lengths);
  EXPECT_NE(a[0].lengths, a[1].lengths);
  EXPECT_NE(a[0].lengths, next[0].lengths);
  for (const auto& r : a) {
    EXPECT_EQ(r.samples, 32);
    for (auto l : r.lengths) EXPECT_TRUE(l >= 1 && l <= 8192);
  }
}

TEST(Sampling, FixedLengthGivesEqualCostPerReplica) {
  const auto sc = hstu8(R"({"distribution": "fixed", "value": 256})");
  const auto c = sample_cost(sc.model);
  for (const auto& r : sample_step(sc, 0)) {
    EXPECT_DOUBLE_EQ(r.cost, 32 * c(256));
    EXPECT_DOUBLE_EQ(r.tokens, 32 * 256);
    EXPECT_DOUBLE_EQ(r.pairs, 32 * 256 * 257 / 2);
  }
}

TEST(LoadBalance, LowersTheMaximumCostOnAHeavyTail) {
  const auto none = sample_step(hstu8(kLognormal), 0);
  for (const char* method : {"greedy", "karmarkar_karp"}) {
    const auto balanced = sample_step(hstu8(kLognormal, method), 0);
    EXPECT_LT(max_cost(balanced), 0.9 * max_cost(none)) << method;
    EXPECT_NEAR(total_cost(balanced), total_cost(none), 1e-6 * total_cost(none)) << method;
    // LPT's bound: the mean plus the largest single sample.
    double largest = 0;
    for (const auto& r : none) {
      for (auto l : r.lengths) largest = std::max(largest, static_cast<double>(l));
    }
    const auto cost = sample_cost(hstu8(kLognormal).model);
    EXPECT_LE(max_cost(balanced), total_cost(none) / 8 + cost(largest)) << method;
  }
}

TEST(LoadBalance, ChangesNothingWithAFixedLength) {
  const std::string fixed = R"({"distribution": "fixed", "value": 300})";
  const auto none = sample_step(hstu8(fixed), 0);
  for (const char* method : {"greedy", "karmarkar_karp"}) {
    const auto balanced = sample_step(hstu8(fixed, method), 0);
    for (std::size_t i = 0; i < none.size(); ++i) {
      EXPECT_EQ(balanced[i].samples, none[i].samples);
      EXPECT_DOUBLE_EQ(balanced[i].cost, none[i].cost);
    }
  }
}

// {8, 7, 6, 5, 4} into 2 bins: LPT gives {8, 5, 4} = 17 and {7, 6} = 13; KK (largest
// differencing) gives 16 and 14 (optimal is 15/15: both are heuristics).
TEST(LoadBalance, GreedyAndKarmarkarKarpOnAClassicInstance) {
  const std::vector<double> costs = {8, 7, 6, 5, 4};
  auto loads = [&](const std::vector<int>& bins) {
    std::vector<double> l(2, 0);
    for (std::size_t i = 0; i < costs.size(); ++i) l[static_cast<std::size_t>(bins[i])] += costs[i];
    std::sort(l.begin(), l.end());
    return l;
  };
  EXPECT_EQ(loads(balance_greedy(costs, 2)), (std::vector<double>{13, 17}));
  EXPECT_EQ(loads(balance_karmarkar_karp(costs, 2)), (std::vector<double>{14, 16}));
}

// LPT by its textbook form (a stable sort by cost, largest first; a priority queue of
// (load, bin) popped and pushed per item) on random costs with many ties: balance_greedy
// (sort of pairs, heap top replaced in place) gives every item the same bin.
TEST(LoadBalance, GreedyIsTheTextbookLpt) {
  const auto textbook = [](const std::vector<double>& costs, int bins) {
    std::vector<int> order(costs.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int x, int y) {
      return costs[static_cast<std::size_t>(x)] > costs[static_cast<std::size_t>(y)];
    });
    using Entry = std::pair<double, int>;
    std::priority_queue<Entry, std::vector<Entry>, std::greater<>> heap;
    for (int b = 0; b < bins; ++b) heap.emplace(0.0, b);
    std::vector<int> out(costs.size());
    for (int i : order) {
      auto [load, bin] = heap.top();
      heap.pop();
      out[static_cast<std::size_t>(i)] = bin;
      heap.emplace(load + costs[static_cast<std::size_t>(i)], bin);
    }
    return out;
  };
  std::mt19937_64 rng(5);
  for (int bins : {1, 2, 3, 7, 64, 1000}) {
    std::vector<double> costs(3000);
    for (auto& c : costs) c = static_cast<double>(rng() % 50) * 0.5;  // ties in costs and loads
    EXPECT_EQ(balance_greedy(costs, bins), textbook(costs, bins)) << bins << " bins";
    // Costs spread over many binades (every digit of the radix sort varies), -0 among the
    // zeros; and a negative cost, which takes the comparison sort.
    for (auto& c : costs) {
      c = std::ldexp(static_cast<double>(rng() % 1000), static_cast<int>(rng() % 80) - 40);
      if (rng() % 50 == 0) c = -0.0;
    }
    EXPECT_EQ(balance_greedy(costs, bins), textbook(costs, bins)) << bins << " bins, spread";
    costs[7] = -1.5;
    EXPECT_EQ(balance_greedy(costs, bins), textbook(costs, bins)) << bins << " bins, negative";
    // Whole-number costs (loads kept as integers) with ties, small and near the bound.
    for (auto& c : costs) c = static_cast<double>(rng() % 40);
    EXPECT_EQ(balance_greedy(costs, bins), textbook(costs, bins)) << bins << " bins, whole";
    for (auto& c : costs) c = std::ldexp(static_cast<double>(rng() % 8), 30);
    EXPECT_EQ(balance_greedy(costs, bins), textbook(costs, bins)) << bins << " bins, 2^30";
  }
}

// Bounded KK, forced into two levels (max_work 1): 4 bins = 2 groups of 2. Level 1 splits
// {5,5,4,4,3,3,2,2} (28) into {5,4,3,2} and {5,4,3,2} (each pair differenced across the
// groups), level 2 each into {5,2} and {4,3}: four bins of 7, the optimum.
TEST(LoadBalance, BoundedKarmarkarKarpSplitsInTwoLevelsPastItsWorkLimit) {
  const std::vector<double> costs = {5, 5, 4, 4, 3, 3, 2, 2};
  std::vector<double> load(4, 0);
  const auto bins = balance_karmarkar_karp_bounded(costs, 4, 1);
  for (std::size_t i = 0; i < costs.size(); ++i)
    load[static_cast<std::size_t>(bins[i])] += costs[i];
  EXPECT_EQ(load, (std::vector<double>{7, 7, 7, 7}));
  // Within the limit it is exact KK, item for item.
  EXPECT_EQ(balance_karmarkar_karp_bounded(costs, 4, 1e9), balance_karmarkar_karp(costs, 4));
  // A prime number of bins has no two-level split: LPT.
  EXPECT_EQ(balance_karmarkar_karp_bounded(costs, 3, 1), balance_greedy(costs, 3));
}

// Issue 13: 1,024 replicas x 32 samples of equal cost (33.6 M items x bins, past the exact
// limit) balance to exactly 32 samples a replica.
TEST(LoadBalance, BoundedKarmarkarKarpBalancesAThousandReplicas) {
  const std::vector<double> costs(1024 * 32, 1.0);
  std::vector<int> count(1024, 0);
  for (int b : balance_karmarkar_karp_bounded(costs, 1024, 2e7))
    ++count[static_cast<std::size_t>(b)];
  EXPECT_EQ(*std::min_element(count.begin(), count.end()), 32);
  EXPECT_EQ(*std::max_element(count.begin(), count.end()), 32);
}

}  // namespace
}  // namespace strait::sim::workload
