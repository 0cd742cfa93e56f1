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
//   embedding ids     round(u ids) distinct rows, each looked up about equally often, so
//                     the update's optimizer work (per unique row) and the lookup's reuse
//                     are the op's.
//   attention         flops = 2 h (dqk + dv) sum_b L_b (L_b + 1) / 2 (x2.5 backward), as
//                     calibration's attention_case counts it with dqk = dv = head_dim (the
//                     reference kernel's shape): `batch` samples of equal length
//                     round(mean_length), batch = the integer nearest flops / one sample's.
//   elementwise       a memcpy of hbm_bytes / 2 (the bytes count the read and the write).
//   optimizer         Adam over flops / 10 parameters.

#include <cstdint>
#include <vector>

#include "sim/cost/kernel_work.hpp"

namespace strait::executor {

/// Ids an embedding lookup or update op looks up (at least 1 when it has work).
std::int64_t embedding_ids(const sim::cost::KernelWork& k);

/// Bags (pooled output rows) the ids fall into: lookup from its bytes, update one per id.
std::int64_t embedding_bags(const sim::cost::KernelWork& k);
/// Distinct rows among them: round(unique_fraction * ids), at least 1 when ids > 0.
std::int64_t embedding_unique_rows(const sim::cost::KernelWork& k);
/// `ids` row indices in [0, rows) with exactly min(unique, rows) distinct values, each used
/// ids / unique times (+1 for the first ids % unique), in random order; deterministic
/// for `seed`.
std::vector<std::int64_t> embedding_indices(std::int64_t ids, std::int64_t unique,
                                            std::int64_t rows, std::uint64_t seed);

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
