// HSTU attention forward on tensor cores: one CTA per (query tile of 64, head, sequence),
// 4 warps of 16 query rows, a loop over key tiles of BN up to the diagonal (tiles above it
// are never visited), SiLU applied to the score fragments in registers.

#include "kernels/detail/backends.hpp"
#include "kernels/detail/cuda_check.hpp"
#include "kernels/detail/hstu_attention_cuda.cuh"

namespace strait::kernels::detail {
namespace {

template <typename T, int D, int BN>
__global__ void __launch_bounds__(kAttnThreads) hstu_forward_kernel(const AttnParams p) {
  constexpr int kS = D + 8;
  extern __shared__ uint4 smem_raw[];
  T* q_s = reinterpret_cast<T*>(smem_raw);
  T* k_s = q_s + kAttnRows * kS;
  T* v_s = k_s + BN * kS;
  __shared__ std::int64_t ts_k[BN];

  const int b = blockIdx.z;
  const int h = blockIdx.y;
  const SeqGeometry sq = seq_geometry(p, b);
  const int m0 = (gridDim.x - 1 - blockIdx.x) * kAttnRows;  // longest rows first
  if (m0 >= sq.extent) return;

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int g = lane / 4, t = lane % 4;
  const int i0 = m0 + warp * 16 + g, i1 = i0 + 8;
  std::int64_t ts_i0 = 0, ts_i1 = 0;
  if (p.time_bias != nullptr) {
    if (i0 < sq.len) ts_i0 = p.timestamps[sq.tok0 + i0];
    if (i1 < sq.len) ts_i1 = p.timestamps[sq.tok0 + i1];
  }

  load_rows<T, D>(q_s, p.q, sq.tok0, m0, kAttnRows, sq.len, h, p);

  float o[D / 8][4];
#pragma unroll
  for (int nt = 0; nt < D / 8; ++nt) o[nt][0] = o[nt][1] = o[nt][2] = o[nt][3] = 0.0f;

  const int n_end = p.causal ? min(sq.extent, m0 + kAttnRows) : sq.extent;
  for (int n0 = 0; n0 < n_end; n0 += BN) {
    __syncthreads();  // the previous tile's K, V are no longer read
    load_rows<T, D>(k_s, p.k, sq.tok0, n0, BN, sq.len, h, p);
    load_rows<T, D>(v_s, p.v, sq.tok0, n0, BN, sq.len, h, p);
    if (p.time_bias != nullptr && threadIdx.x < BN)
      ts_k[threadIdx.x] = n0 + static_cast<int>(threadIdx.x) < sq.len
                              ? p.timestamps[sq.tok0 + n0 + threadIdx.x]
                              : 0;
    __syncthreads();

    float s[BN / 8][4];
#pragma unroll
    for (int nt = 0; nt < BN / 8; ++nt) s[nt][0] = s[nt][1] = s[nt][2] = s[nt][3] = 0.0f;
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
      std::uint32_t a[4];
      load_a(a, q_s, kS, warp * 16, kk * 16, g, t);
#pragma unroll
      for (int nt = 0; nt < BN / 8; ++nt) {
        std::uint32_t bf[2];
        load_b_nk(bf, k_s, kS, nt * 8, kk * 16, g, t);
        MmaType<T>::mma(s[nt], a, bf);
      }
    }

    std::uint32_t pa[BN / 16][4];
#pragma unroll
    for (int nt = 0; nt < BN / 8; ++nt) {
      float pv[4];
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int i = e < 2 ? i0 : i1;
        const int jl = nt * 8 + 2 * t + (e & 1);
        const int j = n0 + jl;
        float val = 0.0f;
        if (pair_valid(p, i, j, sq.len)) {
          const float z = pre_activation(p, s[nt][e], i, j, e < 2 ? ts_i0 : ts_i1,
                                         p.time_bias != nullptr ? ts_k[jl] : 0);
          val = z * sigmoid(z) * p.inv_n;
        }
        pv[e] = val;
      }
      // C fragments of n-tiles 2kk, 2kk+1 form the A fragment of k-step kk.
      const int kk = nt / 2;
      const int half = nt % 2;
      pa[kk][half * 2 + 0] = MmaType<T>::pack(pv[0], pv[1]);
      pa[kk][half * 2 + 1] = MmaType<T>::pack(pv[2], pv[3]);
    }

#pragma unroll
    for (int kk = 0; kk < BN / 16; ++kk) {
#pragma unroll
      for (int nt = 0; nt < D / 8; ++nt) {
        std::uint32_t bf[2];
        load_b_kn(bf, v_s, kS, kk * 16, nt * 8, g, t);
        MmaType<T>::mma(o[nt], pa[kk], bf);
      }
    }
  }

