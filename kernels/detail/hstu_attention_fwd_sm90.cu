// HSTU attention forward for Hopper (sm_90a): warpgroup MMAs (wgmma) read Q, K and V
// straight from 128-byte-swizzled shared memory, so no fragment ever passes through
// ldmatrix. One CTA of two warpgroups per (128-query tile, head, sequence); each warpgroup
// owns 64 query rows. K/V tiles of 64 keys stream through a two-stage cp.async pipeline up
// to the diagonal. Per tile: S = Q K^T (wgmma, both operands in shared memory), then
// P = silu(alpha S + rab) / N in registers (the accumulator layout is the register-A
// layout), then O += P V (wgmma, A from registers, V read N-major). Tiles a warpgroup has
// no valid pair in are skipped; the mask and bias run only on tiles that need them.
// Built only for sm_90a; elsewhere the mma.sync kernel of hstu_attention_fwd.cu runs.

#include <cstdlib>
#include <cstring>

#include "kernels/cuda_check.hpp"
#include "kernels/detail/hstu_attention_cuda.cuh"
#include "kernels/detail/wgmma.cuh"

namespace strait::kernels::detail {
namespace {

constexpr int kSm90Threads = 256;  // two warpgroups
constexpr int kSm90Rows = 128;     // query rows per CTA
constexpr int kSm90Keys = 64;      // keys per K/V tile

template <int D>
struct Sm90Tile {
  static constexpr int kQBytes = kSm90Rows * D * 2;
  static constexpr int kKvBytes = kSm90Keys * D * 2;  // one of K or V, one stage
  static constexpr int kTsOffset = kQBytes + 4 * kKvBytes;
  // + 1 KiB so the base can be aligned to the 1024-byte swizzle atom.
  static constexpr int kSmemBytes = kTsOffset + 2 * kSm90Keys * 8 + 1024;
};

// Starts copying rows [row0, row0 + kRows) of head h into a swizzled [kRows, D] tile;
// rows at or past valid_len and columns at or past head_dim become zero. Each thread owns
// one 16-byte column chunk and every kStep-th row: kStep is a multiple of 8, so the
// swizzle term, the shared-memory offset and the source pointer are computed once and
// each copy costs an add and a compare (instruction issue, not bandwidth, bounded the
// kernel when every copy recomputed its addresses).
template <typename T, int D, int kRows>
__device__ __forceinline__ void load_swizzled(unsigned char* dst, const void* src_v,
                                              std::int64_t tok0, int row0, int valid_len, int h,
                                              const AttnParams& p) {
  constexpr int kChunks = D / 8;
  constexpr int kStep = kSm90Threads / kChunks;
  static_assert(kSm90Threads % kChunks == 0 && kStep % 8 == 0 && kRows % kStep == 0);
  const int c = static_cast<int>(threadIdx.x % kChunks) * 8;
  const int r = static_cast<int>(threadIdx.x / kChunks);
  const T* base = static_cast<const T*>(src_v);
  const std::int64_t stride = static_cast<std::int64_t>(p.heads) * p.head_dim;
  const T* src = base + (tok0 + row0 + r) * stride + static_cast<std::int64_t>(h) * p.head_dim + c;
  unsigned char* to = dst + swizzled_offset(kRows, r, c);
  const bool col_ok = c < p.head_dim;
#pragma unroll
  for (int i = 0; i < kRows / kStep; ++i) {
    const bool valid = col_ok && row0 + r + i * kStep < valid_len;
    cp_async_16(to + i * kStep * 128, valid ? src + i * kStep * stride : base, valid);
  }
}

template <typename T, int D>
__global__ void __launch_bounds__(kSm90Threads, D <= 128 ? 2 : 1)
    hstu_forward_sm90_kernel(const AttnParams p) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using Tile = Sm90Tile<D>;
  constexpr int kBN = kSm90Keys;
  constexpr int kBlocks = D / 64;  // 64-column blocks of the head dimension
  extern __shared__ unsigned char smem_raw[];
  unsigned char* smem = reinterpret_cast<unsigned char*>(
      (reinterpret_cast<std::uintptr_t>(smem_raw) + 1023) & ~std::uintptr_t{1023});
  unsigned char* q_s = smem;
  unsigned char* kv_s = smem + Tile::kQBytes;  // stage st: K at 2 st kKvBytes, V after it
  auto* ts_k = reinterpret_cast<std::int64_t*>(smem + Tile::kTsOffset);  // [2][kBN]

