#pragma once
// Device building blocks of the HSTU attention kernels: tensor-core mma (m16n8k16, f32
// accumulate), fragment loads from shared memory, tile loads from the jagged layout,
// and the pointwise SiLU / mask / bias. Fragment layouts follow the PTX ISA for
// mma.m16n8k16 (g = lane / 4, t = lane % 4):
//   A (16x16, row-major): reg0 (g, 2t..2t+1), reg1 (g+8, 2t..), reg2 (g, 2t+8..), reg3 (g+8,
//   2t+8..) B (16x8, k x n):      reg0 (k 2t..2t+1, n g), reg1 (k 2t+8..2t+9, n g) C (16x8, f32):
//   c0,c1 (g, 2t..2t+1), c2,c3 (g+8, 2t..2t+1)
// so the C fragments of two adjacent n-tiles are exactly the A fragment of one k-step:
// the SiLU output never leaves registers.

#include <cstdint>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "kernels/hstu_attention.hpp"

namespace strait::kernels::detail {

constexpr int kAttnThreads = 128;  // 4 warps, 16 rows each
constexpr int kAttnRows = 64;      // rows (queries or keys) owned by one CTA

struct AttnParams {
  const void* q;
  const void* k;
  const void* v;
  const void* grad_out;
  void* out;
  void* grad_q;
  void* grad_k;
  void* grad_v;
  const std::int32_t* offsets;
  const float* pos_bias;
  const float* time_bias;
  const std::int64_t* timestamps;
  float* grad_pos_bias;
  float* grad_time_bias;
  int heads;
  int head_dim;
  int max_seq_len;
  int num_pos_buckets;
  int num_time_buckets;
  float alpha;
  float inv_n;
  bool padded;
  bool causal;
};

template <typename T>
struct MmaType;
template <>
struct MmaType<__nv_bfloat16> {
  static __device__ __forceinline__ std::uint32_t pack(float lo, float hi) {
    __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<std::uint32_t*>(&v);
  }
  static __device__ __forceinline__ void mma(float c[4], const std::uint32_t a[4],
                                             const std::uint32_t b[2]) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
};
template <>
struct MmaType<__half> {
  static __device__ __forceinline__ std::uint32_t pack(float lo, float hi) {
    __half2 v = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<std::uint32_t*>(&v);
  }
  static __device__ __forceinline__ void mma(float c[4], const std::uint32_t a[4],
                                             const std::uint32_t b[2]) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
};

// ldmatrix.x4: each lane passes the address of one 16-byte row of the four 8x8 matrices
// (lanes 8m..8m+7 address matrix m); register m holds this lane's pair of matrix m.
__device__ __forceinline__ void ldmatrix_x4(std::uint32_t r[4], const void* smem_row) {
  const auto a = static_cast<std::uint32_t>(__cvta_generic_to_shared(smem_row));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(a));
}
// The same with each 8x8 matrix transposed.
__device__ __forceinline__ void ldmatrix_x4_trans(std::uint32_t r[4], const void* smem_row) {
  const auto a = static_cast<std::uint32_t>(__cvta_generic_to_shared(smem_row));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(a));
}

// A fragment of rows [r0, r0+16), cols [k0, k0+16) of row-major x (stride s elements).
template <typename T>
__device__ __forceinline__ void load_a(std::uint32_t a[4], const T* x, int s, int r0, int k0,
                                       int lane) {
  ldmatrix_x4(a, x + (r0 + lane % 16) * s + k0 + (lane / 16) * 8);
}
// B fragments of two adjacent n-tiles [n0, n0+16) with B(k, n) = y[n][k] (y row-major
// [n][k], e.g. keys x head_dim for Q K^T): b[0..1] n-tile n0, b[2..3] n-tile n0 + 8.
template <typename T>
__device__ __forceinline__ void load_b_nk_x2(std::uint32_t b[4], const T* y, int s, int n0, int k0,
                                             int lane) {
  const int m = lane / 8;
  ldmatrix_x4(b, y + (n0 + lane % 8 + (m / 2) * 8) * s + k0 + (m % 2) * 8);
}
// B fragments of two adjacent n-tiles with B(k, n) = y[k][n] (y row-major [k][n], e.g.
// keys x head_dim for P V): b[0..1] n-tile n0, b[2..3] n-tile n0 + 8.
template <typename T>
__device__ __forceinline__ void load_b_kn_x2(std::uint32_t b[4], const T* y, int s, int k0, int n0,
                                             int lane) {
  const int m = lane / 8;
  ldmatrix_x4_trans(b, y + (k0 + lane % 8 + (m % 2) * 8) * s + n0 + (m / 2) * 8);
}

// 16-byte asynchronous global->shared copy; zero-fills the destination when !valid.
__device__ __forceinline__ void cp_async_16(void* dst, const void* src, bool valid) {
  const auto d = static_cast<std::uint32_t>(__cvta_generic_to_shared(dst));
  const int n = valid ? 16 : 0;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(d), "l"(src), "r"(n));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n"); }
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

