#pragma once
// Kernel shapes to kernel work: the one definition of the FLOPs and HBM bytes of every
// kernel family. The workload builds each kernel op with these functions
// (sim/workload/detail), calibration counts the work of its benchmark cases with them
// (calibration/kernel_case.hpp), and the executor runs an op at the shape the inverses
// below give back (executor/), so a fitted efficiency means the same work to the cost
// model, to the benchmark and to the executor. Formulas (e = bytes per element):
//   gemm              count GEMMs C[m, n] = A[m, k] B[k, n]: 2 m n k flops and
//                     (m k + k n + m n) e bytes each
//   gemm_backward     the input and weight gradient of a forward GEMM op: 2x its flops and
//                     bytes
//   attention         causal HSTU attention, h heads of dqk (Q, K) and dv (U, V): 2 h
//                     (dqk + dv) P flops; T h (2 dqk + 2 dv) e read + T h dv e written (T
//                     tokens touched, P pairs computed); unfused, + 2 S h e (scores written
//                     and read back) + S e (relative bias matrix read)
//   attention bwd     2.5x the forward's flops, 2x its bytes
//   embedding lookup  I ids of row length d into O output rows: I d flops, I (d e + 8) + O d e
//                     bytes (a row and an int64 id per id, the output written)
//   embedding update  U = u I unique rows: I d + 4 U d flops; I d e (a gradient row per id)
//                     + 2 U d e (rows read and written) + 2 U s (optimizer state of s bytes
//                     per row, read and written) bytes
//   elementwise       its flops and bytes as the layer counts them; a copy of N bytes moves 2N
//   optimizer         P parameters: 10 P flops, P (3 e_p + 2 s) bytes (parameter, gradient
//                     and state read; parameter and state written)
// A layer whose op fuses more than its GEMMs sets the bytes its kernel moves itself (DCN
// cross, dot interaction, MoE experts: sim/workload/detail/dense_stack.cpp); elementwise
// flops and bytes, and the factors of their backward, are the layer's (dense_stack.hpp).
// Each inverse gives the runnable shape nearest an op's work (whole GEMMs, ids, an
// equal-length attention batch) and is the exact inverse of its forward on such shapes.

#include <cstdint>
#include <span>

#include "sim/cost/kernel_work.hpp"

