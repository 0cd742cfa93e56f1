// HSTU attention backward on tensor cores, in two deterministic kernels (no atomics on
// dQ/dK/dV): dQ per query tile (recomputes S and dP), dK and dV per key tile (computes
// S^T and dP^T with keys as rows, so P^T and dZ^T feed the next mma from registers).
//   p = silu(z) / N, dz = (dO . v) * silu'(z) / N, silu'(z) = sig(z) (1 + z (1 - sig(z)))
//   dV = P^T dO, dQ = alpha dZ K, dK = alpha dZ^T Q, d rab[bucket] += dz (global atomics).

#include "kernels/cuda_check.hpp"
#include "kernels/detail/backends.hpp"
#include "kernels/detail/hstu_attention_cuda.cuh"

namespace strait::kernels::detail {
namespace {

template <int N>
__device__ __forceinline__ void zero_acc(float (&x)[N][4]) {
#pragma unroll
  for (int i = 0; i < N; ++i) x[i][0] = x[i][1] = x[i][2] = x[i][3] = 0.0f;
}

// acc[16 x BN] += x_s[r0.., :] * y_s[0..BN, :]^T over D (both row-major, stride D + 8).
template <typename T, int D, int BN>
__device__ __forceinline__ void mma_abt(float (&acc)[BN / 8][4], const T* x_s, int r0, const T* y_s,
                                        int lane) {
  constexpr int kS = D + 8;
#pragma unroll
  for (int kk = 0; kk < D / 16; ++kk) {
    std::uint32_t a[4];
    load_a(a, x_s, kS, r0, kk * 16, lane);
#pragma unroll
    for (int np = 0; np < BN / 16; ++np) {
      std::uint32_t bf[4];
      load_b_nk_x2(bf, y_s, kS, np * 16, kk * 16, lane);
      MmaType<T>::mma(acc[2 * np], a, bf);
      MmaType<T>::mma(acc[2 * np + 1], a, bf + 2);
    }
  }
}

// acc[16 x D] += a(registers, 16 x BN) * y_s[0..BN, :].
template <typename T, int D, int BN>
__device__ __forceinline__ void mma_ab(float (&acc)[D / 8][4], const std::uint32_t (&a)[BN / 16][4],
                                       const T* y_s, int lane) {
  constexpr int kS = D + 8;
#pragma unroll
  for (int kk = 0; kk < BN / 16; ++kk) {
#pragma unroll
    for (int dp = 0; dp < D / 16; ++dp) {
      std::uint32_t bf[4];
      load_b_kn_x2(bf, y_s, kS, kk * 16, dp * 16, lane);
      MmaType<T>::mma(acc[2 * dp], a[kk], bf);
      MmaType<T>::mma(acc[2 * dp + 1], a[kk], bf + 2);
    }
  }
}

template <typename T, int N>
__device__ __forceinline__ void to_a_frag(std::uint32_t (&a)[N / 2][4], int nt,
                                          const float (&v)[4]) {
  a[nt / 2][(nt % 2) * 2 + 0] = MmaType<T>::pack(v[0], v[1]);
  a[nt / 2][(nt % 2) * 2 + 1] = MmaType<T>::pack(v[2], v[3]);
}

template <typename T, int D>
__device__ __forceinline__ void store_rows(void* dst_v, const float (&acc)[D / 8][4], float scale,
                                           const SeqGeometry& sq, int r0, int r1, int h,
                                           const AttnParams& p, int t) {
  T* dst = static_cast<T*>(dst_v);
#pragma unroll
  for (int nt = 0; nt < D / 8; ++nt) {
    const int c = nt * 8 + 2 * t;
    if (c >= p.head_dim) break;
    if (r0 < sq.extent)
      *reinterpret_cast<std::uint32_t*>(dst + ((sq.tok0 + r0) * p.heads + h) * p.head_dim + c) =
          MmaType<T>::pack(acc[nt][0] * scale, acc[nt][1] * scale);
    if (r1 < sq.extent)
      *reinterpret_cast<std::uint32_t*>(dst + ((sq.tok0 + r1) * p.heads + h) * p.head_dim + c) =
          MmaType<T>::pack(acc[nt][2] * scale, acc[nt][3] * scale);
  }
}

template <typename T, int D, int BN>
__global__ void __launch_bounds__(kAttnThreads) hstu_backward_dq_kernel(const AttnParams p) {
  constexpr int kS = D + 8;
  extern __shared__ uint4 smem_raw[];
  T* q_s = reinterpret_cast<T*>(smem_raw);
  T* do_s = q_s + kAttnRows * kS;
  T* kv_s = do_s + kAttnRows * kS;  // stage st: K at kv_s + 2 st BN kS, V right after it
  __shared__ std::int64_t ts_k_all[2][BN];

  const int b = blockIdx.x, h = blockIdx.y;
  const SeqGeometry sq = seq_geometry(p, b);
  const int m0 = (gridDim.z - 1 - blockIdx.z) * kAttnRows;
  if (m0 >= sq.extent) return;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int g = lane / 4, t = lane % 4;
  const int i0 = m0 + warp * 16 + g, i1 = i0 + 8;
  const bool has_bias = p.pos_bias != nullptr || p.time_bias != nullptr;
  std::int64_t ts_i0 = 0, ts_i1 = 0;
  if (p.time_bias != nullptr) {
    if (i0 < sq.len) ts_i0 = p.timestamps[sq.tok0 + i0];
    if (i1 < sq.len) ts_i1 = p.timestamps[sq.tok0 + i1];
  }
  const int n_end = p.causal ? min(sq.extent, m0 + kAttnRows) : sq.extent;
  const int n_tiles = (n_end + BN - 1) / BN;
  auto load_kv = [&](int jt) {
    load_stage<T, D, BN>(kv_s, jt & 1, p.k, p.v, jt * BN, ts_k_all, sq, h, p);
  };
  load_rows<T, D, kAttnRows>(q_s, p.q, sq.tok0, m0, sq.len, h, p);
  load_rows<T, D, kAttnRows>(do_s, p.grad_out, sq.tok0, m0, sq.len, h, p);
  load_kv(0);
  cp_async_commit();

  float dq[D / 8][4];
  zero_acc(dq);
  for (int jt = 0; jt < n_tiles; ++jt) {
    __syncthreads();
    if (jt + 1 < n_tiles) load_kv(jt + 1);
    cp_async_commit();
    cp_async_wait<1>();
    __syncthreads();
    const int n0 = jt * BN;
    const T* k_s = kv_s + (jt & 1) * 2 * BN * kS;
    const T* v_s = k_s + BN * kS;
    const std::int64_t* ts_k = ts_k_all[jt & 1];

    float s[BN / 8][4], dp[BN / 8][4];
    zero_acc(s);
    zero_acc(dp);
    mma_abt<T, D, BN>(s, q_s, warp * 16, k_s, lane);
    mma_abt<T, D, BN>(dp, do_s, warp * 16, v_s, lane);
    // Rows and keys past the sequence are zero in shared memory, so their dz is 0 without
    // a test; only the causal mask and the bias need the per-pair path.
    const bool plain = !has_bias && (!p.causal || n0 + BN - 1 <= m0 + warp * 16);
    std::uint32_t dz_a[BN / 16][4];
#pragma unroll
    for (int nt = 0; nt < BN / 8; ++nt) {
      float dz[4];
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int i = e < 2 ? i0 : i1;
        const int jl = nt * 8 + 2 * t + (e & 1);
        const int j = n0 + jl;
        float val = 0.0f;
        if (plain || pair_valid(p, i, j, sq.len)) {
          const float z = plain ? p.alpha * s[nt][e]
                                : pre_activation(p, s[nt][e], i, j, e < 2 ? ts_i0 : ts_i1,
                                                 p.time_bias != nullptr ? ts_k[jl] : 0);
          const float sg = sigmoid(z);
          val = dp[nt][e] * sg * (1.0f + z * (1.0f - sg)) * p.inv_n;
        }
        dz[e] = val;
      }
      to_a_frag<T, BN / 8>(dz_a, nt, dz);
    }
    mma_ab<T, D, BN>(dq, dz_a, k_s, lane);
  }
  store_rows<T, D>(p.grad_q, dq, p.alpha, sq, i0, i1, h, p, t);
}

// kParts: kDk | kDv. At head_dim 256 one warp cannot hold both 16 x 256 accumulators in
// registers (they spill), so dK and dV run as two kernels that each recompute S^T.
constexpr int kDk = 1, kDv = 2;

// Long: one kernel body, its shared-memory stages and register tiles live across the loop.
template <typename T, int D, int BN, int kParts>
__global__ void __launch_bounds__(kAttnThreads) hstu_backward_dkdv_kernel(const AttnParams p) {
  constexpr int kS = D + 8;
  extern __shared__ uint4 smem_raw[];
  T* k_s = reinterpret_cast<T*>(smem_raw);
  T* v_s = k_s + kAttnRows * kS;
  T* qd_s = v_s + kAttnRows * kS;  // stage st: Q at qd_s + 2 st BN kS, dO right after it
  __shared__ std::int64_t ts_q_all[2][BN];

  const int b = blockIdx.x, h = blockIdx.y;
  const SeqGeometry sq = seq_geometry(p, b);
  const int n0 = blockIdx.z * kAttnRows;  // key tile; the first ones have the most queries
  if (n0 >= sq.extent) return;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int g = lane / 4, t = lane % 4;
  const int j0 = n0 + warp * 16 + g, j1 = j0 + 8;
  // Bias gradients are summed only on the per-pair path.
  const bool has_bias = p.pos_bias != nullptr || p.time_bias != nullptr ||
                        p.grad_pos_bias != nullptr || p.grad_time_bias != nullptr;
  std::int64_t ts_j0 = 0, ts_j1 = 0;
  if (p.time_bias != nullptr) {
    if (j0 < sq.len) ts_j0 = p.timestamps[sq.tok0 + j0];
    if (j1 < sq.len) ts_j1 = p.timestamps[sq.tok0 + j1];
  }
  const int m_begin = p.causal ? n0 : 0;
  const int m_tiles = (sq.extent - m_begin + BN - 1) / BN;
  auto load_qdo = [&](int it) {
    load_stage<T, D, BN>(qd_s, it & 1, p.q, p.grad_out, m_begin + it * BN, ts_q_all, sq, h, p);
  };
  load_rows<T, D, kAttnRows>(k_s, p.k, sq.tok0, n0, sq.len, h, p);
  load_rows<T, D, kAttnRows>(v_s, p.v, sq.tok0, n0, sq.len, h, p);
  load_qdo(0);
  cp_async_commit();

  float dk[D / 8][4], dv[D / 8][4];
  zero_acc(dk);
  zero_acc(dv);
  for (int it = 0; it < m_tiles; ++it) {
    __syncthreads();
    if (it + 1 < m_tiles) load_qdo(it + 1);
    cp_async_commit();
    cp_async_wait<1>();
    __syncthreads();
    const int m0 = m_begin + it * BN;
    const T* q_s = qd_s + (it & 1) * 2 * BN * kS;
    const T* do_s = q_s + BN * kS;
    const std::int64_t* ts_q = ts_q_all[it & 1];

    float st[BN / 8][4], dpt[BN / 8][4];  // rows: keys j, columns: queries i
    zero_acc(st);
    zero_acc(dpt);
    mma_abt<T, D, BN>(st, k_s, warp * 16, q_s, lane);
    if constexpr ((kParts & kDk) != 0) mma_abt<T, D, BN>(dpt, v_s, warp * 16, do_s, lane);
    const bool plain = !has_bias && (!p.causal || m0 >= n0 + warp * 16 + 15);
    std::uint32_t p_a[BN / 16][4], dz_a[BN / 16][4];
#pragma unroll
    for (int nt = 0; nt < BN / 8; ++nt) {
      float pv[4], dz[4];
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int j = e < 2 ? j0 : j1;
        const int il = nt * 8 + 2 * t + (e & 1);
        const int i = m0 + il;
        pv[e] = 0.0f;
        dz[e] = 0.0f;
        if (plain || pair_valid(p, i, j, sq.len)) {
          const float z =
              plain ? p.alpha * st[nt][e]
                    : pre_activation(p, st[nt][e], i, j, p.time_bias != nullptr ? ts_q[il] : 0,
                                     e < 2 ? ts_j0 : ts_j1);
          const float sg = sigmoid(z);
          pv[e] = z * sg * p.inv_n;
          if constexpr ((kParts & kDk) == 0) continue;
          dz[e] = dpt[nt][e] * sg * (1.0f + z * (1.0f - sg)) * p.inv_n;
          if (p.grad_pos_bias != nullptr)
            atomicAdd(p.grad_pos_bias + pos_bucket(i, j, p.num_pos_buckets), dz[e]);
          if (p.grad_time_bias != nullptr)
            atomicAdd(p.grad_time_bias + time_bucket((p.time_bias != nullptr ? ts_q[il] : 0) -
                                                         (e < 2 ? ts_j0 : ts_j1),
                                                     p.num_time_buckets),
                      dz[e]);
        }
      }
      to_a_frag<T, BN / 8>(p_a, nt, pv);
      to_a_frag<T, BN / 8>(dz_a, nt, dz);
    }
    if constexpr ((kParts & kDv) != 0) mma_ab<T, D, BN>(dv, p_a, do_s, lane);
    if constexpr ((kParts & kDk) != 0) mma_ab<T, D, BN>(dk, dz_a, q_s, lane);
  }
  if constexpr ((kParts & kDk) != 0) store_rows<T, D>(p.grad_k, dk, p.alpha, sq, j0, j1, h, p, t);
  if constexpr ((kParts & kDv) != 0) store_rows<T, D>(p.grad_v, dv, 1.0f, sq, j0, j1, h, p, t);
}

