#pragma once
// The one check macro for NCCL calls, shared by calibration's NCCL collectives and
// `strait exec --backend cuda`: on failure throws kernels::CudaError naming file:line, the
// call and ncclGetErrorString (CUDA runtime calls use STRAIT_CUDA_CHECK). Include only from
// sources built with NCCL.

#include <nccl.h>

#include <fmt/format.h>

#include "kernels/types.hpp"

namespace strait::calibration {

[[noreturn]] inline void throw_nccl_error(ncclResult_t result, const char* call, const char* file,
                                          int line) {
  throw kernels::CudaError(
      fmt::format("{}:{}: {}: {}", file, line, call, ncclGetErrorString(result)));
}

}  // namespace strait::calibration

#define STRAIT_NCCL_CHECK(call)                                                                \
  do {                                                                                         \
    const ncclResult_t strait_nccl_result_ = (call);                                           \
    if (strait_nccl_result_ != ncclSuccess)                                                    \
      ::strait::calibration::throw_nccl_error(strait_nccl_result_, #call, __FILE__, __LINE__); \
  } while (0)
