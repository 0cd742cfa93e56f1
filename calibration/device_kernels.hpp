#pragma once
// The CUDA backend's own two kernels (device_kernels.cu), which `strait exec --backend cuda`
// runs too (its optimizer ops, the gate before a timed run). Include only from CUDA builds:
// - One Adam step over f32 tensors (Kingma and Ba, 2015, no weight decay):
//     m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2;
//     p -= lr (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps)
//   Each element reads p, g, m, v and writes p, m, v: 28 bytes, the optimizer family's
//   traffic in kernel_case.hpp.
// - A gate: a kernel that waits a given time, queued before a timed sample so the host
//   has queued the sample's launches before the GPU reaches them (the sample's time is
//   then the device's, not the host's launch latency).

#include <cstdint>

namespace strait::calibration {

struct AdamStep {
  float* params = nullptr;
  const float* grads = nullptr;
  float* exp_avg = nullptr;     // m
  float* exp_avg_sq = nullptr;  // v
  std::int64_t count = 0;
  float lr = 1e-3f;
  float beta1 = 0.9f;
  float beta2 = 0.999f;
  float eps = 1e-8f;
  int step = 1;  // t >= 1, for the bias corrections
};

/// Queues the step on `stream` (a cudaStream_t; nullptr: the default stream) of the
/// current device; the pointers are device memory. Throws CudaError if the launch fails.
void launch_adam_step(const AdamStep& step, void* stream);

/// Queues a one-thread kernel on `stream` that returns after `microseconds`.
void launch_gate(double microseconds, void* stream);

}  // namespace strait::calibration
