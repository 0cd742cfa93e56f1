// HSTU attention forward on tensor cores (FlashAttention-2's structure, SiLU instead of
// softmax): one CTA of 4 warps per (query tile, head, sequence), each warp owning MT x 16
// query rows; K/V tiles of BN keys stream through a two-stage cp.async pipeline up to the
// diagonal (tiles above it are never visited); fragments come from shared memory by
// ldmatrix; SiLU is applied to the score fragments in registers (one tanh per score), and
// the causal mask and relative bias only on tiles that need them.

#include "kernels/cuda_check.hpp"
#include "kernels/detail/backends.hpp"
#include "kernels/detail/hstu_attention_cuda.cuh"

namespace strait::kernels::detail {
namespace {

template <int D, int MT, int BN>
struct ForwardTile {
  static constexpr int kRows = 16 * MT * 4;  // query rows per CTA
  static constexpr int kStride = D + 8;
  static constexpr int kSmemBytes = (kRows + 4 * BN) * kStride * 2;  // Q + 2 stages of K, V
};

// Long: one kernel body, its shared-memory stages and register tiles live across the loop.
template <typename T, int D, int MT, int BN>
__global__ void __launch_bounds__(kAttnThreads, 2) hstu_forward_kernel(const AttnParams p) {
  using Tile = ForwardTile<D, MT, BN>;
  constexpr int kS = Tile::kStride;
  constexpr int kBM = Tile::kRows;
  extern __shared__ uint4 smem_raw[];
  T* q_s = reinterpret_cast<T*>(smem_raw);
  T* kv_s = q_s + kBM * kS;  // stage st: K at kv_s + 2 st BN kS, V right after it
  __shared__ std::int64_t ts_k[2][BN];

  const int b = blockIdx.x;
  const int h = blockIdx.y;
  const SeqGeometry sq = seq_geometry(p, b);
  const int m0 = (gridDim.z - 1 - blockIdx.z) * kBM;  // longest rows first
  if (m0 >= sq.extent) return;

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int g = lane / 4, t = lane % 4;
  const int wr0 = warp * 16 * MT;  // the warp's first row in the tile
  const bool has_bias = p.pos_bias != nullptr || p.time_bias != nullptr;
  std::int64_t ts_i[MT][2] = {};
  if (p.time_bias != nullptr) {
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
      for (int hf = 0; hf < 2; ++hf) {
        const int i = m0 + wr0 + mt * 16 + g + hf * 8;
        if (i < sq.len) ts_i[mt][hf] = p.timestamps[sq.tok0 + i];
      }
  }

  const int n_end = p.causal ? min(sq.extent, m0 + kBM) : sq.extent;
  const int n_tiles = (n_end + BN - 1) / BN;
  auto load_kv = [&](int jt) {
    load_stage<T, D, BN>(kv_s, jt & 1, p.k, p.v, jt * BN, ts_k, sq, h, p);
  };
  load_rows<T, D, kBM>(q_s, p.q, sq.tok0, m0, sq.len, h, p);
  load_kv(0);
  cp_async_commit();

  float o[MT][D / 8][4];
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int nt = 0; nt < D / 8; ++nt)
      o[mt][nt][0] = o[mt][nt][1] = o[mt][nt][2] = o[mt][nt][3] = 0;

  const float half_alpha = 0.5f * p.alpha;
  for (int jt = 0; jt < n_tiles; ++jt) {
    __syncthreads();  // every warp is done with the stage the next prefetch overwrites
    if (jt + 1 < n_tiles) load_kv(jt + 1);
    cp_async_commit();
    cp_async_wait<1>();
    __syncthreads();
    const int n0 = jt * BN;
    const T* k_s = kv_s + (jt & 1) * 2 * BN * kS;
    const T* v_s = k_s + BN * kS;

    float s[MT][BN / 8][4];
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
      for (int nt = 0; nt < BN / 8; ++nt)
        s[mt][nt][0] = s[mt][nt][1] = s[mt][nt][2] = s[mt][nt][3] = 0;
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
      std::uint32_t a[MT][4];
#pragma unroll
      for (int mt = 0; mt < MT; ++mt) load_a(a[mt], q_s, kS, wr0 + mt * 16, kk * 16, lane);
#pragma unroll
      for (int np = 0; np < BN / 16; ++np) {
        std::uint32_t bf[4];
        load_b_nk_x2(bf, k_s, kS, np * 16, kk * 16, lane);
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) {
          MmaType<T>::mma(s[mt][2 * np], a[mt], bf);
          MmaType<T>::mma(s[mt][2 * np + 1], a[mt], bf + 2);
        }
      }
    }

