#pragma once
// Embedding traffic and kernels of one model-parallel group in one step, from the
// sampled batches of its members and the shard layout. Formulas (e_w weight element,
// ids are int64 = 8 bytes, lengths int32 = 4 bytes per sample and table shard):
//   input dist  i -> j   sum over shards on j: ids_i[t] f_row 8 + samples_i 4
//   output dist j -> i   sum over shards on j: pooled   samples_i dim f_col e_o
//                                             sequence ids_i[t] f_row dim f_col e_o
//   grad dist   i -> j   = output dist j -> i, at e_g bytes per value
// (e_o, e_g: the plan's comm_precision forward and backward, else e_w)
//   lookup on j: per shard A = ids arriving = sum_i ids_i[t] f_row of row length dim_c
//     into its output rows (pooled: the samples; sequence: A); update on j: the same ids,
//     U = A x unique fraction distinct (E[unique](rows, ids of the group, zipf) / ids of
//     the group, see unique_rows.hpp) with the optimizer state of a row. Each shard's
//     work by sim/cost/kernel_shapes.hpp's embedding formulas, summed into one op
//     (cost::EmbeddingOpWork)
// Data-parallel tables are looked up and updated locally with the same formulas.
// Hybrid tables (hot_rows N): a share h = zipf_head_mass(rows, N, s) of each member's ids
// hits the hot rows, looked up and updated locally like a data-parallel table; the shards
// see the other ids: ids_i[t] (1 - h) wherever ids_i[t] appears above, and a pooled
// sample needs the shards' output only if one of its p = ids_i[t] / samples_i ids is cold,
// so pooled output rows are samples_i (1 - h^p).
// Host-reduced tables (table_row_wise and grid, pooled, blocks of H > 1 members; TorchRec's
// TwRw/Grid pooled dist): each member of block B computes partial sums of every sample
// of the group for its row shard, P_B = sum_i samples_i dim f_col e_o bytes, reduce-
// scattered inside the block; then member (B, k) sends member (B', k) the summed rows of
// (B', k)'s samples (samples_(B',k) dim f_col e_o per table of B) in an all-to-all among the
// members at position k of every block. Backward: that all-to-all reversed at e_g, then an
// all-gather of P_B inside the block. They take no part in the group-wide output dist.

#include <optional>
#include <vector>

#include "sim/workload/batch.hpp"
#include "sim/workload/op_graph.hpp"
#include "sim/workload/sharding.hpp"

namespace strait::sim::workload::detail {

class SparseTraffic {
 public:
  /// `ids[i][t]` and `samples[i]`: ids and pooled rows of member i of the group.
  /// `comm`: element types of the output and grad dists (unset: the weight dtype).
  SparseTraffic(const ModelConfig& model, const DataConfig& data, const ShardMap& map,
                std::vector<std::vector<double>> ids, std::vector<double> samples,
                const CommPrecision& comm = {});

  SendRow input_row(int i) const;
  SendRow output_row(int j) const;  // shared by members holding the same shards
  SendRow grad_row(int i) const;
  /// What member i sends each member in the input (grad) dist when that is the same for
  /// every member (all hold the same shards): its row without building it (at 131,072
  /// ranks, 4 KiB per rank, step and dist, built and then found uniform); else nothing.
  std::optional<Bytes> uniform_input(int i) const;
  std::optional<Bytes> uniform_grad(int i) const;
  Kernel lookup(int j) const;
  Kernel update(int j) const;
  /// Bytes of member j's output-dist send and receive buffers (memory model).
  double output_buffer_bytes(int j) const;
  /// Host-reduced tables: member j's reduce-scatter input (forward) or all-gather output
  /// (backward) inside its block, and its all-to-all rows among the members at its position
  /// of every block (indexed by block).
  Bytes host_reduce_bytes(int j, bool backward) const;
  SendRow cross_output_row(int j) const;
  SendRow cross_grad_row(int i) const;

 private:
  /// Bytes member j sends member i in the group-wide output dist at `element` bytes per
  /// value (host-reduced tables excluded).
  double output_bytes(int j, int i, double element) const;
  /// Bytes of member i's pooled rows of the host-reduced tables member j holds.
  double pooled_bytes(int j, int i, double element) const;
  bool same_shards() const;               // every member holds the same shards (tables, fractions)
  Bytes input_bytes(int i, int j) const;  // what member i sends member j in the input dist
  Bytes grad_bytes(int j, int i) const;   // what member i sends member j in the grad dist
  const ModelConfig& model_;
  const ShardMap& map_;
  std::vector<std::vector<double>> ids_;
  std::vector<double> samples_;
  std::vector<double> unique_fraction_;  // per table
  std::vector<double> hot_share_;        // per table: ids on the hot rows (hybrid), else 0
  std::vector<char> host_reduced_;       // per table: ShardMap::host_reduced
  bool any_host_reduced_ = false;
  /// Ids of member i for table t that reach the shards (the cold ones).
  double cold_ids(std::size_t i, std::size_t t) const { return ids_[i][t] * (1 - hot_share_[t]); }
  /// Samples of member i whose pooled row of table t needs the shards.
  double cold_samples(std::size_t i, std::size_t t) const;
  /// Ids of table t arriving at a shard of `row_fraction` from every member (sum over i of
  /// cold_ids(i, t) row_fraction, in member order), and pooled rows of table t from every
  /// member (sum of cold_samples(i, t)). Both are O(M) sums, memoized per table: every
  /// member of a row-wise group holds shards of equal fraction, so a group's lookups and
  /// updates take O(M) instead of O(M^2) (a tenth of the build at 131,072 ranks).
  double arriving_ids(int table, double row_fraction) const;
  double pooled_rows(int table) const;
  struct ArrivingMemo {
    double row_fraction = -1;  // the fraction `ids` is for (-1: none yet)
    double ids = 0;
    double pooled_rows = -1;  // -1: not yet summed
  };
  mutable std::vector<ArrivingMemo> arriving_;         // per table
  double forward_element_ = 4, backward_element_ = 4;  // output / grad dist bytes per value
  bool same_shards_ = false;
  mutable SendRow first_output_row_;                // the row every member sends, when same_shards_
  mutable std::optional<double> first_output_sum_;  // its bytes, when same_shards_
};

}  // namespace strait::sim::workload::detail
