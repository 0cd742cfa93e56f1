#include "calibration/fit.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <set>

#include <gtest/gtest.h>

#include "calibration/detail/kernel_fit.hpp"
#include "calibration/kernel_case.hpp"
#include "calibration/profile_report.hpp"
#include "sim/core/atomic_file.hpp"
#include "sim/core/error.hpp"
#include "sim/cost/cost_model.hpp"

namespace strait::calibration {
namespace {

using sim::cost::CalibrationProfile;
using sim::cost::EfficiencyTable;
using sim::cost::KernelKind;
using sim::cost::Precision;

// The known CPU-like profile every test here generates its measurements from.
constexpr double kPeak = 40e9;       // FLOP/s in fp32, tf32, bf16 and fp16; no fp8
constexpr double kBandwidth = 30e9;  // B/s
constexpr double kLaunchUs = 1.0;    // launch overhead
constexpr double kLookupHitRate = 0.3;
constexpr double kUpdateHitRate = -0.3;        // repeats cost more than they save (an update)
constexpr double kSkewedUniqueFraction = 0.4;  // unique fraction of the Zipf embedding cases
// The acceptance bound of the fit: known parameters recovered within 1%.
constexpr double kTolerance = 0.01;

bool compute_bound(KernelKind k) {
  return k == KernelKind::kGemm || sim::cost::uses_tensor_cores(k);
}

// Unique to the test and process: ctest runs these tests in parallel processes.
std::string temp_path(const std::string& name) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::string test = info ? std::string(info->name()) : "none";
  return (std::filesystem::temp_directory_path() /
          ("strait_fit_test_" + test + "_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

// The suite's CPU cases (kernel_cases("cpu", false)) as records without a time yet:
// embedding cases with uniform ids have unique fraction 1, the Zipf ones 0.4 (an update's
// work follows it, set_unique_fraction).
std::vector<Measurement> cpu_records() {
  std::vector<Measurement> out;
  for (KernelCase c : kernel_cases("cpu", false)) {
    if (is_embedding(*c.family.kernel)) {
      set_unique_fraction(c, c.id_skew > 0 ? kSkewedUniqueFraction : 1.0);
    }
    Measurement m = measure(c, {1.0});  // times set below from the known profile
    m.repetitions = 10;
    m.warmup = 2;
    m.device = "synthetic CPU (fit_test)";
    m.date = "2026-01-01T00:00:00Z";
    out.push_back(std::move(m));
  }
  return out;
}

// Distinct table keys of the fit records of `kind`, ascending.
std::vector<double> fit_keys(const std::vector<Measurement>& records, KernelKind kind) {
  std::vector<double> keys;
  for (const Measurement& m : records) {
    if (m.set == SampleSet::kFit && detail::kind_of(m) == kind) keys.push_back(m.table_key());
  }
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end(),
                         [](double a, double b) { return std::abs(a - b) <= 1e-9 * b; }),
             keys.end());
  return keys;
}

// A table through (keys[i], efficiency) for the given (i, efficiency) pairs.
EfficiencyTable on_keys(const std::vector<double>& keys,
                        const std::vector<std::pair<std::size_t, double>>& points) {
  std::vector<EfficiencyTable::Point> out;
  for (const auto& [i, e] : points) out.push_back({keys.at(i), e});
  return EfficiencyTable(std::move(out));
}

// The known profile. Its table points lie on fit keys of the CPU cases, so a table fitted
// with a knot at every fit key can equal it everywhere (between fit keys both are linear in
// log2 of the key). Compute-bound families have memory efficiency 1, memory-bound ones
// compute efficiency 1 (what a fit without a base profile writes).
//   gemm (7 keys 2^(16/3) .. 2^(28/3)): 0.25, 0.6 at 2^(22/3), `top_gemm` at 2^(28/3);
//     its backward (4 keys 40 .. 645): 0.2, 0.45 (3rd), 0.55
//   jagged attention (4 sample means of 32 .. 256): forward 0.2, 0.45 (3rd), 0.5;
//     backward 0.15 .. 0.4
//   padded attention (32, 64, 128, 256): forward 0.3 .. 0.6; backward 0.25, 0.45 at 128, 0.5
//   embedding lookup (row bytes 64 .. 512): 0.3, 0.55 at 256, 0.6; repeat_hit_rate 0.3
//   embedding update: 0.2 at 64 .. 0.5 at 512; repeat_hit_rate -0.3
//   elementwise (copies of 2^14 .. 2^26 B): 0.5 up to 2^18, `top_copy` at 2^22, 0.7 at 2^26
//   optimizer (Adam over 2^14 / 28 .. 2^26 / 28 parameters): 0.4, 0.9 (4th), 0.8 (7th)
CalibrationProfile known_profile(const std::vector<Measurement>& records, double top_gemm,
                                 double top_copy) {
  CalibrationProfile p;
  p.device.gpu_type = "CPU";
  for (Precision q : {Precision::kFp32, Precision::kTf32, Precision::kBf16, Precision::kFp16}) {
    p.device.peak_flops[static_cast<std::size_t>(q)] = kPeak;
  }
  p.device.hbm_bandwidth = kBandwidth;
  p.device.hbm_capacity = 16 * kGiB;
  p.device.sm_count = 1;
  p.device.nccl_sms = 0;
  p.device.launch_overhead = Time::from_us(kLaunchUs);
  p.provenance = {"estimated",
                  "The known profile of calibration fit_test.",
                  {"tests/calibration/fit_test.cpp"},
                  Json::object()};
  const auto keys = [&](KernelKind k) { return fit_keys(records, k); };
  const auto set = [&](KernelKind k, EfficiencyTable table) {
    auto& e = p.kernels[static_cast<std::size_t>(k)];
    if (compute_bound(k)) {
      e.compute = std::move(table);
      e.memory = EfficiencyTable::constant(1.0);
    } else {
      e.compute = EfficiencyTable::constant(1.0);
      e.memory = std::move(table);
    }
  };
  set(KernelKind::kGemm, on_keys(keys(KernelKind::kGemm), {{0, 0.25}, {3, 0.6}, {6, top_gemm}}));
  set(KernelKind::kGemmBackward,
      on_keys(keys(KernelKind::kGemmBackward), {{0, 0.2}, {2, 0.45}, {3, 0.55}}));
  set(KernelKind::kJaggedAttention,
      on_keys(keys(KernelKind::kJaggedAttention), {{0, 0.2}, {2, 0.45}, {3, 0.5}}));
  set(KernelKind::kJaggedAttentionBackward,
      on_keys(keys(KernelKind::kJaggedAttentionBackward), {{0, 0.15}, {3, 0.4}}));
  set(KernelKind::kPaddedAttention,
      on_keys(keys(KernelKind::kPaddedAttention), {{0, 0.3}, {3, 0.6}}));
  set(KernelKind::kPaddedAttentionBackward,
      on_keys(keys(KernelKind::kPaddedAttentionBackward), {{0, 0.25}, {2, 0.45}, {3, 0.5}}));
  set(KernelKind::kEmbeddingLookup,
      on_keys(keys(KernelKind::kEmbeddingLookup), {{0, 0.3}, {2, 0.55}, {3, 0.6}}));
  set(KernelKind::kEmbeddingUpdate,
      on_keys(keys(KernelKind::kEmbeddingUpdate), {{0, 0.2}, {3, 0.5}}));
  set(KernelKind::kElementwise,
      on_keys(keys(KernelKind::kElementwise), {{0, 0.5}, {2, 0.5}, {4, top_copy}, {6, 0.7}}));
  set(KernelKind::kOptimizer,
      on_keys(keys(KernelKind::kOptimizer), {{0, 0.4}, {3, 0.9}, {6, 0.8}}));
  p.kernels[static_cast<std::size_t>(KernelKind::kEmbeddingLookup)].repeat_hit_rate =
      kLookupHitRate;
  p.kernels[static_cast<std::size_t>(KernelKind::kEmbeddingUpdate)].repeat_hit_rate =
      kUpdateHitRate;
  return p;
}

// Times every record as strait simulates it on `known`: CostModel::cost(...).duration().
MeasurementSet measure(std::vector<Measurement> records, const CalibrationProfile& known) {
  MeasurementSet set;
  set.backend = "cpu";
  for (Measurement& m : records) {
    m.median_us = sim::cost::CostModel::cost(detail::work_of(m), known).duration().to_us();
    m.spread = {m.median_us, m.median_us, 0};
  }
  set.records = std::move(records);
  return set;
}

struct Synthetic {
  CalibrationProfile known;
  MeasurementSet set;
};

Synthetic synthetic(double top_gemm, double top_copy) {
  std::vector<Measurement> records = cpu_records();
  Synthetic s{known_profile(records, top_gemm, top_copy), {}};
  s.set = measure(std::move(records), s.known);
  return s;
}

std::string write_profile(const CalibrationProfile& p, const std::string& name) {
  const std::string path = temp_path(name);
  write_file_atomically(path, sim::cost::to_json(p).dump(2) + "\n");
  return path;
}

void remove_records(MeasurementSet& set, const std::function<bool(const Measurement&)>& drop) {
  set.records.erase(std::remove_if(set.records.begin(), set.records.end(), drop),
                    set.records.end());
}

const std::vector<std::string> kFamilies = {
    "elementwise",      "embedding_lookup",         "embedding_update",          "gemm",
    "gemm_backward",    "jagged_attention",         "jagged_attention_backward", "optimizer",
    "padded_attention", "padded_attention_backward"};

// The recovered profile: launch and peaks within 1%, every family's binding efficiency at
// every fit key within 1% of the known table, the hit rates within 0.01, and every
// family's fit and held-out errors below 1%.
void expect_recovered(const FitResult& fit, const Synthetic& s) {
  const auto& d = fit.profile.device;
  EXPECT_EQ(d.gpu_type, "CPU");
  EXPECT_NEAR(d.launch_overhead.to_us(), kLaunchUs, kTolerance * kLaunchUs);
  for (Precision q : {Precision::kFp32, Precision::kTf32, Precision::kBf16, Precision::kFp16}) {
    ASSERT_TRUE(d.peak(q).has_value()) << sim::cost::to_string(q);
    EXPECT_NEAR(*d.peak(q), kPeak, kTolerance * kPeak) << sim::cost::to_string(q);
  }
  EXPECT_FALSE(d.peak(Precision::kFp8).has_value());
  EXPECT_NEAR(d.hbm_bandwidth, kBandwidth, kTolerance * kBandwidth);

  int checked = 0;
  for (const Measurement& m : s.set.records) {
    if (m.set != SampleSet::kFit) continue;
    const KernelKind kind = detail::kind_of(m);
    const auto& fitted = fit.profile.kernel(kind);
    const auto& known = s.known.kernel(kind);
    const double want =
        compute_bound(kind) ? known.compute.at(m.table_key()) : known.memory.at(m.table_key());
    const double got =
        compute_bound(kind) ? fitted.compute.at(m.table_key()) : fitted.memory.at(m.table_key());
    EXPECT_NEAR(got, want, kTolerance * want) << m.label();
    ++checked;
  }
  // 27 GEMM + 8 GEMM backward + 16 attention (4 means x 2 layouts x 2 passes) + 16
  // embedding (8 shapes x lookup and update) + 7 copies + 7 Adam steps.
  EXPECT_EQ(checked, 81);
  EXPECT_NEAR(fit.profile.kernel(KernelKind::kEmbeddingLookup).repeat_hit_rate, kLookupHitRate,
              0.01);
  EXPECT_NEAR(fit.profile.kernel(KernelKind::kEmbeddingUpdate).repeat_hit_rate, kUpdateHitRate,
              0.01);

  std::vector<std::string> names;
  for (const FamilyFit& f : fit.families) {
    names.push_back(f.family);
    EXPECT_GT(f.fit_records, 0) << f.family;
    EXPECT_GT(f.validation_records, 0) << f.family;
    EXPECT_LT(f.fit_mape, kTolerance) << f.family;
    EXPECT_LT(f.validation_mape, kTolerance) << f.family;
    EXPECT_LT(f.validation_worst, kTolerance) << f.family;
  }
  EXPECT_EQ(names, kFamilies);
  EXPECT_EQ(fit.records.size(), s.set.records.size());
}

// The premise of the synthetic measurements: on the known profile GEMM and attention are
// compute-bound and the other families memory-bound, every record takes more than twice
// the 1 us launch (so the launch fit is not clamped), and the Zipf embedding cases are
// there (2 fit and 1 held out per embedding family, unique fraction 0.4).
TEST(FitProfile, SyntheticMeasurementsAreBoundWhereTheFamilySays) {
  const Synthetic s = synthetic(1.0, 1.0);
  int skewed = 0;
  for (const Measurement& m : s.set.records) {
    const KernelKind kind = detail::kind_of(m);
    const auto cost = sim::cost::CostModel::cost(detail::work_of(m), s.known);
    if (compute_bound(kind)) {
      EXPECT_GT(cost.compute_seconds, cost.memory_seconds) << m.label();
    } else {
      EXPECT_GT(cost.memory_seconds, cost.compute_seconds) << m.label();
    }
    EXPECT_GT(m.median_us, 2 * kLaunchUs) << m.label();
    if (is_embedding(kind) && m.shape.at("unique_fraction").get<double>() < 1) ++skewed;
  }
  EXPECT_EQ(skewed, 6);
}

// Setup: the known profile above with its fastest GEMM (key 2^(28/3), m 2048 n 512 k 256)
// and its fastest copy (4 MiB) at efficiency exactly 1, so the best measured rates are the
// known peaks, 40 GFLOP/s and 30 GB/s. The three smallest copies (16, 64, 256 KiB) all run
// at efficiency 0.5, so their times 1 us + bytes / 15 GB/s lie on a line with intercept
// 1 us. Measurements: the ~100 CPU suite cases (fit and held out), each timed by the cost
// model on the known profile.
// Expected: launch 1 us, peaks 40e9 (fp32, tf32, bf16, fp16; no fp8) and 30e9, each
// family's table equal to the known one at every fit key, hit rates 0.3 and 0.2, and
// held-out errors of ~0 (all within 1%).
TEST(FitProfile, RecoversAKnownProfileFromItsOwnPredictions) {
  const Synthetic s = synthetic(1.0, 1.0);
  const FitResult fit = fit_profile(s.set, {});
  expect_recovered(fit, s);
}

// The fitted families name the kernels the CPU backend ran (calibration's
// implementation_of), and the name survives writing and reading the profile.
TEST(FitProfile, NamesTheImplementationEachFamilyMeasured) {
  const Synthetic s = synthetic(1.0, 1.0);
  const FitResult fit = fit_profile(s.set, {});
  const auto name = [&](KernelKind k) { return fit.profile.kernel(k).implementation; };
  EXPECT_EQ(name(KernelKind::kGemm), "eigen");
  EXPECT_EQ(name(KernelKind::kGemmBackward), "eigen");
  EXPECT_EQ(name(KernelKind::kJaggedAttentionBackward), "strait-cpu-reference");
  EXPECT_EQ(name(KernelKind::kEmbeddingUpdate), "strait-cpu-tbe");
  EXPECT_EQ(name(KernelKind::kElementwise), "memcpy");
  EXPECT_EQ(name(KernelKind::kOptimizer), "strait-cpu-adam");
  const std::string path = write_profile(fit.profile, "named.json");
  const auto back = sim::cost::load_profile(path);
  std::filesystem::remove(path);
  EXPECT_EQ(back.kernel(KernelKind::kGemm).implementation, "eigen");
  EXPECT_EQ(implementation_of("cuda", KernelKind::kGemmBackward), "cublaslt");
  EXPECT_EQ(implementation_of("kineto", KernelKind::kEmbeddingLookup), "traced");
}

// Setup: the known profile with a fixed time per call of 50 us on embedding updates and
// 5 us on lookups; uniform-id lookup and update cases of 8 tables x 512 samples at dims 32
// and 64 (row bytes 128, 256), each at pooling 1 and 8, timed on it. Per row size the two
// times lie on t = (1 us launch + c) + bytes / (30 GB/s x e), so the intercepts less the
// launch are c exactly.
// Expected: call_latency 50 us and 5 us (within 1%), and the tables at 128 and 256 bytes
// the known ones (the fixed part is not charged to the bandwidth).
TEST(FitProfile, EmbeddingCallLatencyIsTheInterceptAcrossSizes) {
  Synthetic s = synthetic(1.0, 1.0);
  auto& known_update = s.known.kernels[static_cast<std::size_t>(KernelKind::kEmbeddingUpdate)];
  auto& known_lookup = s.known.kernels[static_cast<std::size_t>(KernelKind::kEmbeddingLookup)];
  known_update.call_latency = Time::from_us(50);
  known_lookup.call_latency = Time::from_us(5);
  std::vector<Measurement> records;
  for (int dim : {32, 64}) {
    for (int pooling : {1, 8}) {
      for (KernelCase c :
           {embedding_lookup_case(8, 512, dim, pooling, 65536, 0, Precision::kFp32),
            embedding_update_case(8, 512, dim, pooling, 65536, 0, Precision::kFp32)}) {
        set_unique_fraction(c, 1.0);
        records.push_back(measure(c, {1.0}));
      }
    }
  }
  const MeasurementSet set = measure(std::move(records), s.known);
  std::vector<const Measurement*> fit_records;
  for (const Measurement& m : set.records) fit_records.push_back(&m);
  CalibrationProfile fitted = s.known;
  for (KernelKind k : {KernelKind::kEmbeddingLookup, KernelKind::kEmbeddingUpdate}) {
    fitted.kernels[static_cast<std::size_t>(k)].call_latency = Time::zero();
  }
  detail::fit_kernels(fit_records, false, fitted);
  EXPECT_NEAR(fitted.kernel(KernelKind::kEmbeddingUpdate).call_latency.to_us(), 50, 0.5);
  EXPECT_NEAR(fitted.kernel(KernelKind::kEmbeddingLookup).call_latency.to_us(), 5, 0.05);
  for (KernelKind k : {KernelKind::kEmbeddingLookup, KernelKind::kEmbeddingUpdate}) {
    for (double row_bytes : {128.0, 256.0}) {
      const double want = s.known.kernel(k).memory.at(row_bytes);
      EXPECT_NEAR(fitted.kernel(k).memory.at(row_bytes), want, kTolerance * want)
          << sim::cost::to_string(k) << " " << row_bytes;
    }
  }
}

// Setup: the same profile but the fastest GEMM at efficiency 0.8 and the fastest copy at
// 0.9, so the best measured rates are 32 GFLOP/s and 27 GB/s, not the peaks. Written to a
// temporary file and given as the base profile, its peaks (40e9, 30e9) are kept and the
// tables are fitted against them.
// Expected: the same recovery as above, GEMM 0.8 at its top key and copies 0.9 at 4 MiB.
TEST(FitProfile, WithABaseProfileKeepsItsPeaksAndFitsTablesBelowOne) {
  const Synthetic s = synthetic(0.8, 0.9);
  const std::string base = write_profile(s.known, "base.json");
  FitOptions options;
  options.base_profile = base;
  const FitResult fit = fit_profile(s.set, options);
  std::filesystem::remove(base);
  expect_recovered(fit, s);
  EXPECT_NEAR(fit.profile.kernel(KernelKind::kGemm).compute.at(std::exp2(28.0 / 3)), 0.8,
              kTolerance * 0.8);
  EXPECT_NEAR(fit.profile.kernel(KernelKind::kElementwise).memory.at(4194304), 0.9,
              kTolerance * 0.9);
}

// Setup: the base profile of the test above with query tiles of 64 rows on the four
// attention families, so the cost model charges each attention record its tile factor
// (whole 64 x 64 causal tiles: the padded cases' lengths 32 .. 256 and the jagged cases'
// lognormal lengths; L = 32 costs 4096 / (32 x 96 / 2) = 2.67x). The measurements are
// timed on it.
// Expected: the fit keeps tile_rows 64 from the base and divides each record's FLOPs by
// the same factor, so it recovers the known tables within 1% (without the factor the
// attention tables would come out up to 2.67x low).
TEST(FitProfile, AttentionIsFittedAgainstTheTileFactorsOfTheBaseProfile) {
  std::vector<Measurement> records = cpu_records();
  Synthetic s{known_profile(records, 0.8, 0.9), {}};
  const KernelKind attention[] = {KernelKind::kJaggedAttention, KernelKind::kPaddedAttention,
                                  KernelKind::kJaggedAttentionBackward,
                                  KernelKind::kPaddedAttentionBackward};
  for (KernelKind k : attention) s.known.kernels[static_cast<std::size_t>(k)].tile_rows = 64;
  s.set = measure(std::move(records), s.known);
  int padded_at_32 = 0;
  for (const Measurement& m : s.set.records) {
    if (detail::kind_of(m) == KernelKind::kPaddedAttention && m.table_key() == 32) {
      EXPECT_DOUBLE_EQ(detail::work_of(m).tile_factor[2], 4096.0 / 1536) << m.label();
      ++padded_at_32;
    }
  }
  EXPECT_GT(padded_at_32, 0);
  const std::string base = write_profile(s.known, "tiled_base.json");
  FitOptions options;
  options.base_profile = base;
  const FitResult fit = fit_profile(s.set, options);
  std::filesystem::remove(base);
  expect_recovered(fit, s);
  for (KernelKind k : attention) EXPECT_EQ(fit.profile.kernel(k).tile_rows, 64);
}

// Setup: the base profile of the tests above whose jagged attention is in use as another
// implementation ("production", tables per head dimension), the backend's own kept as an
// alternative under its name, as in the bundled H100 profile.
// Expected: the fit writes into the implementation the backend ran (now in use, its tables
// recovered), keeps "production" untouched as an alternative, names the unnamed families
// after the backend, and the fitted profile reads back with the same implementations.
TEST(FitProfile, WritesIntoTheImplementationItMeasuredAndKeepsTheOthers) {
  const Synthetic s = synthetic(0.8, 0.9);
  sim::cost::CalibrationProfile base = s.known;
  const auto k = static_cast<std::size_t>(KernelKind::kJaggedAttention);
  const std::string own = implementation_of("cpu", KernelKind::kJaggedAttention);
  base.kernels[k].implementation = own;
  sim::cost::KernelEfficiency production;
  production.implementation = "production";
  production.compute_by_head_dim = {{64, sim::cost::EfficiencyTable::constant(0.5)},
                                    {128, sim::cost::EfficiencyTable::constant(0.7)}};
  production.compute = production.compute_by_head_dim.back().second;
  production.memory = sim::cost::EfficiencyTable::constant(0.8);
  base.alternatives[k].push_back(base.kernels[k]);
  base.kernels[k] = production;
  const std::string file = write_profile(base, "implementations_base.json");
  FitOptions options;
  options.base_profile = file;
  const FitResult fit = fit_profile(s.set, options);
  std::filesystem::remove(file);
  expect_recovered(fit, s);
  EXPECT_EQ(fit.profile.implementations(KernelKind::kJaggedAttention),
            (std::vector<std::string>{own, "production"}));
  EXPECT_TRUE(fit.profile.kernel(KernelKind::kJaggedAttention).compute_by_head_dim.empty());
  const auto& kept = fit.profile.alternatives[k].front();
  EXPECT_DOUBLE_EQ(kept.compute_efficiency(10, 64), 0.5);
  EXPECT_DOUBLE_EQ(kept.compute_efficiency(10, 128), 0.7);
  EXPECT_EQ(fit.profile.implementations(KernelKind::kGemm),
            (std::vector<std::string>{implementation_of("cpu", KernelKind::kGemm)}));
  const auto reread =
      CalibrationProfile::from_config(ConfigNode(to_json(fit.profile), "fitted.json"));
  EXPECT_EQ(reread.implementations(KernelKind::kJaggedAttention),
            (std::vector<std::string>{own, "production"}));
}

// Without a base, the same measurements with the peaks taken from the data: the best GEMM
// runs at 0.8 x 40 = 32 GFLOP/s and the best copy at 0.9 x 30 = 27 GB/s; these become the
// peaks, and the tables are relative to them (GEMM 1.0 at its top key, 0.6 / 0.8 = 0.75 at
// 2^(22/3)). Predictions are unchanged, so held-out errors stay below 1%.
TEST(FitProfile, WithoutABaseTakesThePeaksFromTheBestMeasuredRates) {
  const Synthetic s = synthetic(0.8, 0.9);
  const FitResult fit = fit_profile(s.set, {});
  EXPECT_NEAR(*fit.profile.device.peak(Precision::kFp32), 32e9, kTolerance * 32e9);
  EXPECT_NEAR(fit.profile.device.hbm_bandwidth, 27e9, kTolerance * 27e9);
  const auto& gemm = fit.profile.kernel(KernelKind::kGemm).compute;
  EXPECT_NEAR(gemm.at(std::exp2(28.0 / 3)), 1.0, kTolerance);
  EXPECT_NEAR(gemm.at(std::exp2(22.0 / 3)), 0.75, kTolerance * 0.75);
  for (const FamilyFit& f : fit.families) EXPECT_LT(f.validation_mape, kTolerance) << f.family;
}

// A measurement set without GEMM records (or without copies) and no base profile has no
// source for the peaks: an Error naming both families and the --base way out.
TEST(FitProfile, WithoutGemmOrCopyRecordsAndNoBaseThrowsNamingThem) {
  for (KernelKind missing : {KernelKind::kGemm, KernelKind::kElementwise}) {
    SCOPED_TRACE(sim::cost::to_string(missing));
    Synthetic s = synthetic(1.0, 1.0);
    remove_records(s.set, [&](const Measurement& m) { return m.family.kernel == missing; });
    try {
      fit_profile(s.set, {});
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("GEMM and elementwise (copy) measurements"), std::string::npos) << what;
      EXPECT_NE(what.find("--base"), std::string::npos) << what;
    }
  }
}

// Without optimizer records and no base profile, the optimizer family has no source: an
// Error naming it.
TEST(FitProfile, WithoutAFamilyAndNoBaseThrowsNamingIt) {
  Synthetic s = synthetic(1.0, 1.0);
  remove_records(s.set,
                 [](const Measurement& m) { return m.family.kernel == KernelKind::kOptimizer; });
  try {
    fit_profile(s.set, {});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no measurements of optimizer and no --base profile"),
              std::string::npos)
        << e.what();
  }
}

