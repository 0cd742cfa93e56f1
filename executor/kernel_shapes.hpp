#pragma once
// The concrete shapes the CPU executor runs a kernel op at, derived from the op's
// KernelWork (sim/cost/kernel_work.hpp) by inverting the workload's work formulas, so the
// executor does the work the simulator costs.
//
//   embedding lookup  sparse_traffic.cpp counts flops = sum over shards of ids * dim and
//                     sets embedding_dim = round(sum ids * dim / sum ids), so
//                     ids = flops / embedding_dim (exact when all dims are equal). Its
//                     hbm_bytes = ids (d e + 8) + out_rows d e also holds out_rows (pooled
//                     bags), which KernelWork does not carry, so ids come from flops and
//                     bags = out_rows = (hbm_bytes - ids (d e + 8)) / (d e) from the bytes.
//   embedding update  flops = ids d + 4 u ids d (u = unique_fraction), so
//                     ids = flops / (d (1 + 4 u)); its bytes read a gradient row per id,
//                     so it runs one id per bag.
//   embedding ids     drawn Zipf(s) over the executor's table (rank 1 = row 0, as
//                     calibration draws them), s chosen so that the expected distinct rows
//                     are the op's unique_fraction u of its ids (the formula the workload
//                     computed u with): the update's optimizer work (per distinct row) and
//                     the lookup's reuse are the op's, hot rows hot as in a real batch.
//   GEMM              flops = 2 m n k per GEMM: a forward (gemm) op runs flops / (2 m n k)
//                     GEMMs (1; 2 for a DCN cross layer's or an MoE expert's pair), a
//                     backward (gemm_backward) op half as many pairs of the input gradient
//                     m x n x k and the weight gradient k x m x n (workload/dense_stack's
//                     backward_of(gemm, 2)).
//   attention         flops = 2 h (dqk + dv) sum_b L_b (L_b + 1) / 2 (x2.5 backward), as
//                     calibration's attention_case counts it with dqk = dv = head_dim (the
//                     reference kernel's shape): `batch` samples of equal length
//                     round(mean_length), batch = the integer nearest flops / one sample's.
//   elementwise       a memcpy of hbm_bytes / 2 (the bytes count the read and the write).
//   optimizer         Adam over flops / 10 parameters.

#include <cstdint>
#include <vector>

#include "calibration/kernel_case.hpp"
#include "sim/cost/kernel_work.hpp"

namespace strait::executor {

/// Runs of a GEMM op: forward GEMMs for a gemm op, (input, weight) gradient pairs for a
/// gemm_backward op; throws when its flops are not a whole number (>= 1) of them.
int gemm_runs(const sim::cost::KernelWork& k);

/// Ids an embedding lookup or update op looks up (at least 1 when it has work).
std::int64_t embedding_ids(const sim::cost::KernelWork& k);

/// Bags (pooled output rows) the ids fall into: lookup from its bytes, update one per id.
std::int64_t embedding_bags(const sim::cost::KernelWork& k);
/// The Zipf exponent whose expected distinct rows among the op's ids drawn from `rows`
/// rows (sim/workload/unique_rows.hpp) are its unique_fraction of them: 0 (uniform) when
/// even uniform ids repeat more than that, else found by bisection to 1e-6.
double embedding_id_skew(const sim::cost::KernelWork& k, std::int64_t rows);

/// The `ids` rows an embedding op of step `step` and row length `dim` looks up in whole-graph
/// run `run`, drawn with `rows` (deterministic): a lookup and the update of the same step
/// and shape get the same rows, every other (run, step) fresh ones. Both backends draw
/// them so.
std::vector<std::int64_t> embedding_rows(const calibration::RowSampler& rows, std::int64_t ids,
                                         int run, std::int64_t step, int dim);

struct AttentionBatch {
  int batch = 0;   // samples
  int length = 0;  // tokens per sample (all equal)
};
/// The equal-length batch whose attention work is nearest the op's flops.
AttentionBatch attention_batch(const sim::cost::KernelWork& k);
/// FLOPs of `b` at the op's heads, head_dim and pass, counted as attention_case counts them.
double attention_flops(const sim::cost::KernelWork& k, const AttentionBatch& b);

/// Bytes an elementwise op copies (hbm_bytes / 2).
std::int64_t elementwise_copy_bytes(const sim::cost::KernelWork& k);
/// Parameters the dense optimizer op updates (flops / 10).
std::int64_t optimizer_params(const sim::cost::KernelWork& k);

}  // namespace strait::executor
