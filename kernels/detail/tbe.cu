// Over 400 lines: the table-batched embedding kernels, forward and backward, with the launch
// code that shares their layouts.
// Table-batched embeddings on CUDA.
// Forward: one warp per bag (table, sample); the warp's lanes split the columns (4 per
// lane when dim % 4 == 0), indices are read 32 at a time and broadcast with shuffles.
// Backward: (row, position) pairs are radix-sorted by row, runs of equal rows become
// segments, and one warp per segment sums the row's gradient into shared memory and
// applies the optimizer; each row is owned by exactly one warp, so duplicates are exact.

#include <algorithm>
#include <bit>
#include <cstdint>
#include <string>

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_run_length_encode.cuh>
#include <cub/device/device_scan.cuh>

#include "kernels/cuda_check.hpp"
#include "kernels/detail/backends.hpp"
#include "kernels/detail/cuda_check.hpp"
#include "kernels/detail/cuda_elements.cuh"

namespace strait::kernels::detail {
namespace {

constexpr int kWarpsPerBlock = 4;

struct TbeParams {
  const void* weights;
  const std::int64_t* table_rows;
  const std::int64_t* indices;
  const std::int64_t* offsets;
  const float* psw;
  float* output;
  int* error_flag;
  int tables;
  int batch;
  int dim;
  PoolingMode pooling;
};

template <typename T, int VEC>
__global__ void __launch_bounds__(kWarpsPerBlock * 32) tbe_forward_kernel(const TbeParams p) {
  const int lane = threadIdx.x % 32;
  const std::int64_t bag =
      static_cast<std::int64_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / 32;
  if (bag >= static_cast<std::int64_t>(p.tables) * p.batch) return;
  const int t = static_cast<int>(bag / p.batch);
  const int b = static_cast<int>(bag % p.batch);
  const std::int64_t beg = p.offsets[bag], end = p.offsets[bag + 1];
  const std::int64_t row0 = p.table_rows[t];
  const std::int64_t rows = p.table_rows[t + 1] - row0;
  const float mean_scale =
      p.pooling == PoolingMode::kMean && end > beg ? 1.0f / static_cast<float>(end - beg) : 1.0f;
  const T* w = static_cast<const T*>(p.weights);

  for (int c0 = 0; c0 < p.dim; c0 += 32 * VEC) {
    const int c = c0 + lane * VEC;
    const bool active = c < p.dim;
    float acc[VEC] = {};
    for (std::int64_t k0 = beg; k0 < end; k0 += 32) {
      std::int64_t my_idx = -1;
      float my_w = 1.0f;
      if (k0 + lane < end) {
        my_idx = p.indices[k0 + lane];
        if (p.psw != nullptr) my_w = p.psw[k0 + lane];
        if (my_idx < 0 || my_idx >= rows) {
          if (p.error_flag != nullptr) atomicOr(p.error_flag, 1);
          my_idx = -1;
        }
      }
      const int n = static_cast<int>(min(static_cast<std::int64_t>(32), end - k0));
      for (int e = 0; e < n; ++e) {
        const std::int64_t idx = __shfl_sync(0xffffffffu, my_idx, e);
        const float sw = __shfl_sync(0xffffffffu, my_w, e);
        if (idx < 0 || !active) continue;
        const T* src = w + (row0 + idx) * p.dim + c;
        float vals[VEC];
        if constexpr (VEC == 4) {
          const float4 v = load4(src);
          vals[0] = v.x;
          vals[1] = v.y;
          vals[2] = v.z;
          vals[3] = v.w;
        } else {
          vals[0] = to_f32(src[0]);
        }
        if (p.pooling == PoolingMode::kNone) {
          float* out = p.output + (k0 + e) * p.dim + c;
#pragma unroll
          for (int i = 0; i < VEC; ++i) out[i] = sw * vals[i];
        } else {
#pragma unroll
          for (int i = 0; i < VEC; ++i) acc[i] += sw * vals[i];
        }
      }
    }
    if (p.pooling != PoolingMode::kNone && active) {
      float* out = p.output + (static_cast<std::int64_t>(b) * p.tables + t) * p.dim + c;
      if constexpr (VEC == 4) {
        *reinterpret_cast<float4*>(out) = make_float4(acc[0] * mean_scale, acc[1] * mean_scale,
                                                      acc[2] * mean_scale, acc[3] * mean_scale);
      } else {
        out[0] = acc[0] * mean_scale;
      }
    }
  }
}

// Writes, for every occurrence k, its global row (or total_rows when out of range), its
// position and its bag. One warp per bag.
__global__ void tbe_linearize_kernel(const TbeParams p, std::int64_t total_rows,
                                     std::int64_t* rows_out, std::int64_t* pos_out,
                                     std::int64_t* bag_out) {
  const int lane = threadIdx.x % 32;
  const std::int64_t bag =
      static_cast<std::int64_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / 32;
  if (bag >= static_cast<std::int64_t>(p.tables) * p.batch) return;
  const int t = static_cast<int>(bag / p.batch);
  const std::int64_t row0 = p.table_rows[t];
  const std::int64_t rows = p.table_rows[t + 1] - row0;
  for (std::int64_t k = p.offsets[bag] + lane; k < p.offsets[bag + 1]; k += 32) {
    const std::int64_t idx = p.indices[k];
    const bool ok = idx >= 0 && idx < rows;
    if (!ok && p.error_flag != nullptr) atomicOr(p.error_flag, 1);
    rows_out[k] = ok ? row0 + idx : total_rows;
    pos_out[k] = k;
    bag_out[k] = bag;
  }
}

// Adds the gradients of sorted occurrences [from, to) into g (this lane's columns), one
// occurrence at a time.
__device__ __forceinline__ void add_occurrences_serial(const TbeParams& p, const float* grad_out,
                                                       const std::int64_t* sorted_pos,
                                                       const std::int64_t* bag_of,
                                                       std::int64_t from, std::int64_t to, float* g,
                                                       int lane) {
  for (std::int64_t e = from; e < to; ++e) {
    const std::int64_t k = sorted_pos[e];
    const std::int64_t bag = bag_of[k];
    float scale = p.psw != nullptr ? p.psw[k] : 1.0f;
    if (p.pooling == PoolingMode::kMean)
      scale /= static_cast<float>(p.offsets[bag + 1] - p.offsets[bag]);
    const float* go = p.pooling == PoolingMode::kNone
                          ? grad_out + k * p.dim
                          : grad_out + ((bag % p.batch) * p.tables + bag / p.batch) * p.dim;
    for (int c = lane; c < p.dim; c += 32) g[c] += scale * go[c];
  }
}

// The same, the occurrences' gradient rows and scales found 32 at a time, one per lane, and
// broadcast with shuffles: one chain of dependent loads (position, bag, bag size) per 32
// occurrences instead of per occurrence, which bounds a warp summing a row with many
// occurrences (a hot row, or a long chunk of one) by memory latency.
__device__ __forceinline__ void add_occurrences_batched(const TbeParams& p, const float* grad_out,
                                                        const std::int64_t* sorted_pos,
                                                        const std::int64_t* bag_of,
                                                        std::int64_t from, std::int64_t to,
                                                        float* g, int lane) {
  for (std::int64_t e0 = from; e0 < to; e0 += 32) {
    std::int64_t row_offset = 0;
    float scale = 0.0f;
    if (e0 + lane < to) {
      const std::int64_t k = sorted_pos[e0 + lane];
      const std::int64_t bag = bag_of[k];
      scale = p.psw != nullptr ? p.psw[k] : 1.0f;
      if (p.pooling == PoolingMode::kMean)
        scale /= static_cast<float>(p.offsets[bag + 1] - p.offsets[bag]);
      row_offset = p.pooling == PoolingMode::kNone
                       ? k * p.dim
                       : ((bag % p.batch) * p.tables + bag / p.batch) * p.dim;
    }
    const int count = static_cast<int>(to - e0 < 32 ? to - e0 : 32);
    for (int j = 0; j < count; ++j) {
      const std::int64_t offset = __shfl_sync(0xffffffffu, row_offset, j);
      const float s = __shfl_sync(0xffffffffu, scale, j);
      const float* go = grad_out + offset;
      for (int c = lane; c < p.dim; c += 32) g[c] += s * go[c];
    }
  }
}

// Rows of at most this many elements sum their occurrences batched. Measured on an H200
// (bench/README.md, "On a GPU"): batched is 10-30% faster at dims 64-128 (pooling 1-214,
// uniform and Zipf ids), serial 2-3x faster at dims 256-512 with Zipf ids; the cause of the
// latter is not established (no profiler run yet). Both add in occurrence order, so the
// sums are the same either way.
constexpr int kBatchedIdsMaxDim = 128;

// Adds the gradients of sorted occurrences [from, to) into g (this lane's columns), in
// occurrence order; `from` and `to` are the same for the whole warp.
__device__ __forceinline__ void add_occurrences(const TbeParams& p, const float* grad_out,
                                                const std::int64_t* sorted_pos,
                                                const std::int64_t* bag_of, std::int64_t from,
                                                std::int64_t to, float* g, int lane) {
  if (p.dim <= kBatchedIdsMaxDim) {
    add_occurrences_batched(p, grad_out, sorted_pos, bag_of, from, to, g, lane);
  } else {
    add_occurrences_serial(p, grad_out, sorted_pos, bag_of, from, to, g, lane);
  }
}

// Hot rows (skewed ids) would leave one warp summing a large share of all occurrences
// alone. A row with more than kSplitAbove occurrences is cut into chunks of about
// sqrt(count) (at least kMinChunk) that warps across the GPU sum into partial rows; the
// row's update then adds its partials in chunk order, so results stay deterministic.
constexpr std::int64_t kSplitAbove = 256;
constexpr std::int64_t kMinChunk = 64;

__device__ __forceinline__ std::int64_t chunk_size(std::int64_t count) {
  const auto root = static_cast<std::int64_t>(ceil(sqrt(static_cast<double>(count))));
  return root > kMinChunk ? root : kMinChunk;
}

// Chunks per segment (0 for rows summed directly); one thread per segment.
__global__ void tbe_chunk_count_kernel(const std::int64_t* seg_counts,
                                       const std::int64_t* num_segments, std::int64_t n,
                                       std::int64_t* chunks) {
  const std::int64_t seg = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (seg >= n) return;
  const std::int64_t count = seg < *num_segments ? seg_counts[seg] : 0;
  chunks[seg] = count > kSplitAbove ? (count + chunk_size(count) - 1) / chunk_size(count) : 0;
}

// chunk_segment[c] = the segment chunk c belongs to; one thread per segment.
__global__ void tbe_chunk_map_kernel(const std::int64_t* chunks, const std::int64_t* chunk_offsets,
                                     std::int64_t n, std::int64_t* chunk_segment) {
  const std::int64_t seg = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (seg >= n) return;
  for (std::int64_t k = 0; k < chunks[seg]; ++k) chunk_segment[chunk_offsets[seg] + k] = seg;
}

// Sums chunk c of a split segment into partial[c]; one warp per chunk.
__global__ void __launch_bounds__(kWarpsPerBlock * 32)
    tbe_chunk_sum_kernel(const TbeParams p, const float* grad_out, const std::int64_t* seg_counts,
                         const std::int64_t* seg_starts, const std::int64_t* chunks,
                         const std::int64_t* chunk_offsets, const std::int64_t* chunk_segment,
                         std::int64_t n, const std::int64_t* sorted_pos, const std::int64_t* bag_of,
                         float* partial) {
  extern __shared__ float g_all[];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const std::int64_t c = static_cast<std::int64_t>(blockIdx.x) * kWarpsPerBlock + warp;
  if (c >= chunk_offsets[n - 1] + chunks[n - 1]) return;
  const std::int64_t seg = chunk_segment[c];
  const std::int64_t k = c - chunk_offsets[seg];
  const std::int64_t count = seg_counts[seg], size = chunk_size(count);
  float* g = g_all + warp * p.dim;
  for (int col = lane; col < p.dim; col += 32) g[col] = 0.0f;
  const std::int64_t from = seg_starts[seg] + k * size;
  const std::int64_t to = min(from + size, seg_starts[seg] + count);
  add_occurrences(p, grad_out, sorted_pos, bag_of, from, to, g, lane);
  float* out = partial + c * p.dim;
  for (int col = lane; col < p.dim; col += 32) out[col] = g[col];
}

template <typename T>
__global__ void __launch_bounds__(kWarpsPerBlock * 32)
    tbe_update_kernel(const TbeParams p, const float* grad_out, void* weights_v, float* momentum,
                      EmbeddingOptimizer opt, float lr, float eps, std::int64_t total_rows,
                      const std::int64_t* unique_rows, const std::int64_t* seg_counts,
                      const std::int64_t* seg_starts, const std::int64_t* num_segments,
                      const std::int64_t* sorted_pos, const std::int64_t* bag_of,
                      const std::int64_t* chunks, const std::int64_t* chunk_offsets,
                      const float* partial) {
  extern __shared__ float g_all[];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const std::int64_t seg = static_cast<std::int64_t>(blockIdx.x) * kWarpsPerBlock + warp;
  if (seg >= *num_segments) return;
  const std::int64_t row = unique_rows[seg];
  if (row >= total_rows) return;  // out-of-range indices, already flagged
  float* g = g_all + warp * p.dim;
  for (int c = lane; c < p.dim; c += 32) g[c] = 0.0f;

  if (chunks[seg] == 0) {
    add_occurrences(p, grad_out, sorted_pos, bag_of, seg_starts[seg],
                    seg_starts[seg] + seg_counts[seg], g, lane);
  } else {
    for (std::int64_t k = 0; k < chunks[seg]; ++k) {
      const float* part = partial + (chunk_offsets[seg] + k) * p.dim;
      for (int c = lane; c < p.dim; c += 32) g[c] += part[c];
    }
  }

  float step = lr;
  if (opt == EmbeddingOptimizer::kRowWiseAdagrad) {
    float sq = 0.0f;
    for (int c = lane; c < p.dim; c += 32) sq += g[c] * g[c];
#pragma unroll
    for (int o = 16; o > 0; o /= 2) sq += __shfl_xor_sync(0xffffffffu, sq, o);
    const float state = momentum[row] + sq / static_cast<float>(p.dim);
    if (lane == 0) momentum[row] = state;
    step = lr / (sqrtf(state) + eps);
  }
  T* w = static_cast<T*>(weights_v) + row * p.dim;
  for (int c = lane; c < p.dim; c += 32) w[c] = from_f32<T>(to_f32(w[c]) - step * g[c]);
}

TbeParams make_params(const TbeShape& s, const void* weights, const std::int64_t* table_rows,
                      const std::int64_t* indices, const std::int64_t* offsets, const float* psw) {
  TbeParams p{};
  p.weights = weights;
  p.table_rows = table_rows;
  p.indices = indices;
  p.offsets = offsets;
  p.psw = psw;
  p.tables = s.tables;
  p.batch = s.batch;
  p.dim = s.dim;
  p.pooling = s.pooling;
  return p;
}

// A device int flag for bounds checks: allocated, zeroed, read back and freed.
class ErrorFlag {
 public:
  ErrorFlag(bool enabled, cudaStream_t st) : st_(st) {
    if (!enabled) return;
    STRAIT_CUDA_CHECK(cudaMallocAsync(reinterpret_cast<void**>(&flag_), sizeof(int), st));
    STRAIT_CUDA_CHECK(cudaMemsetAsync(flag_, 0, sizeof(int), st));
  }
  ErrorFlag(const ErrorFlag&) = delete;
  ErrorFlag& operator=(const ErrorFlag&) = delete;
  ~ErrorFlag() {
    if (flag_ != nullptr) (void)cudaFreeAsync(flag_, st_);
  }
  int* get() const { return flag_; }
  void throw_if_set(const char* kernel) const {
    if (flag_ == nullptr) return;
    int host = 0;
    STRAIT_CUDA_CHECK(cudaMemcpyAsync(&host, flag_, sizeof(int), cudaMemcpyDeviceToHost, st_));
    STRAIT_CUDA_CHECK(cudaStreamSynchronize(st_));
    if (host != 0)
      throw KernelArgumentError(kernel, "indices",
                                "expected every index in [0, rows of its table)");
  }

