#pragma once
// The CUDA backend of `strait exec`: one MPI process per rank, one GPU per process (local
// rank modulo the node's devices), running its rank's ops of the op graph for real.
//
//   - One CUDA stream per op-graph stream. Ops are queued asynchronously in the order the
//     OpScheduler gives (op_scheduler.hpp; an op is "finished" as soon as it is queued,
//     since its stream orders it), so every rank issues each group's collectives in op
//     index order, as NCCL requires; a dependency on another stream's op is a
//     cudaStreamWaitEvent on that op's end event.
//   - Kernels (cuda_kernels.hpp): cuBLASLt GEMMs, strait's HSTU attention and TBE kernels,
//     device-to-device copies, calibration's Adam kernel, inputs prepared before the run.
//   - Collectives: one NCCL communicator per process group (its first member's unique id
//     broadcast over an MPI communicator of the group); all_reduce and reduce_scatter sum
//     f32, all_gather moves bytes, all_to_all and all_to_all_v are grouped ncclSend /
//     ncclRecv with the real per-peer sizes; buffers prepared once.
//   - Times: two CUDA events per op around it on its stream, read after the run relative to
//     an origin event (recorded after an MPI barrier and a device synchronisation, behind a
//     1 ms gate kernel so the first launches are queued before the GPU reaches them; every
//     stream waits on it). A collective's time includes waiting for its peers.
//   - At most 256 ops are queued ahead of the GPU; the host polls their end events.
// Faults as the CPU backend's (cpu_executor.hpp), same messages and test hooks: a rank that
// throws prints "strait exec: rank R failed in op 'X' (step S): ..." and calls MPI_Abort;
// SIGTERM from mpirun prints "... stopped in op 'X' (step S) after a peer failed" for the
// oldest collective not yet complete; a collective whose end event has not completed
// collective_timeout_s after its start event did (host polling) prints "rank R: collective
// 'X' (group G, step S) did not complete in T s", aborts its NCCL communicator and calls
// MPI_Abort; an asynchronous NCCL error found while polling is a failure of that op.
// Start-up as the CPU backend's, with two more waits under its watchdog: the device
// selection (every rank must have a device) and the broadcast of NCCL's unique ids
// (ncclCommInitRank itself is not: all members have arrived by then). The later start
// barriers and the final gathers wait at most job_wait_limit_s.
// Limits: compiled and never run on a GPU yet; broadcast, reduce and send/recv are refused;
// collectives of different groups on different streams rely on NCCL running them
// concurrently (NCCL's own caveat on several communicators).

#include <cstdint>

#include "executor/cpu_executor.hpp"
#include "executor/measured_run.hpp"
#include "sim/workload/op_graph.hpp"

namespace strait::executor {

/// True when this build has the CUDA backend (CUDA, NCCL and MPI); else run_cuda_ranks throws.
bool cuda_backend_available();
/// Throws strait::Error saying the build has no CUDA/NCCL when cuda_backend_available() is
/// false (before MPI starts); else nothing.
void require_cuda_backend();

/// Runs graph.ranks[session.rank()] on this process's GPU with embedding tables of
/// `table_rows` rows (fewer where they do not fit), `warmup_runs` times untimed and once
/// measured; returns the measured run on rank 0 (`ranks` empty elsewhere), backend "cuda".
/// Throws strait::Error when the world size is not the graph's rank count or a rank has no
/// CUDA device; a failure while the ops run aborts the whole MPI job (see above).
MeasuredRun run_cuda_ranks(const sim::workload::OpGraph& graph, const MpiSession& session,
                           std::int64_t table_rows, int warmup_runs = 0,
                           double collective_timeout_s = 120.0);

}  // namespace strait::executor
