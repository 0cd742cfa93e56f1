#include "calibration/device_kernels.hpp"

#include <algorithm>
#include <cmath>

#include <cuda_runtime.h>

#include "kernels/cuda_check.hpp"

namespace strait::calibration {
namespace {

struct AdamScalars {
  float lr, beta1, beta2, eps, inv_bias1, inv_bias2;
};

__device__ __forceinline__ void adam_element(float& p, float g, float& m, float& v,
                                             const AdamScalars& s) {
  m = s.beta1 * m + (1.0f - s.beta1) * g;
  v = s.beta2 * v + (1.0f - s.beta2) * g * g;
  p -= s.lr * (m * s.inv_bias1) / (sqrtf(v * s.inv_bias2) + s.eps);
}

// Grid-stride over float4 groups (cudaMalloc pointers are 256-byte aligned), then the tail.
__global__ void adam_step_kernel(float* __restrict__ params, const float* __restrict__ grads,
                                 float* __restrict__ exp_avg, float* __restrict__ exp_avg_sq,
                                 std::int64_t count, AdamScalars s) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  const std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::int64_t groups = count / 4;
  auto* p4 = reinterpret_cast<float4*>(params);
  const auto* g4 = reinterpret_cast<const float4*>(grads);
  auto* m4 = reinterpret_cast<float4*>(exp_avg);
  auto* v4 = reinterpret_cast<float4*>(exp_avg_sq);
  for (std::int64_t i = first; i < groups; i += stride) {
    float4 p = p4[i], m = m4[i], v = v4[i];
    const float4 g = g4[i];
    adam_element(p.x, g.x, m.x, v.x, s);
    adam_element(p.y, g.y, m.y, v.y, s);
    adam_element(p.z, g.z, m.z, v.z, s);
    adam_element(p.w, g.w, m.w, v.w, s);
    p4[i] = p;
    m4[i] = m;
    v4[i] = v;
  }
  for (std::int64_t i = groups * 4 + first; i < count; i += stride) {
    adam_element(params[i], grads[i], exp_avg[i], exp_avg_sq[i], s);
  }
}

__device__ __forceinline__ unsigned long long global_timer_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void gate_kernel(unsigned long long ns) {
  const unsigned long long start = global_timer_ns();
  while (global_timer_ns() - start < ns) __nanosleep(1000);
}

}  // namespace

void launch_adam_step(const AdamStep& a, void* stream) {
  if (a.count <= 0) return;
  const AdamScalars s{a.lr,
                      a.beta1,
                      a.beta2,
                      a.eps,
                      1.0f / (1.0f - std::pow(a.beta1, static_cast<float>(a.step))),
                      1.0f / (1.0f - std::pow(a.beta2, static_cast<float>(a.step)))};
  int device = 0, sms = 0;
  STRAIT_CUDA_CHECK(cudaGetDevice(&device));
  STRAIT_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  constexpr int kThreads = 256;
  // Enough blocks to fill every SM (8 x 256 threads each); each thread then strides.
  const std::int64_t wanted = (a.count / 4 + kThreads) / kThreads;
  const auto blocks = static_cast<unsigned>(std::min<std::int64_t>(wanted, std::int64_t{sms} * 8));
  adam_step_kernel<<<blocks, kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
      a.params, a.grads, a.exp_avg, a.exp_avg_sq, a.count, s);
  STRAIT_CUDA_CHECK(cudaGetLastError());
}

void launch_gate(double microseconds, void* stream) {
  const auto ns = static_cast<unsigned long long>(std::max(0.0, microseconds) * 1e3);
  gate_kernel<<<1, 1, 0, static_cast<cudaStream_t>(stream)>>>(ns);
  STRAIT_CUDA_CHECK(cudaGetLastError());
}

}  // namespace strait::calibration
