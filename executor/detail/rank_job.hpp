#pragma once
// What every backend of `strait exec` does around its own work, once: MPI error checks,
// the watchdog on job-wide waits (start-up included: MPI_Init, the set-up, the start
// barrier), the SIGTERM line that says where a rank stopped, the test hooks, and
// run_rank_job (the world-size check, the warm-up and measured runs, a failure ending the
// whole job with the rank and op named, the gather of every rank's op times to rank 0).
// See cpu_executor.hpp for the fault messages.

#include <mpi.h>

#include <condition_variable>
#include <csignal>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "executor/cpu_executor.hpp"
#include "executor/measured_run.hpp"
#include "sim/workload/op_graph.hpp"

namespace strait::executor::detail {

/// Throws strait::Error "strait exec: WHAT failed: <MPI's text>" unless `code` is success.
void check_mpi(int code, const char* what);

/// How every watchdog ends the job: prints `line` (one line, with its newline) to stderr,
/// then MPI_Abort(MPI_COMM_WORLD, 1); mpirun ends the other ranks.
[[noreturn]] void end_job(const std::string& line);

/// Waits for a job-wide `request`; a peer that stopped outside an op would leave it
/// pending forever: past `timeout_s` (> 0) prints "strait exec: rank R: WHAT did not
/// complete in T s (a peer stopped outside an op)" and ends the job.
void wait_for_job(MPI_Request& request, const char* what, int rank, double timeout_s);

/// A barrier on MPI_COMM_WORLD that names who is missing: every rank tells rank 0 it
/// arrived at `phase` and rank 0 tells every rank (empty messages beside an Ibarrier).
/// Past `timeout_s` (> 0) rank 0 prints "strait exec: rank 0: PHASE did not complete in T
/// s: ranks 1, 3 did not arrive (stopped or stalled before it)" and ends the job; the
/// others wait 5 s longer after hearing from rank 0 so that it speaks first, and say
/// "rank 0 did not arrive" when they never heard from it.
void wait_for_ranks(const char* phase, int rank, double timeout_s);

/// A watchdog for a call that no MPI call can interrupt (MPI_Init: MPI_Abort needs MPI
/// up): while alive, a thread waits; past `timeout_s` (> 0) it writes `line` to stderr
/// and ends this process with exit code 1, and mpirun then ends the job.
class ProcessDeadline {
 public:
  ProcessDeadline(std::string line, double timeout_s);
  ~ProcessDeadline();
  ProcessDeadline(const ProcessDeadline&) = delete;
  ProcessDeadline& operator=(const ProcessDeadline&) = delete;

 private:
  std::string line_;
  std::mutex mutex_;
  std::condition_variable done_changed_;
  bool done_ = false;
  std::thread thread_;
};

/// This process's rank as the launcher set it before MPI_Init (Open MPI's
/// OMPI_COMM_WORLD_RANK, PMIx's PMIX_RANK, MPICH's PMI_RANK); -1 when none is set.
int launcher_rank();

/// Test hook STRAIT_EXEC_STALL="RANK:STAGE" (read only here): rank RANK stops for good
/// (until a signal ends it) at `stage`, "init" (before MPI_Init: it never arrives) or
/// "setup" (right after MPI_Init, before any collective), so that the start-up watchdog's
/// end of the job can be tested; nothing when it names another rank or stage.
void stall_if_hooked(const char* stage, int rank);

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
