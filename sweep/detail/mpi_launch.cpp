// launched_by_mpi, and the stand-in for run_sweep_mpi in builds without MPI.

#include "sim/core/mpi_launch.hpp"

#include "sweep/sweep.hpp"

namespace strait::sweep {

bool launched_by_mpi() { return strait::launched_by_mpi(); }

#ifndef STRAIT_HAVE_MPI
bool mpi_built() { return false; }

SweepSummary run_sweep_mpi(const SweepSpec& spec, const SweepOptions& options, int& rank) {
  rank = 0;
  return run_sweep(spec, options);
}
#endif

}  // namespace strait::sweep
