// Bad model, data, plan and scenario files give one clear message naming the file, the
// JSON pointer and what was expected.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include <fmt/format.h>

#include "sim/workload/unique_rows.hpp"
#include "test_support.hpp"

namespace strait::sim::workload {
namespace {

using testing_support::config_error_of;
using testing_support::scenario_of;
using testing_support::source;

const char* kModel =
    R"({"embedding": {"tables": [{"name": "item", "rows": 1000, "dim": 16, "pooling": "sequence"},
                                                {"name": "user", "rows": 1000, "dim": 16}]},
  "dense": {"hstu": {"layers": 1, "model_dim": 32, "heads": 1, "head_dim": 32}}})";
const char* kData = R"({"batch_size": {"per_rank": 2}, "max_length": 64,
  "sequence_length": {"distribution": "fixed", "value": 8}})";

ModelConfig model_of(const std::string& text) {
  return ModelConfig::from_config(ConfigNode(Json::parse(text), "model.json"));
}

TEST(ConfigErrors, UnknownModelKeySuggestsTheClosest) {
  EXPECT_EQ(
      config_error_of([] {
        model_of(
            R"({"embedding": {"tables": []}, "dense": {"top_mlp": {"layers": [1]}, "bottom_mpl": {}}})");
      }),
      "model.json: /dense/bottom_mpl: unknown key; did you mean \"bottom_mlp\"?");
}

TEST(ConfigErrors, NegativeDimensionsAreRejected) {
  EXPECT_EQ(config_error_of([] {
              model_of(R"({"embedding": {"tables": [{"name": "t", "rows": 10, "dim": -4}]},
                          "dense": {"top_mlp": {"layers": [1]}}})");
            }),
            "model.json: /embedding/tables/0/dim: expected a positive integer, got -4");
  EXPECT_EQ(
      config_error_of([] {
        model_of(R"({"embedding": {"tables": []}, "dense": {"top_mlp": {"layers": [64, -1]}}})");
      }),
      "model.json: /dense/top_mlp/layers/1: expected a positive layer width, got -1");
}

TEST(ConfigErrors, HstuKernelChoicesNameTheirKeyAndValues) {
  auto hstu = [](const std::string& key) {
    return R"({"embedding": {"tables": [{"name": "item", "rows": 10, "dim": 32,
              "pooling": "sequence"}]}, "dense": {"hstu": {"layers": 1, "model_dim": 32,
              "heads": 1, "head_dim": 32, )" +
           key + "}}}";
  };
  EXPECT_EQ(config_error_of([&] { model_of(hstu(R"("dropout": 1.5)")); }),
            "model.json: /dense/hstu/dropout: expected a dropout ratio in [0, 1), got 1.5");
  EXPECT_EQ(config_error_of([&] { model_of(hstu(R"("attention_kernel": "flash")")); }),
            "model.json: /dense/hstu/attention_kernel: expected one of \"fused\", \"unfused\", "
            "got \"flash\"");
  EXPECT_EQ(config_error_of([&] { model_of(hstu(R"("negative_sampling": "each")")); }),
            "model.json: /dense/hstu/negative_sampling: expected one of \"shared\", "
            "\"per_token\", got \"each\"");
  const ModelConfig m = model_of(hstu(R"("dropout": 0)"));
  EXPECT_TRUE(m.hstu.fused_attention);
  EXPECT_TRUE(m.hstu.shared_negatives);
  EXPECT_EQ(m.hstu.dropout, 0.0);
}

TEST(ConfigErrors, UnknownShardingType) {
  EXPECT_EQ(
      config_error_of([] {
        scenario_of("hgx-h100-8.json", kModel, kData,
                    R"({"sparse": {"tables": {"item": "row_wize"}}})");
      }),
      "plan.json: /sparse/tables/item: unknown sharding type \"row_wize\" (did you mean "
      "\"row_wise\"?); "
      "expected one of data_parallel, table_wise, row_wise, column_wise, table_row_wise, grid");
}

TEST(ConfigErrors, UnknownTableInSharding) {
  EXPECT_EQ(config_error_of([] {
              scenario_of("hgx-h100-8.json", kModel, kData,
                          R"({"sparse": {"tables": {"items": "row_wise"}}})");
            }),
            "plan.json: /sparse/tables/items: unknown key; did you mean \"item\"?");
}