    // p = silu(z) / N = h (1 + tanh h) / N with h = z / 2. Keys past the sequence have zero
    // K and V rows, so only the causal mask and the bias need the per-pair path.
    const bool plain = !has_bias && (!p.causal || n0 + BN - 1 <= m0 + wr0);
    std::uint32_t pa[MT][BN / 16][4];
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
      for (int nt = 0; nt < BN / 8; ++nt) {
        float pv[4];
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          if (plain) {
            pv[e] = silu_over_n(half_alpha * s[mt][nt][e], p.inv_n);
          } else {
            const int jl = nt * 8 + 2 * t + (e & 1);
            pv[e] = masked_silu_over_n(p, s[mt][nt][e], m0 + wr0 + mt * 16 + g + (e >> 1) * 8,
                                       n0 + jl, sq.len, ts_i[mt][e >> 1], ts_k[jt & 1][jl]);
          }
        }
        // C fragments of n-tiles 2kk, 2kk+1 form the A fragment of k-step kk.
        pa[mt][nt / 2][(nt % 2) * 2 + 0] = MmaType<T>::pack(pv[0], pv[1]);
        pa[mt][nt / 2][(nt % 2) * 2 + 1] = MmaType<T>::pack(pv[2], pv[3]);
      }
    }

#pragma unroll
    for (int kk = 0; kk < BN / 16; ++kk) {
#pragma unroll
      for (int dp = 0; dp < D / 16; ++dp) {
        std::uint32_t bf[4];
        load_b_kn_x2(bf, v_s, kS, kk * 16, dp * 16, lane);
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) {
          MmaType<T>::mma(o[mt][2 * dp], pa[mt][kk], bf);
          MmaType<T>::mma(o[mt][2 * dp + 1], pa[mt][kk], bf + 2);
        }
      }
    }
  }

  T* out = static_cast<T*>(p.out);
#pragma unroll
  for (int mt = 0; mt < MT; ++mt) {
    const int i0 = m0 + wr0 + mt * 16 + g, i1 = i0 + 8;
#pragma unroll
    for (int nt = 0; nt < D / 8; ++nt) {
      const int c = nt * 8 + 2 * t;
      if (c >= p.head_dim) break;
      if (i0 < sq.extent)
        *reinterpret_cast<std::uint32_t*>(out + ((sq.tok0 + i0) * p.heads + h) * p.head_dim + c) =
            MmaType<T>::pack(o[mt][nt][0], o[mt][nt][1]);
      if (i1 < sq.extent)
        *reinterpret_cast<std::uint32_t*>(out + ((sq.tok0 + i1) * p.heads + h) * p.head_dim + c) =
            MmaType<T>::pack(o[mt][nt][2], o[mt][nt][3]);
    }
  }
}

template <typename T, int D, int MT, int BN>
void launch_forward(const AttnParams& p, int batch, cudaStream_t stream) {
  using Tile = ForwardTile<D, MT, BN>;
  auto* kernel = hstu_forward_kernel<T, D, MT, BN>;
  STRAIT_CUDA_CHECK(
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Tile::kSmemBytes));
  const dim3 grid(batch, p.heads, (p.max_seq_len + Tile::kRows - 1) / Tile::kRows);
  kernel<<<grid, kAttnThreads, Tile::kSmemBytes, stream>>>(p);
  STRAIT_CUDA_CHECK(cudaGetLastError());
}

template <typename T>
void dispatch_forward(const AttnParams& p, int batch, cudaStream_t stream) {
  if (p.head_dim <= 64)
    launch_forward<T, 64, 2, 64>(p, batch, stream);
  else if (p.head_dim <= 128)
    launch_forward<T, 128, 2, 64>(p, batch, stream);
  else
    launch_forward<T, 256, 1, 32>(p, batch, stream);
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
  if (launch_forward_sm90(p, s.batch, s.dtype == DType::kBF16, st)) return;
  if (s.dtype == DType::kBF16)
    dispatch_forward<__nv_bfloat16>(p, s.batch, st);
  else
    dispatch_forward<__half>(p, s.batch, st);
}

}  // namespace strait::kernels::detail
