#pragma once
// build_op_graph: a training scenario -> what every rank does in each step.
//
// Per rank and step, in issue order (streams in brackets):
//   sparse forward   input_dist all-to-all(-v) of ids [embedding_comm] -> lookup (TBE)
//                    [compute, or sparse_compute when pipelined] -> output_dist [embedding_comm]
//   dense forward    each layer's kernels [compute], CP/MoE collectives inside layers
//                    [cp_comm]; FSDP all-gathers each layer first [dense_comm]
//   backward         layers in reverse; DDP buckets of bucket_size all-reduced as their
//                    gradients become ready [dense_comm]; FSDP all-gather before and
//                    reduce-scatter after each layer (plus all-reduce across FSDP groups)
//   sparse backward  grad_dist [embedding_comm] -> embedding update with fused optimizer
//                    [compute] -> replica sync (2D, every K steps) [embedding_comm]
//   optimizer        dense optimizer step [compute], after every dense sync of the step
// Pipelining (depth p > 1): the sparse forward of step s + p - 1 is issued at the start of
// step s's dense forward and depends on nothing of step s (TorchRec's semi-synchronous
// pipeline: the lookup may read weights one update old), so it overlaps step s's compute.
// Cross-datacenter sync of dense gradients, per bucket:
//   flat          all-reduce over all ranks (algorithm auto)
//   hierarchical  the same all-reduce with Algorithm::kHierarchical
//   overlapped    reduce-scatter inside each datacenter -> all-gather inside the datacenter;
//                 the cross-datacenter all-reduce of the reduced shard (bytes / ranks per
//                 DC, over ranks at the same position in each DC) runs on stream xdc_comm,
//                 and only step s+1's optimizer waits for it: step s's optimizer applies the
//                 datacenter-local sum, the other datacenters' part lands one step late.
// All-to-alls whose send row is the same to every member are emitted as kAllToAll with
// `bytes` = this rank's whole send buffer (members may differ) and an empty send_row;
// others as kAllToAllV with the full send_row. Kernel noise and slow ranks scale flops
// and hbm_bytes (see scenario.hpp). RankOps::samples = samples of step 0 / CP degree.

#include <functional>

#include "sim/workload/batch.hpp"
#include "sim/workload/memory_model.hpp"
#include "sim/workload/op_graph.hpp"
#include "sim/workload/scenario.hpp"

namespace strait::sim::workload {

struct OpGraphOptions {
  int steps = 0;  // 0 = the scenario's
  /// > 0: build only representative_ranks(scenario, step 0, this many ranks)
  /// (representative.hpp); the other ranks keep their rank, GPU and samples but no ops (for
  /// estimates at scale).
  int representative_ranks = 0;
  /// The steps' batches as sample_step gives them ([step][replica]), when the caller has
  /// sampled them already (run_training shares them with memory_per_rank); null: sampled
  /// here.
  const std::vector<std::vector<ReplicaBatch>>* batches = nullptr;
  /// Set: filled with the memory of the ranks built over the steps built, as
  /// memory_per_rank gives it for the same batches and steps, from the embedding traffic
  /// and layer work the builder derives anyway (not twice per run).
  MemoryReport* memory = nullptr;
};

/// Builds every rank's ops for the scenario's steps. Deterministic for a seed.
OpGraph build_op_graph(const TrainingScenario& scenario, const OpGraphOptions& options = {});

/// Receives one rank's ops as soon as they are built; they are gone after the call.
using RankSink = std::function<void(const RankOps& rank)>;
/// The same graph, but each rank's ops go to `sink` as built (ranks in increasing order)
/// instead of into the graph, whose ranks keep rank, GPU and samples only: at 131,072 ranks
/// the whole graph would not fit (sim/run builds its compact ReplayGraph from the sink).
/// Names, streams and groups are complete before the first call.
OpGraph build_op_graph(const TrainingScenario& scenario, const OpGraphOptions& options,
                       const RankSink& sink);

}  // namespace strait::sim::workload