TEST(ConfigErrors, CommPrecisionNamesKeyAndChoices) {
  EXPECT_EQ(config_error_of([] {
              scenario_of("hgx-h100-8.json", kModel, kData,
                          R"({"sparse": {"comm_precision": {"forward": "fp12"}}})");
            }),
            "plan.json: /sparse/comm_precision/forward: expected one of \"fp32\", \"tf32\", "
            "\"bf16\", \"fp16\", \"fp8\", got \"fp12\"");
  EXPECT_EQ(config_error_of([] {
              scenario_of("hgx-h100-8.json", kModel, kData,
                          R"({"sparse": {"comm_precision": {"fwd": "fp16"}}})");
            }).substr(0, 46),
            "plan.json: /sparse/comm_precision/fwd: unknown");
}

// Values above 2^31 were read into 32-bit integers and wrapped (4294967298 ranks became 2):
// each is refused with its range now.
TEST(ConfigErrors, IntegersPast32BitsAreRefusedNotWrapped) {
  EXPECT_EQ(config_error_of(
                [] { scenario_of("hgx-h100-8.json", kModel, kData, R"({"ranks": 4294967298})"); }),
            "plan.json: /ranks: expected an integer in [1, 16777216], got 4294967298");
  EXPECT_EQ(config_error_of([] {
              scenario_of("hgx-h100-8.json", kModel, kData,
                          R"({"schedule": {"pipeline_depth": 4294967298}})");
            }),
            "plan.json: /schedule/pipeline_depth: expected 1 (none), 2 or 3, got 4294967298");
  EXPECT_EQ(config_error_of([] {
              scenario_of("hgx-h100-8.json", kModel, kData,
                          R"({"sparse": {"tables": {"user": {"type": "column_wise",
                                                              "column_shards": 4294967298}}}})");
            }),
            "plan.json: /sparse/tables/user/column_shards: expected an integer in [1, 65536], got "
            "4294967298");
  EXPECT_EQ(config_error_of([] {
              model_of(R"({"embedding": {"tables": []},
                          "dense": {"top_mlp": {"layers": [4294967360, 1]}}})");
            }),
            "model.json: /dense/top_mlp/layers/0: expected a layer width of at most 2^24, got "
            "4294967360");
  EXPECT_EQ(config_error_of([] {
              model_of(R"({"embedding": {"tables": []}, "dense": {"dense_features": 4294967296,
                          "top_mlp": {"layers": [1]}}})");
            }),
            "model.json: /dense/dense_features: expected an integer in [0, 1048576], got "
            "4294967296");
}

// A slow rank of 4294967296 was read as rank 0; ranks 2147483648 was reported as
// "-2147483648 ranks".
TEST(ConfigErrors, RanksPast31BitsAreRefusedWithTheirRange) {
  EXPECT_EQ(config_error_of(
                [] { scenario_of("hgx-h100-8.json", kModel, kData, R"({"ranks": 2147483648})"); }),
            "plan.json: /ranks: expected an integer in [1, 16777216], got 2147483648");
  const std::string path = ::testing::TempDir() + "/slow-rank.json";
  std::ofstream(path) << R"({"cluster": ")" << source("configs/clusters/hgx-h100-8.json")
                      << R"(", "model": ")" << source("configs/models/dlrm-tiny.json")
                      << R"(", "data": ")" << source("configs/data/dlrm-tiny.json")
                      << R"(", "plan": {"ranks": 8}, "hardware": {"slow_ranks": )"
                      << R"([{"rank": 4294967296, "slowdown": 2}]}})";
  EXPECT_EQ(config_error_of([&] { TrainingScenario::load(path); }),
            path + ": /hardware/slow_ranks/0/rank: expected a rank in 0..7");
}

// A pooling factor of 1e308 made infinite FLOPs and a batch of 2^32 per rank ran out of
// memory: each value a batch is drawn from has a stated range.
TEST(ConfigErrors, BatchValuesHaveARange) {
  EXPECT_EQ(config_error_of([] {
              scenario_of("hgx-h100-8.json", kModel,
                          R"({"batch_size": {"per_rank": 2}, "max_length": 64,
                "sequence_length": {"distribution": "fixed", "value": 8},
                "pooling_factors": {"user": {"distribution": "fixed", "value": 1e308}}})",
                          "{}");
            }),
            "data.json: /pooling_factors/user/value: expected a value in [0, 2^30 = 1073741824], "
            "got 1e+308");
  EXPECT_EQ(config_error_of([] {
              scenario_of("hgx-h100-8.json", kModel,
                          R"({"batch_size": {"per_rank": 4294967296}, "max_length": 64,
                "sequence_length": {"distribution": "fixed", "value": 8}})",
                          "{}");
            }),
            "data.json: /batch_size/per_rank: expected an integer in [1, 16777216], got "
            "4294967296");
}

