#pragma once
// Hopper warpgroup MMA (wgmma, sm_90a) building blocks for the HSTU attention kernels:
// 128-byte-swizzled shared-memory tiles, matrix descriptors, and m64n64k16 MMAs with f32
// accumulators (PTX ISA 8.x, "Asynchronous Warpgroup Level Matrix Multiply-Accumulate").
//
// Tile layout (K-major and MN-major alike): a [rows, cols] bf16/f16 tile is stored as
// cols / 64 blocks of [rows][128 bytes]; inside a block, row r's 16-byte chunk c sits at
// chunk c ^ (r % 8) (the Swizzle<3,4,3> pattern the descriptor's 128B mode undoes). Eight
// rows form a 1024-byte atom, so SBO = 1024 and blocks must be 1024-byte aligned.
// Accumulator layout of m64nN per warp w of the warpgroup (g = lane / 4, t = lane % 4):
// d[4j + 0..1] = row 16w + g, cols 8j + 2t..; d[4j + 2..3] = row 16w + g + 8: per 8-column
// chunk exactly mma.m16n8k16's C fragment, and a register A operand has mma's A layout.

#include <cstdint>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace strait::kernels::detail {

// Byte offset of element (row, col) in a swizzled tile of `rows` rows.
__device__ __forceinline__ std::uint32_t swizzled_offset(int rows, int row, int col) {
  const int block = col / 64, chunk = (col % 64) / 8;
  return static_cast<std::uint32_t>(block * rows * 128 + row * 128 + ((chunk ^ (row % 8)) << 4) +
                                    (col % 8) * 2);
}

// Shared-memory matrix descriptor, 128-byte swizzle, SBO = 1024 bytes (LBO unused: every
// MMA reads one 64-column block).
__device__ __forceinline__ std::uint64_t smem_desc(const void* p) {
  const auto addr = static_cast<std::uint64_t>(__cvta_generic_to_shared(p));
  std::uint64_t d = (addr & 0x3FFFF) >> 4;
  d |= std::uint64_t{1} << 16;          // LBO 16 bytes (unused)
  d |= std::uint64_t{1024 >> 4} << 32;  // SBO
  d |= std::uint64_t{1} << 62;          // 128-byte swizzle
  return d;
}

__device__ __forceinline__ void wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
// Makes this thread's generic-proxy shared-memory writes (cp.async, stores) visible to
// the async proxy that wgmma reads through; follow with a barrier.
__device__ __forceinline__ void fence_proxy_async() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

// d[64 x 64] (+)= A[64 x 16] B[16 x 64]: A and B K-major in shared memory (descriptors);
// scale_d = 0 overwrites d.
template <typename T>
__device__ void wgmma_ss(float (&d)[32], std::uint64_t a, std::uint64_t b, int scale_d);
// d[64 x 64] += A[64 x 16] (registers) B[16 x 64], B MN-major in shared memory.
template <typename T>
__device__ void wgmma_rs_tb(float (&d)[32], const std::uint32_t (&a)[4], std::uint64_t b);

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
template <>
__device__ __forceinline__ void wgmma_ss<__nv_bfloat16>(float (&d)[32], std::uint64_t a,
                                                        std::uint64_t b, int scale_d) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, "
      "%20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, %32, %33, p, 1, 1, 0, 0;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
        "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),
        "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]),
        "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]),
        "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
      : "l"(a), "l"(b), "r"(scale_d));
}
template <>
__device__ __forceinline__ void wgmma_ss<__half>(float (&d)[32], std::uint64_t a, std::uint64_t b,
                                                 int scale_d) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, "
      "%20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, %32, %33, p, 1, 1, 0, 0;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
        "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),
        "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]),
        "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]),
        "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
      : "l"(a), "l"(b), "r"(scale_d));
}
template <>
__device__ __forceinline__ void wgmma_rs_tb<__nv_bfloat16>(float (&d)[32],
                                                           const std::uint32_t (&a)[4],
                                                           std::uint64_t b) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.eq.u32 p, 1, 1;\n"
      "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, "
      "%20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, {%32, %33, %34, %35}, %36, p, "
      "1, 1, 1;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
        "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),
        "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]),
        "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]),
        "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b));
}
template <>
__device__ __forceinline__ void wgmma_rs_tb<__half>(float (&d)[32], const std::uint32_t (&a)[4],
                                                    std::uint64_t b) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.eq.u32 p, 1, 1;\n"
      "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, "
      "%20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, {%32, %33, %34, %35}, %36, p, "
      "1, 1, 1;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
        "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),
        "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]),
        "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]),
        "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b));
}
#endif  // __CUDA_ARCH_FEAT_SM90_ALL

}  // namespace strait::kernels::detail
