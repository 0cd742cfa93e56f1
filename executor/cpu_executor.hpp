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
//   - The start barrier and the final gathers wait at most max(collective_timeout_s, 300 s)
//     (they also wait for the peers' preparation), none when it is 0: "strait exec:
//     rank R: the start barrier did not complete in T s (a peer stopped outside an op)".
// Limits: broadcast, reduce and send/recv ops are refused.

#include <cstdint>

#include "executor/measured_run.hpp"
#include "sim/workload/op_graph.hpp"

namespace strait::executor {

/// MPI for the process's lifetime (initialised here unless already, finalised at the end).
class MpiSession {
 public:
  MpiSession();
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
  int rank() const { return rank_; }
  int size() const { return size_; }

 private:
  int rank_ = 0;
  int size_ = 1;
  bool owns_ = false;
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
