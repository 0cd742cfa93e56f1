// Jagged helpers on CUDA: one thread per element, the sequence of a jagged row found by
// binary search in the offsets; lengths_to_offsets is a CUB inclusive scan.

#include <cstdint>

#include <cub/device/device_scan.cuh>

#include "kernels/cuda_check.hpp"
#include "kernels/detail/backends.hpp"
#include "kernels/detail/cuda_check.hpp"
#include "kernels/detail/cuda_elements.cuh"

namespace strait::kernels::detail {
namespace {

constexpr int kThreads = 256;

unsigned blocks_for(std::int64_t n) { return static_cast<unsigned>((n + kThreads - 1) / kThreads); }

// The sequence b with offsets[b] <= row < offsets[b + 1] (skipping empty sequences).
__device__ int sequence_of(const std::int32_t* offsets, int batch, std::int64_t row) {
  int lo = 0, hi = batch;  // invariant: offsets[lo] <= row < offsets[hi]
  while (hi - lo > 1) {
    const int mid = (lo + hi) / 2;
    if (offsets[mid] <= row)
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}

template <typename T>
__global__ void jagged_to_padded_kernel(JaggedShape s, const T* values, const std::int32_t* offsets,
                                        T* padded, T pad) {
  const std::int64_t n = static_cast<std::int64_t>(s.batch) * s.max_len * s.dim;
  for (std::int64_t e = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; e < n;
       e += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const int c = static_cast<int>(e % s.dim);
    const std::int64_t bi = e / s.dim;
    const int i = static_cast<int>(bi % s.max_len);
    const int b = static_cast<int>(bi / s.max_len);
    const int len = offsets[b + 1] - offsets[b];
    padded[e] = i < len ? values[(static_cast<std::int64_t>(offsets[b]) + i) * s.dim + c] : pad;
  }
}

template <typename T>
__global__ void padded_to_jagged_kernel(JaggedShape s, const T* padded, const std::int32_t* offsets,
                                        T* values) {
  const std::int64_t n = s.total * s.dim;
  for (std::int64_t e = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; e < n;
       e += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t row = e / s.dim;
    const int c = static_cast<int>(e % s.dim);
    const int b = sequence_of(offsets, s.batch, row);
    const int i = static_cast<int>(row - offsets[b]);
    values[e] = i < s.max_len ? padded[(static_cast<std::int64_t>(b) * s.max_len + i) * s.dim + c]
                              : from_f32<T>(0.0f);
  }
}

template <typename T>
__global__ void jagged_dense_elementwise_kernel(JaggedShape s, ElementwiseOp op, const T* values,
                                                const std::int32_t* offsets, const T* dense,
                                                T* out) {
  const std::int64_t n = s.total * s.dim;
  for (std::int64_t e = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; e < n;
       e += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t row = e / s.dim;
    const int c = static_cast<int>(e % s.dim);
    const int b = sequence_of(offsets, s.batch, row);
    const int i = static_cast<int>(row - offsets[b]);
    const float x = to_f32(values[e]);
    const float y = i < s.max_len
                        ? to_f32(dense[(static_cast<std::int64_t>(b) * s.max_len + i) * s.dim + c])
                        : 0.0f;
    out[e] = from_f32<T>(op == ElementwiseOp::kAdd ? x + y : x * y);
  }
}

template <typename F>
void by_dtype(DType t, F&& f) {
  switch (t) {
    case DType::kF32:
      f(float{});
      break;
    case DType::kF16:
      f(__half{});
      break;
    case DType::kBF16:
      f(__nv_bfloat16{});
      break;
  }
}

unsigned grid_for(std::int64_t n) {
  return static_cast<unsigned>(std::min<std::int64_t>(blocks_for(n), 65535 * 8));
}

}  // namespace

void lengths_to_offsets_cuda(const std::int32_t* lengths, std::int32_t* offsets, int batch,
                             void* stream) {
  const auto st = static_cast<cudaStream_t>(stream);
  STRAIT_CUDA_CHECK(cudaMemsetAsync(offsets, 0, sizeof(std::int32_t), st));
  if (batch == 0) return;
  std::size_t bytes = 0;
  STRAIT_CUDA_CHECK(cub::DeviceScan::InclusiveSum(nullptr, bytes, lengths, offsets + 1, batch, st));
  void* temp = nullptr;
  keep_freed_scratch_mapped();
  STRAIT_CUDA_CHECK(cudaMallocAsync(&temp, bytes, st));
  const cudaError_t err =
      cub::DeviceScan::InclusiveSum(temp, bytes, lengths, offsets + 1, batch, st);
  STRAIT_CUDA_CHECK(cudaFreeAsync(temp, st));
  STRAIT_CUDA_CHECK(err);
}

void jagged_to_padded_cuda(const JaggedShape& s, const void* values, const std::int32_t* offsets,
                           void* padded, float padding_value, void* stream) {
  const std::int64_t n = static_cast<std::int64_t>(s.batch) * s.max_len * s.dim;
  if (n == 0) return;
  by_dtype(s.dtype, [&](auto tag) {
    using T = decltype(tag);
    jagged_to_padded_kernel<T><<<grid_for(n), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
        s, static_cast<const T*>(values), offsets, static_cast<T*>(padded),
        static_cast<T>(padding_value));
  });
  STRAIT_CUDA_CHECK(cudaGetLastError());
}

void padded_to_jagged_cuda(const JaggedShape& s, const void* padded, const std::int32_t* offsets,
                           void* values, void* stream) {
  const std::int64_t n = s.total * s.dim;
  if (n == 0) return;
  by_dtype(s.dtype, [&](auto tag) {
    using T = decltype(tag);
    padded_to_jagged_kernel<T><<<grid_for(n), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
        s, static_cast<const T*>(padded), offsets, static_cast<T*>(values));
  });
  STRAIT_CUDA_CHECK(cudaGetLastError());
}

void jagged_dense_elementwise_cuda(const JaggedShape& s, ElementwiseOp op, const void* values,
                                   const std::int32_t* offsets, const void* dense, void* out,
                                   void* stream) {
  const std::int64_t n = s.total * s.dim;
  if (n == 0) return;
  by_dtype(s.dtype, [&](auto tag) {
    using T = decltype(tag);
    jagged_dense_elementwise_kernel<T>
        <<<grid_for(n), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
            s, op, static_cast<const T*>(values), offsets, static_cast<const T*>(dense),
            static_cast<T*>(out));
  });
  STRAIT_CUDA_CHECK(cudaGetLastError());
}

}  // namespace strait::kernels::detail
