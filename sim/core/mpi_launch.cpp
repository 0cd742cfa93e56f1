#include "sim/core/mpi_launch.hpp"

#include <cstdlib>
#include <initializer_list>

namespace strait {

bool launched_by_mpi() {
  // Open MPI, MPICH/Hydra and PMIx set one of these in every process they start.
  for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"}) {
    if (std::getenv(var) != nullptr) return true;
  }
  return false;
}

}  // namespace strait
