#include "calibration/detail/cuda_support.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "kernels/cuda_check.hpp"
#include "sim/core/error.hpp"

namespace strait::calibration::detail {
namespace {

// CUDA encodes versions as 1000 * major + 10 * minor.
std::string cuda_version_string(int v) { return fmt::format("{}.{}", v / 1000, (v % 1000) / 10); }

// The kernel module's version, e.g. "580.159.04", from the first line of
// /proc/driver/nvidia/version ("NVRM version: NVIDIA UNIX ... Kernel Module  580.159.04 ...");
// "" where there is no such file (containers without it, other systems).
std::string nvidia_driver_version() {
  std::ifstream in("/proc/driver/nvidia/version");
  std::string line;
  if (!in || !std::getline(in, line)) return "";
  std::istringstream words(line);
  std::string w;
  while (words >> w) {
    const bool numeric = std::all_of(w.begin(), w.end(),
                                     [](char ch) { return (ch >= '0' && ch <= '9') || ch == '.'; });
    if (numeric && w.find('.') != std::string::npos && w.front() != '.') return w;
  }
  return "";
}

}  // namespace

int select_cuda_device(int local_rank) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    (void)cudaGetLastError();  // clear the "no device / no driver" error
    throw Error("strait calibrate --backend cuda: no CUDA device found (cudaGetDeviceCount)");
  }
  const int device = (local_rank % count + count) % count;
  STRAIT_CUDA_CHECK(cudaSetDevice(device));
  return device;
}

std::string cuda_device_description(int device) {
  cudaDeviceProp prop{};
  STRAIT_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  std::string driver = nvidia_driver_version();
  if (driver.empty()) {
    int v = 0;
    STRAIT_CUDA_CHECK(cudaDriverGetVersion(&v));
    driver = "for CUDA " + cuda_version_string(v);
  }
  return fmt::format("{} (driver {})", prop.name, driver);
}

std::map<std::string, std::string> cuda_versions() {
  int runtime = 0, driver = 0;
  STRAIT_CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
  STRAIT_CUDA_CHECK(cudaDriverGetVersion(&driver));
  std::map<std::string, std::string> out{{"cuda_runtime", cuda_version_string(runtime)},
                                         {"cuda_driver", cuda_version_string(driver)}};
  if (std::string module = nvidia_driver_version(); !module.empty()) out["nvidia_driver"] = module;
  return out;
}

StreamTimer::StreamTimer() {
  try {
    STRAIT_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    STRAIT_CUDA_CHECK(cudaEventCreate(&start_));
    STRAIT_CUDA_CHECK(cudaEventCreate(&stop_));
  } catch (...) {
    release();
    throw;
  }
}

StreamTimer::~StreamTimer() { release(); }

void StreamTimer::release() noexcept {
  if (stop_ != nullptr) (void)cudaEventDestroy(stop_);
  if (start_ != nullptr) (void)cudaEventDestroy(start_);
  if (stream_ != nullptr) (void)cudaStreamDestroy(stream_);
  stop_ = start_ = nullptr;
  stream_ = nullptr;
}

void StreamTimer::start() { STRAIT_CUDA_CHECK(cudaEventRecord(start_, stream_)); }

double StreamTimer::stop_us() {
  STRAIT_CUDA_CHECK(cudaEventRecord(stop_, stream_));
  STRAIT_CUDA_CHECK(cudaEventSynchronize(stop_));
  float ms = 0;
  STRAIT_CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
  return static_cast<double>(ms) * 1e3;
}

void StreamTimer::synchronize() { STRAIT_CUDA_CHECK(cudaStreamSynchronize(stream_)); }

}  // namespace strait::calibration::detail
