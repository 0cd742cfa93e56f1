#pragma once
// The one check macro for CUDA runtime calls: on failure throws CudaError naming
// file:line, the call and cudaGetErrorString. Include only from CUDA-enabled sources.

#include <cuda_runtime_api.h>

#include "kernels/types.hpp"

namespace strait::kernels::detail {

[[noreturn]] void throw_cuda_error(cudaError_t err, const char* call, const char* file, int line);

/// Keeps what the kernels' stream-ordered scratch (cudaMallocAsync) frees mapped in the
/// current device's default pool (release threshold: no limit), as a framework's caching
/// allocator keeps its blocks: otherwise every synchronization hands it back to the driver
/// and the next call maps it again, a cost no production kernel pays. Idempotent.
void keep_freed_scratch_mapped();

}  // namespace strait::kernels::detail

#define STRAIT_CUDA_CHECK(call)                                                                 \
  do {                                                                                          \
    const cudaError_t strait_cuda_err_ = (call);                                                \
    if (strait_cuda_err_ != cudaSuccess)                                                        \
      ::strait::kernels::detail::throw_cuda_error(strait_cuda_err_, #call, __FILE__, __LINE__); \
  } while (0)
