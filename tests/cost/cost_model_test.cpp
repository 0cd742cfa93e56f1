#include "sim/cost/cost_model.hpp"

#include <gtest/gtest.h>

#include "sim/cost/profile_set.hpp"

namespace strait::sim::cost {
namespace {

// Every test uses the fixed profiles in tests/cost/profiles (H100-SXM: the datasheet
// estimate strait bundled before the H100 was measured; A100-SXM), so re-measuring a
// bundled profile never moves these closed forms. H100-SXM numbers used below:
//   peak bf16 989.4 TFLOP/s, fp32 66.9 TFLOP/s, HBM 3350 GB/s, launch 2.5 us, 16 of 132 SMs;
//   gemm compute efficiency at cube-root keys 1024: 0.30, 2048: 0.55, 4096: 0.72; memory 0.85;
//   elementwise memory efficiency at 1 MiB: 0.25, 8 MiB: 0.60, 64 MiB: 0.82; compute 0.5;
//   embedding_lookup memory efficiency at 256 B rows: 0.70, repeat_hit_rate 0.6.
class CostModelTest : public ::testing::Test {
 protected:
  static CostModel& model() {
    static CostModel m(load_profile_dir(std::string(STRAIT_SOURCE_DIR) + "/tests/cost/profiles"));
    return m;
  }
  static constexpr double kPeakBf16 = 989.4e12;
  static constexpr double kPeakFp32 = 66.9e12;
  static constexpr double kHbm = 3350e9;
  static constexpr Time kLaunch = Time::from_ps(2'500'000);
};

KernelWork gemm(std::int64_t m, std::int64_t n, std::int64_t k) {
  KernelWork w;
  w.kind = KernelKind::kGemm;
  w.precision = Precision::kBf16;
  w.m = m;
  w.n = n;
  w.k = k;
  w.flops = 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  w.hbm_bytes = 2.0 * static_cast<double>(m * k + k * n + m * n);
  return w;
}

KernelWork elementwise(double bytes, double flops) {
  KernelWork w;
  w.kind = KernelKind::kElementwise;
  w.hbm_bytes = bytes;
  w.flops = flops;
  return w;
}

// 4096^3 bf16 on H100: key 4096 is a table point, efficiency 0.72.
//   compute = 2 * 4096^3 / (989.4e12 * 0.72) = 137438953472 / 7.12368e14 = 192.933 us
//   memory  = 3 * 4096^2 * 2 B / (3350e9 * 0.85) = 100663296 / 2.8475e12 = 35.351 us
//   duration = 2.5 + 192.933 = 195.433 us
TEST_F(CostModelTest, GemmOnATablePointTakesFlopsOverPeakTimesEfficiency) {
  const KernelCost c = model().cost(gemm(4096, 4096, 4096), "H100-SXM");
  const double compute = 137438953472.0 / (kPeakBf16 * 0.72);
  EXPECT_DOUBLE_EQ(c.compute_seconds, compute);
  EXPECT_DOUBLE_EQ(c.memory_seconds, 100663296.0 / (kHbm * 0.85));
  EXPECT_EQ(c.launch_overhead, kLaunch);
  EXPECT_EQ(c.duration(), kLaunch + Time::from_s(compute));
  EXPECT_NEAR(c.duration().to_us(), 195.433, 1e-3);
}

// 2048 x 2048 x 4096: cube root of m*n*k is 2^(34/3), a third of the way (in log2) from
// 2048 (0.55) to 4096 (0.72): efficiency = 0.55 + 0.17 / 3 = 0.606667.
//   compute = 2 * 2^34 / (989.4e12 * 0.606667) = 57.244 us; duration = 59.744 us
TEST_F(CostModelTest, GemmBetweenTablePointsInterpolatesInLog2OfMnk) {
  const KernelCost c = model().cost(gemm(2048, 2048, 4096), "H100-SXM");
  const double efficiency = 0.55 + (0.72 - 0.55) / 3.0;
  EXPECT_NEAR(c.compute_seconds * kPeakBf16 / 34359738368.0, 1.0 / efficiency, 1e-12);
  EXPECT_NEAR(c.duration().to_us(), 2.5 + 57.244, 1e-3);
}

// Below the first point (128) and above the last (16384) the efficiency is clamped:
//   64^3: 2 * 64^3 / (989.4e12 * 0.02) = 0.026495 us;  32768^3 uses 0.78.
TEST_F(CostModelTest, GemmEfficiencyIsClampedOutsideTheTable) {
  EXPECT_DOUBLE_EQ(model().cost(gemm(64, 64, 64), "H100-SXM").compute_seconds,
                   2.0 * 64 * 64 * 64 / (kPeakBf16 * 0.02));
  EXPECT_DOUBLE_EQ(model().cost(gemm(32768, 32768, 32768), "H100-SXM").compute_seconds,
                   2.0 * 32768.0 * 32768.0 * 32768.0 / (kPeakBf16 * 0.78));
}

// 8 MiB elementwise (a table point, 0.60) with 4 Mi FLOPs on CUDA cores (fp32 peak, 0.5):
//   memory  = 8388608 / (3350e9 * 0.60) = 4.1734 us; compute = 4194304 / 33.45e12 = 0.1254 us
//   duration = 2.5 + 4.1734 = 6.6734 us
// 16 MiB: a third of the way from 8 MiB (0.60) to 64 MiB (0.82): 0.673333 -> 7.4378 us.
TEST_F(CostModelTest, MemoryBoundElementwiseTakesBytesOverBandwidthTimesEfficiency) {
  const KernelCost c = model().cost(elementwise(8388608, 4194304), "H100-SXM");
  EXPECT_DOUBLE_EQ(c.memory_seconds, 8388608.0 / (kHbm * 0.60));
  EXPECT_DOUBLE_EQ(c.compute_seconds, 4194304.0 / (kPeakFp32 * 0.5));
  EXPECT_EQ(c.duration(), kLaunch + Time::from_s(8388608.0 / (kHbm * 0.60)));
  EXPECT_NEAR(c.duration().to_us(), 6.6734, 1e-4);

  const KernelCost mid = model().cost(elementwise(16777216, 0), "H100-SXM");
  EXPECT_NEAR(mid.memory_seconds * 1e6, 7.4378, 1e-4);
}

// The roofline takes the larger side. 8192 x 8192 x 16 bf16 (cube-root key 1024, 0.30):
//   compute = 2 * 8192^2 * 16 / (989.4e12 * 0.30) = 7.2350 us
//   memory  = (2 * 8192 * 16 * 2 + 8192^2 * 2) B / 2.8475e12 = 134742016 / 2.8475e12 = 47.3194 us
// so this skinny GEMM is memory-bound: duration = 2.5 + 47.3194 us. An elementwise kernel
// with 1e9 FLOPs on 1 MiB is compute-bound: 1e9 / (66.9e12 * 0.5) = 29.895 us > 1.252 us.
TEST_F(CostModelTest, RooflinePicksTheSlowerOfComputeAndMemory) {
  const KernelCost skinny = model().cost(gemm(8192, 8192, 16), "H100-SXM");
  EXPECT_GT(skinny.memory_seconds, skinny.compute_seconds);
  EXPECT_NEAR(skinny.compute_seconds * 1e6, 7.2350, 1e-4);
  EXPECT_NEAR(skinny.memory_seconds * 1e6, 47.3194, 1e-4);
  EXPECT_EQ(skinny.duration(), kLaunch + Time::from_s(skinny.memory_seconds));

  const KernelCost dense = model().cost(elementwise(1048576, 1e9), "H100-SXM");
  EXPECT_GT(dense.compute_seconds, dense.memory_seconds);
  EXPECT_NEAR(dense.compute_seconds * 1e6, 29.8954, 1e-4);
  EXPECT_EQ(dense.duration(), kLaunch + Time::from_s(dense.compute_seconds));
}

// An embedding op of dim 128 bf16 (256 B rows) moving 1e8 bytes, `unique` of its rows
// distinct.
KernelWork embedding_work(KernelKind kind, double unique) {
  KernelWork w;
  w.kind = kind;
  w.precision = Precision::kBf16;
  w.embedding_dim = 128;
  w.hbm_bytes = 1e8;
  w.unique_fraction = unique;
  return w;
}

// Embedding lookup, dim 128 bf16 = 256 B rows (0.70), 1e8 bytes, half the rows unique:
// HBM sees 1e8 * (1 - 0.6 * 0.5) = 7e7 B; memory = 7e7 / (3350e9 * 0.70) = 29.851 us.
TEST_F(CostModelTest, RepeatedEmbeddingRowsPartlyHitTheCache) {
  KernelWork w = embedding_work(KernelKind::kEmbeddingLookup, 0.5);
  const KernelCost c = model().cost(w, "H100-SXM");
  EXPECT_DOUBLE_EQ(c.hbm_bytes, 7e7);
  EXPECT_NEAR(c.memory_seconds * 1e6, 29.8507, 1e-4);
  w.unique_fraction = 1.0;
  EXPECT_DOUBLE_EQ(model().cost(w, "H100-SXM").hbm_bytes, 1e8);
  w.unique_fraction = 0.0;
  EXPECT_THROW(model().cost(w, "H100-SXM"), std::invalid_argument);
}

// A negative factor (repeats that cost more than they save, an update summing hot rows in
// sequence): h = -0.4, half the rows unique: 1e8 * (1 + 0.4 * 0.5) = 1.2e8 B.
TEST_F(CostModelTest, ANegativeRepeatFactorChargesRepeatedRows) {
  const KernelWork w = embedding_work(KernelKind::kEmbeddingUpdate, 0.5);
  CalibrationProfile p = model().profile("H100-SXM");
  p.kernels[static_cast<std::size_t>(KernelKind::kEmbeddingUpdate)].repeat_hit_rate = -0.4;
  EXPECT_DOUBLE_EQ(CostModel::cost(w, p).hbm_bytes, 1.2e8);
}

// The same lookup (all rows unique) with the family's call_latency at 60 us: the fixed
// time adds to the launch, the bytes keep their bandwidth term:
//   duration = 2.5 + 60 + 1e8 / (3350e9 * 0.70) us = 62.5 + 42.644 = 105.144 us.
TEST_F(CostModelTest, EmbeddingCallLatencyAddsAFixedTimePerCall) {
  const KernelWork w = embedding_work(KernelKind::kEmbeddingLookup, 1.0);
  CalibrationProfile p = model().profile("H100-SXM");
  const KernelCost before = CostModel::cost(w, p);
  p.kernels[static_cast<std::size_t>(KernelKind::kEmbeddingLookup)].call_latency =
      Time::from_us(60);
  const KernelCost c = CostModel::cost(w, p);
  EXPECT_EQ(c.launch_overhead, kLaunch + Time::from_us(60));
  EXPECT_DOUBLE_EQ(c.memory_seconds, before.memory_seconds);
  EXPECT_NEAR(c.duration().to_us(), 62.5 + 1e8 / (kHbm * 0.70) * 1e6, 1e-6);
  EXPECT_NEAR(c.duration().to_us(), 105.144, 1e-3);
}

TEST_F(CostModelTest, Fp8OnA100IsAnErrorNamingTheGpu) {
  KernelWork w = gemm(1024, 1024, 1024);
  w.precision = Precision::kFp8;
  EXPECT_GT(model().cost(w, "H100-SXM").compute_seconds, 0);
  try {
    model().cost(w, "A100-SXM");
    FAIL() << "no error";
  } catch (const CostError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("GPU type \"A100-SXM\" has no fp8 peak"), std::string::npos) << what;
    EXPECT_NE(what.find("a100-sxm.json"), std::string::npos) << what;
  }
}

TEST_F(CostModelTest, UnknownGpuTypeListsTheKnownOnes) {
  try {
    model().device("B200");
    FAIL() << "no error";
  } catch (const CostError& e) {
    EXPECT_EQ(std::string(e.what()),
              "no calibration profile for GPU type \"B200\" (profiles loaded: A100-SXM, H100-SXM)");
  }
  EXPECT_THROW(model().cost(gemm(1, 1, 1), "B200"), CostError);
}

// NCCL kernels take 16 of 132 SMs on H100 (0.121212) and 16 of 108 on A100 (0.148148).
TEST_F(CostModelTest, CommunicationSmFractionIsNcclSmsOverSmCount) {
  EXPECT_DOUBLE_EQ(model().comm_sm_fraction("H100-SXM"), 16.0 / 132.0);
  EXPECT_DOUBLE_EQ(model().comm_sm_fraction("A100-SXM"), 16.0 / 108.0);
  EXPECT_EQ(model().device("A100-SXM").sm_count, 108);
}

// A kernel with no work costs only its launch; negative work is a programmer error.
TEST_F(CostModelTest, EmptyKernelCostsItsLaunchAndNegativeWorkIsRejected) {
  EXPECT_EQ(model().cost(elementwise(0, 0), "H100-SXM").duration(), kLaunch);
  EXPECT_EQ(model().cost(gemm(0, 0, 0), "H100-SXM").duration(), kLaunch);
  EXPECT_THROW(model().cost(elementwise(-1, 0), "H100-SXM"), std::invalid_argument);
}

// Jagged attention, 1e12 flops, bf16, mean length 1024 (efficiency 0.42 in the test
// profile), tile factors 1, 1.1, 1.2, 1.5, 2 for tiles 16..256:
//   no tile_rows:     compute = 1e12 / (989.4e12 x 0.42)
//   tile_rows 128:    compute x 1.5 (the factor at index 3); tile_rows 64: x 1.2
TEST_F(CostModelTest, AttentionPaysTheTileFactorOfItsProfileTile) {
  KernelWork w;
  w.kind = KernelKind::kJaggedAttention;
  w.flops = 1e12;
  w.mean_length = 1024;
  w.tile_factor = {1, 1.1, 1.2, 1.5, 2};
  CalibrationProfile p = model().profile("H100-SXM");
  const double plain = 1e12 / (kPeakBf16 * 0.42);
  EXPECT_DOUBLE_EQ(CostModel::cost(w, p).compute_seconds, plain);
  p.kernels[static_cast<std::size_t>(KernelKind::kJaggedAttention)].tile_rows = 128;
  EXPECT_DOUBLE_EQ(CostModel::cost(w, p).compute_seconds, plain * 1.5);
  p.kernels[static_cast<std::size_t>(KernelKind::kJaggedAttention)].tile_rows = 64;
  EXPECT_DOUBLE_EQ(CostModel::cost(w, p).compute_seconds, plain * 1.2);
  w.tile_factor[2] = 0.5;
  EXPECT_THROW(CostModel::cost(w, p), std::invalid_argument);
}

}  // namespace
}  // namespace strait::sim::cost
