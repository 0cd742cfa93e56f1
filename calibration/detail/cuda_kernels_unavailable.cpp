// make_cuda_kernel_backend in a build without CUDA: says so before anything is measured.

#include "calibration/detail/backends.hpp"
#include "sim/core/error.hpp"

namespace strait::calibration::detail {

std::unique_ptr<KernelBackend> make_cuda_kernel_backend(int /*local_rank*/) {
  throw Error(
      "strait calibrate --backend cuda: this build has no CUDA (configure on a machine with the "
      "CUDA toolkit)");
}

}  // namespace strait::calibration::detail
