#pragma once
// What `strait calibrate`'s CUDA backend and `strait exec --backend cuda` share to run a
// GEMM and fill its inputs: one cuBLASLt plan in the layout of a linear layer's forward
// (row-major Y[m, n] = X[m, k] W[n, k]^T, i.e. column-major "TN", the layout FP8
// requires), f32 compute, bf16/fp16 (fp32, tf32) in and out, fp8 e4m3 in and bf16 out; the
// best heuristic algorithm under a 32 MiB workspace. Random device inputs: a 1 MiB
// deterministic pattern tiled over the buffer. Include only from CUDA-enabled sources.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include "kernels/device.hpp"
#include "sim/core/rng.hpp"
#include "sim/cost/kernel_work.hpp"

namespace strait::calibration {

[[noreturn]] void throw_cublas_error(cublasStatus_t status, const char* call, const char* file,
                                     int line);

}  // namespace strait::calibration

// The one check for cuBLAS and cuBLASLt calls (CUDA runtime calls use STRAIT_CUDA_CHECK).
#define STRAIT_CUBLAS_CHECK(call)                                                                  \
  do {                                                                                             \
    const cublasStatus_t strait_cublas_status_ = (call);                                           \
    if (strait_cublas_status_ != CUBLAS_STATUS_SUCCESS)                                            \
      ::strait::calibration::throw_cublas_error(strait_cublas_status_, #call, __FILE__, __LINE__); \
  } while (0)

namespace strait::calibration {

/// Bytes of cuBLASLt workspace a plan may use.
inline constexpr std::size_t kGemmWorkspaceBytes = std::size_t{32} << 20;

/// How random input elements are encoded.
enum class Element { kF32, kF16, kBF16, kE4M3 };

/// Bytes of one element: 4, 2, 2, 1.
int element_bytes(Element e);

/// Fills `out` (whole elements) with values in [-1, 1) in `e`'s encoding (e4m3: random sign
/// and mantissa, exponents 2^-3 .. 2^1, so magnitudes 0.125 .. 3.75 and never NaN).
void random_elements(Element e, Rng& rng, std::vector<unsigned char>& out);

/// A device buffer of `bytes` holding a 1 MiB pattern of random_elements tiled by doubling
/// device-to-device copies on `stream`; waits for the copies before returning.
kernels::DeviceBuffer random_device_buffer(std::size_t bytes, Element e, Rng& rng,
                                           cudaStream_t stream);

/// The cuBLAS types of a GEMM at precision `p`.
struct GemmTypes {
  cudaDataType_t in;
  cudaDataType_t out;
  cublasComputeType_t compute;
  Element in_element;
  int out_bytes;
};

/// The types GEMMs of precision `p` run with (every Precision has some).
std::optional<GemmTypes> gemm_types(sim::cost::Precision p);

/// One cuBLASLt matmul plan, column-major D[n, m] = op_T(W)[n, k] X[k, m] (see the top).
class LtGemm {
 public:
  LtGemm(cublasLtHandle_t lt, const GemmTypes& t, std::int64_t m, std::int64_t n, std::int64_t k);
  LtGemm(const LtGemm&) = delete;
  LtGemm& operator=(const LtGemm&) = delete;
  ~LtGemm();

  /// False when cuBLASLt's heuristic found no algorithm (the caller falls back or refuses).
  bool has_algorithm() const { return found_; }

  /// Queues Y = X W^T on `stream`; `workspace` holds kGemmWorkspaceBytes of device memory.
  void run(const void* x, const void* w, void* y, void* workspace, cudaStream_t stream);

 private:
  void release() noexcept;

  cublasLtHandle_t lt_;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t w_ = nullptr, x_ = nullptr, y_ = nullptr;
  cublasLtMatmulPreference_t preference_ = nullptr;
  cublasLtMatmulHeuristicResult_t heuristic_{};
  bool found_ = false;
};

/// A linear layer's backward as `strait exec` runs it and `strait calibrate` times it (the
/// gemm_backward family): the input gradient dX[m, k] = dY[m, n] W'[k, n]^T and the weight
/// gradient dW[n, k] = dY'[n, m_r] X'[k, m_r]^T, two TN plans of about 2 m n k flops each
/// on buffers of the forward's sizes (the primed operands are the same memory read in the
/// other order: the values are random, so the work and traffic are a real backward's).
/// The weight gradient reduces over m_r = m rounded up to 16 rows: in the TN layout the
/// reduction is the operands' contiguous dimension, and cuBLASLt's fast kernels need it
/// 16-byte aligned; a framework reads dY^T and X with their feature dimensions contiguous,
/// so its kernels never see that stride (measured on an H200: m not a multiple of 8 ran the
/// weight gradient 2-3x slower). Callers size x and dy for m_r rows (reduction_rows).
class LtGemmBackward {
 public:
  LtGemmBackward(cublasLtHandle_t lt, const GemmTypes& t, std::int64_t m, std::int64_t n,
                 std::int64_t k)
      : dgrad_(lt, t, m, k, n), wgrad_(lt, t, n, k, reduction_rows(m)) {}

  /// m rounded up to a multiple of 16: the rows x and dy must hold.
  static std::int64_t reduction_rows(std::int64_t m) { return (m + 15) / 16 * 16; }

  bool has_algorithm() const { return dgrad_.has_algorithm() && wgrad_.has_algorithm(); }

  /// Queues dX then dW on `stream` (x[m, k], w[n, k], dy[m, n]; dx[m, k], dw[n, k]).
  void run(const void* dy, const void* x, const void* w, void* dx, void* dw, void* workspace,
           cudaStream_t stream) {
    dgrad_.run(dy, w, dx, workspace, stream);
    wgrad_.run(dy, x, dw, workspace, stream);
  }

 private:
  LtGemm dgrad_, wgrad_;
};

}  // namespace strait::calibration
