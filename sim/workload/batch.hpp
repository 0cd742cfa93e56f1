#pragma once
// Per-step batches: what each data-parallel replica trains on in one step, sampled from
// the data distribution with the scenario's seed, then balanced across replicas.
//
// Sampling: replica g of step s draws its sequence lengths from
// Rng(seed).fork(s).fork(g), and after balancing its per-table id counts from
// Rng(seed).fork(s).fork(replicas + g). A pooled table's id count is the sum of the
// samples' pooling factors (drawn one by one up to 256 samples, else from the normal
// approximation N(B mean, B var)); a sequence table gets one id per token (sum of lengths).
//
// Sample cost (for balancing and straggler analysis), from the forward FLOPs of the HSTU
// stack (d model dim, h heads, dqk head dim, dv linear dim, n layers, neg negatives):
//   linear  per token  2 d h (2 dqk + 2 dv)  +  2 h dv d  =  2 d h (2 dqk + 3 dv)
//   attention (causal) h (dqk + dv) L (L + 1)              (4 h d L(L+1)/2 for dqk = dv = d)
//   loss    per token  2 d neg
//   cost(L) = a L + b L^2,  a = n (2 d h (2 dqk + 3 dv) + h (dqk + dv)) + 2 d neg,
//                           b = n h (dqk + dv).
// Models without an HSTU stack cost a = 1, b = 0 per sample (balancing changes nothing).

#include <array>
#include <cstdint>
#include <vector>

#include "sim/workload/scenario.hpp"

namespace strait::sim::workload {

/// Causal attention pairs of a sample of `length` tokens under an attention window
/// (HstuConfig::attention_window; 0: none): L(L + 1)/2, or W(W + 1)/2 + (L - W) W past W.
double attended_pairs(double length, int window);
/// Score elements of that sample (an unfused kernel's L x min(L, W) matrix per head).
double score_elements(double length, int window);

struct SampleCost {
  double a = 1, b = 0;
  int window = 0;  // attention window (0: none)
  /// a L + b (2 pairs - L): b L^2 with no window (2 L(L + 1)/2 - L), less in one.
  double operator()(double length) const {
    return a * length + b * (2 * attended_pairs(length, window) - length);
  }
};
SampleCost sample_cost(const ModelConfig& model);

struct ReplicaBatch {
  std::vector<std::int32_t> lengths;  // per sample; empty when the model has no sequences
  std::int64_t samples = 0;
  double tokens = 0;   // sum L (samples when no sequences)
  double pairs = 0;    // sum of attended_pairs(L): causal attention pairs (in the window)
  double squares = 0;  // sum of score_elements(L): L^2, or L min(L, W) in a window
  double padded_pairs = 0, padded_squares = 0;  // the padded layout's: B x L_max's
  std::int32_t max_length = 0;
  // cost::attention_tile_factors(lengths): attention's tile quantization per query tile.
  std::array<double, cost::kAttentionTileCount> tile_factor = {1, 1, 1, 1, 1};
  double cost = 0;          // sum of sample_cost
  std::vector<double> ids;  // per model table: ids looked up by this replica
};

/// Batches of every replica for `step`, balanced as the plan says. Deterministic.
std::vector<ReplicaBatch> sample_step(const TrainingScenario& scenario, int step);
/// sample_step for steps 0 .. steps - 1: [step][replica].
std::vector<std::vector<ReplicaBatch>> sample_steps(const TrainingScenario& scenario, int steps);

}  // namespace strait::sim::workload
