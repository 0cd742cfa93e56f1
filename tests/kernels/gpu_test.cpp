// Every CUDA kernel against its CPU reference on random jagged batches (label `gpu`).
// Tolerances (CUDA rounds SiLU outputs to the input type before the second matmul):
// |cuda - cpu| <= tol * (max|cpu| + |cpu|) with tol = 2e-2 for bf16 and 4e-3 for f16;
// TBE: 1e-5 relative for f32 weights, 1e-2 for 16-bit ones (one rounding of the update).

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "kernels/device.hpp"
#include "kernels/hstu_attention.hpp"
#include "kernels/jagged.hpp"
#include "kernels/tbe.hpp"
#include "tests/kernels/kernel_test_util.hpp"

namespace strait::kernels {
namespace {

using testing::HostTensor;

#define STRAIT_REQUIRE_GPU()                                                                 \
  do {                                                                                       \
    if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device, or a build without CUDA"; \
  } while (0)

DeviceBuffer upload(const HostTensor& t) {
  DeviceBuffer b(t.bytes());
  b.upload(t.data(), t.bytes());
  return b;
}
std::vector<float> download(const DeviceBuffer& b, DType t, std::size_t n) {
  HostTensor h(t, n);
  b.download(h.data(), h.bytes());
  return h.to_f32();
}
float tolerance(DType t) { return t == DType::kBF16 ? 2e-2f : 4e-3f; }

struct AttentionCase {
  std::vector<std::int32_t> lengths;
  int heads;
  int head_dim;
  DType dtype;
  bool bias;
  bool backward;
};

void run_attention_case(const AttentionCase& c) {
  Rng rng(c.lengths.size() * 131 + static_cast<std::uint64_t>(c.head_dim));
  HstuAttentionShape s;
  s.batch = static_cast<int>(c.lengths.size());
  s.heads = c.heads;
  s.head_dim = c.head_dim;
  s.dtype = c.dtype;
  s.alpha = 1.0f / static_cast<float>(c.head_dim);
  s.max_seq_len = 1;
  for (auto l : c.lengths) s.max_seq_len = std::max(s.max_seq_len, l);
  const auto offsets = testing::offsets_of(c.lengths);
  s.total_tokens = offsets.back();
  const std::size_t n = static_cast<std::size_t>(s.total_tokens) * s.heads * s.head_dim;
  const HostTensor q = testing::random_tensor(c.dtype, n, rng),
                   k = testing::random_tensor(c.dtype, n, rng),
                   v = testing::random_tensor(c.dtype, n, rng),
                   go = testing::random_tensor(c.dtype, n, rng);
  std::vector<float> pos, tim;
  std::vector<std::int64_t> ts;
  if (c.bias) {
    s.num_pos_buckets = 16;
    s.num_time_buckets = 12;
    for (int i = 0; i < 16; ++i) pos.push_back(static_cast<float>(rng.uniform() - 0.5));
    for (int i = 0; i < 12; ++i) tim.push_back(static_cast<float>(rng.uniform() - 0.5));
    for (std::int64_t i = 0; i < s.total_tokens; ++i)
      ts.push_back(static_cast<std::int64_t>(rng.uniform_int(5000)));
  }
  DeviceBuffer dq_in = upload(q), dk_in = upload(k), dv_in = upload(v), dgo = upload(go);
  DeviceBuffer doff = DeviceBuffer::from_host(offsets);
  DeviceBuffer dpos = DeviceBuffer::from_host(pos), dtim = DeviceBuffer::from_host(tim),
               dts = DeviceBuffer::from_host(ts);
  const std::string what =
      fmt::format("{} seqs, max {}, H {}, D {}, {}, bias {}", c.lengths.size(), s.max_seq_len,
                  c.heads, c.head_dim, dtype_name(c.dtype), c.bias);
  const float tol = tolerance(c.dtype);

  HstuAttentionForwardArgs fa;
  fa.offsets = offsets.data();
  if (c.bias) {
    fa.pos_bias = pos.data();
    fa.time_bias = tim.data();
    fa.timestamps = ts.data();
  }
  if (!c.backward) {
    HostTensor out(c.dtype, n);
    fa.q = q.data();
    fa.k = k.data();
    fa.v = v.data();
    fa.out = out.data();
    hstu_attention_forward(Device::kCpu, s, fa);
    const auto ref = out.to_f32();
    DeviceBuffer dout(out.bytes());
    HstuAttentionForwardArgs ga = fa;
    ga.q = dq_in.data();
    ga.k = dk_in.data();
    ga.v = dv_in.data();
    ga.out = dout.data();
    ga.offsets = doff.as<std::int32_t>();
    if (c.bias) {
      ga.pos_bias = dpos.as<float>();
      ga.time_bias = dtim.as<float>();
      ga.timestamps = dts.as<std::int64_t>();
    }
    hstu_attention_forward(Device::kCuda, s, ga);
    cuda_synchronize();
    testing::expect_close(download(dout, c.dtype, n), ref, tol * testing::max_abs(ref), tol,
                          "forward " + what);
    return;
  }
  HostTensor gq(c.dtype, n), gk(c.dtype, n), gv(c.dtype, n);
  std::vector<float> gpos(pos.size()), gtim(tim.size());
  HstuAttentionBackwardArgs ba;
  ba.q = q.data();
  ba.k = k.data();
  ba.v = v.data();
  ba.grad_out = go.data();
  ba.offsets = offsets.data();
  ba.grad_q = gq.data();
  ba.grad_k = gk.data();
  ba.grad_v = gv.data();
  if (c.bias) {
    ba.pos_bias = pos.data();
    ba.time_bias = tim.data();
    ba.timestamps = ts.data();
    ba.grad_pos_bias = gpos.data();
    ba.grad_time_bias = gtim.data();
  }
  hstu_attention_backward(Device::kCpu, s, ba);
  DeviceBuffer dgq(gq.bytes()), dgk(gq.bytes()), dgv(gq.bytes()), dgpos(gpos.size() * 4),
      dgtim(gtim.size() * 4);
  HstuAttentionBackwardArgs da;
  da.q = dq_in.data();
  da.k = dk_in.data();
  da.v = dv_in.data();
  da.grad_out = dgo.data();
  da.offsets = doff.as<std::int32_t>();
  da.grad_q = dgq.data();
  da.grad_k = dgk.data();
  da.grad_v = dgv.data();
  if (c.bias) {
    da.pos_bias = dpos.as<float>();
    da.time_bias = dtim.as<float>();
    da.timestamps = dts.as<std::int64_t>();
    da.grad_pos_bias = dgpos.as<float>();
    da.grad_time_bias = dgtim.as<float>();
  }
  hstu_attention_backward(Device::kCuda, s, da);
  cuda_synchronize();
  for (const auto& [name, dev, host] :
       {std::tuple{"dq", &dgq, &gq}, std::tuple{"dk", &dgk, &gk}, std::tuple{"dv", &dgv, &gv}}) {
    const auto ref = host->to_f32();
    testing::expect_close(download(*dev, c.dtype, n), ref, tol * testing::max_abs(ref), tol,
                          std::string(name) + " " + what);
  }
  if (c.bias) {
    testing::expect_close(dgpos.to_host<float>(), gpos, tol * testing::max_abs(gpos), tol,
                          "dpos " + what);
    testing::expect_close(dgtim.to_host<float>(), gtim, tol * testing::max_abs(gtim), tol,
                          "dtime " + what);
  }
}

// Lengths: empty, 1, not multiples of the 64-row tile, exactly a tile, several tiles.
const std::vector<std::int32_t> kMixedLengths{0, 1, 63, 64, 65, 130, 7, 0, 200};

TEST(HstuAttentionGpu, ForwardMatchesCpuForEachHeadDimAndType) {
  STRAIT_REQUIRE_GPU();
  for (const DType t : {DType::kBF16, DType::kF16})
    for (const int d : {32, 48, 64, 128, 256})
      run_attention_case({kMixedLengths, 2, d, t, false, false});
}

TEST(HstuAttentionGpu, ForwardWithRelativeBiasMatchesCpu) {
  STRAIT_REQUIRE_GPU();
  run_attention_case({kMixedLengths, 2, 64, DType::kBF16, true, false});
}

TEST(HstuAttentionGpu, ForwardAtMaxLength8192MatchesCpu) {
  STRAIT_REQUIRE_GPU();
  run_attention_case({{8192}, 1, 64, DType::kBF16, false, false});
}

TEST(HstuAttentionGpu, BackwardMatchesCpu) {
  STRAIT_REQUIRE_GPU();
  for (const DType t : {DType::kBF16, DType::kF16})
    for (const int d : {64, 128}) run_attention_case({kMixedLengths, 2, d, t, false, true});
  run_attention_case({kMixedLengths, 1, 256, DType::kBF16, false, true});
}

// The bundled HSTU shapes: 4 heads x 128 (hstu-large) and 2 heads x 256, sequences of
// thousands of tokens spanning many 64- and 128-row tiles, forward and backward.
TEST(HstuAttentionGpu, ForwardAndBackwardAtModelShapesMatchCpu) {
  STRAIT_REQUIRE_GPU();
  run_attention_case({{2000, 350, 1}, 4, 128, DType::kBF16, false, true});
  run_attention_case({{1200, 700, 33}, 2, 256, DType::kBF16, false, true});
}

TEST(HstuAttentionGpu, BackwardWithRelativeBiasMatchesCpu) {
  STRAIT_REQUIRE_GPU();
  run_attention_case({{5, 70, 1, 0, 129}, 2, 64, DType::kBF16, true, true});
}

TEST(HstuAttentionGpu, PaddedLayoutMatchesJaggedLayout) {
  STRAIT_REQUIRE_GPU();
  Rng rng(4);
  const std::vector<std::int32_t> lengths{3, 0, 70, 64};
  const auto off = testing::offsets_of(lengths);
  const int n = 70, row = 2 * 64;
  HstuAttentionShape s;
  s.batch = 4;
  s.heads = 2;
  s.head_dim = 64;
  s.max_seq_len = n;
  s.total_tokens = off.back();
  s.alpha = 0.1f;
  const std::size_t jn = static_cast<std::size_t>(off.back()) * row,
                    pn = static_cast<std::size_t>(4) * n * row;
  const HostTensor q = testing::random_tensor(DType::kBF16, jn, rng);
  JaggedShape js{4, n, row, off.back(), DType::kBF16};
  DeviceBuffer dq = upload(q), doff = DeviceBuffer::from_host(off), dqp(pn * 2), dout(jn * 2),
               doutp(pn * 2), dback(jn * 2);
  jagged_to_padded(Device::kCuda, js, dq.data(), doff.as<std::int32_t>(), dqp.data(), 3.0f);
  HstuAttentionForwardArgs a;
  a.q = a.k = a.v = dq.data();
  a.offsets = doff.as<std::int32_t>();
  a.out = dout.data();
  hstu_attention_forward(Device::kCuda, s, a);
  HstuAttentionShape ps = s;
  ps.layout = AttentionLayout::kPadded;
  ps.total_tokens = 4 * n;
  a.q = a.k = a.v = dqp.data();
  a.out = doutp.data();
  hstu_attention_forward(Device::kCuda, ps, a);
  padded_to_jagged(Device::kCuda, js, doutp.data(), doff.as<std::int32_t>(), dback.data());
  cuda_synchronize();
  testing::expect_close(download(dback, DType::kBF16, jn), download(dout, DType::kBF16, jn), 0.0f,
                        0.0f, "padded vs jagged");
}

// ids: all 5 (all_equal), skewed (rows * u^4: a few rows take most lookups), or uniform
// over the first 20 rows; bag sizes uniform in [0, max_pool).
void run_tbe_case(DType t, PoolingMode pooling, bool psw, bool all_equal, int dim, int batch = 33,
                  int max_pool = 40, bool skewed = false, float sum_tol = 1.0f) {
  Rng rng(static_cast<std::uint64_t>(dim) * 7 + (all_equal ? 1 : 0));
  const int tables = 3;
  const std::int64_t rows = 100;
  TbeShape s{tables, batch, dim, rows * tables, 0, t, pooling};
  HostTensor w = testing::random_tensor(t, static_cast<std::size_t>(s.total_rows) * dim, rng);
  std::vector<std::int64_t> table_rows{0, rows, 2 * rows, 3 * rows}, idx, off{0};
  for (int bag = 0; bag < tables * batch; ++bag) {
    const auto len = static_cast<int>(rng.uniform_int(static_cast<std::uint64_t>(max_pool)));
    for (int e = 0; e < len; ++e) {
      std::int64_t id = static_cast<std::int64_t>(rng.uniform_int(20));
      if (skewed)
        id = static_cast<std::int64_t>(static_cast<double>(rows) * std::pow(rng.uniform(), 4));
      idx.push_back(all_equal ? 5 : std::min<std::int64_t>(id, rows - 1));
    }
    off.push_back(static_cast<std::int64_t>(idx.size()));
  }
  s.num_indices = static_cast<std::int64_t>(idx.size());
  std::vector<float> weights_ps(idx.size());
  for (auto& x : weights_ps) x = static_cast<float>(rng.uniform() + 0.5);
  const std::size_t out_n = pooling == PoolingMode::kNone
                                ? idx.size() * dim
                                : static_cast<std::size_t>(batch) * tables * dim;
  const std::string what = fmt::format("{} pooling {} psw {} all_equal {} dim {}", dtype_name(t),
                                       static_cast<int>(pooling), psw, all_equal, dim);

  std::vector<float> out(out_n);
  TbeForwardArgs fa;
  fa.weights = w.data();
  fa.table_row_offsets = table_rows.data();
  fa.indices = idx.data();
  fa.offsets = off.data();
  fa.output = out.data();
  if (psw) fa.per_sample_weights = weights_ps.data();
  tbe_forward(Device::kCpu, s, fa);
  DeviceBuffer dw = upload(w), drows = DeviceBuffer::from_host(table_rows),
               didx = DeviceBuffer::from_host(idx), doff = DeviceBuffer::from_host(off),
               dpsw = DeviceBuffer::from_host(weights_ps), dout(out_n * 4);
  TbeForwardArgs ga = fa;
  ga.weights = dw.data();
  ga.table_row_offsets = drows.as<std::int64_t>();
  ga.indices = didx.as<std::int64_t>();
  ga.offsets = doff.as<std::int64_t>();
  ga.output = dout.as<float>();
  if (psw) ga.per_sample_weights = dpsw.as<float>();
  tbe_forward(Device::kCuda, s, ga);
  testing::expect_close(dout.to_host<float>(), out, 1e-5f * testing::max_abs(out), 1e-5f,
                        "tbe forward " + what);

  std::vector<float> go(out_n), state(static_cast<std::size_t>(s.total_rows), 0.0f);
  for (auto& x : go) x = static_cast<float>(rng.uniform() - 0.5);
  DeviceBuffer dgo = DeviceBuffer::from_host(go), dstate = DeviceBuffer::from_host(state);
  TbeBackwardArgs ba;
  ba.weights = w.data();
  ba.momentum = state.data();
  ba.table_row_offsets = table_rows.data();
  ba.indices = idx.data();
  ba.offsets = off.data();
  ba.grad_output = go.data();
  ba.learning_rate = 0.05f;
  if (psw) ba.per_sample_weights = weights_ps.data();
  tbe_backward(Device::kCpu, s, ba);
  TbeBackwardArgs da = ba;
  da.weights = dw.data();
  da.momentum = dstate.as<float>();
  da.table_row_offsets = drows.as<std::int64_t>();
  da.indices = didx.as<std::int64_t>();
  da.offsets = doff.as<std::int64_t>();
  da.grad_output = dgo.as<float>();
  if (psw) da.per_sample_weights = dpsw.as<float>();
  tbe_backward(Device::kCuda, s, da);
  const float tol = t == DType::kF32 ? 1e-5f : 1e-2f;
  testing::expect_close(dstate.to_host<float>(), state, sum_tol * 1e-5f * testing::max_abs(state),
                        sum_tol * 1e-4f, "adagrad state " + what);
  testing::expect_close(download(dw, t, w.size()), w.to_f32(), sum_tol * tol * 1e-2f, sum_tol * tol,
                        "updated weights " + what);
}

TEST(TbeGpu, ForwardAndRowWiseAdagradMatchCpu) {
  STRAIT_REQUIRE_GPU();
  for (const DType t : {DType::kF32, DType::kF16, DType::kBF16})
    for (const auto pooling : {PoolingMode::kSum, PoolingMode::kMean, PoolingMode::kNone})
      for (const int dim : {4, 7, 128})
        run_tbe_case(t, pooling, pooling != PoolingMode::kMean, false, dim);
}

TEST(TbeGpu, AllIdsEqualAreOneSegment) {
  STRAIT_REQUIRE_GPU();
  run_tbe_case(DType::kF32, PoolingMode::kSum, false, true, 64);
  run_tbe_case(DType::kBF16, PoolingMode::kMean, false, true, 64);
}

// Rows with more than 256 occurrences are summed in chunks of max(64, sqrt(count)) by
// many warps: ~650 occurrences per row above (chunks of 64), ~7,800 here (chunks of 89).
TEST(TbeGpu, HotRowsSummedInChunksMatchCpu) {
  STRAIT_REQUIRE_GPU();
  run_tbe_case(DType::kF32, PoolingMode::kSum, true, true, 128, 400);
  run_tbe_case(DType::kF16, PoolingMode::kNone, false, true, 32, 400);
  // dim 512 sums in sequence (the serial path); ~800 f32 gradients per row in chunks against
  // in order on the CPU differ by rounding up to 2e-5 relative (H200): 100x the tolerance.
  run_tbe_case(DType::kF32, PoolingMode::kNone, false, true, 512, 400, 40, false, 100.0f);
}

// The bundled models' embedding shapes: dims 64-256, pooling up to 100, skewed ids with
// many duplicates (so both the direct and the chunked update paths run). The hottest rows
// sum ~9,000 gradients, in chunks on CUDA and in order on the CPU: f32 rounding of sums
// that long allows 100x the default tolerance (1e-3 relative on f32 weights).
TEST(TbeGpu, ModelShapesWithSkewedIdsMatchCpu) {
  STRAIT_REQUIRE_GPU();
  for (const int dim : {64, 128, 256})
    run_tbe_case(DType::kF32, PoolingMode::kSum, false, false, dim, 200, 100, true, 100.0f);
  run_tbe_case(DType::kF16, PoolingMode::kSum, true, false, 256, 200, 100, true, 1.0f);
  run_tbe_case(DType::kBF16, PoolingMode::kMean, false, false, 128, 200, 100, true, 1.0f);
}

TEST(JaggedGpu, HelpersMatchCpu) {
  STRAIT_REQUIRE_GPU();
  Rng rng(8);
  const std::vector<std::int32_t> lengths{0, 5, 1, 9, 0, 3};
  const auto off = testing::offsets_of(lengths);
  JaggedShape s{6, 4, 3, off.back(), DType::kBF16};
  const HostTensor x =
      testing::random_tensor(DType::kBF16, static_cast<std::size_t>(off.back()) * 3, rng);
  const HostTensor dense = testing::random_tensor(DType::kBF16, 6 * 4 * 3, rng);
  DeviceBuffer dlen = DeviceBuffer::from_host(lengths), doff(off.size() * 4), dx = upload(x),
               dd = upload(dense), dpad(dense.bytes()), dback(x.bytes()), dsum(x.bytes());
  lengths_to_offsets(Device::kCuda, dlen.as<std::int32_t>(), doff.as<std::int32_t>(), 6);
  EXPECT_EQ(doff.to_host<std::int32_t>(), off);
  HostTensor pad(DType::kBF16, dense.size()), back(DType::kBF16, x.size()),
      sum(DType::kBF16, x.size());
  jagged_to_padded(Device::kCpu, s, x.data(), off.data(), pad.data(), 1.5f);
  padded_to_jagged(Device::kCpu, s, pad.data(), off.data(), back.data());
  jagged_dense_elementwise(Device::kCpu, s, ElementwiseOp::kMul, x.data(), off.data(), dense.data(),
                           sum.data());
  jagged_to_padded(Device::kCuda, s, dx.data(), doff.as<std::int32_t>(), dpad.data(), 1.5f);
  padded_to_jagged(Device::kCuda, s, dpad.data(), doff.as<std::int32_t>(), dback.data());
  jagged_dense_elementwise(Device::kCuda, s, ElementwiseOp::kMul, dx.data(),
                           doff.as<std::int32_t>(), dd.data(), dsum.data());
  cuda_synchronize();
  EXPECT_EQ(download(dpad, DType::kBF16, pad.size()), pad.to_f32());
  EXPECT_EQ(download(dback, DType::kBF16, back.size()), back.to_f32());
  EXPECT_EQ(download(dsum, DType::kBF16, sum.size()), sum.to_f32());
}

}  // namespace
}  // namespace strait::kernels
