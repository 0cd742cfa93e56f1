#pragma once
// TrainingExpansion: what a training run builds before it replays: every rank's ops in the
// compact replay graph (batches sampled and balanced, kernels costed on each rank's GPU),
// the memory report and the kernel implementations in use. It depends on the scenario's
// model, data, plan, steps and seed, on the cluster's GPUs and topology, on the profiles
// and on the network mode; never on a link's bandwidth or latency, which only the replay
// reads. So runs that differ only in those replay one expansion instead of building it
// again: a sweep over the WAN's bandwidth and latency spends ~90% of a point building
// (sweep/detail/expansion_cache.hpp). run_training(scenario, ...) is expand_training then
// run_training(expansion, ...).

#include <map>
#include <string>

#include "sim/network/network.hpp"
#include "sim/run/replay_graph.hpp"
#include "sim/workload/memory_model.hpp"
#include "sim/workload/op_graph.hpp"

namespace strait::sim::run {

struct TrainingExpansion {
  /// An empty expansion for a replay in `mode`, kernel runs merged for a dataflow replay.
  TrainingExpansion(network::NetworkMode replay_mode, bool merge_kernel_runs)
      : mode(replay_mode), replay_graph(replay_mode, merge_kernel_runs) {}

  network::NetworkMode mode;
  bool traced = false;       // built with traced ranks (a timeline): not for reuse
  ReplayGraph replay_graph;  // every rank's ops
  workload::OpGraph graph;   // names, groups; ranks with rank, GPU and samples only
  workload::MemoryReport memory;
  /// Per GPU type of the job, each kernel family's implementation as its profile names it.
  std::map<std::string, std::map<std::string, std::string>> kernel_implementations;
  double build_wall_s = 0;
};

}  // namespace strait::sim::run
