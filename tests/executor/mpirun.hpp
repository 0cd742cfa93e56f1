#pragma once
// `mpirun -np N strait exec ...` from the repository root, for the executor's end-to-end
// tests (exec, launch plans, the CUDA backend).

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include <fmt/format.h>

#include "executor/cpu_executor.hpp"

namespace strait::cli::testing {

/// True when this build has MPI and the mpirun it was configured with exists.
inline bool have_mpirun() {
  const std::string mpiexec = STRAIT_MPIEXEC;
  return executor::mpi_available() && !mpiexec.empty() && std::filesystem::exists(mpiexec);
}

/// Runs `strait exec ARGS` on `ranks` ranks, its output to `log`; its exit code (-1 when
/// it did not exit).
inline int mpirun(int ranks, const std::string& args, const std::string& log) {
  const auto command =
      fmt::format("cd {} && {} --allow-run-as-root --oversubscribe -np {} {} exec {} >{} 2>&1",
                  STRAIT_SOURCE_DIR, STRAIT_MPIEXEC, ranks, STRAIT_BINARY, args, log);
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace strait::cli::testing
