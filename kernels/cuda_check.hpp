#pragma once
// The one check macro for CUDA runtime calls, shared by strait's CUDA code (the kernels,
// calibration, the executor): on failure throws CudaError naming file:line, the call and
// cudaGetErrorString. Include only from CUDA-enabled sources.

#include <cuda_runtime_api.h>

#include "kernels/types.hpp"

namespace strait::kernels {

/// Throws CudaError "FILE:LINE: CALL: <cudaGetErrorString(err)>"; what STRAIT_CUDA_CHECK calls.
[[noreturn]] void throw_cuda_error(cudaError_t err, const char* call, const char* file, int line);

}  // namespace strait::kernels

#define STRAIT_CUDA_CHECK(call)                                                         \
  do {                                                                                  \
    const cudaError_t strait_cuda_err_ = (call);                                        \
    if (strait_cuda_err_ != cudaSuccess)                                                \
      ::strait::kernels::throw_cuda_error(strait_cuda_err_, #call, __FILE__, __LINE__); \
  } while (0)