// Every distribution draws a count: a fixed pooling factor of 1.5 was accepted (and drawn
// as 2); a mean belongs to a lognormal.
TEST(ConfigErrors, AFixedCountMustBeWhole) {
  EXPECT_EQ(config_error_of([] {
              scenario_of("hgx-h100-8.json", kModel,
                          R"({"batch_size": {"per_rank": 2}, "max_length": 64,
                "sequence_length": {"distribution": "fixed", "value": 8},
                "pooling_factors": {"user": {"distribution": "fixed", "value": 1.5}}})",
                          "{}");
            }),
            "data.json: /pooling_factors/user/value: expected a whole count (a fixed distribution "
            "draws the same count every time; for a mean use \"lognormal\"), got 1.5");
}

TEST(ConfigErrors, ABucketHoldsAtLeastAFewKiB) {
  EXPECT_EQ(config_error_of([] {
              scenario_of("hgx-h100-8.json", kModel, kData, R"({"dense": {"bucket_size": 25}})");
            }),
            "plan.json: /dense/bucket_size: expected a bucket size of at least 4 KiB, got 25 B");
}

TEST(ConfigErrors, GroupedGradSyncIsForDdp) {
  EXPECT_EQ(config_error_of([] {
              scenario_of("hgx-h100-8.json", kModel, kData,
                          R"({"dense": {"parallelism": "fsdp", "grad_sync": "grouped"}})");
            }),
            "plan.json: /dense/grad_sync: applies to \"parallelism\": \"ddp\" only");
}

// An unknown table name among many lists 16 known names and counts the rest: the message
// for a model of 100,000 tables was 229 KB.
TEST(ConfigErrors, AnUnknownKeyAmongManyGivesAShortMessage) {
  std::string tables;
  for (int t = 0; t < 40; ++t)
    tables += (t ? ", " : "") + fmt::format(R"({{"name": "t{}", "rows": 10, "dim": 8}})", t);
  const std::string model =
      R"({"embedding": {"tables": [)" + tables + R"(]}, "dense": {"top_mlp": {"layers": [1]}}})";
  EXPECT_EQ(config_error_of([&] {
              scenario_of("hgx-h100-8.json", model, R"({"batch_size": {"per_rank": 2}})",
                          R"({"sparse": {"tables": {"zzzzz": "row_wise"}}})");
            }),
            "plan.json: /sparse/tables/zzzzz: unknown key (known keys: t0, t1, t2, t3, t4, t5, "
            "t6, t7, t8, t9, t10, t11, t12, t13, t14, t15, and 24 more)");
}

TEST(ConfigErrors, PlanKernelsNameAFamilyAndAnImplementation) {
  EXPECT_EQ(config_error_of([] {
              scenario_of("hgx-h100-8.json", kModel, kData,
                          R"({"kernels": {"attention": "strait"}})");
            }),
            "plan.json: /kernels/attention: \"attention\" is not a kernel family (gemm, "
            "gemm_backward, jagged_attention, embedding_lookup, ...)");
  EXPECT_EQ(config_error_of([] {
              scenario_of("hgx-h100-8.json", kModel, kData, R"({"kernels": {"gemm": 3}})");
            }),
            "plan.json: /kernels/gemm: expected a string, got the number 3");
}

TEST(ConfigErrors, PlacementTooSmallNamesPlanKeyAndSizes) {
  EXPECT_EQ(config_error_of([] {
              scenario_of("h100-1024-rail.json", kModel, kData,
                          R"({"sparse": {"group_size": 16, "placement": "host"}})");
            }),
            "plan.json: /sparse/placement: a group of 16 ranks does not fit in one host: the "
            "largest host holds 8 "
            "of the 1024 ranks");
}

