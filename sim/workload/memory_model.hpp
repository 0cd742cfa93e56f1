#pragma once
// Memory model: peak bytes each rank needs, term by term.
//   dense_params / dense_grads      P e_param (FSDP: P / group + the largest gathered layer)
//   dense_optimizer                 Adam 2 x 4 B, AdaGrad 4 B, SGD 0 per parameter (FSDP: / group)
//   embedding_weights / _optimizer  the rank's shards (sharding.hpp) + data-parallel tables;
//                                   row-wise AdaGrad 4 B per row, Adam 2 x dim x 4 B per row
//   embedding_activations           looked-up embeddings of the batch (pooled: samples x dim,
//                                   sequence: tokens x dim) x e_w
//   activations                     what the dense layers save for backward (jagged sizes:
//                                   per-token terms scale with sum L / c, see dense_stack.hpp)
//   attention_scores                what the attention kernel keeps per HSTU layer: fused
//                                   (the default) none beyond activations (O(L) state);
//                                   unfused sum L_i^2 heads e (jagged) or B L_max^2 heads e
//                                   (padded), divided by the CP degree c
//   comm_buffers                    output-dist send + receive, 2 DDP buckets in flight,
//                                   the largest in-layer buffer (gathered K/V, MoE dispatch)
//   pipeline_buffers                (depth - 1) batches in flight: ids + their embeddings
// Batch-dependent terms take the maximum over the scenario's steps.

#include <string>
#include <string_view>
#include <vector>

#include "sim/workload/batch.hpp"
#include "sim/workload/scenario.hpp"

namespace strait::sim::workload {

struct MemoryTerm {
  std::string_view name;  // one of the names above (static: a report of 131,072 ranks holds
                          // 1.3 million terms)
  double bytes = 0;
};

struct RankMemory {
  int rank = 0;
  std::vector<MemoryTerm> terms;      // the terms above, in that order
  double attention_jagged_bytes = 0;  // what an unfused jagged kernel would keep
  double attention_padded_bytes = 0;  // what an unfused padded kernel would keep
  double total() const;
  const MemoryTerm& dominant() const;
  double term(std::string_view name) const;  // 0 when absent
};

/// fits(): whether the fullest rank fits, and if not by how much and why.
struct MemoryFit {
  bool fits = true;
  int rank = 0;          // the rank with the largest total
  double total = 0;      // its bytes
  double excess = 0;     // total - capacity (negative: headroom)
  std::string dominant;  // its largest term
  double dominant_bytes = 0;
};

struct MemoryReport {
  std::vector<RankMemory> ranks;
  /// Checks every rank against `capacity` bytes of GPU memory.
  MemoryFit fits(double capacity) const;
};

/// Memory of every rank of the scenario (batches sampled as build_op_graph does); with
/// `representative_ranks` > 0 only the ranks of representative_ranks (representative.hpp;
/// others get no terms).
MemoryReport memory_per_rank(const TrainingScenario& scenario, int representative_ranks = 0);
/// The same from the steps' batches already sampled ([step][replica], sample_step's).
MemoryReport memory_per_rank(const TrainingScenario& scenario,
                             const std::vector<std::vector<ReplicaBatch>>& batches,
                             int representative_ranks = 0);

}  // namespace strait::sim::workload
