// The CUDA kernel backend of `strait calibrate run --backend cuda` (label `gpu`): a few quick
// cases of each family run on GPU 0 and give positive times; an embedding update measures
// its unique-row fraction u in (0, 1] and recounts its work with it (kernel_case.hpp:
// flops = ids d (1 + 4 u), bytes = ids d e (1 + 2 u) + 8 u ids). No timing is asserted
// beyond "> 0". Without a device the tests skip; without a device (or without CUDA in the
// build) the factory throws an Error naming "no CUDA".

#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include <gtest/gtest.h>

#include "calibration/detail/backends.hpp"
#include "calibration/kernel_case.hpp"
#include "kernels/device.hpp"

namespace strait::calibration {
namespace {

using sim::cost::KernelKind;
using sim::cost::Precision;

bool has_gpu() { return kernels::cuda_device_count() > 0; }

// The first quick CUDA case of `kind` (and `dtype`, when given) the backend supports.
std::optional<KernelCase> first_case(const detail::KernelBackend& backend, KernelKind kind,
                                     std::optional<Precision> dtype = std::nullopt) {
  for (const KernelCase& c : kernel_cases("cuda", true)) {
    if (c.family.kernel != kind || (dtype && c.dtype != *dtype)) continue;
    if (backend.supports(c)) return c;
  }
  return std::nullopt;
}

void expect_positive_times(detail::KernelBackend& backend, KernelCase c) {
  const std::vector<double> samples = backend.time(c, 1, 3);
  ASSERT_EQ(samples.size(), 3u) << c.family.name();
  for (double us : samples) EXPECT_GT(us, 0.0) << c.family.name() << " " << c.shape.dump();
}

TEST(CudaKernelBackend, NamesItsDeviceAndLibraries) {
  if (!has_gpu()) GTEST_SKIP() << "no CUDA device";
  const auto backend = detail::make_cuda_kernel_backend(0);
  EXPECT_NE(backend->device().find("driver"), std::string::npos) << backend->device();
  const auto versions = backend->versions();
  EXPECT_TRUE(versions.count("cuda_runtime") == 1 && versions.count("cuda_driver") == 1);
  EXPECT_EQ(versions.count("cublas"), 1u);
}

TEST(CudaKernelBackend, TimesBf16AndFp16Gemms) {
  if (!has_gpu()) GTEST_SKIP() << "no CUDA device";
  const auto backend = detail::make_cuda_kernel_backend(0);
  for (Precision p : {Precision::kBf16, Precision::kFp16}) {
    const auto c = first_case(*backend, KernelKind::kGemm, p);
    ASSERT_TRUE(c.has_value()) << sim::cost::to_string(p);
    expect_positive_times(*backend, *c);
  }
}

TEST(CudaKernelBackend, TimesFp8GemmsWhereTheGpuHasThem) {
  if (!has_gpu()) GTEST_SKIP() << "no CUDA device";
  const auto backend = detail::make_cuda_kernel_backend(0);
  const auto c = first_case(*backend, KernelKind::kGemm, Precision::kFp8);
  if (!c) GTEST_SKIP() << "no FP8 on this GPU (compute capability < 8.9)";
  expect_positive_times(*backend, *c);
}

TEST(CudaKernelBackend, TimesJaggedAndPaddedAttentionBothPasses) {
  if (!has_gpu()) GTEST_SKIP() << "no CUDA device";
  const auto backend = detail::make_cuda_kernel_backend(0);
  // The first quick case of each (layout, pass): 4 cases.
  std::set<std::pair<bool, bool>> timed;
  for (const KernelCase& c : kernel_cases("cuda", true)) {
    const bool padded = c.family.kernel == KernelKind::kPaddedAttention ||
                        c.family.kernel == KernelKind::kPaddedAttentionBackward;
    const bool attention = padded || c.family.kernel == KernelKind::kJaggedAttention ||
                           c.family.kernel == KernelKind::kJaggedAttentionBackward;
    if (!attention || !backend->supports(c)) continue;
    const bool backward = c.family.kernel == KernelKind::kJaggedAttentionBackward ||
                          c.family.kernel == KernelKind::kPaddedAttentionBackward ||
                          c.shape.value("pass", "") == "backward";
    if (!timed.insert({padded, backward}).second) continue;
    expect_positive_times(*backend, c);
  }
  EXPECT_EQ(timed.size(), 4u);
}

TEST(CudaKernelBackend, TimesEmbeddingLookup) {
  if (!has_gpu()) GTEST_SKIP() << "no CUDA device";
  const auto backend = detail::make_cuda_kernel_backend(0);
  const auto c = first_case(*backend, KernelKind::kEmbeddingLookup);
  ASSERT_TRUE(c.has_value());
  expect_positive_times(*backend, *c);
}

TEST(CudaKernelBackend, EmbeddingUpdateMeasuresItsUniqueFraction) {
  if (!has_gpu()) GTEST_SKIP() << "no CUDA device";
  const auto backend = detail::make_cuda_kernel_backend(0);
  const auto found = first_case(*backend, KernelKind::kEmbeddingUpdate);
  ASSERT_TRUE(found.has_value());
  KernelCase c = *found;
  const std::vector<double> samples = backend->time(c, 1, 3);
  ASSERT_EQ(samples.size(), 3u);
  for (double us : samples) EXPECT_GT(us, 0.0);
  const double u = c.shape.at("unique_fraction").get<double>();
  EXPECT_GT(u, 0.0);
  EXPECT_LE(u, 1.0);
  const double ids = c.shape.at("tables").get<double>() * c.shape.at("batch").get<double>() *
                     c.shape.at("pooling").get<double>();
  const double d = c.shape.at("dim").get<double>();
  const double e = sim::cost::bytes_per_element(c.dtype);
  EXPECT_DOUBLE_EQ(c.flops, ids * d * (1 + 4 * u));
  EXPECT_DOUBLE_EQ(c.bytes, ids * d * e * (1 + 2 * u) + 8 * u * ids);
}

TEST(CudaKernelBackend, TimesCopyAndAdam) {
  if (!has_gpu()) GTEST_SKIP() << "no CUDA device";
  const auto backend = detail::make_cuda_kernel_backend(0);
  for (KernelKind kind : {KernelKind::kElementwise, KernelKind::kOptimizer}) {
    const auto c = first_case(*backend, kind);
    ASSERT_TRUE(c.has_value()) << sim::cost::to_string(kind);
    expect_positive_times(*backend, *c);
  }
}

TEST(CudaKernelBackend, FactoryWithoutCudaThrowsNamingIt) {
  if (has_gpu()) GTEST_SKIP() << "a CUDA device is present";
  // A build without CUDA: "this build has no CUDA"; with CUDA but no device: "no CUDA
  // device found".
  try {
    (void)detail::make_cuda_kernel_backend(0);
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no CUDA"), std::string::npos) << e.what();
#ifndef STRAIT_HAVE_CUDA
    EXPECT_NE(std::string(e.what()).find("this build has no CUDA"), std::string::npos) << e.what();
#endif
  }
}

}  // namespace
}  // namespace strait::calibration