  const int b = blockIdx.x, h = blockIdx.y;
  const SeqGeometry sq = seq_geometry(p, b);
  const int m0 = (gridDim.z - 1 - blockIdx.z) * kSm90Rows;  // longest rows first
  if (m0 >= sq.extent) return;

  const int wg = threadIdx.x / 128;
  const int warp = (threadIdx.x / 32) % 4, lane = threadIdx.x % 32;
  const int g = lane / 4, t = lane % 4;
  const int wg_row0 = m0 + wg * 64;
  const bool has_bias = p.pos_bias != nullptr || p.time_bias != nullptr;
  std::int64_t ts_i[2] = {0, 0};
  if (p.time_bias != nullptr) {
#pragma unroll
    for (int hf = 0; hf < 2; ++hf) {
      const int i = wg_row0 + warp * 16 + g + hf * 8;
      if (i < sq.len) ts_i[hf] = p.timestamps[sq.tok0 + i];
    }
  }

  const int n_end = p.causal ? min(sq.extent, m0 + kSm90Rows) : sq.extent;
  const int n_tiles = (n_end + kBN - 1) / kBN;
  auto load_kv = [&](int jt) {
    unsigned char* k_s = kv_s + (jt & 1) * 2 * Tile::kKvBytes;
    load_swizzled<T, D, kBN>(k_s, p.k, sq.tok0, jt * kBN, sq.len, h, p);
    load_swizzled<T, D, kBN>(k_s + Tile::kKvBytes, p.v, sq.tok0, jt * kBN, sq.len, h, p);
    load_timestamps<kSm90Threads>(ts_k + (jt & 1) * kBN, p, sq.tok0, jt * kBN, kBN, sq.len);
  };
  load_swizzled<T, D, kSm90Rows>(q_s, p.q, sq.tok0, m0, sq.len, h, p);
  load_kv(0);
  cp_async_commit();

  float o[kBlocks][32];
#pragma unroll
  for (int nb = 0; nb < kBlocks; ++nb)
#pragma unroll
    for (int e = 0; e < 32; ++e) o[nb][e] = 0.0f;

  // Descriptors of the tiles' first bytes; an MMA's descriptor adds its byte offset / 16
  // (the start address field; shared memory offsets stay below 2^18 bytes, no carry out).
  const std::uint64_t q_desc = smem_desc(q_s + wg * 64 * 128);
  const std::uint64_t k_desc0 = smem_desc(kv_s), k_desc1 = smem_desc(kv_s + 2 * Tile::kKvBytes);
  const std::uint64_t v_desc0 = smem_desc(kv_s + Tile::kKvBytes);
  const std::uint64_t v_desc1 = smem_desc(kv_s + 3 * Tile::kKvBytes);
  const float half_alpha = 0.5f * p.alpha;
  for (int jt = 0; jt < n_tiles; ++jt) {
    __syncthreads();  // every warpgroup is done with the stage the next prefetch overwrites
    if (jt + 1 < n_tiles) load_kv(jt + 1);
    cp_async_commit();
    cp_async_wait<1>();
    fence_proxy_async();
    __syncthreads();
    const int n0 = jt * kBN;
    const std::uint64_t k_desc = (jt & 1) != 0 ? k_desc1 : k_desc0;
    const std::uint64_t v_desc = (jt & 1) != 0 ? v_desc1 : v_desc0;
    if (p.causal && n0 > wg_row0 + 63) continue;  // no pair of this warpgroup's rows

    float s[32];
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
      const int blk = kk / 4, off = (kk % 4) * 32;
      wgmma_ss<T>(s, q_desc + ((blk * kSm90Rows * 128 + off) >> 4),
                  k_desc + ((blk * kBN * 128 + off) >> 4), kk > 0 ? 1 : 0);
    }
    wgmma_commit();
    wgmma_wait<0>();