 private:
  cudaStream_t st_;
  int* flag_ = nullptr;
};

template <typename T>
void launch_forward(const TbeParams& p, cudaStream_t st) {
  const std::int64_t bags = static_cast<std::int64_t>(p.tables) * p.batch;
  const auto blocks = static_cast<unsigned>((bags + kWarpsPerBlock - 1) / kWarpsPerBlock);
  const bool vec = p.dim % 4 == 0 && reinterpret_cast<std::uintptr_t>(p.weights) % 16 == 0 &&
                   reinterpret_cast<std::uintptr_t>(p.output) % 16 == 0;
  if (vec)
    tbe_forward_kernel<T, 4><<<blocks, kWarpsPerBlock * 32, 0, st>>>(p);
  else
    tbe_forward_kernel<T, 1><<<blocks, kWarpsPerBlock * 32, 0, st>>>(p);
  STRAIT_CUDA_CHECK(cudaGetLastError());
}

template <typename T>
void launch_update(const TbeParams& p, const TbeBackwardArgs& a, std::int64_t total_rows,
                   std::int64_t n, const std::int64_t* unique_rows, const std::int64_t* counts,
                   const std::int64_t* starts, const std::int64_t* num_runs,
                   const std::int64_t* sorted_pos, const std::int64_t* bag_of,
                   const std::int64_t* chunks, const std::int64_t* chunk_offsets,
                   const float* partial, cudaStream_t st) {
  const int smem = kWarpsPerBlock * p.dim * static_cast<int>(sizeof(float));
  auto* kernel = tbe_update_kernel<T>;
  STRAIT_CUDA_CHECK(
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  const auto blocks = static_cast<unsigned>((n + kWarpsPerBlock - 1) / kWarpsPerBlock);
  kernel<<<blocks, kWarpsPerBlock * 32, smem, st>>>(
      p, a.grad_output, a.weights, a.momentum, a.optimizer, a.learning_rate, a.eps, total_rows,
      unique_rows, counts, starts, num_runs, sorted_pos, bag_of, chunks, chunk_offsets, partial);
  STRAIT_CUDA_CHECK(cudaGetLastError());
}

// Stream-ordered scratch memory, freed on scope exit.
class Scratch {
 public:
  explicit Scratch(cudaStream_t st) : st_(st) { keep_freed_scratch_mapped(); }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  ~Scratch() {
    for (int i = 0; i < n_; ++i) (void)cudaFreeAsync(ptrs_[i], st_);
  }
  template <typename T>
  T* alloc(std::size_t count) {
    void* ptr = nullptr;
    STRAIT_CUDA_CHECK(cudaMallocAsync(&ptr, count * sizeof(T) + 16, st_));
    ptrs_[n_++] = ptr;
    return static_cast<T*>(ptr);
  }

 private:
  cudaStream_t st_;
  void* ptrs_[16] = {};
  int n_ = 0;
};

}  // namespace

void tbe_forward_cuda(const TbeShape& s, const TbeForwardArgs& a, void* stream) {
  const auto st = static_cast<cudaStream_t>(stream);
  if (s.batch == 0) return;
  TbeParams p =
      make_params(s, a.weights, a.table_row_offsets, a.indices, a.offsets, a.per_sample_weights);
  p.output = a.output;
  ErrorFlag flag(a.bounds_check, st);
  p.error_flag = flag.get();
  switch (s.weights_dtype) {
    case DType::kF32:
      launch_forward<float>(p, st);
      break;
    case DType::kF16:
      launch_forward<__half>(p, st);
      break;
    case DType::kBF16:
      launch_forward<__nv_bfloat16>(p, st);
      break;
  }
  flag.throw_if_set("tbe_forward");
}

// Long: the backward's argument checks, scratch, sort and update launches share one stream.
void tbe_backward_cuda(const TbeShape& s, const TbeBackwardArgs& a, void* stream) {
  if (s.dim > 2048)
    throw KernelArgumentError("tbe_backward", "dim",
                              "expected <= 2048 on CUDA, got " + std::to_string(s.dim));
  const auto st = static_cast<cudaStream_t>(stream);
  const std::int64_t n = s.num_indices;
  if (s.batch == 0 || n == 0) return;
  TbeParams p =
      make_params(s, a.weights, a.table_row_offsets, a.indices, a.offsets, a.per_sample_weights);
  ErrorFlag flag(a.bounds_check, st);
  p.error_flag = flag.get();

  Scratch scratch(st);
  auto* rows = scratch.alloc<std::int64_t>(n);
  auto* pos = scratch.alloc<std::int64_t>(n);
  auto* bag_of = scratch.alloc<std::int64_t>(n);
  auto* rows_sorted = scratch.alloc<std::int64_t>(n);
  auto* pos_sorted = scratch.alloc<std::int64_t>(n);
  auto* unique_rows = scratch.alloc<std::int64_t>(n);
  auto* counts = scratch.alloc<std::int64_t>(n);
  auto* starts = scratch.alloc<std::int64_t>(n);
  auto* num_runs = scratch.alloc<std::int64_t>(1);

  const std::int64_t bags = static_cast<std::int64_t>(s.tables) * s.batch;
  tbe_linearize_kernel<<<static_cast<unsigned>((bags + kWarpsPerBlock - 1) / kWarpsPerBlock),
                         kWarpsPerBlock * 32, 0, st>>>(p, s.total_rows, rows, pos, bag_of);
  STRAIT_CUDA_CHECK(cudaGetLastError());

  // Rows are < 2^end_bit (total_rows itself marks out-of-range indices).
  const int end_bit =
      std::max(1, static_cast<int>(std::bit_width(static_cast<std::uint64_t>(s.total_rows))));
  std::size_t sort_bytes = 0, rle_bytes = 0, scan_bytes = 0;
  STRAIT_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, sort_bytes, rows, rows_sorted, pos,
                                                    pos_sorted, n, 0, end_bit, st));
  STRAIT_CUDA_CHECK(cub::DeviceRunLengthEncode::Encode(nullptr, rle_bytes, rows_sorted, unique_rows,
                                                       counts, num_runs, n, st));
  STRAIT_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, scan_bytes, counts, starts, n, st));
  auto* temp = scratch.alloc<unsigned char>(std::max({sort_bytes, rle_bytes, scan_bytes}));
  STRAIT_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp, sort_bytes, rows, rows_sorted, pos,
                                                    pos_sorted, n, 0, end_bit, st));
  STRAIT_CUDA_CHECK(cudaMemsetAsync(counts, 0, sizeof(std::int64_t) * n, st));
  STRAIT_CUDA_CHECK(cub::DeviceRunLengthEncode::Encode(temp, rle_bytes, rows_sorted, unique_rows,
                                                       counts, num_runs, n, st));
  STRAIT_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(temp, scan_bytes, counts, starts, n, st));

  // Hot rows: split into chunks summed in parallel (see tbe_chunk_sum_kernel).
  auto* chunks = scratch.alloc<std::int64_t>(n);
  auto* chunk_offsets = scratch.alloc<std::int64_t>(n);
  tbe_chunk_count_kernel<<<static_cast<unsigned>((n + 255) / 256), 256, 0, st>>>(counts, num_runs,
                                                                                 n, chunks);
  STRAIT_CUDA_CHECK(cudaGetLastError());
  STRAIT_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(temp, scan_bytes, chunks, chunk_offsets, n, st));
  // Every split row has > kSplitAbove occurrences and chunks of >= kMinChunk, so there are
  // at most n / kMinChunk + n / kSplitAbove chunks in all, and at most that many split rows.
  const std::int64_t max_chunks = n / kMinChunk + n / kSplitAbove + 1;
  auto* partial = scratch.alloc<float>(static_cast<std::size_t>(max_chunks) * s.dim);
  auto* chunk_segment = scratch.alloc<std::int64_t>(static_cast<std::size_t>(max_chunks));
  if (n > kSplitAbove) {
    tbe_chunk_map_kernel<<<static_cast<unsigned>((n + 255) / 256), 256, 0, st>>>(
        chunks, chunk_offsets, n, chunk_segment);
    STRAIT_CUDA_CHECK(cudaGetLastError());
    const int smem = kWarpsPerBlock * s.dim * static_cast<int>(sizeof(float));
    STRAIT_CUDA_CHECK(cudaFuncSetAttribute(tbe_chunk_sum_kernel,
                                           cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    tbe_chunk_sum_kernel<<<static_cast<unsigned>((max_chunks + kWarpsPerBlock - 1) /
                                                 kWarpsPerBlock),
                           kWarpsPerBlock * 32, smem, st>>>(p, a.grad_output, counts, starts,
                                                            chunks, chunk_offsets, chunk_segment, n,
                                                            pos_sorted, bag_of, partial);
    STRAIT_CUDA_CHECK(cudaGetLastError());
  }

  switch (s.weights_dtype) {
    case DType::kF32:
      launch_update<float>(p, a, s.total_rows, n, unique_rows, counts, starts, num_runs, pos_sorted,
                           bag_of, chunks, chunk_offsets, partial, st);
      break;
    case DType::kF16:
      launch_update<__half>(p, a, s.total_rows, n, unique_rows, counts, starts, num_runs,
                            pos_sorted, bag_of, chunks, chunk_offsets, partial, st);
      break;
    case DType::kBF16:
      launch_update<__nv_bfloat16>(p, a, s.total_rows, n, unique_rows, counts, starts, num_runs,
                                   pos_sorted, bag_of, chunks, chunk_offsets, partial, st);
      break;
  }
  flag.throw_if_set("tbe_backward");
}

}  // namespace strait::kernels::detail