// Starts copying rows [row0, row0 + kRows) of head h of a [tokens, heads, d] tensor into
// smem (stride D + 8, so ldmatrix rows fall in distinct banks); rows at or past valid_len
// and columns at or past d become zero. Completes with cp_async_commit/wait. Each thread
// owns one 16-byte column chunk and every kStep-th row, so addresses are computed once.
template <typename T, int D, int kRows, int kThreads = kAttnThreads>
__device__ __forceinline__ void load_rows(T* dst, const void* src_v, std::int64_t tok0, int row0,
                                          int valid_len, int h, const AttnParams& p) {
  constexpr int kChunks = D / 8;
  constexpr int kStride = D + 8;
  constexpr int kStep = kThreads / kChunks;
  static_assert(kThreads % kChunks == 0 && kRows % kStep == 0);
  const int c = static_cast<int>(threadIdx.x % kChunks) * 8;
  const int r = static_cast<int>(threadIdx.x / kChunks);
  const T* base = static_cast<const T*>(src_v);
  const std::int64_t stride = static_cast<std::int64_t>(p.heads) * p.head_dim;
  const T* src = base + (tok0 + row0 + r) * stride + static_cast<std::int64_t>(h) * p.head_dim + c;
  T* to = dst + r * kStride + c;
  const bool col_ok = c < p.head_dim;
#pragma unroll
  for (int i = 0; i < kRows / kStep; ++i) {
    const bool valid = col_ok && row0 + r + i * kStep < valid_len;
    cp_async_16(to + i * kStep * kStride, valid ? src + i * kStep * stride : base, valid);
  }
}

// Timestamps of rows [row0, row0 + n) into smem (0 past valid_len); plain loads.
template <int kThreads = kAttnThreads>
__device__ __forceinline__ void load_timestamps(std::int64_t* dst, const AttnParams& p,
                                                std::int64_t tok0, int row0, int n, int valid_len) {
  if (p.time_bias == nullptr) return;
  for (int r = threadIdx.x; r < n; r += kThreads)
    dst[r] = row0 + r < valid_len ? p.timestamps[tok0 + row0 + r] : 0;
}

__device__ __forceinline__ int time_bucket(std::int64_t dt, int buckets) {
  const auto mag = static_cast<unsigned long long>(dt < 0 ? -dt : dt);
  const int width = mag == 0 ? 0 : 64 - __clzll(static_cast<long long>(mag));
  return min(width, buckets - 1);
}
__device__ __forceinline__ int pos_bucket(int i, int j, int buckets) {
  return min(abs(i - j), buckets - 1);
}

// z = alpha * s + rab(i, j).
__device__ __forceinline__ float pre_activation(const AttnParams& p, float s, int i, int j,
                                                std::int64_t ts_i, std::int64_t ts_j) {
  float z = p.alpha * s;
  if (p.pos_bias != nullptr) z += __ldg(p.pos_bias + pos_bucket(i, j, p.num_pos_buckets));
  if (p.time_bias != nullptr)
    z += __ldg(p.time_bias + time_bucket(ts_i - ts_j, p.num_time_buckets));
  return z;
}

__device__ __forceinline__ bool pair_valid(const AttnParams& p, int i, int j, int len) {
  return i < len && j < len && (!p.causal || j <= i);
}

__device__ __forceinline__ float tanh_approx(float x) {
  float y;
  asm("tanh.approx.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}
// sigmoid(z) = (1 + tanh(z / 2)) / 2: one MUFU op instead of exp and reciprocal.
__device__ __forceinline__ float sigmoid(float z) {
  return fmaf(0.5f, tanh_approx(0.5f * z), 0.5f);
}

// silu(z) / N given hz = z / 2: hz (1 + tanh hz) / N (forward's P, one MUFU op).
__device__ __forceinline__ float silu_over_n(float hz, float inv_n) {
  const float a = hz * inv_n;
  return fmaf(a, tanh_approx(hz), a);
}
// The per-pair path of P: 0 outside the causal, in-sequence pairs, else
// silu(alpha s + rab(i, j)) / N.
__device__ __forceinline__ float masked_silu_over_n(const AttnParams& p, float s, int i, int j,
                                                    int len, std::int64_t ts_i, std::int64_t ts_j) {
  if (!pair_valid(p, i, j, len)) return 0.0f;
  return silu_over_n(0.5f * pre_activation(p, s, i, j, ts_i, ts_j), p.inv_n);
}

// Per-CTA sequence geometry: first token row, valid length, rows to tile over.
struct SeqGeometry {
  std::int64_t tok0;
  int len;
  int extent;
};
__device__ __forceinline__ SeqGeometry seq_geometry(const AttnParams& p, int b) {
  const int beg = p.offsets[b];
  const int len = min(p.offsets[b + 1] - beg, p.max_seq_len);
  const std::int64_t tok0 = p.padded ? static_cast<std::int64_t>(b) * p.max_seq_len : beg;
  return {tok0, len, p.padded ? p.max_seq_len : len};
}

// Starts loading rows [row0, row0 + BN) of two tensors (K and V, or Q and dO) into
// pipeline stage `stage` of `stages` (per stage: a's tile, then b's, each BN x (D + 8)),
// and their timestamps into ts[stage]. Completes with cp_async_commit/wait.
template <typename T, int D, int BN>
__device__ __forceinline__ void load_stage(T* stages, int stage, const void* a, const void* b,
                                           int row0, std::int64_t (*ts)[BN], const SeqGeometry& sq,
                                           int h, const AttnParams& p) {
  T* dst = stages + stage * 2 * BN * (D + 8);
  load_rows<T, D, BN>(dst, a, sq.tok0, row0, sq.len, h, p);
  load_rows<T, D, BN>(dst + BN * (D + 8), b, sq.tok0, row0, sq.len, h, p);
  load_timestamps(ts[stage], p, sq.tok0, row0, BN, sq.len);
}

/// Runs the Hopper (wgmma) forward and returns true; false where it does not apply (no
/// sm_90a build, another GPU, head_dim not 64, 128 or 256): the caller runs mma.sync.
bool launch_forward_sm90(const AttnParams& p, int batch, bool bf16, cudaStream_t stream);

/// Shape-derived fields of AttnParams (pointers left null).
AttnParams make_attn_params(const HstuAttentionShape& s);

}  // namespace strait::kernels::detail
