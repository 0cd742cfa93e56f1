#pragma once
// OpReplay: runs an OpGraph on the engine, the network and the cost model, and accounts
// where each rank's time went.
//
// Mechanics (see sim/workload/op_graph.hpp for the op semantics)
//   - Flow mode: kernels run on their GPU's SMs and HBM as the GPU model has it
//     (sim/cost/gpu_model.hpp): alone a kernel takes its roofline time, concurrent
//     kernels on one GPU share SMs and HBM bandwidth by max-min; launch overhead is a
//     delay before the activity.
//   - A collective starts when every member of its group has reached it (NCCL's k-th
//     call on a group rule). While it runs, each member GPU, unless the call is SM-free,
//     holds the fraction of SMs NCCL uses (GpuModel::hold_sms), so overlapping compute
//     slows down by that fraction.
//   - Analytical mode: kernels take their roofline time with no SM/HBM sharing, and
//     collectives use the analytical network (no per-flow events).
// Accounting: each rank's time is booked as compute, exposed communication by class,
// straggler wait or bubble by the rules of rank_account.hpp, which the executor's measured
// runs share.
//
// Where the replay lives: this file's replay() and the Replayer (op_replay.cpp: streams,
// dependencies, the op lifecycle, the dataflow order); detail/rank_state.hpp (a rank's
// state and what its ops change of it), detail/collective_rendezvous.hpp (the k-th call on
// a group), detail/solo_runs.hpp (flow mode's solo kernel runs), detail/replay_trace.hpp
// (what traced ranks record); the GPU model is sim/cost/gpu_model.hpp.

#include <array>
#include <cstdint>
#include <functional>
#include <vector>

#include "sim/core/trace_sink.hpp"
#include "sim/cost/cost_model.hpp"
#include "sim/network/network.hpp"
#include "sim/run/rank_account.hpp"
#include "sim/run/replay_graph.hpp"
#include "sim/topology/cluster.hpp"
#include "sim/workload/op_graph.hpp"

namespace strait::sim::run {

struct ReplayOptions {
  network::NetworkMode mode = network::NetworkMode::kFlow;
  TraceSink* timeline = nullptr;  // when set, record spans of `trace_ranks`
  std::vector<int> trace_ranks;   // empty = all
  /// Called each time 65,536 more ops have finished, with the simulated time and the count.
  std::function<void(Time, std::uint64_t)> progress;
  /// Flow mode: advance kernels that have their GPU's SMs and HBM to themselves without
  /// the engine (solo runs, detail/solo_runs.hpp). Same results; false replays every kernel as an
  /// engine activity, the reference the solo runs are tested against.
  bool solo_runs = true;
  /// Some rank's GPU type progresses its collectives on the host (CPU ranks under MPI,
  /// detail/host_progress.hpp): the replay then runs in time order with every kernel apart
  /// (no dataflow order, no merged kernel runs, no solo runs there). replay() and
  /// replay_graph() set it where the cluster's profiles say so (with_host_progress).
  bool host_progress = false;
};

struct ReplayResult {
  std::vector<Time> step_end;  // when the last compute-stream op of step s finished
  Time drain_end;              // when the very last op (e.g. a background sync) finished
  std::vector<RankAccount> ranks;
  network::TrafficStats traffic;
  std::array<network::TrafficStats, workload::kCommClassCount> class_traffic;  // by CommClass
  std::uint64_t events = 0;
  std::uint64_t kernels = 0;
  std::uint64_t collectives = 0;
  // Flow mode: kernels advanced in solo runs, and the runs handed back to the engine early
  // (detail/solo_runs.hpp). Statistics of the replay, not of the job.
  std::uint64_t solo_kernels = 0;
  std::uint64_t solo_cuts = 0;
};

ReplayResult replay(const workload::OpGraph& graph, const topology::Cluster& cluster,
                    const cost::CostModel& cost, const ReplayOptions& options);
/// The same on a compact graph (`graph.mode()` must be `options.mode`): what run_training
/// uses, building the graph rank by rank without a whole OpGraph (replay_graph.hpp).
ReplayResult replay(const ReplayGraph& graph, const topology::Cluster& cluster,
                    const cost::CostModel& cost, const ReplayOptions& options);
/// `graph` as a ReplayGraph for `options` (kernels costed for its mode on each rank's GPU
/// type; traced ranks keep their ops).
ReplayGraph replay_graph(const workload::OpGraph& graph, const topology::Cluster& cluster,
                         const cost::CostModel& cost, const ReplayOptions& options);
/// Whether `options` trace `rank` (a timeline is set and the rank is among trace_ranks, or
/// trace_ranks is empty).
bool traced_rank(const ReplayOptions& options, int rank);
/// Whether a replay with `options` runs in dataflow order (analytical mode, untraced, no
/// host_progress; see Replayer::run), which takes a ReplayGraph with its kernel runs merged.
bool runs_in_dataflow_order(const ReplayOptions& options);
/// `options` with host_progress set where a GPU type of `cluster` that `cost` has a profile
/// for progresses its collectives on the host (DeviceSpec::collective_progress).
ReplayOptions with_host_progress(ReplayOptions options, const topology::Cluster& cluster,
                                 const cost::CostModel& cost);

}  // namespace strait::sim::run
