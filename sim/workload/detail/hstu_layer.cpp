// The HSTU layer and its sampled-softmax loss as the kernels a training step runs
// (Zhai et al. 2024, "Actions Speak Louder than Words", eq. 1-3; the generative-recommenders
// repository's STU layer and samplers). Formulas are in dense_stack.hpp.
// Known limits: no recomputation in backward (the repository's STU recomputes the normed
// input, U V Q K and the gated output by default); the relative bias's per-pair work inside
// a fused kernel is in the attention efficiency, not charged apart; under context
// parallelism the tile factor is the whole sequences', not each rank's chunks'.
#include "sim/workload/detail/dense_stack.hpp"
#include "sim/workload/detail/work_items.hpp"

namespace strait::sim::workload::detail {
namespace {

// Bytes of one fp32 value (logits, probabilities, timestamps' bucket ids).
constexpr double kFp32 = 4;

// The forward kernels of one HSTU layer; the backward reuses them (formulas in
// dense_stack.hpp; attention and GEMMs from sim/cost/kernel_shapes.hpp).
struct HstuKernels {
  Kernel norm_in, uvqk, silu, rel_bias, to_padded, to_jagged, attn, norm_out, dropout, out,
      residual;
};

HstuKernels hstu_kernels(const HstuConfig& hstu, Precision p, const BatchShape& s) {
  const double e = bytes_per_element(p);
  const double T = s.tokens, d = hstu.model_dim, h = hstu.heads, dqk = hstu.head_dim,
               dv = hstu.linear_dim;
  const double uvqk_width = h * (2 * dqk + 2 * dv);
  const bool padded = hstu.padded, fused = hstu.fused_attention;
  // Score elements an unfused kernel writes per head (the padded layout: every padded pair).
  const double scores = padded ? s.padded_squares : s.squares;
  HstuKernels k;
  k.norm_in = elementwise(5 * T * d, 2 * T * d * e, p);
  k.uvqk = gemm(T, uvqk_width, d, p);
  k.silu = elementwise(4 * T * uvqk_width, 2 * T * uvqk_width * e, p);
  // Fused: timestamps (8 B) read and two bucket ids (position, time) written per token, the
  // bias itself added inside the attention kernel. Unfused: the bias matrix written per pair.
  k.rel_bias = fused ? elementwise(20 * T, (8 + 2 * kFp32) * T, p)
                     : elementwise(4 * scores, (8 * T) + scores * e, p);
  // Q, K, V into [B, L_max] padding and the attention output back.
  k.to_padded = elementwise(0, (T + s.samples * s.max_length) * h * (2 * dqk + dv) * e, p);
  k.to_jagged = elementwise(0, (T + s.samples * s.max_length) * h * dv * e, p);
  cost::AttentionShape a;
  a.padded = padded;
  // Tokens the attention kernel touches: the padded layout touches B x L_max of them.
  a.tokens = padded ? s.samples * s.max_length : T;
  a.pairs = padded ? s.padded_pairs : s.pairs;
  a.scores = scores;
  // A padded kernel computes every sample at L_max: its efficiency is that length's.
  a.mean_length = padded ? s.max_length : s.mean_length;
  a.heads = hstu.heads;
  a.qk_dim = hstu.head_dim;
  a.v_dim = hstu.linear_dim;
  a.fused = fused;
  a.relative_bias = hstu.relative_bias;
  a.tile_factor = padded ? s.padded_tile_factor : s.tile_factor;
  k.attn = cost::attention_work(a, p);
  k.norm_out = elementwise(8 * T * h * dv, 3 * T * h * dv * e, p);
  // Read and write the gated output plus a one-byte mask per element.
  k.dropout = elementwise(2 * T * h * dv, (2 * e + 1) * T * h * dv, p);
  k.out = gemm(T, d, h * dv, p);
  k.residual = elementwise(T * d, 3 * T * d * e, p);
  return k;
}

}  // namespace

void DenseStack::hstu_layer(std::int32_t n0, Precision p, const BatchShape& s, LayerWork& w) const {
  const double e = bytes_per_element(p);
  const double T = s.tokens, d = hstu_.model_dim, h = hstu_.heads, dqk = hstu_.head_dim,
               dv = hstu_.linear_dim;
  const double uvqk_width = h * (2 * dqk + 2 * dv);
  const bool padded = hstu_.padded, fused = hstu_.fused_attention;
  const double scores = padded ? s.padded_squares : s.squares;
  const HstuKernels k = hstu_kernels(hstu_, p, s);

  const int c = cp_degree_;
  const bool cp = c > 1, gather = cp_mode_ == CpMode::kAllGather;
  const bool bias = hstu_.relative_bias, drop = hstu_.dropout > 0;
  using network::CollectiveOp;
  const auto cls = CommClass::kContextParallel;
  const auto grp = CommGroup::kContextParallel;
  auto& f = w.forward;
  f.push_back(kernel_item(n0, k.norm_in));
  f.push_back(kernel_item(n0 + 1, k.uvqk));
  f.push_back(kernel_item(n0 + 2, k.silu));
  if (bias) f.push_back(kernel_item(n0 + 3, k.rel_bias));
  if (padded) f.push_back(kernel_item(n0 + 4, k.to_padded));
  // all_gather: K and V of every CP rank (all-gather output = c x local).
  // all_to_all: Q, K, V re-split from sequence to heads, and the output back.
  if (cp && gather)
    f.push_back(comm_item(n0 + 5, CollectiveOp::kAllGather, cls, grp, c * T * h * (dqk + dv) * e));
  if (cp && !gather)
    f.push_back(comm_item(n0 + 6, CollectiveOp::kAllToAll, cls, grp, T * h * (2 * dqk + dv) * e));
  f.push_back(kernel_item(n0 + 7, k.attn));
  if (padded) f.push_back(kernel_item(n0 + 8, k.to_jagged));
  if (cp && !gather)
    f.push_back(comm_item(n0 + 9, CollectiveOp::kAllToAll, cls, grp, T * h * dv * e));
  f.push_back(kernel_item(n0 + 10, k.norm_out));
  if (drop) f.push_back(kernel_item(n0 + 11, k.dropout));
  f.push_back(kernel_item(n0 + 12, k.out));
  f.push_back(kernel_item(n0 + 13, k.residual));

  // Backward in reverse. A conversion's backward is the opposite conversion; dropout's
  // reads the gradient and the mask and writes the gradient (its forward's bytes); the
  // residual's is the sum of the two branches' input gradients (its forward's bytes).
  auto& b = w.backward;
  b.push_back(kernel_item(n0 + 14, cost::gemm_backward_work(k.out)));
  if (drop) b.push_back(kernel_item(n0 + 15, k.dropout));
  b.push_back(kernel_item(n0 + 16, cost::elementwise_backward_work(k.norm_out, 2)));
  if (cp && !gather)
    b.push_back(comm_item(n0 + 17, CollectiveOp::kAllToAll, cls, grp, T * h * dv * e));
  if (padded) b.push_back(kernel_item(n0 + 18, k.to_jagged));
  b.push_back(kernel_item(n0 + 19, cost::attention_backward_work(k.attn)));
  if (padded) b.push_back(kernel_item(n0 + 20, k.to_padded));
  if (cp && gather)
    b.push_back(
        comm_item(n0 + 21, CollectiveOp::kReduceScatter, cls, grp, c * T * h * (dqk + dv) * e));
  if (cp && !gather)
    b.push_back(comm_item(n0 + 22, CollectiveOp::kAllToAll, cls, grp, T * h * (2 * dqk + dv) * e));
  // Fused kernels accumulate the bias gradient inside the attention backward.
  if (bias && !fused)
    b.push_back(kernel_item(n0 + 23, cost::elementwise_backward_work(k.rel_bias, 1)));
  b.push_back(kernel_item(n0 + 24, cost::elementwise_backward_work(k.silu, 1.5)));
  b.push_back(kernel_item(n0 + 25, cost::gemm_backward_work(k.uvqk)));
  b.push_back(kernel_item(n0 + 26, cost::elementwise_backward_work(k.norm_in, 2)));
  b.push_back(kernel_item(n0 + 27, k.residual));

  // Saved: input, normed input, U V Q K before and after SiLU, attention output, normed
  // output (plus the dropout mask); padded Q K V and output; unfused, the scores.
  w.activation_bytes = T * (2 * d + 2 * uvqk_width + 2 * h * dv) * e;
  if (drop) w.activation_bytes += T * h * dv;
  if (padded) w.activation_bytes += s.samples * s.max_length * h * (2 * dqk + 2 * dv) * e;
  w.attention_unfused_bytes = s.squares * h * e;
  w.attention_padded_bytes = s.padded_squares * h * e;
  w.attention_bytes = fused ? 0 : scores * h * e;
  if (cp && gather) w.comm_buffer_bytes = c * T * h * (dqk + dv) * e;
}

void DenseStack::sampled_softmax(std::int32_t n0, int d, int negatives, Precision p,
                                 const BatchShape& s, LayerWork& w) const {
  const double e = bytes_per_element(p), T = s.tokens, R = negatives;
  if (hstu_.shared_negatives) {
    // One set of R negatives for the batch (in-batch sampling): the positives (T rows) and
    // the R negatives are gathered from the batch's looked-up items and L2-normalized,
    // logits are a GEMM [T, d] x [d, R], then the softmax cross-entropy over R + 1.
    const double gathered = T + R;
    const Kernel gather = elementwise(3 * gathered * d, 2 * gathered * d * e, p);
    const Kernel logits = gemm(T, R, d, p);
    const Kernel softmax = elementwise(5 * T * (R + 1), 2 * T * (R + 1) * kFp32, p);
    const Kernel gather_bwd = elementwise(6 * gathered * d, 3 * gathered * d * e, p);
    w.forward.push_back(kernel_item(n0, gather));
    w.forward.push_back(kernel_item(n0 + 1, logits));
    w.forward.push_back(kernel_item(n0 + 2, softmax));
    w.backward.push_back(kernel_item(n0 + 3, softmax));
    w.backward.push_back(kernel_item(n0 + 4, cost::gemm_backward_work(logits)));
    w.backward.push_back(kernel_item(n0 + 5, gather_bwd));
    w.activation_bytes = gathered * d * e + T * (R + 1) * kFp32;
    return;
  }
  // Every token gathers its positive's and R negatives' embeddings from the batch's looked-up
  // items and L2-normalizes them ([T, R + 1, d] written), dots them with its output (a
  // batched GEMV: memory-bound), and takes the softmax cross-entropy over R + 1 logits.
  const double rows = T * (R + 1);
  const Kernel gather = elementwise(3 * rows * d, 2 * rows * d * e, p);
  const Kernel logits = elementwise(2 * rows * d, rows * d * e + T * d * e + rows * kFp32, p);
  const Kernel softmax = elementwise(5 * rows, 2 * rows * kFp32, p);
  // Backward: probabilities to logit gradients; logit gradients to the output's and the
  // gathered rows' gradients (read rows, write their gradients); the L2 norm's backward
  // and the scatter-add of row gradients (read gradient and row, write gradient).
  const Kernel logits_bwd =
      elementwise(4 * rows * d, rows * kFp32 + 2 * rows * d * e + 2 * T * d * e, p);
  const Kernel gather_bwd = elementwise(6 * rows * d, 3 * rows * d * e, p);
  w.forward.push_back(kernel_item(n0, gather));
  w.forward.push_back(kernel_item(n0 + 1, logits));
  w.forward.push_back(kernel_item(n0 + 2, softmax));
  w.backward.push_back(kernel_item(n0 + 3, softmax));
  w.backward.push_back(kernel_item(n0 + 4, logits_bwd));
  w.backward.push_back(kernel_item(n0 + 5, gather_bwd));
  w.activation_bytes = rows * d * e + rows * kFp32;
}

}  // namespace strait::sim::workload::detail
