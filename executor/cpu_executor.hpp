#pragma once
// The CPU backend of `strait exec`: one MPI process per rank runs its rank's ops of the
// op graph for real and measures them (see op_scheduler.hpp for when an op may start).
//
//   - Kernel ops run synchronously on the process's thread (CpuKernels): they are the
//     CPU's work, one core per rank.
//   - Collective ops are MPI non-blocking collectives (Iallreduce, Iallgather,
//     Ireduce_scatter_block, Ialltoall, Ialltoallv with the real per-peer sizes) on one
//     communicator per process group, with buffers prepared once. The rank's thread
//     progresses them with MPI_Testsome between kernels and polls them while nothing else
//     can start: a CPU rank has no engine of its own for communication, so a collective
//     progresses at kernel boundaries and its measured end is when the rank saw it
//     complete (an upper bound, late by at most the kernel it overlapped). A progress
//     thread was tried and measured worse: polling every 5-100 us on the rank's only core
//     slowed its kernels by 15-30% and still left a 640 KiB all-to-all at 150-300 us
//     (each rendezvous round waits for the peer's next poll) against 25 us blocking.
//   - Times are steady_clock, relative to a common start right after a barrier; all
//     ranks' op times are gathered to rank 0.
// Faults: the job ends when one rank fails, and says where.
//   - A rank killed or crashed: mpirun notices ("mpirun noticed that process rank R ...
//     exited on signal 9") and sends SIGTERM to the others; each writes
//     "strait exec: rank R stopped in op 'X' (step S) after a peer failed" and exits 1.
//   - An op that throws: "strait exec: rank R failed in op 'X' (step S): ..." and
//     MPI_Abort(MPI_COMM_WORLD, 1) (the others then stop as above).
//   - A collective in flight longer than collective_timeout_s (0: no limit): "strait exec:
//     rank R: collective 'X' (group G, step S) did not complete in T s" and MPI_Abort.
//   - Test hooks: the environment variable STRAIT_EXEC_KILL="RANK:OP_INDEX" makes rank
//     RANK raise(SIGKILL) on itself when it is about to start its op OP_INDEX (first run);
//     STRAIT_EXEC_FAIL="RANK:OP_INDEX" makes that op throw strait::Error instead.
//   - Start-up: every wait for the peers before the first step (MPI_Init, the
//     communicators' set-up, the first start barrier) lasts at most the session's
//     startup_timeout_s (0: no limit). Past it, MPI_Init (where no MPI call can end the
//     job) prints "strait exec: rank R: start-up (MPI_Init) did not complete in T s: a
//     peer did not arrive (stopped or stalled before it)" and exits 1, and mpirun ends the
//     others; a later phase calls MPI_Abort after rank 0 named the missing ranks:
//     "strait exec: rank 0: start-up (communicators) did not complete in T s: rank 1 did
//     not arrive (stopped or stalled before it)" (rank 0 itself missing: the others say
//     "rank 0 did not arrive"). STRAIT_EXEC_STALL="RANK:init" or "RANK:setup" (test hook)
//     stalls that rank before MPI_Init or right after it.
//   - The later start barriers and the final gathers wait at most job_wait_limit_s: "strait
//     exec: rank R: the start barrier did not complete in T s: rank 2 did not arrive ...",
//     "rank R: gathering the op times did not complete in T s (a peer stopped outside an
//     op)".
// Limits: broadcast, reduce and send/recv ops are refused.

#include <algorithm>
#include <cstdint>

#include "executor/measured_run.hpp"
#include "sim/workload/op_graph.hpp"

namespace strait::executor {

/// How long a rank waits for its peers outside collectives (MPI_Init, the set-up, the
/// start barriers, the final gathers) unless told otherwise: such a wait also covers the
/// peers' loading and preparation, which no collective timeout measures, so never less
/// than 300 s; no limit when collectives have none (collective_timeout_s 0).
inline double job_wait_limit_s(double collective_timeout_s) {
  return collective_timeout_s > 0 ? std::max(collective_timeout_s, 300.0) : 0.0;
}

/// MPI for the process's lifetime (initialised here unless already, finalised at the end).
/// MPI_Init waits for every process of the job: past `startup_timeout_s` (> 0) this
/// process says so and exits 1 (see Faults above); the backends' start-up waits use the
/// same limit.
class MpiSession {
 public:
  explicit MpiSession(double startup_timeout_s = 0);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
  int rank() const { return rank_; }
  int size() const { return size_; }
  double startup_timeout_s() const { return startup_timeout_s_; }

 private:
  int rank_ = 0;
  int size_ = 1;
  bool owns_ = false;
  double startup_timeout_s_ = 0;
};

/// True when this build has MPI (else run_cpu_ranks throws).
bool mpi_available();

/// Runs graph.ranks[session.rank()] with embedding tables of `table_rows` rows,
/// `warmup_runs` times untimed (first touch of buffers, MPI connection set-up) and once
/// measured; returns the measured run on rank 0 (`ranks` empty elsewhere). Throws
/// strait::Error when the world size is not the graph's rank count; a failure while the
/// ops run aborts the whole MPI job (see Faults above).
MeasuredRun run_cpu_ranks(const sim::workload::OpGraph& graph, const MpiSession& session,
                          std::int64_t table_rows, int warmup_runs = 0,
                          double collective_timeout_s = 120.0);

}  // namespace strait::executor
