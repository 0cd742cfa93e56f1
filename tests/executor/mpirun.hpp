#pragma once
// `mpirun -np N strait exec ...` from the repository root, for the executor's end-to-end
// tests (exec, launch plans, the CUDA backend).

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>

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

/// How a bounded run ended: `finished` false when it outlived its limit (then killed).
struct BoundedRun {
  bool finished = false;
  int exit_code = -1;
  double seconds = 0;
};

/// Runs `ENV mpirun ... -np RANKS strait exec ARGS` (output to `log`) in its own process
/// group, killed with the group when it outlives `limit`: a hang fails the test instead
/// of hanging it.
inline BoundedRun mpirun_bounded(int ranks, const std::string& args, const std::string& env,
                                 const std::string& log, std::chrono::seconds limit) {
  const auto command =
      fmt::format("cd {} && {} {} --allow-run-as-root --oversubscribe -np {} {} exec {} >{} 2>&1",
                  STRAIT_SOURCE_DIR, env, STRAIT_MPIEXEC, ranks, STRAIT_BINARY, args, log);
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::setpgid(0, 0);
    ::execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  BoundedRun run;
  if (pid < 0) return run;
  ::setpgid(pid, pid);
  int status = 0;
  while (true) {
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (done == pid) {
      run.finished = true;
      run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      return run;
    }
    if (std::chrono::steady_clock::now() - start > limit) {
      ::kill(-pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return run;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace strait::cli::testing
