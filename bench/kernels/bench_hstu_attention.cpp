// Jagged HSTU attention benchmark, printed like nccl-tests: one row per configuration.
// FLOP convention (kernels/hstu_attention.hpp): forward = 4 * heads * head_dim * valid
// pairs (causal: sum L(L+1)/2), backward = 2.5 x forward. "pad" columns run the padded
// dense layout on the same batch; its TFLOP/s counts the same useful FLOPs.
// Without a CUDA device it times the CPU reference at a small size instead.

#include <cstdio>
#include <exception>
#include <numeric>

#include <fmt/format.h>

#include "bench/kernels/bench_util.hpp"
#include "kernels/hstu_attention.hpp"
#include "kernels/jagged.hpp"

namespace strait::kernels::bench {
namespace {

struct Config {
  int batch;
  const char* dist;
  int max_len;
  int heads;
  int head_dim;
};

HstuAttentionShape shape_for(const Config& c, const std::vector<std::int32_t>& lengths) {
  HstuAttentionShape s;
  s.batch = c.batch;
  s.heads = c.heads;
  s.head_dim = c.head_dim;
  s.max_seq_len = c.max_len;
  s.total_tokens = std::accumulate(lengths.begin(), lengths.end(), std::int64_t{0});
  s.dtype = DType::kBF16;
  s.alpha = 1.0f / static_cast<float>(c.head_dim);
  return s;
}

void header() {
  fmt::print(
      "#\n# {:>5} {:>9} {:>7} {:>5} {:>4} {:>9} {:>9} {:>8} {:>9} {:>8} {:>9} {:>8} {:>9} {:>9}\n",
      "batch", "dist", "max_len", "heads", "dim", "tokens", "fwd(ms)", "TFLOP/s", "bwd(ms)",
      "TFLOP/s", "pad(ms)", "TFLOP/s", "jag(MiB)", "pad(MiB)");
}

void run_gpu(const Config& c, Rng& rng) {
  const auto lengths = sample_lengths(c.dist, c.batch, c.max_len, rng);
  std::vector<std::int32_t> offsets(lengths.size() + 1, 0);
  std::partial_sum(lengths.begin(), lengths.end(), offsets.begin() + 1);
  const HstuAttentionShape s = shape_for(c, lengths);
  const std::size_t row = static_cast<std::size_t>(c.heads) * c.head_dim * 2;
  const std::size_t jag = static_cast<std::size_t>(s.total_tokens) * row;
  const std::size_t pad = static_cast<std::size_t>(c.batch) * c.max_len * row;
  DeviceBuffer q(jag), k(jag), v(jag), o(jag), go(jag), dq(jag), dk(jag), dv(jag);
  for (auto* b : {&q, &k, &v, &go}) b->zero();  // zeros: timing does not depend on values
  DeviceBuffer off = DeviceBuffer::from_host(offsets);
  HstuAttentionForwardArgs fa;
  fa.q = q.data();
  fa.k = k.data();
  fa.v = v.data();
  fa.out = o.data();
  fa.offsets = off.as<std::int32_t>();
  HstuAttentionBackwardArgs ba;
  ba.q = q.data();
  ba.k = k.data();
  ba.v = v.data();
  ba.grad_out = go.data();
  ba.offsets = off.as<std::int32_t>();
  ba.grad_q = dq.data();
  ba.grad_k = dk.data();
  ba.grad_v = dv.data();
  const double fwd_ms = time_gpu_ms([&] { hstu_attention_forward(Device::kCuda, s, fa); });
  const double bwd_ms = time_gpu_ms([&] { hstu_attention_backward(Device::kCuda, s, ba); });
  double pad_ms = 0;
  {
    DeviceBuffer qp(pad), op(pad);
    qp.zero();
    HstuAttentionShape ps = s;
    ps.layout = AttentionLayout::kPadded;
    ps.total_tokens = static_cast<std::int64_t>(c.batch) * c.max_len;
    HstuAttentionForwardArgs pa = fa;
    pa.q = pa.k = pa.v = qp.data();
    pa.out = op.data();
    pad_ms = time_gpu_ms([&] { hstu_attention_forward(Device::kCuda, ps, pa); });
  }
  const double f = hstu_attention_forward_flops(s, lengths),
               b = hstu_attention_backward_flops(s, lengths);
  fmt::print(
      "  {:>5} {:>9} {:>7} {:>5} {:>4} {:>9} {:>9.3f} {:>8.1f} {:>9.3f} {:>8.1f} {:>9.3f} {:>8.1f} "
      "{:>9.1f} {:>9.1f}\n",
      c.batch, c.dist, c.max_len, c.heads, c.head_dim, s.total_tokens, fwd_ms, f / fwd_ms * 1e-9,
      bwd_ms, b / bwd_ms * 1e-9, pad_ms, f / pad_ms * 1e-9, 4.0 * jag / 1048576.0,
      4.0 * pad / 1048576.0);
}

void run_cpu() {
  const Config c{2, "uniform", 256, 2, 64};
  Rng rng(1);
  const auto lengths = sample_lengths(c.dist, c.batch, c.max_len, rng);
  std::vector<std::int32_t> offsets(lengths.size() + 1, 0);
  std::partial_sum(lengths.begin(), lengths.end(), offsets.begin() + 1);
  HstuAttentionShape s = shape_for(c, lengths);
  const std::size_t n = static_cast<std::size_t>(s.total_tokens) * c.heads * c.head_dim;
  std::vector<std::uint16_t> q(n, float_to_bf16(0.01f)), o(n), go(n, float_to_bf16(0.01f)), dq(n),
      dk(n), dv(n);
  HstuAttentionForwardArgs fa;
  fa.q = fa.k = fa.v = q.data();
  fa.out = o.data();
  fa.offsets = offsets.data();
  HstuAttentionBackwardArgs ba;
  ba.q = ba.k = ba.v = q.data();
  ba.grad_out = go.data();
  ba.offsets = offsets.data();
  ba.grad_q = dq.data();
  ba.grad_k = dk.data();
  ba.grad_v = dv.data();
  const double fwd_ms = time_cpu_ms([&] { hstu_attention_forward(Device::kCpu, s, fa); });
  const double bwd_ms = time_cpu_ms([&] { hstu_attention_backward(Device::kCpu, s, ba); });
  fmt::print("#\n# {:>5} {:>9} {:>7} {:>5} {:>4} {:>9} {:>9} {:>8} {:>9} {:>8}\n", "batch", "dist",
             "max_len", "heads", "dim", "tokens", "fwd(ms)", "GFLOP/s", "bwd(ms)", "GFLOP/s");
  fmt::print("  {:>5} {:>9} {:>7} {:>5} {:>4} {:>9} {:>9.2f} {:>8.2f} {:>9.2f} {:>8.2f}\n", c.batch,
             c.dist, c.max_len, c.heads, c.head_dim, s.total_tokens, fwd_ms,
             hstu_attention_forward_flops(s, lengths) / fwd_ms * 1e-6, bwd_ms,
             hstu_attention_backward_flops(s, lengths) / bwd_ms * 1e-6);
}

}  // namespace
}  // namespace strait::kernels::bench