  T* out = static_cast<T*>(p.out);
#pragma unroll
  for (int nt = 0; nt < D / 8; ++nt) {
    const int c = nt * 8 + 2 * t;
    if (c >= p.head_dim) break;
    if (i0 < sq.extent)
      *reinterpret_cast<std::uint32_t*>(out + ((sq.tok0 + i0) * p.heads + h) * p.head_dim + c) =
          MmaType<T>::pack(o[nt][0], o[nt][1]);
    if (i1 < sq.extent)
      *reinterpret_cast<std::uint32_t*>(out + ((sq.tok0 + i1) * p.heads + h) * p.head_dim + c) =
          MmaType<T>::pack(o[nt][2], o[nt][3]);
  }
}

template <typename T, int D, int BN>
void launch_forward(const AttnParams& p, int batch, cudaStream_t stream) {
  constexpr int kSmem = (kAttnRows + 2 * BN) * (D + 8) * 2;
  auto* kernel = hstu_forward_kernel<T, D, BN>;
  STRAIT_CUDA_CHECK(
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem));
  const dim3 grid((p.max_seq_len + kAttnRows - 1) / kAttnRows, p.heads, batch);
  kernel<<<grid, kAttnThreads, kSmem, stream>>>(p);
  STRAIT_CUDA_CHECK(cudaGetLastError());
}

template <typename T>
void dispatch_forward(const AttnParams& p, int batch, cudaStream_t stream) {
  if (p.head_dim <= 64)
    launch_forward<T, 64, 64>(p, batch, stream);
  else if (p.head_dim <= 128)
    launch_forward<T, 128, 64>(p, batch, stream);
  else
    launch_forward<T, 256, 32>(p, batch, stream);
}

}  // namespace

AttnParams make_attn_params(const HstuAttentionShape& s) {
  AttnParams p{};
  p.heads = s.heads;
  p.head_dim = s.head_dim;
  p.max_seq_len = s.max_seq_len;
  p.num_pos_buckets = s.num_pos_buckets;
  p.num_time_buckets = s.num_time_buckets;
  p.alpha = s.alpha;
  p.inv_n = 1.0f / static_cast<float>(s.max_seq_len);
  p.padded = s.layout == AttentionLayout::kPadded;
  p.causal = s.causal;
  return p;
}

void hstu_attention_forward_cuda(const HstuAttentionShape& s, const HstuAttentionForwardArgs& a,
                                 void* stream) {
  if (s.batch == 0 || s.total_tokens == 0) return;
  AttnParams p = make_attn_params(s);
  p.q = a.q;
  p.k = a.k;
  p.v = a.v;
  p.out = a.out;
  p.offsets = a.offsets;
  p.pos_bias = a.pos_bias;
  p.time_bias = a.time_bias;
  p.timestamps = a.timestamps;
  const auto st = static_cast<cudaStream_t>(stream);
  if (s.dtype == DType::kBF16)
    dispatch_forward<__nv_bfloat16>(p, s.batch, st);
  else
    dispatch_forward<__half>(p, s.batch, st);
}

}  // namespace strait::kernels::detail
