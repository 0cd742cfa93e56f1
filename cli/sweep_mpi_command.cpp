// strait sweep under mpirun: the points over the ranks of the MPI job, rank 0 writing.
// Part of strait-mpi (cli/mpi_program.hpp).

#include "cli/mpi_program.hpp"
#include "cli/sweep_command.hpp"
#include "sim/core/error.hpp"
#include "sweep/sweep.hpp"

namespace strait::cli {

int sweep_on_mpi_ranks(const std::vector<std::string>& args) {
  if (!sweep::mpi_built())
    throw Error("sweep: started by mpirun, but this strait was built without MPI");
  return sweep_points(args, sweep::run_sweep_mpi, "MPI ranks");
}

}  // namespace strait::cli