TEST(FitProfile, AnEmptyMeasurementSetThrows) {
  MeasurementSet empty;
  empty.backend = "cpu";
  EXPECT_THROW(fit_profile(empty, {}), Error);
}

// Without backward records of jagged attention (and no base), the backward family takes
// the fitted forward table: 0.2 .. 0.5 at the forward keys, not the known backward 0.15 ..
// 0.4.
TEST(FitProfile, BackwardAttentionWithoutRecordsTakesTheForwardTable) {
  Synthetic s = synthetic(1.0, 1.0);
  remove_records(s.set, [](const Measurement& m) {
    return detail::kind_of(m) == KernelKind::kJaggedAttentionBackward;
  });
  const FitResult fit = fit_profile(s.set, {});
  const auto& forward = fit.profile.kernel(KernelKind::kJaggedAttention).compute;
  const auto& backward = fit.profile.kernel(KernelKind::kJaggedAttentionBackward).compute;
  for (double key : fit_keys(s.set.records, KernelKind::kJaggedAttention)) {
    EXPECT_NEAR(backward.at(key), forward.at(key), 1e-12);
    EXPECT_NEAR(forward.at(key), s.known.kernel(KernelKind::kJaggedAttention).compute.at(key),
                kTolerance * forward.at(key));
  }
}