template <typename T, int D, int BN, int kParts>
void launch_dkdv(const AttnParams& p, const dim3& grid, int smem, cudaStream_t stream) {
  auto* kernel = hstu_backward_dkdv_kernel<T, D, BN, kParts>;
  STRAIT_CUDA_CHECK(
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  kernel<<<grid, kAttnThreads, smem, stream>>>(p);
  STRAIT_CUDA_CHECK(cudaGetLastError());
}

template <typename T, int D, int BN>
void launch_backward(const AttnParams& p, int batch, cudaStream_t stream) {
  constexpr int kSmem = (2 * kAttnRows + 4 * BN) * (D + 8) * 2;  // 2 stages
  auto* dq_kernel = hstu_backward_dq_kernel<T, D, BN>;
  STRAIT_CUDA_CHECK(
      cudaFuncSetAttribute(dq_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem));
  const dim3 grid(batch, p.heads, (p.max_seq_len + kAttnRows - 1) / kAttnRows);
  dq_kernel<<<grid, kAttnThreads, kSmem, stream>>>(p);
  STRAIT_CUDA_CHECK(cudaGetLastError());
  if constexpr (D <= 128) {
    launch_dkdv<T, D, BN, kDk | kDv>(p, grid, kSmem, stream);
  } else {
    launch_dkdv<T, D, BN, kDv>(p, grid, kSmem, stream);
    launch_dkdv<T, D, BN, kDk>(p, grid, kSmem, stream);
  }
}

template <typename T>
void dispatch_backward(const AttnParams& p, int batch, cudaStream_t stream) {
  if (p.head_dim <= 64)
    launch_backward<T, 64, 64>(p, batch, stream);
  else if (p.head_dim <= 128)
    launch_backward<T, 128, 64>(p, batch, stream);
  else
    launch_backward<T, 256, 32>(p, batch, stream);
}

}  // namespace

