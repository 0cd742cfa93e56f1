#include "kernels/hstu_attention.hpp"

#include <cstdint>
#include <string>

#include <fmt/format.h>

#include "kernels/detail/backends.hpp"
#include "kernels/detail/require.hpp"

namespace strait::kernels {
namespace {

using detail::no_cuda;
using detail::require;

void check_shape(const char* kernel, Device device, const HstuAttentionShape& s) {
  require(s.batch >= 0, kernel, "batch", fmt::format("expected >= 0, got {}", s.batch));
  require(s.heads >= 1, kernel, "heads", fmt::format("expected >= 1, got {}", s.heads));
  require(s.head_dim >= 1, kernel, "head_dim", fmt::format("expected >= 1, got {}", s.head_dim));
  require(s.max_seq_len >= 1, kernel, "max_seq_len",
          fmt::format("expected >= 1, got {}", s.max_seq_len));
  require(s.total_tokens >= 0, kernel, "total_tokens",
          fmt::format("expected >= 0, got {}", s.total_tokens));
  require(s.num_pos_buckets >= 0 && s.num_time_buckets >= 0, kernel,
          "num_pos_buckets/num_time_buckets", "expected >= 0");
  if (s.layout == AttentionLayout::kPadded) {
    const std::int64_t want = static_cast<std::int64_t>(s.batch) * s.max_seq_len;
    require(s.total_tokens == want, kernel, "total_tokens",
            fmt::format("expected batch * max_seq_len = {} for the padded layout, got {}", want,
                        s.total_tokens));
  }
  if (device == Device::kCuda) {
    require(s.dtype != DType::kF32, kernel, "dtype", "expected f16 or bf16 on CUDA, got f32");
    require(s.head_dim % 16 == 0 && s.head_dim <= 256, kernel, "head_dim",
            fmt::format("expected a multiple of 16 in [16, 256] on CUDA, got {}", s.head_dim));
  }
}

void check_bias(const char* kernel, const HstuAttentionShape& s, const float* pos, const float* tim,
                const std::int64_t* ts) {
  require((pos != nullptr) == (s.num_pos_buckets > 0), kernel, "pos_bias",
          fmt::format("expected a table iff num_pos_buckets > 0 (num_pos_buckets = {})",
                      s.num_pos_buckets));
  require((tim != nullptr) == (s.num_time_buckets > 0), kernel, "time_bias",
          fmt::format("expected a table iff num_time_buckets > 0 (num_time_buckets = {})",
                      s.num_time_buckets));
  require(tim == nullptr || ts != nullptr, kernel, "timestamps",
          "expected per-token timestamps with a time bias");
}

void check_pointer(const char* kernel, const char* name, const void* p, Device device,
                   const HstuAttentionShape& s) {
  if (s.total_tokens == 0) return;
  require(p != nullptr, kernel, name, "expected a non-null pointer");
  if (device == Device::kCuda)
    require(reinterpret_cast<std::uintptr_t>(p) % 16 == 0, kernel, name,
            "expected a 16-byte aligned device pointer");
}

// The offsets are host memory on the CPU: check them fully.
void check_offsets_on_host(const char* kernel, const HstuAttentionShape& s,
                           const std::int32_t* off) {
  const bool jagged = s.layout == AttentionLayout::kJagged;
  require(!jagged || off[0] == 0, kernel, "offsets",
          fmt::format("expected offsets[0] = 0, got {}", off[0]));
  for (int b = 0; b < s.batch; ++b) {
    const std::int64_t len = static_cast<std::int64_t>(off[b + 1]) - off[b];
    require(len >= 0 && len <= s.max_seq_len, kernel, "offsets",
            fmt::format("expected sequence {} to have a length in [0, max_seq_len = {}], got {}", b,
                        s.max_seq_len, len));
  }
  require(!jagged || off[s.batch] == s.total_tokens, kernel, "offsets",
          fmt::format("expected offsets[batch] = total_tokens = {}, got {}", s.total_tokens,
                      off[s.batch]));
}

}  // namespace

void hstu_attention_forward(Device device, const HstuAttentionShape& s,
                            const HstuAttentionForwardArgs& a, void* stream) {
  constexpr const char* kName = "hstu_attention_forward";
  check_shape(kName, device, s);
  check_bias(kName, s, a.pos_bias, a.time_bias, a.timestamps);
  require(a.offsets != nullptr, kName, "offsets", "expected a non-null pointer");
  check_pointer(kName, "q", a.q, device, s);
  check_pointer(kName, "k", a.k, device, s);
  check_pointer(kName, "v", a.v, device, s);
  check_pointer(kName, "out", a.out, device, s);
  if (device == Device::kCpu) {
    check_offsets_on_host(kName, s, a.offsets);
    detail::hstu_attention_forward_cpu(s, a);
    return;
  }
#ifdef STRAIT_HAVE_CUDA
  detail::hstu_attention_forward_cuda(s, a, stream);
#else
  (void)stream;
  no_cuda(kName);
#endif
}

void hstu_attention_backward(Device device, const HstuAttentionShape& s,
                             const HstuAttentionBackwardArgs& a, void* stream) {
  constexpr const char* kName = "hstu_attention_backward";
  check_shape(kName, device, s);
  check_bias(kName, s, a.pos_bias, a.time_bias, a.timestamps);
  require(a.grad_pos_bias == nullptr || a.pos_bias != nullptr, kName, "grad_pos_bias",
          "expected no position-bias gradient without a position bias");
  require(a.grad_time_bias == nullptr || a.time_bias != nullptr, kName, "grad_time_bias",
          "expected no time-bias gradient without a time bias");
  require(a.offsets != nullptr, kName, "offsets", "expected a non-null pointer");
  check_pointer(kName, "q", a.q, device, s);
  check_pointer(kName, "k", a.k, device, s);
  check_pointer(kName, "v", a.v, device, s);
  check_pointer(kName, "grad_out", a.grad_out, device, s);
  check_pointer(kName, "grad_q", a.grad_q, device, s);
  check_pointer(kName, "grad_k", a.grad_k, device, s);
  check_pointer(kName, "grad_v", a.grad_v, device, s);
  if (device == Device::kCpu) {
    check_offsets_on_host(kName, s, a.offsets);
    detail::hstu_attention_backward_cpu(s, a);
    return;
  }
#ifdef STRAIT_HAVE_CUDA
  detail::hstu_attention_backward_cuda(s, a, stream);
#else
  (void)stream;
  no_cuda(kName);
#endif
}

Flops hstu_attention_forward_flops(const HstuAttentionShape& s,
                                   const std::vector<std::int32_t>& lengths) {
  double pairs = 0;
  for (const std::int32_t len : lengths) {
    const double l = len;
    pairs += s.causal ? l * (l + 1) / 2 : l * l;
  }
  return 2.0 * 2.0 * pairs * s.heads * s.head_dim;
}

Flops hstu_attention_backward_flops(const HstuAttentionShape& s,
                                    const std::vector<std::int32_t>& lengths) {
  return 2.5 * hstu_attention_forward_flops(s, lengths);
}

}  // namespace strait::kernels
