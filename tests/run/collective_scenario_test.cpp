#include "sim/run/collective_scenario.hpp"

#include <gtest/gtest.h>

#include "run_test_support.hpp"
#include "sim/core/error.hpp"

namespace strait::sim::run {
namespace {

CollectiveScenario scenario(const std::string& json) {
  return CollectiveScenario::from_config(
      ConfigNode(Json::parse(json), testing_support::source("configs/scenarios/inline.json")));
}

// Two equal ring all-reduces on the 8 GPUs of one host: one alone takes T = B + L, its
// bandwidth part B (14 steps of b) plus L = NCCL's Simple base latency 8.4 us and 14 steps
// of l = Simple's 3.4 us per step, the larger of it and 2 NVLink hops at 0.1 us (L = 56 us;
// the cluster's "nccl" defaults). Run together they share every NVLink: a step is paced over its
// bytes and its latency (flow mode), so each step takes max(2b, b + l) = 2b (b is ~75 us here):
// both end at L0 + 2B = 2T - L0 - 28 l, where L0 = 8.4 us is paid once. When the second
// runs after the first, it starts at T and ends at 2T.
TEST(CollectiveScenario, ConcurrentCollectivesShareAndAfterOrdersThem) {
  const auto alone = run_collective_scenario(scenario(R"({"cluster": "../clusters/hgx-h100-8.json",
      "collectives": [{"name": "a", "op": "all_reduce", "algorithm": "ring", "bytes": "256 MiB", "ranks": "all"}]})"),
                                             {});
  const Time t = alone.collectives[0].end;
  const auto both = run_collective_scenario(scenario(R"({"cluster": "../clusters/hgx-h100-8.json",
      "collectives": [{"name": "a", "op": "all_reduce", "algorithm": "ring", "bytes": "256 MiB", "ranks": "all"},
                      {"name": "b", "op": "all_reduce", "algorithm": "ring", "bytes": "256 MiB", "ranks": "all"}]})"),
                                            {});
  const double base_us = 8.4;
  const double step_latency_us = 3.4;
  const double together_us = 2 * t.to_us() - base_us - 28 * step_latency_us;
  EXPECT_NEAR(both.collectives[0].end.to_us(), together_us, 0.01);
  EXPECT_NEAR(both.collectives[1].end.to_us(), together_us, 0.01);
  const auto chained =
      run_collective_scenario(scenario(R"({"cluster": "../clusters/hgx-h100-8.json",
      "collectives": [{"name": "a", "op": "all_reduce", "algorithm": "ring", "bytes": "256 MiB", "ranks": "all"},
                      {"name": "b", "op": "all_reduce", "algorithm": "ring", "bytes": "256 MiB", "ranks": "all", "after": ["a"]}]})"),
                              {});
  EXPECT_EQ(chained.collectives[1].start, t);
  EXPECT_EQ(chained.collectives[1].end, t * 2);
  EXPECT_EQ(chained.makespan, t * 2);
}

std::string error_of(const std::string& json) {
  try {
    scenario(json);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

TEST(CollectiveScenario, BadEntriesNameTheFileAndKey) {
  const std::string file = testing_support::source("configs/scenarios/inline.json");
  EXPECT_EQ(error_of(R"({"cluster": "../clusters/hgx-h100-8.json",
      "collectives": [{"name": "a", "op": "allreduc", "bytes": "1 MiB", "ranks": "all"}]})"),
            file +
                ": /collectives/0/op: expected one of all_reduce, all_gather, reduce_scatter, "
                "all_to_all, "
                "all_to_allv, broadcast, reduce, sendrecv (all_to_allv needs a send matrix: use "
                "all_to_all)");
  EXPECT_EQ(
      error_of(R"({"cluster": "../clusters/hgx-h100-8.json",
      "collectives": [{"name": "a", "op": "all_reduce", "bytes": "1 MiB", "ranks": "all", "after": ["b"]}]})"),
      file + ": /collectives/0/after/0: expected the name of a collective listed before \"a\"");
  EXPECT_EQ(error_of(R"({"cluster": "../clusters/nope.json", "collectives": []})"),
            file + ": /cluster: cluster file '" +
                testing_support::source("configs/clusters/nope.json") + "' does not exist");
  EXPECT_EQ(error_of(R"({"cluster": "../clusters/hgx-h100-8.json",
      "collectives": [{"name": "a", "op": "all_reduce", "bytes": "1 MiB", "ranks": [0, 12]}]})"),
            file + ": /collectives/0/ranks/1: expected a GPU index in 0..7");
}

}  // namespace
}  // namespace strait::sim::run
