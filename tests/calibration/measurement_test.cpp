#include "calibration/measurement.hpp"

#include <cmath>
#include <filesystem>
#include <functional>

#include <gtest/gtest.h>

#include "calibration/kernel_case.hpp"
#include "sim/core/error.hpp"

namespace strait::calibration {
namespace {

using sim::cost::KernelKind;
using sim::cost::Precision;
using sim::network::CollectiveOp;
using Json = nlohmann::json;

const std::string kFile = "records.json";

// One valid GEMM record (the example of measurement.hpp).
Json gemm_record() {
  return Json::parse(R"json({
    "family": "gemm", "shape": {"m": 512, "n": 512, "k": 512}, "dtype": "fp32",
    "set": "fit", "flops": 268435456, "bytes": 3145728, "repetitions": 10, "warmup": 2,
    "median_us": 812.5, "spread": {"min_us": 801.0, "max_us": 840.25, "iqr_us": 6.125},
    "device": "AMD EPYC 7B13 (1 core per rank)", "versions": {"eigen": "3.4.0"},
    "date": "2026-11-23T12:00:00Z"})json");
}

Json document(Json records) {
  return {{"format", kMeasurementFormat}, {"backend", "cpu"}, {"records", std::move(records)}};
}

Measurement from_case(const KernelCase& c) { return measure(c, {1.0}); }

// A document of two valid GEMM records, the second changed by `edit`, must fail to load
// with a ConfigError at `pointer` whose expectation contains `expectation`.
void expect_rejected(const std::function<void(Json&)>& edit, const std::string& pointer,
                     const std::string& expectation) {
  Json bad = gemm_record();
  edit(bad);
  const Json doc = document({gemm_record(), bad});
  try {
    measurements_from_json(doc, kFile);
    ADD_FAILURE() << "no error for " << pointer;
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.file(), kFile);
    EXPECT_EQ(e.pointer(), pointer);
    EXPECT_NE(e.expectation().find(expectation), std::string::npos) << e.what();
    const std::string what = e.what();
    EXPECT_NE(what.find(kFile), std::string::npos) << what;
    EXPECT_NE(what.find(pointer), std::string::npos) << what;
    EXPECT_NE(what.find(expectation), std::string::npos) << what;
  }
}

// A set of four records, one of each kind of shape: a GEMM (fit), a backward jagged
// attention pass (held out), an embedding update with repeated ids and an all-reduce with
// its bus bandwidth; written by to_json and read back, every field is unchanged and the
// document written again is identical.
TEST(Measurements, RoundTripThroughJsonUnchanged) {
  MeasurementSet set;
  set.backend = "cpu";
  Measurement gemm = measurements_from_json(document({gemm_record()}), kFile).records.at(0);
  set.records.push_back(gemm);

  Measurement attention =
      from_case(attention_case(false, true, {10, 20, 30}, 2, 32, Precision::kFp32));
  attention.set = SampleSet::kValidation;
  attention.repetitions = 5;
  attention.median_us = 40.5;
  attention.spread = {39.0, 44.0, 1.5};
  attention.device = "cpu0";
  attention.date = "2026-11-23T12:00:01Z";
  set.records.push_back(attention);

  KernelCase update_case = embedding_update_case(2, 16, 8, 4, 1000, 1.1, Precision::kFp16);
  set_unique_fraction(update_case, 0.4);
  Measurement update = from_case(update_case);
  update.repetitions = 3;
  update.warmup = 1;
  update.median_us = 7.25;
  update.spread = {7.0, 8.0, 0.5};
  update.versions = {{"eigen", "3.4.0"}, {"strait", "0.1"}};
  set.records.push_back(update);

  Measurement reduce;
  reduce.family = *Family::parse("all_reduce");
  reduce.shape = {{"ranks", 4}, {"bytes", 1048576}};
  reduce.bytes = 1048576;
  reduce.repetitions = 20;
  reduce.median_us = 100;
  reduce.spread = {90, 120, 10};
  reduce.algbw_gbps = 10.48576;
  reduce.busbw_gbps = 15.72864;
  reduce.check = "ok";
  set.records.push_back(reduce);

  const Json doc = to_json(set);
  const MeasurementSet back = measurements_from_json(doc, kFile);
  EXPECT_EQ(back.backend, "cpu");
  ASSERT_EQ(back.records.size(), 4u);
  for (std::size_t i = 0; i < set.records.size(); ++i) {
    const Measurement& a = set.records[i];
    const Measurement& b = back.records[i];
    SCOPED_TRACE(a.label());
    EXPECT_EQ(b.family, a.family);
    EXPECT_EQ(b.shape, a.shape);
    EXPECT_EQ(b.dtype, a.dtype);
    EXPECT_EQ(b.set, a.set);
    EXPECT_EQ(b.flops, a.flops);
    EXPECT_EQ(b.bytes, a.bytes);
    EXPECT_EQ(b.repetitions, a.repetitions);
    EXPECT_EQ(b.warmup, a.warmup);
    EXPECT_EQ(b.median_us, a.median_us);
    EXPECT_EQ(b.spread.min_us, a.spread.min_us);
    EXPECT_EQ(b.spread.max_us, a.spread.max_us);
    EXPECT_EQ(b.spread.iqr_us, a.spread.iqr_us);
    EXPECT_EQ(b.device, a.device);
    EXPECT_EQ(b.versions, a.versions);
    EXPECT_EQ(b.date, a.date);
    EXPECT_EQ(b.algbw_gbps, a.algbw_gbps);
    EXPECT_EQ(b.busbw_gbps, a.busbw_gbps);
    EXPECT_EQ(b.check, a.check);
  }
  EXPECT_EQ(back.records[3].ranks(), 4);
  EXPECT_EQ(to_json(back), doc);
}

