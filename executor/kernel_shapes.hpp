#pragma once
// The concrete shapes the executor runs a kernel op at: the runnable shape nearest the op's
// KernelWork, from sim/cost/kernel_shapes.hpp's inverses of the very formulas the workload
// built the op with, so the executor does the work the simulator costs. Here, their whole
// numbers as the kernels take them, and the embedding ids the executor draws:
//   GEMM              a forward (gemm) op runs its flops' worth of m x n x k GEMMs (1; 2
//                     for a DCN cross layer's or an MoE expert's pair), a backward
//                     (gemm_backward) op as many pairs of the input gradient m x n x k and
//                     the weight gradient k x m x n.
//   attention         `batch` samples of equal length round(mean_length), batch the whole
//                     number nearest the op's flops (dqk = dv = head_dim: the kernels' shape).
//   embedding         ids from the flops at the op's row length; a lookup's bags (pooled
//                     output rows) from its bytes, an update's one per id.
//   embedding ids     drawn Zipf(s) over the executor's table (rank 1 = row 0, as
//                     calibration draws them), s chosen so that the expected distinct rows
//                     are the op's unique_fraction u of its ids (the formula the workload
//                     computed u with): the update's optimizer work (per distinct row) and
//                     the lookup's reuse are the op's, hot rows hot as in a real batch.
//   elementwise       a memcpy of hbm_bytes / 2 (the bytes count the read and the write).
//   optimizer         Adam over flops / 10 parameters.
// sim::cost's attention_batch, elementwise_copy_bytes and optimizer_params give the last
// three (found by argument-dependent lookup from a KernelWork).

#include <cstdint>
#include <vector>

#include "calibration/kernel_case.hpp"
#include "sim/cost/kernel_shapes.hpp"

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

}  // namespace strait::executor
