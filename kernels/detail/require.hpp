#pragma once
// Argument checks shared by the public entry points.

#include <string>

#include "kernels/types.hpp"

namespace strait::kernels::detail {

inline void require(bool ok, const char* kernel, const char* argument,
                    const std::string& expectation) {
  if (!ok) throw KernelArgumentError(kernel, argument, expectation);
}

[[noreturn]] inline void no_cuda(const char* kernel) {
  throw CudaError(std::string(kernel) + ": strait was built without CUDA");
}

}  // namespace strait::kernels::detail
