// CPU reference of HSTU attention: a direct loop over valid (i, j) pairs in f32, one
// (sequence, head) slice at a time, gathered into contiguous f32 rows first.

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <vector>

#include "kernels/detail/backends.hpp"
#include "kernels/detail/element.hpp"

namespace strait::kernels::detail {
namespace {

struct Slice {
  std::int64_t start = 0;  // first token row
  int len = 0;             // valid length L
};

Slice slice_of(const HstuAttentionShape& s, const std::int32_t* offsets, int b) {
  const int len = offsets[b + 1] - offsets[b];
  const std::int64_t start = s.layout == AttentionLayout::kJagged
                                 ? offsets[b]
                                 : static_cast<std::int64_t>(b) * s.max_seq_len;
  return {start, len};
}

// Copies rows [start, start + len) of head h into dst[len][head_dim] as f32.
void gather(const HstuAttentionShape& s, const void* src, Slice sl, int h,
            std::vector<float>& dst) {
  const int d = s.head_dim;
  dst.assign(static_cast<std::size_t>(sl.len) * d, 0.0f);
  for (int i = 0; i < sl.len; ++i) {
    const std::size_t row = (static_cast<std::size_t>(sl.start + i) * s.heads + h) * d;
    for (int c = 0; c < d; ++c)
      dst[static_cast<std::size_t>(i) * d + c] = load_element(src, s.dtype, row + c);
  }
}

void scatter(const HstuAttentionShape& s, void* dst, Slice sl, int h,
             const std::vector<float>& src) {
  const int d = s.head_dim;
  for (int i = 0; i < sl.len; ++i) {
    const std::size_t row = (static_cast<std::size_t>(sl.start + i) * s.heads + h) * d;
    for (int c = 0; c < d; ++c)
      store_element(dst, s.dtype, row + c, src[static_cast<std::size_t>(i) * d + c]);
  }
}

// Zeroes the padded rows [len, max_seq_len) of sequence b (kPadded layout only).
void zero_padding(const HstuAttentionShape& s, void* dst, Slice sl) {
  if (s.layout != AttentionLayout::kPadded) return;
  const std::size_t row_elems = static_cast<std::size_t>(s.heads) * s.head_dim;
  for (int i = sl.len; i < s.max_seq_len; ++i)
    for (std::size_t c = 0; c < row_elems; ++c)
      store_element(dst, s.dtype, static_cast<std::size_t>(sl.start + i) * row_elems + c, 0.0f);
}

int pos_bucket(const HstuAttentionShape& s, int i, int j) {
  return std::min(std::abs(i - j), s.num_pos_buckets - 1);
}

int time_bucket(const HstuAttentionShape& s, const std::int64_t* ts, Slice sl, int i, int j) {
  const std::int64_t dt = ts[sl.start + i] - ts[sl.start + j];
  const auto mag = static_cast<std::uint64_t>(dt < 0 ? -dt : dt);
  return std::min(static_cast<int>(std::bit_width(mag)), s.num_time_buckets - 1);
}

float bias(const HstuAttentionShape& s, const float* pos, const float* tim, const std::int64_t* ts,
           Slice sl, int i, int j) {
  float r = 0.0f;
  if (pos != nullptr) r += pos[pos_bucket(s, i, j)];
  if (tim != nullptr) r += tim[time_bucket(s, ts, sl, i, j)];
  return r;
}

float dot(const float* a, const float* b, int n) {
  float acc = 0.0f;
  for (int c = 0; c < n; ++c) acc += a[c] * b[c];
  return acc;
}

float sigmoid(float z) { return 1.0f / (1.0f + std::exp(-z)); }

}  // namespace

void hstu_attention_forward_cpu(const HstuAttentionShape& s, const HstuAttentionForwardArgs& a) {
  const int d = s.head_dim;
  const float inv_n = 1.0f / static_cast<float>(s.max_seq_len);
  std::vector<float> q, k, v, o;
  for (int b = 0; b < s.batch; ++b) {
    const Slice sl = slice_of(s, a.offsets, b);
    zero_padding(s, a.out, sl);
    for (int h = 0; h < s.heads; ++h) {
      gather(s, a.q, sl, h, q);
      gather(s, a.k, sl, h, k);
      gather(s, a.v, sl, h, v);
      o.assign(q.size(), 0.0f);
      for (int i = 0; i < sl.len; ++i) {
        float* oi = &o[static_cast<std::size_t>(i) * d];
        const int jend = s.causal ? i + 1 : sl.len;
        for (int j = 0; j < jend; ++j) {
          const float z = s.alpha * dot(&q[static_cast<std::size_t>(i) * d],
                                        &k[static_cast<std::size_t>(j) * d], d) +
                          bias(s, a.pos_bias, a.time_bias, a.timestamps, sl, i, j);
          const float p = z * sigmoid(z) * inv_n;
          const float* vj = &v[static_cast<std::size_t>(j) * d];
          for (int c = 0; c < d; ++c) oi[c] += p * vj[c];
        }
      }
      scatter(s, a.out, sl, h, o);
    }
  }
}

void hstu_attention_backward_cpu(const HstuAttentionShape& s, const HstuAttentionBackwardArgs& a) {
  const int d = s.head_dim;
  const float inv_n = 1.0f / static_cast<float>(s.max_seq_len);
  std::vector<double> gpos(a.grad_pos_bias != nullptr ? s.num_pos_buckets : 0, 0.0);
  std::vector<double> gtime(a.grad_time_bias != nullptr ? s.num_time_buckets : 0, 0.0);
  std::vector<float> q, k, v, go, dq, dk, dv;
  for (int b = 0; b < s.batch; ++b) {
    const Slice sl = slice_of(s, a.offsets, b);
    zero_padding(s, a.grad_q, sl);
    zero_padding(s, a.grad_k, sl);
    zero_padding(s, a.grad_v, sl);
    for (int h = 0; h < s.heads; ++h) {
      gather(s, a.q, sl, h, q);
      gather(s, a.k, sl, h, k);
      gather(s, a.v, sl, h, v);
      gather(s, a.grad_out, sl, h, go);
      dq.assign(q.size(), 0.0f);
      dk.assign(q.size(), 0.0f);
      dv.assign(q.size(), 0.0f);
      for (int i = 0; i < sl.len; ++i) {
        const float* qi = &q[static_cast<std::size_t>(i) * d];
        const float* goi = &go[static_cast<std::size_t>(i) * d];
        float* dqi = &dq[static_cast<std::size_t>(i) * d];
        const int jend = s.causal ? i + 1 : sl.len;
        for (int j = 0; j < jend; ++j) {
          const float* kj = &k[static_cast<std::size_t>(j) * d];
          const float* vj = &v[static_cast<std::size_t>(j) * d];
          const float z =
              s.alpha * dot(qi, kj, d) + bias(s, a.pos_bias, a.time_bias, a.timestamps, sl, i, j);
          const float sg = sigmoid(z);
          const float p = z * sg * inv_n;
          const float dp = dot(goi, vj, d);
          // d silu(z)/dz = sg * (1 + z * (1 - sg)).
          const float dz = dp * sg * (1.0f + z * (1.0f - sg)) * inv_n;
          float* dkj = &dk[static_cast<std::size_t>(j) * d];
          float* dvj = &dv[static_cast<std::size_t>(j) * d];
          for (int c = 0; c < d; ++c) {
            dvj[c] += p * goi[c];
            dqi[c] += s.alpha * dz * kj[c];
            dkj[c] += s.alpha * dz * qi[c];
          }
          if (!gpos.empty()) gpos[static_cast<std::size_t>(pos_bucket(s, i, j))] += dz;
          if (!gtime.empty())
            gtime[static_cast<std::size_t>(time_bucket(s, a.timestamps, sl, i, j))] += dz;
        }
      }
      scatter(s, a.grad_q, sl, h, dq);
      scatter(s, a.grad_k, sl, h, dk);
      scatter(s, a.grad_v, sl, h, dv);
    }
  }
  for (std::size_t i = 0; i < gpos.size(); ++i) a.grad_pos_bias[i] = static_cast<float>(gpos[i]);
  for (std::size_t i = 0; i < gtime.size(); ++i) a.grad_time_bias[i] = static_cast<float>(gtime[i]);
}

}  // namespace strait::kernels::detail
