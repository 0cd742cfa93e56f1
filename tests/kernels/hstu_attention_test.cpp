#include "kernels/hstu_attention.hpp"

#include <bit>
#include <cmath>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "kernels/jagged.hpp"
#include "tests/kernels/kernel_test_util.hpp"

namespace strait::kernels {
namespace {

using testing::HostTensor;

double silu(double z) { return z / (1.0 + std::exp(-z)); }

// A CPU problem: jagged Q, K, V, optional biases, in one place.
struct Problem {
  HstuAttentionShape shape;
  std::vector<std::int32_t> lengths, offsets;
  HostTensor q, k, v;
  std::vector<float> pos_bias, time_bias;
  std::vector<std::int64_t> timestamps;

  Problem(std::vector<std::int32_t> lens, int heads, int dim, DType t, std::uint64_t seed,
          bool bias)
      : lengths(std::move(lens)), offsets(testing::offsets_of(lengths)), q(t, 0), k(t, 0), v(t, 0) {
    Rng rng(seed);
    shape.batch = static_cast<int>(lengths.size());
    shape.heads = heads;
    shape.head_dim = dim;
    shape.max_seq_len = 1;
    for (auto l : lengths) shape.max_seq_len = std::max(shape.max_seq_len, l);
    shape.total_tokens = offsets.back();
    shape.dtype = t;
    shape.alpha = 0.7f;
    const std::size_t n = static_cast<std::size_t>(shape.total_tokens) * heads * dim;
    q = testing::random_tensor(t, n, rng);
    k = testing::random_tensor(t, n, rng);
    v = testing::random_tensor(t, n, rng);
    if (bias) {
      shape.num_pos_buckets = 4;
      shape.num_time_buckets = 6;
      for (int i = 0; i < 4; ++i) pos_bias.push_back(static_cast<float>(rng.uniform() - 0.5));
      for (int i = 0; i < 6; ++i) time_bias.push_back(static_cast<float>(rng.uniform() - 0.5));
      for (std::int64_t i = 0; i < shape.total_tokens; ++i)
        timestamps.push_back(static_cast<std::int64_t>(rng.uniform_int(100)));
    }
  }
  HstuAttentionForwardArgs forward_args(HostTensor& out) const {
    HstuAttentionForwardArgs a;
    a.q = q.data();
    a.k = k.data();
    a.v = v.data();
    a.offsets = offsets.data();
    a.out = out.data();
    if (!pos_bias.empty()) {
      a.pos_bias = pos_bias.data();
      a.time_bias = time_bias.data();
      a.timestamps = timestamps.data();
    }
    return a;
  }
  std::vector<float> forward() const {
    HostTensor out(shape.dtype, q.size());
    hstu_attention_forward(Device::kCpu, shape, forward_args(out));
    return out.to_f32();
  }
};

// The formula written out directly in double, from a full L x L score matrix per
// sequence and head, masked afterwards (unlike the reference, which skips masked pairs).
std::vector<float> naive_forward(const Problem& p) {
  const auto& s = p.shape;
  std::vector<float> out(p.q.size(), 0.0f);
  for (int b = 0; b < s.batch; ++b) {
    const int len = p.lengths[b];
    for (int h = 0; h < s.heads; ++h) {
      auto at = [&](const HostTensor& x, int i, int c) {
        return static_cast<double>(
            x.get((static_cast<std::size_t>(p.offsets[b] + i) * s.heads + h) * s.head_dim + c));
      };
      for (int i = 0; i < len; ++i) {
        for (int c = 0; c < s.head_dim; ++c) {
          double acc = 0;
          for (int j = 0; j < len; ++j) {
            double dot = 0;
            for (int e = 0; e < s.head_dim; ++e) dot += at(p.q, i, e) * at(p.k, j, e);
            double z = s.alpha * dot;
            if (!p.pos_bias.empty()) {
              z += p.pos_bias[std::min(std::abs(i - j), s.num_pos_buckets - 1)];
              const auto dt =
                  std::abs(p.timestamps[p.offsets[b] + i] - p.timestamps[p.offsets[b] + j]);
              z += p.time_bias[std::min<int>(std::bit_width(static_cast<std::uint64_t>(dt)),
                                             s.num_time_buckets - 1)];
            }
            const double mask = (!s.causal || j <= i) ? 1.0 : 0.0;
            acc += mask * silu(z) / s.max_seq_len * at(p.v, j, c);
          }
          out[(static_cast<std::size_t>(p.offsets[b] + i) * s.heads + h) * s.head_dim + c] =
              static_cast<float>(acc);
        }
      }
    }
  }
  return out;
}

TEST(HstuAttentionCpu, TwoTokensMatchTheHandComputedFormula) {
  // One sequence, L = 2, one head, head_dim = 1, alpha = 1, N = 2, q = (1, 2), k = (1, 1),
  // v = (3, 5), position bias (0.5, -1) (bucket |i - j|), no time bias:
  //   o0 = silu(1 + 0.5) / 2 * 3
  //   o1 = (silu(2 - 1) * 3 + silu(2 + 0.5) * 5) / 2
  HstuAttentionShape s;
  s.batch = 1;
  s.heads = 1;
  s.head_dim = 1;
  s.max_seq_len = 2;
  s.total_tokens = 2;
  s.dtype = DType::kF32;
  s.alpha = 1.0f;
  s.num_pos_buckets = 2;
  std::vector<float> q{1, 2}, k{1, 1}, v{3, 5}, out(2), pos{0.5f, -1.0f};
  std::vector<std::int32_t> off{0, 2};
  HstuAttentionForwardArgs a;
  a.q = q.data();
  a.k = k.data();
  a.v = v.data();
  a.offsets = off.data();
  a.out = out.data();
  a.pos_bias = pos.data();
  hstu_attention_forward(Device::kCpu, s, a);
  EXPECT_NEAR(out[0], silu(1.5) / 2 * 3, 1e-6);
  EXPECT_NEAR(out[1], (silu(1.0) * 3 + silu(2.5) * 5) / 2, 1e-6);
}

TEST(HstuAttentionCpu, MatchesTheNaiveFormulaOnAJaggedBatchWithEmptyAndShortSequences) {
  for (const bool bias : {false, true}) {
    for (const bool causal : {true, false}) {
      Problem p({5, 0, 1, 17, 3}, 2, 8, DType::kF32, 11, bias);
      p.shape.causal = causal;
      testing::expect_close(p.forward(), naive_forward(p), 1e-5f, 1e-4f,
                            fmt::format("bias {} causal {}", bias, causal));
    }
  }
}

TEST(HstuAttentionCpu, PaddedLayoutGivesTheJaggedResultAndZeroPadding) {
  Problem p({4, 0, 7, 2}, 2, 8, DType::kBF16, 5, true);
  const auto jagged = p.forward();
  const int n = p.shape.max_seq_len, row = p.shape.heads * p.shape.head_dim;
  JaggedShape js{p.shape.batch, n, row, p.shape.total_tokens, DType::kBF16};
  HostTensor qp(DType::kBF16, static_cast<std::size_t>(p.shape.batch) * n * row), kp = qp, vp = qp,
                                                                                  op = qp;
  jagged_to_padded(Device::kCpu, js, p.q.data(), p.offsets.data(), qp.data(),
                   7.0f);  // junk padding
  jagged_to_padded(Device::kCpu, js, p.k.data(), p.offsets.data(), kp.data(), 7.0f);
  jagged_to_padded(Device::kCpu, js, p.v.data(), p.offsets.data(), vp.data(), 7.0f);
  std::vector<std::int64_t> ts_padded(static_cast<std::size_t>(p.shape.batch) * n, 0);
  for (int b = 0; b < p.shape.batch; ++b)
    for (int i = 0; i < p.lengths[b]; ++i)
      ts_padded[static_cast<std::size_t>(b) * n + i] = p.timestamps[p.offsets[b] + i];
  HstuAttentionShape ps = p.shape;
  ps.layout = AttentionLayout::kPadded;
  ps.total_tokens = static_cast<std::int64_t>(ps.batch) * n;
  HstuAttentionForwardArgs a;
  a.q = qp.data();
  a.k = kp.data();
  a.v = vp.data();
  a.offsets = p.offsets.data();
  a.out = op.data();
  a.pos_bias = p.pos_bias.data();
  a.time_bias = p.time_bias.data();
  a.timestamps = ts_padded.data();
  hstu_attention_forward(Device::kCpu, ps, a);
  HostTensor back(DType::kBF16, p.q.size());
  padded_to_jagged(Device::kCpu, js, op.data(), p.offsets.data(), back.data());
  testing::expect_close(back.to_f32(), jagged, 0.0f, 0.0f, "padded vs jagged");
  EXPECT_EQ(op.get(static_cast<std::size_t>(1) * n * row), 0.0f);  // sequence 1 is empty
}

// Loss = sum(out * G); checks every gradient against central differences in f32.
TEST(HstuAttentionCpu, BackwardMatchesFiniteDifferences) {
  Problem p({3, 0, 5}, 2, 4, DType::kF32, 3, true);
  Rng rng(9);
  const HostTensor go = testing::random_tensor(DType::kF32, p.q.size(), rng);
  auto loss = [&](const Problem& pp) {
    const auto out = pp.forward();
    double l = 0;
    for (std::size_t i = 0; i < out.size(); ++i) l += static_cast<double>(out[i]) * go.get(i);
    return l;
  };
  HostTensor dq(DType::kF32, p.q.size()), dk = dq, dv = dq;
  std::vector<float> dpos(4), dtime(6);
  HstuAttentionBackwardArgs a;
  a.q = p.q.data();
  a.k = p.k.data();
  a.v = p.v.data();
  a.grad_out = go.data();
  a.offsets = p.offsets.data();
  a.pos_bias = p.pos_bias.data();
  a.time_bias = p.time_bias.data();
  a.timestamps = p.timestamps.data();
  a.grad_q = dq.data();
  a.grad_k = dk.data();
  a.grad_v = dv.data();
  a.grad_pos_bias = dpos.data();
  a.grad_time_bias = dtime.data();
  hstu_attention_backward(Device::kCpu, p.shape, a);

  const float h = 1e-2f;
  auto fd = [&](auto&& perturb) {
    Problem plus = p, minus = p;
    perturb(plus, h);
    perturb(minus, -h);
    return static_cast<float>((loss(plus) - loss(minus)) / (2 * h));
  };
  for (std::size_t i = 0; i < p.q.size(); i += 3) {
    EXPECT_NEAR(dq.get(i), fd([&](Problem& x, float e) { x.q.set(i, x.q.get(i) + e); }), 2e-4)
        << "dq " << i;
    EXPECT_NEAR(dk.get(i), fd([&](Problem& x, float e) { x.k.set(i, x.k.get(i) + e); }), 2e-4)
        << "dk " << i;
    EXPECT_NEAR(dv.get(i), fd([&](Problem& x, float e) { x.v.set(i, x.v.get(i) + e); }), 2e-4)
        << "dv " << i;
  }
  for (std::size_t i = 0; i < dpos.size(); ++i)
    EXPECT_NEAR(dpos[i], fd([&](Problem& x, float e) { x.pos_bias[i] += e; }), 2e-4)
        << "dpos " << i;
  for (std::size_t i = 0; i < dtime.size(); ++i)
    EXPECT_NEAR(dtime[i], fd([&](Problem& x, float e) { x.time_bias[i] += e; }), 2e-4)
        << "dtime " << i;
}

TEST(HstuAttentionCpu, FlopsFollowTheStatedConvention) {
  // Causal, lengths 3 and 4: pairs 6 + 10 = 16; 4 flop x 16 x 2 heads x 8 dims = 1024.
  HstuAttentionShape s;
  s.heads = 2;
  s.head_dim = 8;
  EXPECT_DOUBLE_EQ(hstu_attention_forward_flops(s, {3, 4}), 1024.0);
  EXPECT_DOUBLE_EQ(hstu_attention_backward_flops(s, {3, 4}), 2560.0);
}

TEST(HstuAttentionErrors, BadShapesNameTheArgument) {
  Problem p({3, 2}, 1, 8, DType::kBF16, 1, false);
  HostTensor out(DType::kBF16, p.q.size());
  auto a = p.forward_args(out);
  HstuAttentionShape s = p.shape;
  s.head_dim = 40;
  try {
    hstu_attention_forward(Device::kCuda, s, a);
    FAIL() << "expected KernelArgumentError";
  } catch (const KernelArgumentError& e) {
    EXPECT_STREQ(
        e.what(),
        "hstu_attention_forward: head_dim: expected a multiple of 16 in [16, 256] on CUDA, got 40");
  }
  s = p.shape;
  s.max_seq_len = 2;
  try {
    hstu_attention_forward(Device::kCpu, s, a);
    FAIL() << "expected KernelArgumentError";
  } catch (const KernelArgumentError& e) {
    EXPECT_STREQ(e.what(),
                 "hstu_attention_forward: offsets: expected sequence 0 to have a length in "
                 "[0, max_seq_len = 2], got 3");
  }
  s = p.shape;
  s.num_pos_buckets = 3;
  EXPECT_THROW(hstu_attention_forward(Device::kCpu, s, a), KernelArgumentError);
}

}  // namespace
}  // namespace strait::kernels