// With a base profile, a family without records keeps the base's table: GEMM records
// removed, the fitted GEMM table is the known one (0.25 at 2^(16/3), 1.0 at 2^(28/3)).
TEST(FitProfile, WithABaseProfileUnmeasuredFamiliesKeepItsTables) {
  Synthetic s = synthetic(1.0, 1.0);
  const std::vector<double> gemm_keys = fit_keys(s.set.records, KernelKind::kGemm);
  remove_records(s.set, [](const Measurement& m) { return m.family.kernel == KernelKind::kGemm; });
  const std::string base = write_profile(s.known, "base_unmeasured.json");
  FitOptions options;
  options.base_profile = base;
  const FitResult fit = fit_profile(s.set, options);
  std::filesystem::remove(base);
  const auto& gemm = fit.profile.kernel(KernelKind::kGemm).compute;
  EXPECT_NEAR(gemm.at(gemm_keys.front()), 0.25, 1e-12);
  EXPECT_NEAR(gemm.at(gemm_keys.back()), 1.0, 1e-12);
  EXPECT_NEAR(*fit.profile.device.peak(Precision::kFp32), kPeak, kTolerance * kPeak);
}

// save_profile writes the fitted profile; load_profile reads it back as "fitted", with the
// peaks, launch and hit rates it was saved with and one "validation" entry per family
// (with its held-out record count), plus one "records" row per measurement.
TEST(SaveProfile, WritesAFittedProfileThatLoadsBackWithValidationPerFamily) {
  const Synthetic s = synthetic(1.0, 1.0);
  FitOptions options;
  options.measurements_file = "synthetic.json";
  const FitResult fit = fit_profile(s.set, options);
  const std::string path = temp_path("saved.json");
  save_profile(fit, path);
  const CalibrationProfile back = sim::cost::load_profile(path);
  std::filesystem::remove(path);

  EXPECT_EQ(back.provenance.status, "fitted");
  EXPECT_EQ(back.device.gpu_type, "CPU");
  EXPECT_NEAR(*back.device.peak(Precision::kFp32), kPeak, kTolerance * kPeak);
  EXPECT_NEAR(back.device.hbm_bandwidth, kBandwidth, kTolerance * kBandwidth);
  EXPECT_NEAR(back.device.launch_overhead.to_us(), kLaunchUs, kTolerance * kLaunchUs);
  EXPECT_NEAR(back.kernel(KernelKind::kEmbeddingLookup).repeat_hit_rate, kLookupHitRate, 0.01);
  ASSERT_TRUE(back.provenance.fit.contains("validation"));
  const Json& validation = back.provenance.fit.at("validation");
  std::vector<std::string> families;
  for (const Json& v : validation) {
    families.push_back(v.at("family").get<std::string>());
    EXPECT_GT(v.at("held_out_records").get<int>(), 0) << v.dump();
    EXPECT_LT(v.at("held_out_mape").get<double>(), kTolerance) << v.dump();
  }
  EXPECT_EQ(families, kFamilies);
  EXPECT_EQ(back.provenance.fit.at("records").size(), s.set.records.size());
}