int main() {
  using namespace strait::kernels;
  using namespace strait::kernels::bench;
  try {
    fmt::print("# strait bench: jagged HSTU attention, bf16, causal, SiLU / max_len, no bias\n");
    fmt::print(
        "# FLOPs: fwd = 4 * heads * dim * sum L(L+1)/2; bwd = 2.5 x fwd; pad = same FLOPs, padded "
        "layout\n");
    if (cuda_device_count() == 0) {
      fmt::print("# no CUDA device found: timing the CPU reference at a small size\n");
      run_cpu();
      return 0;
    }
    fmt::print("# device: {}\n", cuda_device_name());
    header();
    strait::Rng rng(42);
    const Config configs[] = {
        {32, "lognormal", 4096, 4, 256},
        {32, "fixed", 4096, 4, 256},
        {32, "fixed", 4096, 4, 128},
        {32, "uniform", 4096, 4, 128},
        {32, "lognormal", 4096, 4, 128},
        {32, "fixed", 4096, 4, 64},
        {32, "fixed", 4096, 2, 256},
        {128, "fixed", 1024, 4, 128},
        {128, "lognormal", 1024, 4, 128},
        {8, "fixed", 8192, 4, 128},
        {256, "uniform", 512, 8, 64},
        // Efficiency by length at hstu-large's shape (4 heads x 128), 131,072 tokens each:
        // the jagged_attention table of configs/profiles/h100-sxm.json.
        {1024, "fixed", 128, 4, 128},
        {512, "fixed", 256, 4, 128},
        {256, "fixed", 512, 4, 128},
        {64, "fixed", 2048, 4, 128},
        {16, "fixed", 8192, 4, 128},
    };
    for (const auto& c : configs) run_gpu(c, rng);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_hstu_attention: %s\n", e.what());
    return 1;
  }
  return 0;
}
