// The CUDA backend in a build without CUDA, NCCL or MPI: it says so.

#include "executor/cuda_executor.hpp"
#include "sim/core/error.hpp"

namespace strait::executor {

bool cuda_backend_available() { return false; }

void require_cuda_backend() {
  throw Error(
      "strait exec: this build has no CUDA/NCCL (configure with CUDA to run strait exec "
      "--backend cuda)");
}

MeasuredRun run_cuda_ranks(const sim::workload::OpGraph&, const MpiSession&, std::int64_t, int,
                           double) {
  require_cuda_backend();
  return {};
}

}  // namespace strait::executor