    // p = silu(z) / N = hz (1 + tanh hz) / N with hz = z / 2. Keys past the sequence have
    // zero K and V rows, so only the causal mask and the bias need the per-pair path.
    const bool plain = !has_bias && (!p.causal || n0 + kBN - 1 <= wg_row0);
    std::uint32_t pa[kBN / 16][4];
#pragma unroll
    for (int nt = 0; nt < kBN / 8; ++nt) {
      float pv[4];
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        if (plain) {
          pv[e] = silu_over_n(half_alpha * s[4 * nt + e], p.inv_n);
        } else {
          const int jl = nt * 8 + 2 * t + (e & 1);
          pv[e] = masked_silu_over_n(p, s[4 * nt + e], wg_row0 + warp * 16 + g + (e >> 1) * 8,
                                     n0 + jl, sq.len, ts_i[e >> 1], ts_k[(jt & 1) * kBN + jl]);
        }
      }
      pa[nt / 2][(nt % 2) * 2 + 0] = MmaType<T>::pack(pv[0], pv[1]);
      pa[nt / 2][(nt % 2) * 2 + 1] = MmaType<T>::pack(pv[2], pv[3]);
    }

    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < kBN / 16; ++kk)
#pragma unroll
      for (int nb = 0; nb < kBlocks; ++nb)
        wgmma_rs_tb<T>(o[nb], pa[kk], v_desc + ((nb * kBN * 128 + kk * 16 * 128) >> 4));
    wgmma_commit();
    wgmma_wait<0>();
  }

  T* out = static_cast<T*>(p.out);
  const int i0 = wg_row0 + warp * 16 + g, i1 = i0 + 8;
#pragma unroll
  for (int nb = 0; nb < kBlocks; ++nb) {
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const int c = nb * 64 + j * 8 + 2 * t;
      if (c >= p.head_dim) break;
      if (i0 < sq.extent)
        *reinterpret_cast<std::uint32_t*>(out + ((sq.tok0 + i0) * p.heads + h) * p.head_dim + c) =
            MmaType<T>::pack(o[nb][4 * j + 0], o[nb][4 * j + 1]);
      if (i1 < sq.extent)
        *reinterpret_cast<std::uint32_t*>(out + ((sq.tok0 + i1) * p.heads + h) * p.head_dim + c) =
            MmaType<T>::pack(o[nb][4 * j + 2], o[nb][4 * j + 3]);
    }
  }
#else
  (void)p;
  __trap();  // launched only where sm_90a code was built (see launch_forward_sm90)
#endif
}

#if defined(STRAIT_CUDA_SM90A)
template <typename T, int D>
void launch(const AttnParams& p, int batch, cudaStream_t stream) {
  auto* kernel = hstu_forward_sm90_kernel<T, D>;
  STRAIT_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         Sm90Tile<D>::kSmemBytes));
  const dim3 grid(batch, p.heads, (p.max_seq_len + kSm90Rows - 1) / kSm90Rows);
  kernel<<<grid, kSm90Threads, Sm90Tile<D>::kSmemBytes, stream>>>(p);
  STRAIT_CUDA_CHECK(cudaGetLastError());
}

// Whether the current device runs sm_90a code (compute capability 9.0) and the user has
// not asked for the portable kernel (STRAIT_HSTU_ATTENTION_KERNEL=mma).
bool sm90_enabled() {
  static const bool enabled = [] {
    const char* force = std::getenv("STRAIT_HSTU_ATTENTION_KERNEL");
    if (force != nullptr && std::strcmp(force, "mma") == 0) return false;
    int dev = 0;
    cudaDeviceProp prop{};
    if (cudaGetDevice(&dev) != cudaSuccess || cudaGetDeviceProperties(&prop, dev) != cudaSuccess)
      return false;
    return prop.major == 9 && prop.minor == 0;
  }();
  return enabled;
}
#endif

}  // namespace

bool launch_forward_sm90(const AttnParams& p, int batch, bool bf16, cudaStream_t stream) {
#if defined(STRAIT_CUDA_SM90A)
  if (!sm90_enabled() || (p.head_dim != 64 && p.head_dim != 128 && p.head_dim != 256)) return false;
  if (bf16) {
    if (p.head_dim == 64) launch<__nv_bfloat16, 64>(p, batch, stream);
    if (p.head_dim == 128) launch<__nv_bfloat16, 128>(p, batch, stream);
    if (p.head_dim == 256) launch<__nv_bfloat16, 256>(p, batch, stream);
  } else {
    if (p.head_dim == 64) launch<__half, 64>(p, batch, stream);
    if (p.head_dim == 128) launch<__half, 128>(p, batch, stream);
    if (p.head_dim == 256) launch<__half, 256>(p, batch, stream);
  }
  return true;
#else
  (void)p, (void)batch, (void)bf16, (void)stream;
  return false;
#endif
}

}  // namespace strait::kernels::detail
