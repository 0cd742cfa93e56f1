// make_nccl_collectives in a build without NCCL or MPI: says so before anything is measured.

#include "calibration/detail/backends.hpp"
#include "sim/core/error.hpp"

namespace strait::calibration::detail {

std::unique_ptr<CollectiveBackend> make_nccl_collectives(Communicator& /*comm*/,
                                                         int /*local_rank*/) {
  throw Error(
      "strait calibrate --backend cuda: this build has no NCCL/MPI, so it cannot time GPU "
      "collectives (configure with the CUDA toolkit, NCCL and MPI, or run without collectives)");
}

}  // namespace strait::calibration::detail
