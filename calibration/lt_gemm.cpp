#include "calibration/lt_gemm.hpp"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "kernels/cuda_check.hpp"
#include "kernels/types.hpp"

namespace strait::calibration {

using sim::cost::Precision;

void throw_cublas_error(cublasStatus_t status, const char* call, const char* file, int line) {
  throw kernels::CudaError(
      fmt::format("{}:{}: {}: {}", file, line, call, cublasGetStatusString(status)));
}

int element_bytes(Element e) { return e == Element::kF32 ? 4 : e == Element::kE4M3 ? 1 : 2; }

void random_elements(Element e, Rng& rng, std::vector<unsigned char>& out) {
  const auto n = out.size() / static_cast<std::size_t>(element_bytes(e));
  for (std::size_t i = 0; i < n; ++i) {
    const float x = static_cast<float>(rng.uniform() * 2 - 1);
    switch (e) {
      case Element::kF32:
        std::memcpy(&out[i * 4], &x, 4);
        break;
      case Element::kF16:
      case Element::kBF16: {
        const std::uint16_t h =
            e == Element::kF16 ? kernels::float_to_f16(x) : kernels::float_to_bf16(x);
        std::memcpy(&out[i * 2], &h, 2);
        break;
      }
      case Element::kE4M3:
        out[i] =
            static_cast<unsigned char>((rng.next_u64() & 0x87u) | ((4 + rng.uniform_int(5)) << 3));
        break;
    }
  }
}

kernels::DeviceBuffer random_device_buffer(std::size_t bytes, Element e, Rng& rng,
                                           cudaStream_t stream) {
  kernels::DeviceBuffer buffer(bytes);
  const auto width = static_cast<std::size_t>(element_bytes(e));
  std::vector<unsigned char> pattern(std::min<std::size_t>(bytes, std::size_t{1} << 20) / width *
                                     width);
  if (pattern.empty()) return buffer;
  random_elements(e, rng, pattern);
  auto* base = static_cast<unsigned char*>(buffer.data());
  STRAIT_CUDA_CHECK(
      cudaMemcpyAsync(base, pattern.data(), pattern.size(), cudaMemcpyHostToDevice, stream));
  for (std::size_t done = pattern.size(); done < bytes;) {
    const std::size_t n = std::min(done, bytes - done);
    STRAIT_CUDA_CHECK(cudaMemcpyAsync(base + done, base, n, cudaMemcpyDeviceToDevice, stream));
    done += n;
  }
  STRAIT_CUDA_CHECK(cudaStreamSynchronize(stream));
  return buffer;
}

std::optional<GemmTypes> gemm_types(Precision p) {
  switch (p) {
    case Precision::kFp32:
      return GemmTypes{CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, Element::kF32, 4};
    case Precision::kTf32:
      return GemmTypes{CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, Element::kF32, 4};
    case Precision::kBf16:
      return GemmTypes{CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F, Element::kBF16, 2};
    case Precision::kFp16:
      return GemmTypes{CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F, Element::kF16, 2};
    case Precision::kFp8:
      return GemmTypes{CUDA_R_8F_E4M3, CUDA_R_16BF, CUBLAS_COMPUTE_32F, Element::kE4M3, 2};
  }
  return std::nullopt;
}

LtGemm::LtGemm(cublasLtHandle_t lt, const GemmTypes& t, std::int64_t m, std::int64_t n,
               std::int64_t k)
    : lt_(lt) {
  try {
    const auto u = [](std::int64_t v) { return static_cast<std::uint64_t>(v); };
    STRAIT_CUBLAS_CHECK(cublasLtMatmulDescCreate(&desc_, t.compute, CUDA_R_32F));
    const cublasOperation_t transpose = CUBLAS_OP_T, none = CUBLAS_OP_N;
    STRAIT_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSA,
                                                       &transpose, sizeof(transpose)));
    STRAIT_CUBLAS_CHECK(
        cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSB, &none, sizeof(none)));
    STRAIT_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&w_, t.in, u(k), u(n), k));
    STRAIT_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&x_, t.in, u(k), u(m), k));
    STRAIT_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&y_, t.out, u(n), u(m), n));
    STRAIT_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&preference_));
    const std::uint64_t workspace = kGemmWorkspaceBytes;
    STRAIT_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(
        preference_, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace, sizeof(workspace)));
    int returned = 0;
    const cublasStatus_t status = cublasLtMatmulAlgoGetHeuristic(
        lt_, desc_, w_, x_, y_, y_, preference_, 1, &heuristic_, &returned);
    // NOT_SUPPORTED: no algorithm for this problem; the caller falls back.
    if (status != CUBLAS_STATUS_SUCCESS && status != CUBLAS_STATUS_NOT_SUPPORTED)
      throw_cublas_error(status, "cublasLtMatmulAlgoGetHeuristic", __FILE__, __LINE__);
    found_ = status == CUBLAS_STATUS_SUCCESS && returned > 0;
  } catch (...) {
    release();
    throw;
  }
}

LtGemm::~LtGemm() { release(); }

void LtGemm::run(const void* x, const void* w, void* y, void* workspace, cudaStream_t stream) {
  const float one = 1.0f, zero = 0.0f;
  STRAIT_CUBLAS_CHECK(cublasLtMatmul(lt_, desc_, &one, w, w_, x, x_, &zero, y, y_, y, y_,
                                     &heuristic_.algo, workspace, kGemmWorkspaceBytes, stream));
}

void LtGemm::release() noexcept {
  if (preference_ != nullptr) (void)cublasLtMatmulPreferenceDestroy(preference_);
  if (y_ != nullptr) (void)cublasLtMatrixLayoutDestroy(y_);
  if (x_ != nullptr) (void)cublasLtMatrixLayoutDestroy(x_);
  if (w_ != nullptr) (void)cublasLtMatrixLayoutDestroy(w_);
  if (desc_ != nullptr) (void)cublasLtMatmulDescDestroy(desc_);
  preference_ = nullptr;
  y_ = x_ = w_ = nullptr;
  desc_ = nullptr;
}

}  // namespace strait::calibration
