#pragma once
// BatchCache: sampled batches kept for every scenario that draws the same ones.
//
// Sampling (batch.hpp) reads a scenario's cluster, model, data and seed, and of its plan and
// layout only the world, the replicas, the context-parallel size, the load balancing and
// its scope (SamplingKey). Scenarios that differ elsewhere (sharding, dense parallelism,
// pipeline depth, priorities) draw identical batches, so the planner samples once for all
// of its candidates that share a key (at 16,384 GPUs a sampling with balancing takes 1-2 s,
// more than a closed-form estimate). Each step is drawn from its own stream, so a key
// keeps the most steps asked of it: fewer are its first steps (a copy), more are drawn
// after the kept ones (the closed form's one step and a simulation's four share a draw).
//
// One cache serves the scenarios of one base: the same cluster, model, data and seed (the
// planner's candidates differ in plan and layout only). It keeps the first scenario's name
// and seed and refuses another's (std::logic_error). Thread-safe: a key sampled by two
// threads at once is drawn twice, identically, and kept once. At most `capacity`
// samplings are kept, the least recently used dropped first; a dropped one is drawn again,
// the same (a sampling of 16,384 replicas of 32 sequences is about 5 MiB a step).

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "sim/workload/batch.hpp"

namespace strait::sim::workload {

/// The steps' batches: [step][replica], as sample_steps gives them.
using StepBatches = std::vector<std::vector<ReplicaBatch>>;

/// What sample_steps reads of a scenario beside its cluster, model, data, seed and the
/// steps asked (each step is drawn from its own stream, so steps are no key).
struct SamplingKey {
  int world = 0;
  int replicas = 0;
  int context_parallel = 0;
  LoadBalance balance = LoadBalance::kNone;
  PlacementLevel balance_scope = PlacementLevel::kCluster;
  bool operator<(const SamplingKey& o) const {
    return std::tie(world, replicas, context_parallel, balance, balance_scope) <
           std::tie(o.world, o.replicas, o.context_parallel, o.balance, o.balance_scope);
  }
  bool operator==(const SamplingKey&) const = default;
};
SamplingKey sampling_key(const TrainingScenario& scenario);

class BatchCache {
 public:
  explicit BatchCache(std::size_t capacity = 16) : capacity_(capacity) {}
  /// sample_steps(scenario, steps): the kept sampling of its key, or its first steps, or
  /// it with the steps after it drawn. Checks the scenario's work limit on every request,
  /// as sample_steps does (WorkLimitError).
  std::shared_ptr<const StepBatches> get(const TrainingScenario& scenario, int steps);
  /// Requests that drew steps (found no sampling of their key, or one too short).
  int draws() const;

 private:
  std::size_t capacity_;
  mutable std::mutex mutex_;
  std::string base_name_;
  std::uint64_t base_seed_ = 0;
  bool has_base_ = false;
  std::map<SamplingKey, std::shared_ptr<const StepBatches>> kept_;
  std::vector<SamplingKey> order_;  // kept_'s keys, least recently used first
  int draws_ = 0;
};

/// The steps' batches of `scenario`: from `cache` when given, else sampled here.
std::shared_ptr<const StepBatches> batches_for(const TrainingScenario& scenario, int steps,
                                               BatchCache* cache);

}  // namespace strait::sim::workload