// The report of a saved fitted profile has a line for every family.
TEST(ProfileReport, ListsEveryFamilyOfAFittedProfile) {
  const Synthetic s = synthetic(1.0, 1.0);
  const std::string path = temp_path("report.json");
  save_profile(fit_profile(s.set, {}), path);
  const std::string report = format_profile_report(path, false);
  const std::string all = format_profile_report(path, true);
  std::filesystem::remove(path);
  for (const std::string& family : kFamilies) {
    EXPECT_NE(report.find("  " + family + " "), std::string::npos) << family << "\n" << report;
  }
  EXPECT_NE(report.find("CPU (fitted)"), std::string::npos) << report;
  // Every record is listed with `all`: more lines than the worst three per family.
  EXPECT_GT(std::count(all.begin(), all.end(), '\n'),
            std::count(report.begin(), report.end(), '\n'));
}

// configs/profiles/a100-sxm.json is a datasheet estimate ("estimated", no "validation"):
// a ConfigError at its /provenance.
TEST(ProfileReport, RejectsAProfileThatWasNotFitted) {
  const std::string path = std::string(STRAIT_SOURCE_DIR) + "/configs/profiles/a100-sxm.json";
  try {
    format_profile_report(path, false);
    ADD_FAILURE() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.file(), path);
    EXPECT_EQ(e.pointer(), "/provenance");
    EXPECT_NE(e.expectation().find("expected a profile fitted by strait calibrate fit"),
              std::string::npos)
        << e.what();
    EXPECT_NE(e.expectation().find("estimated"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace strait::calibration
