#pragma once
// What every backend of `strait exec` does around its own work, once: MPI error checks,
// the watchdog on job-wide waits, the SIGTERM line that says where a rank stopped, the
// test hooks, and run_rank_job (the world-size check, the warm-up and measured runs, a
// failure ending the whole job with the rank and op named, the gather of every rank's op
// times to rank 0). See cpu_executor.hpp for the fault messages.

#include <mpi.h>

#include <csignal>
#include <cstdint>
#include <functional>
#include <string>

#include "executor/cpu_executor.hpp"
#include "executor/measured_run.hpp"
#include "sim/workload/op_graph.hpp"

namespace strait::executor::detail {

/// Throws strait::Error "strait exec: WHAT failed: <MPI's text>" unless `code` is success.
void check_mpi(int code, const char* what);

/// How long the start barrier and the final gathers may take: they also wait for the
/// peers' preparation, so never less than 300 s; no limit when collectives have none.
double job_wait_limit_s(double collective_timeout_s);

/// Waits for a job-wide `request`; a peer that stopped outside an op would leave it
/// pending forever: past `timeout_s` (> 0) prints "strait exec: rank R: WHAT did not
/// complete in T s (a peer stopped outside an op)" and aborts the job.
void wait_for_job(MPI_Request& request, const char* what, int rank, double timeout_s);

/// The op this rank is in (index into its ops; -1 between ops), read by the SIGTERM
/// handler and by the failure message.
void set_current_op(std::int32_t op);

/// The test hooks STRAIT_EXEC_KILL / STRAIT_EXEC_FAIL = "RANK:OP_INDEX": at that op this
/// rank dies as if killed from outside, or the op throws.
class FaultHooks {
 public:
  explicit FaultHooks(int rank);
  /// Called as op `index` starts: raises SIGKILL or throws strait::Error
  /// "injected failure (STRAIT_EXEC_FAIL)" when a hook names it.
  void at(std::int32_t index) const;

 private:
  std::int32_t kill_op_;
  std::int32_t fail_op_;
};

/// Throws strait::Error "strait exec: OP collectives are not supported yet (op 'NAME')"
/// for a collective op a backend cannot run.
[[noreturn]] void unsupported_collective(const sim::workload::OpGraph& graph,
                                         const sim::workload::Op& op);

/// CPU time around the measured run: the whole machine's busy time (/proc/stat) and this
/// process's own, so that rank 0 can say how much other processes took.
class CpuWatch {
 public:
  void start();
  void stop();
  double machine_busy_s() const { return machine_busy_s_; }
  double process_s() const { return process_s_; }

 private:
  double machine_busy_s_ = 0, process_s_ = 0;
};

/// What a backend's runs of one rank measured.
struct RankTimes {
  OpTimes times;      // the measured run's op starts and ends
  double wall_s = 0;  // its wall time
  CpuWatch cpu;       // around the measured run
};

/// Runs `runner` (a backend's RankRunner: run() returns the wall seconds, times() the op
/// times) `warmup_runs` times untimed, then once measured, with the CPU watch around it.
template <class Runner>
RankTimes warm_up_and_measure(Runner& runner, int warmup_runs) {
  for (int w = 0; w < warmup_runs; ++w) runner.run();
  RankTimes measured;
  measured.cpu.start();
  measured.wall_s = runner.run();
  measured.cpu.stop();
  measured.times = runner.times();
  return measured;
}

/// Runs this rank of `graph` with `measure` (which does the warm-up runs and the measured
/// one) and gathers every rank's times to rank 0 (the returned run has `ranks` there,
/// empty elsewhere). Throws strait::Error when MPI's world is not the graph's ranks; an
/// exception from `measure` prints "strait exec: rank R failed in op 'X' (step S): ..."
/// and aborts the job.
MeasuredRun run_rank_job(const sim::workload::OpGraph& graph, const MpiSession& session,
                         const std::string& backend, int warmup_runs, double collective_timeout_s,
                         const std::function<RankTimes()>& measure);

}  // namespace strait::executor::detail
