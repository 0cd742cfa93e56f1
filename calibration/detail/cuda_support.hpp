#pragma once
// What the CUDA kernel backend and the NCCL collectives share: the rank's GPU, how records
// name it and the CUDA versions they carry, and a stream with an event pair that times the
// work queued on it. Include only from CUDA-enabled sources (built with STRAIT_HAVE_CUDA).

#include <map>
#include <string>

#include <cuda_runtime_api.h>

namespace strait::calibration::detail {

/// Makes GPU `local_rank % device count` current for this thread and returns its index.
/// Throws Error when no CUDA device is visible.
int select_cuda_device(int local_rank);

/// The device as records name it: "NVIDIA H100 80GB HBM3 (driver 580.159.04)" (the kernel
/// module's version from /proc, else the CUDA version the driver supports).
std::string cuda_device_description(int device);

/// {"cuda_runtime": "13.0", "cuda_driver": "13.0"} and, where /proc has it,
/// {"nvidia_driver": "580.159.04"}.
std::map<std::string, std::string> cuda_versions();

/// A non-blocking stream of the current device and two events timing work on it; one
/// sample is start(), the work queued on stream(), stop_us(). Not copyable.
class StreamTimer {
 public:
  StreamTimer();
  StreamTimer(const StreamTimer&) = delete;
  StreamTimer& operator=(const StreamTimer&) = delete;
  ~StreamTimer();

  cudaStream_t stream() const { return stream_; }
  /// Records the start event on the stream.
  void start();
  /// Records the stop event, waits for it and returns the microseconds since start().
  double stop_us();
  /// Waits for everything queued on the stream.
  void synchronize();

 private:
  void release() noexcept;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t start_ = nullptr;
  cudaEvent_t stop_ = nullptr;
};

}  // namespace strait::calibration::detail