// save_measurements writes the document that load_measurements reads back.
TEST(Measurements, SavedFileLoadsBackAsTheSameSet) {
  const MeasurementSet set = measurements_from_json(document({gemm_record()}), kFile);
  const auto path =
      (std::filesystem::temp_directory_path() / "strait_measurement_test_saved.json").string();
  save_measurements(set, path);
  const MeasurementSet back = load_measurements(path);
  std::filesystem::remove(path);
  EXPECT_EQ(to_json(back), to_json(set));
  EXPECT_EQ(back.records.at(0).median_us, 812.5);
}

TEST(Measurements, MissingMedianIsAConfigErrorAtItsPointer) {
  expect_rejected([](Json& r) { r.erase("median_us"); }, "/records/1/median_us",
                  "missing required key");
}

TEST(Measurements, NegativeTimeIsAConfigError) {
  expect_rejected([](Json& r) { r["median_us"] = -3.5; }, "/records/1/median_us",
                  "expected a time > 0 us, got -3.5");
}

TEST(Measurements, ZeroTimeIsAConfigError) {
  expect_rejected([](Json& r) { r["spread"]["min_us"] = 0; }, "/records/1/spread/min_us",
                  "expected a time > 0 us, got 0");
}

TEST(Measurements, UnknownFamilyIsAConfigErrorListingTheFamilies) {
  expect_rejected([](Json& r) { r["family"] = "gemmm"; }, "/records/1/family",
                  "unknown family \"gemmm\"; expected one of gemm, jagged_attention");
}

TEST(Measurements, UnknownDtypeIsAConfigError) {
  expect_rejected([](Json& r) { r["dtype"] = "fp64"; }, "/records/1/dtype",
                  "expected one of fp32, tf32, bf16, fp16, fp8");
}

TEST(Measurements, MinimumAboveTheMedianIsAConfigError) {
  expect_rejected([](Json& r) { r["spread"]["min_us"] = 900.0; }, "/records/1/spread",
                  "expected min_us <= median_us (812.5) <= max_us");
}

// Samples {4, 1, 3, 2, 10} sorted: 1 2 3 4 10. Quantile q at position q (n - 1) with
// linear interpolation: median = x[2] = 3, Q1 = x[1] = 2, Q3 = x[3] = 4, IQR = 2;
// min 1, max 10.
TEST(Summarize, OddCountTakesTheMiddleSampleAndQuartilesAtWholePositions) {
  const Summary s = summarize({4, 1, 3, 2, 10});
  EXPECT_DOUBLE_EQ(s.median_us, 3);
  EXPECT_DOUBLE_EQ(s.spread.min_us, 1);
  EXPECT_DOUBLE_EQ(s.spread.max_us, 10);
  EXPECT_DOUBLE_EQ(s.spread.iqr_us, 2);
}

