// The CPU executor in a build without MPI: every entry point says so.

#include "executor/cpu_executor.hpp"
#include "sim/core/error.hpp"

namespace strait::executor {

MpiSession::MpiSession(double startup_timeout_s) : startup_timeout_s_(startup_timeout_s) {}
MpiSession::~MpiSession() = default;

bool mpi_available() { return false; }

MeasuredRun run_cpu_ranks(const sim::workload::OpGraph&, const MpiSession&, std::int64_t, int,
                          double) {
  throw Error("strait exec: this build has no MPI (install an MPI and rebuild)");
}

}  // namespace strait::executor
