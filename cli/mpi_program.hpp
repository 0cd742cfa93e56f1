#pragma once
// strait-mpi: the commands that run as MPI ranks or on GPUs (`exec`, `calibrate run`, and
// `sweep` under mpirun) are a second program, so that `strait` and every other command
// start without loading MPI, CUDA and NCCL, which cost a tenth of a second and about 200 MB
// at every start (bench/startup.py). `strait` hands these commands to strait-mpi with
// exec(3): the same process, PID, environment and MPI launch, so `mpirun -np 4 strait exec
// ...` works as written. strait-mpi sits next to strait (the build tree's bin/) or in
// PREFIX/libexec/strait (an installation).
//
// In strait-mpi the functions below run the commands (exec_command.cpp,
// calibrate_run_command.cpp, sweep_mpi_command.cpp); in strait they hand over
// (mpi_hand_off.cpp). A test (tests/cli/startup_test.cpp) checks that strait needs none of
// the MPI, CUDA and NCCL libraries.

#include <string>
#include <vector>

namespace strait::cli {

/// `strait calibrate run ARGS`.
int calibrate_run(const std::vector<std::string>& args);
/// `strait sweep ARGS` in a process started by an MPI launcher: points over the ranks.
int sweep_on_mpi_ranks(const std::vector<std::string>& args);
// `strait exec ARGS` is run_exec (command.hpp).

/// Freed memory stays in the process (no mmap for large blocks, no trimming), as HPC
/// runtimes arrange: MPI's temporary reduction buffers and the executor's collective
/// buffers are then reused instead of being mapped and page-faulted on every call, which
/// made large CPU collectives 10-40x slower and bimodal (depending on glibc's moving mmap
/// threshold) on sandboxed hosts. strait-mpi only.
void keep_freed_memory();

}  // namespace strait::cli