namespace strait::sim::cost {

/// Bytes of one embedding id (int64), read with its row and sent in the input dist.
inline constexpr double kIdBytes = 8;

/// `count` GEMMs C[m, n] = A[m, k] B[k, n] run as one op (a DCN cross layer's V^T x and U;
/// an MoE expert's up and down projections). Rows may be a rank's fractional share.
struct GemmShape {
  double m = 0, n = 0, k = 0;
  int count = 1;
  bool operator==(const GemmShape&) const = default;
};
/// Forward GEMMs of `s` (family gemm); KernelWork's m, n, k are `s`'s truncated.
KernelWork gemm_work(const GemmShape& s, Precision p);
/// The input and weight gradient of the forward GEMM op `forward` (family gemm_backward).
KernelWork gemm_backward_work(const KernelWork& forward);
/// The shape of a gemm or gemm_backward op: its m, n, k and the GEMMs (forward) or gradient
/// pairs (backward) its flops hold; throws Error when they are not a whole number >= 1.
GemmShape gemm_shape(const KernelWork& w);

/// HSTU attention over a batch as its kernel computes it (a rank's share under context
/// parallelism). Padded: every sample at L_max.
struct AttentionShape {
  bool padded = false;
  double tokens = 0;       // T: tokens touched (jagged: sum L; padded: B L_max)
  double pairs = 0;        // P: causal pairs (sum L (L + 1) / 2; padded: B L_max (L_max + 1) / 2)
  double scores = 0;       // S: score elements per head (sum L^2; padded: B L_max^2)
  double mean_length = 0;  // the tables' key: tokens per sample (padded: L_max)
  int heads = 0, qk_dim = 0, v_dim = 0;
  bool fused = true;           // false: the scores go through HBM
  bool relative_bias = false;  // unfused only: the bias matrix is read
  std::array<double, kAttentionTileCount> tile_factor = {1, 1, 1, 1, 1};
  bool operator==(const AttentionShape&) const = default;
};
/// The shape of whole sequences of `lengths` tokens (fused, dqk = dv = head_dim, tile
/// factors of the lengths, or of L_max for every sample where `padded`).
AttentionShape attention_shape(std::span<const int> lengths, bool padded, int heads, int head_dim);
/// Forward attention over `s` (family jagged_attention or padded_attention).
KernelWork attention_work(const AttentionShape& s, Precision p);
/// The backward (dQ, dK, dV) of the forward attention op `forward`.
KernelWork attention_backward_work(const KernelWork& forward);
struct AttentionBatch {
  int batch = 0;   // samples
  int length = 0;  // tokens per sample (all equal)
  bool operator==(const AttentionBatch&) const = default;
};
/// The equal-length batch nearest an attention op's flops: round(mean_length) tokens per
/// sample (at least 1), the whole number of such samples nearest its flops (at least 1).
AttentionBatch attention_batch(const KernelWork& w);

/// One table shard's part of an embedding op; counts may be a row-wise shard's fractional
/// share of the group's ids.
struct EmbeddingShape {
  double ids = 0;              // ids looked up
  double out_rows = 0;         // rows written: pooled bags, or one per id (sequence; update)
  double dim = 0;              // row length in elements (a column shard's share)
  double unique_fraction = 1;  // distinct rows / ids, in (0, 1]
  bool operator==(const EmbeddingShape&) const = default;
};
KernelWork embedding_lookup_work(const EmbeddingShape& s, Precision p);
/// `state_bytes_per_row`: the optimizer state of one row (row-wise AdaGrad: one f32, 4).
KernelWork embedding_update_work(const EmbeddingShape& s, Precision p, double state_bytes_per_row);
/// An embedding op over several shards: the sum of their work, its row length the ids-
/// weighted mean rounded to a whole element, its unique fraction the ids-weighted mean.
class EmbeddingOpWork {
 public:
  EmbeddingOpWork(KernelKind kind, Precision p) : kind_(kind), precision_(p) {}
  /// Adds a shard (`state_bytes_per_row`: updates only).
  void add(const EmbeddingShape& s, double state_bytes_per_row = 0);
  KernelWork work() const;

 private:
  KernelKind kind_;
  Precision precision_;
  double ids_ = 0, width_ids_ = 0, unique_ = 0, flops_ = 0, bytes_ = 0;
};
/// The whole-id shape nearest an embedding op's work at its row length: ids from its
/// flops (at least 1 when it has work), a lookup's output rows from its bytes (in
/// [1, ids]), an update's one per id (it reads a gradient row per id).
EmbeddingShape embedding_shape(const KernelWork& w);

/// A memory-bound kernel of `flops` and `bytes` (family elementwise).
KernelWork elementwise_work(double flops, double bytes, Precision p);
/// The backward of an elementwise op: `flop_factor` x its flops, 2x its bytes.
KernelWork elementwise_backward_work(const KernelWork& forward, double flop_factor);
/// A copy of `bytes` (fp32 elementwise): they are read and written.
KernelWork copy_work(double bytes);
/// The bytes a copy of an elementwise op's traffic copies: half its bytes, rounded.
std::int64_t elementwise_copy_bytes(const KernelWork& w);

/// A dense optimizer step (fp32) over `params` parameters of `param_bytes` each with
/// `state_bytes` of optimizer state each (Adam: 8).
KernelWork optimizer_work(double params, double param_bytes, double state_bytes);
/// The parameters an optimizer op updates: its flops / 10, rounded.
std::int64_t optimizer_params(const KernelWork& w);

}  // namespace strait::sim::cost
