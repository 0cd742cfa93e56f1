// launched_by_mpi, and the stand-in for run_sweep_mpi in builds without MPI.

#include <cstdlib>

#include "sweep/sweep.hpp"

namespace strait::sweep {

bool launched_by_mpi() {
  // Open MPI, MPICH/Hydra and PMIx set one of these in every process they start.
  for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"}) {
    if (std::getenv(var) != nullptr) return true;
  }
  return false;
}

#ifndef STRAIT_HAVE_MPI
bool mpi_built() { return false; }

SweepSummary run_sweep_mpi(const SweepSpec& spec, const SweepOptions& options, int& rank) {
  rank = 0;
  return run_sweep(spec, options);
}
#endif

}  // namespace strait::sweep