// Samples {8, 2, 4, 6}: positions 0..3 hold 2 4 6 8. Median at 1.5: 4 + 0.5 * 2 = 5;
// Q1 at 0.75: 2 + 0.75 * 2 = 3.5; Q3 at 2.25: 6 + 0.25 * 2 = 6.5; IQR = 3.
TEST(Summarize, EvenCountInterpolatesBetweenSamples) {
  const Summary s = summarize({8, 2, 4, 6});
  EXPECT_DOUBLE_EQ(s.median_us, 5);
  EXPECT_DOUBLE_EQ(s.spread.min_us, 2);
  EXPECT_DOUBLE_EQ(s.spread.max_us, 8);
  EXPECT_DOUBLE_EQ(s.spread.iqr_us, 3);
}

// One sample of 7 us: median, min and max 7, IQR 0.
TEST(Summarize, OneSampleHasNoSpread) {
  const Summary s = summarize({7});
  EXPECT_DOUBLE_EQ(s.median_us, 7);
  EXPECT_DOUBLE_EQ(s.spread.min_us, 7);
  EXPECT_DOUBLE_EQ(s.spread.max_us, 7);
  EXPECT_DOUBLE_EQ(s.spread.iqr_us, 0);
}

// GEMM m = 512, n = 64, k = 8: (2^9 2^6 2^3)^(1/3) = 2^6 = 64; m = 1000, n = 10, k = 100:
// (10^6)^(1/3) = 100.
TEST(TableKey, GemmIsTheCubeRootOfMnk) {
  EXPECT_NEAR(from_case(gemm_case(512, 64, 8, Precision::kFp32)).table_key(), 64, 1e-12);
  EXPECT_NEAR(from_case(gemm_case(1000, 10, 100, Precision::kBf16)).table_key(), 100, 1e-12);
}

// Lengths {10, 20, 30}: jagged key = mean length 20 (both passes); padded key = the
// longest length 30, which every sample is computed at.
TEST(TableKey, AttentionIsTheMeanLength) {
  const std::vector<int> lengths = {10, 20, 30};
  EXPECT_DOUBLE_EQ(
      from_case(attention_case(false, false, lengths, 2, 32, Precision::kFp32)).table_key(), 20);
  EXPECT_DOUBLE_EQ(
      from_case(attention_case(false, true, lengths, 2, 32, Precision::kFp32)).table_key(), 20);
  EXPECT_DOUBLE_EQ(
      from_case(attention_case(true, false, lengths, 2, 32, Precision::kFp32)).table_key(), 30);
}

// Embedding rows: dim 64 in fp16 = 128 B, dim 16 in fp32 = 64 B (lookup and update).
TEST(TableKey, EmbeddingIsTheRowBytes) {
  EXPECT_DOUBLE_EQ(
      from_case(embedding_lookup_case(2, 8, 64, 4, 100, 0, Precision::kFp16)).table_key(), 128);
  EXPECT_DOUBLE_EQ(
      from_case(embedding_update_case(2, 8, 16, 4, 100, 0, Precision::kFp32)).table_key(), 64);
}

// A copy of 4096 B moves 4096 B; Adam over 100 parameters moves 100 * 28 = 2800 B.
TEST(TableKey, ElementwiseAndOptimizerAreTheBytesMoved) {
  EXPECT_DOUBLE_EQ(from_case(elementwise_case(4096)).table_key(), 4096);
  EXPECT_DOUBLE_EQ(from_case(optimizer_case(100)).table_key(), 2800);
}

// A collective's key is its nccl-tests size: all-gather of 65536 B on 8 ranks -> 65536.
TEST(TableKey, CollectiveIsItsSize) {
  Measurement m;
  m.family = *Family::parse("all_gather");
  m.shape = {{"ranks", 8}, {"bytes", 65536}};
  EXPECT_TRUE(m.family.is_collective());
  EXPECT_EQ(m.family.collective, CollectiveOp::kAllGather);
  EXPECT_DOUBLE_EQ(m.table_key(), 65536);
}

TEST(Family, ParsesKernelAndCollectiveNamesAndRejectsOthers) {
  const auto gemm = Family::parse("gemm");
  ASSERT_TRUE(gemm.has_value());
  EXPECT_EQ(gemm->kernel, KernelKind::kGemm);
  EXPECT_EQ(gemm->name(), "gemm");
  EXPECT_EQ(Family::parse("all_to_allv")->collective, CollectiveOp::kAllToAllV);
  EXPECT_FALSE(Family::parse("gemmm").has_value());
}

}  // namespace
}  // namespace strait::calibration
