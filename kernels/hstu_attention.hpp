#pragma once
// HSTU attention over jagged (or padded) sequences, forward and backward.
//
// Math (Zhai et al., "Actions Speak Louder than Words", 2024; generative-recommenders):
//   z_ij = alpha * <q_i, k_j> + rab(i, j)
//   o_i  = sum_{j valid} silu(z_ij) / N * v_j,   valid: j <= i (causal) and j < L_b
// per sequence b and head, where N = max_seq_len (HSTU's normalizer, not a softmax).
// rab is an optional relative bias shared by all heads:
//   pos_bias[min(|i - j|, P - 1)]  +  time_bias[min(bit_width(|ts_i - ts_j|), T - 1)]
// (bit_width: 0 for 0, 1 for 1, 2 for 2..3, ...: an exact log2 bucketing, identical on CPU
// and GPU). Inputs are f16/bf16 (CPU also f32) with f32 accumulation; outputs take the
// input dtype, bias gradients are f32.
//
// Layouts: kJagged: Q, K, V [total_tokens, heads, head_dim], int32 offsets [batch + 1]
// (FBGEMM / generative-recommenders); kPadded: [batch, max_seq_len, heads, head_dim] with
// the same offsets giving each row's valid length (padded rows of the output are zero).
// The padded layout is the dense baseline: the CUDA kernel computes every padded tile.
//
// FLOP convention: forward = 2 matmuls x 2 flop x heads x head_dim x (valid pairs), valid
// pairs = sum_b L_b (L_b + 1) / 2 causal (L_b^2 otherwise); backward = 2.5 x forward
// (FlashAttention's convention: 5 matmuls), whatever the kernel recomputes.
// Limits: CUDA needs head_dim a multiple of 16 in [16, 256] and f16/bf16; sequence
// lengths must be <= max_seq_len (checked on CPU; CUDA ignores tokens past max_seq_len).

#include <cstdint>
#include <vector>

#include "kernels/types.hpp"
#include "sim/core/units.hpp"

namespace strait::kernels {

enum class AttentionLayout : std::uint8_t { kJagged, kPadded };

/// Problem description shared by forward and backward.
struct HstuAttentionShape {
  int batch = 0;
  int heads = 0;
  int head_dim = 0;
  int max_seq_len = 0;            // N: normalizer, and the padded length of kPadded
  std::int64_t total_tokens = 0;  // rows of Q/K/V (kPadded: batch * max_seq_len)
  DType dtype = DType::kBF16;
  AttentionLayout layout = AttentionLayout::kJagged;
  float alpha = 1.0f;
  bool causal = true;
  int num_pos_buckets = 0;   // P; 0 = no position bias
  int num_time_buckets = 0;  // T; 0 = no time bias
};

struct HstuAttentionForwardArgs {
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
  const std::int32_t* offsets = nullptr;     // [batch + 1]
  const float* pos_bias = nullptr;           // [P] or null
  const float* time_bias = nullptr;          // [T] or null
  const std::int64_t* timestamps = nullptr;  // [total_tokens] when time_bias is set
  void* out = nullptr;                       // like q
};

struct HstuAttentionBackwardArgs {
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
  const void* grad_out = nullptr;
  const std::int32_t* offsets = nullptr;
  const float* pos_bias = nullptr;
  const float* time_bias = nullptr;
  const std::int64_t* timestamps = nullptr;
  void* grad_q = nullptr;  // like q
  void* grad_k = nullptr;
  void* grad_v = nullptr;
  float* grad_pos_bias = nullptr;   // [P], overwritten; null: not computed
  float* grad_time_bias = nullptr;  // [T], overwritten; null: not computed
};

/// Forward on `device` (CUDA: device pointers, asynchronous on `stream`).
void hstu_attention_forward(Device device, const HstuAttentionShape& shape,
                            const HstuAttentionForwardArgs& args, void* stream = nullptr);
/// Backward: dQ, dK, dV (and bias gradients when asked) from dO.
void hstu_attention_backward(Device device, const HstuAttentionShape& shape,
                             const HstuAttentionBackwardArgs& args, void* stream = nullptr);

/// Forward FLOPs of the valid pairs for these sequence lengths (see the convention above).
Flops hstu_attention_forward_flops(const HstuAttentionShape& shape,
                                   const std::vector<std::int32_t>& lengths);
/// Backward FLOPs: 2.5 x forward.
Flops hstu_attention_backward_flops(const HstuAttentionShape& shape,
                                    const std::vector<std::int32_t>& lengths);

}  // namespace strait::kernels