void hstu_attention_backward_cuda(const HstuAttentionShape& s, const HstuAttentionBackwardArgs& a,
                                  void* stream) {
  const auto st = static_cast<cudaStream_t>(stream);
  if (a.grad_pos_bias != nullptr)
    STRAIT_CUDA_CHECK(cudaMemsetAsync(a.grad_pos_bias, 0, sizeof(float) * s.num_pos_buckets, st));
  if (a.grad_time_bias != nullptr)
    STRAIT_CUDA_CHECK(cudaMemsetAsync(a.grad_time_bias, 0, sizeof(float) * s.num_time_buckets, st));
  if (s.batch == 0 || s.total_tokens == 0) return;
  AttnParams p = make_attn_params(s);
  p.q = a.q;
  p.k = a.k;
  p.v = a.v;
  p.grad_out = a.grad_out;
  p.grad_q = a.grad_q;
  p.grad_k = a.grad_k;
  p.grad_v = a.grad_v;
  p.offsets = a.offsets;
  p.pos_bias = a.pos_bias;
  p.time_bias = a.time_bias;
  p.timestamps = a.timestamps;
  p.grad_pos_bias = a.grad_pos_bias;
  p.grad_time_bias = a.grad_time_bias;
  if (s.dtype == DType::kBF16)
    dispatch_backward<__nv_bfloat16>(p, s.batch, st);
  else
    dispatch_backward<__half>(p, s.batch, st);
}

}  // namespace strait::kernels::detail
