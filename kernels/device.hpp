#pragma once
// Minimal CUDA device helpers for the kernels' users, tests and benchmarks: device
// discovery, an owning device buffer, host<->device copies and an event timer.
// In a build without CUDA every call except cuda_device_count() throws CudaError, and
// cuda_device_count() returns 0, so callers can test for a device and skip.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/types.hpp"

namespace strait::kernels {

/// Number of visible CUDA devices; 0 without CUDA, a driver or a device (never throws).
int cuda_device_count();
/// Name of device 0, or "" without one.
std::string cuda_device_name();
/// Waits for all work on the current device.
void cuda_synchronize();
/// Device-to-device copy of `bytes` on `stream` (nullptr: default stream).
void cuda_copy_device_to_device(void* dst, const void* src, std::size_t bytes,
                                void* stream = nullptr);

/// An owning allocation of device memory (cudaMalloc/cudaFree); move-only.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes);
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  ~DeviceBuffer();

  /// A device buffer holding a copy of `host`.
  template <class T>
  static DeviceBuffer from_host(const std::vector<T>& host) {
    DeviceBuffer b(host.size() * sizeof(T));
    b.upload(host.data(), host.size() * sizeof(T));
    return b;
  }
  /// Copies the whole buffer to a host vector of T.
  template <class T>
  std::vector<T> to_host() const {
    std::vector<T> out(bytes_ / sizeof(T));
    download(out.data(), out.size() * sizeof(T));
    return out;
  }

  void upload(const void* host, std::size_t bytes);
  void download(void* host, std::size_t bytes) const;
  void zero();
  void* data() { return ptr_; }
  const void* data() const { return ptr_; }
  template <class T>
  T* as() {
    return static_cast<T*>(ptr_);
  }
  template <class T>
  const T* as() const {
    return static_cast<const T*>(ptr_);
  }
  std::size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

/// Times device work with CUDA events on the default stream: start(); ...; stop_ms().
class DeviceTimer {
 public:
  DeviceTimer();
  DeviceTimer(const DeviceTimer&) = delete;
  DeviceTimer& operator=(const DeviceTimer&) = delete;
  ~DeviceTimer();
  void start();
  /// Milliseconds since start(), after waiting for the recorded work.
  double stop_ms();

 private:
  void* start_ = nullptr;
  void* stop_ = nullptr;
};

}  // namespace strait::kernels
