#pragma once
// Whether this process was started by an MPI launcher (mpirun, srun with PMI/PMIx), read
// from the environment every such launcher sets; used to decide whether to initialise MPI.

namespace strait {

/// True when an MPI launcher started this process (Open MPI, MPICH/Hydra or PMIx).
bool launched_by_mpi();

}  // namespace strait