TEST(ConfigErrors, DataErrors) {
  EXPECT_EQ(config_error_of([] {
              scenario_of("hgx-h100-8.json", kModel,
                          R"({"batch_size": {"per_rank": 2}, "max_length": 64,
                "sequence_length": {"distribution": "lognormal", "mean": 100, "sigma": -1}})",
                          "{}");
            }),
            "data.json: /sequence_length/sigma: expected sigma >= 0, got -1");
  EXPECT_EQ(config_error_of([] {
              scenario_of("hgx-h100-8.json", kModel, R"({"batch_size": {"per_rank": 2}})", "{}");
            }),
            "data.json: /sequence_length: missing required key (the model has sequence tables)");
  EXPECT_EQ(config_error_of([] {
              scenario_of("hgx-h100-8.json", kModel,
                          R"({"batch_size": {"global": 12}, "max_length": 64,
                "sequence_length": {"distribution": "fixed", "value": 8}})",
                          "{}");
            }),
            "data.json: /batch_size/global: expected a global batch divisible by the 8 "
            "data-parallel replicas, got 12");
}

TEST(ConfigErrors, ScenarioMissingFileAndUnknownKey) {
  const std::string dir = testing_support::source("configs/scenarios/");
  EXPECT_EQ(config_error_of([&] {
              TrainingScenario::from_config(ConfigNode(
                  Json::parse(
                      R"({"cluster": "../clusters/hgx-h100-8.json", "model": "../models/nope.json",
                                  "data": "../data/hstu-lognormal.json", "plan": "../plans/dlrm-8gpu.json"})"),
                  dir + "s.json"));
            }),
            dir + "s.json: /model: model file '" +
                testing_support::source("configs/models/nope.json") + "' does not exist");
  EXPECT_EQ(config_error_of([&] {
              TrainingScenario::from_config(
                  ConfigNode(Json::parse(R"({"model": {}, "step": 2})"), "s.json"));
            }),
            "s.json: /step: unknown key; did you mean \"steps\"?");
}

// E[unique] = sum_i 1 - (1 - p_i)^n against the exact sum on 10^5 rows.
TEST(UniqueRows, MatchesTheExactSum) {
  for (double s : {0.0, 0.8, 1.05, 1.5}) {
    for (double n : {1e2, 1e4, 1e6}) {
      const double rows = 1e5;
      double h = 0;
      for (double i = 1; i <= rows; ++i) h += std::pow(i, -s);
      double exact = 0;
      for (double i = 1; i <= rows; ++i) exact += 1 - std::pow(1 - std::pow(i, -s) / h, n);
      EXPECT_NEAR(expected_unique_rows(rows, n, s), exact, 2e-3 * exact) << s << " " << n;
    }
  }
  EXPECT_DOUBLE_EQ(expected_unique_rows(1e9, 1, 1.1), 1);
}

// The hot rows' share of Zipf draws, H(N) / H(R): exact where both sums are (R <= 256),
// within 2e-3 of the exact sums on 10^5 rows, N / R for uniform ids.
TEST(UniqueRows, ZipfHeadMassIsTheHarmonicRatio) {
  auto harmonic = [](double n, double s) {
    double h = 0;
    for (double i = 1; i <= n; ++i) h += std::pow(i, -s);
    return h;
  };
  EXPECT_NEAR(zipf_head_mass(200, 10, 1.0), harmonic(10, 1.0) / harmonic(200, 1.0), 1e-12);
  for (double s : {0.8, 1.05, 1.5}) {
    for (double n : {10.0, 1000.0, 50000.0}) {
      const double exact = harmonic(n, s) / harmonic(1e5, s);
      EXPECT_NEAR(zipf_head_mass(1e5, n, s), exact, 2e-3 * exact) << s << " " << n;
    }
  }
  EXPECT_DOUBLE_EQ(zipf_head_mass(1000, 250, 0), 0.25);
  EXPECT_DOUBLE_EQ(zipf_head_mass(1000, 1000, 1.1), 1);
  EXPECT_DOUBLE_EQ(zipf_head_mass(1000, 0, 1.1), 0);
}

TEST(ConfigErrors, HotRowsNameTheTableAndTheRule) {
  EXPECT_EQ(config_error_of([] {
              scenario_of(
                  "hgx-h100-8.json", kModel, kData,
                  R"({"sparse": {"tables": {"user": {"type": "row_wise", "hot_rows": 1000}}}})");
            }),
            "plan.json: /sparse/tables/user: table \"user\" has 1000 rows; hot_rows must be "
            "fewer, got 1000");
  EXPECT_EQ(config_error_of([] {
              scenario_of(
                  "hgx-h100-8.json", kModel, kData,
                  R"({"sparse": {"tables": {"user": {"type": "data_parallel", "hot_rows": 10}}}})");
            }),
            "plan.json: /sparse/tables/user/hot_rows: hot_rows applies to sharded tables (not "
            "data_parallel)");
}

}  // namespace
}  // namespace strait::sim::workload
