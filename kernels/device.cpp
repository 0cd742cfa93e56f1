#include "kernels/device.hpp"

#include <cstdint>
#include <limits>
#include <mutex>
#include <set>
#include <utility>

#ifdef STRAIT_HAVE_CUDA
#include <fmt/format.h>

#include "kernels/detail/cuda_check.hpp"
#endif

namespace strait::kernels {

#ifdef STRAIT_HAVE_CUDA

void throw_cuda_error(cudaError_t err, const char* call, const char* file, int line) {
  throw CudaError(fmt::format("{}:{}: {}: {}", file, line, call, cudaGetErrorString(err)));
}

namespace detail {
void keep_freed_scratch_mapped() {
  int device = 0;
  STRAIT_CUDA_CHECK(cudaGetDevice(&device));
  // Once per device: it runs before every TBE and jagged-scan call.
  static std::mutex mutex;
  static std::set<int> done;
  const std::lock_guard<std::mutex> lock(mutex);
  if (done.count(device)) return;
  cudaMemPool_t pool = nullptr;
  STRAIT_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, device));
  std::uint64_t threshold = std::numeric_limits<std::uint64_t>::max();
  STRAIT_CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));
  done.insert(device);
}
}  // namespace detail

namespace {
cudaStream_t as_stream(void* s) { return static_cast<cudaStream_t>(s); }
}  // namespace

int cuda_device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();  // clear the sticky "no device/driver" error
    return 0;
  }
  return n;
}

std::string cuda_device_name() {
  if (cuda_device_count() == 0) return "";
  cudaDeviceProp prop{};
  STRAIT_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  return prop.name;
}

void cuda_synchronize() { STRAIT_CUDA_CHECK(cudaDeviceSynchronize()); }

void cuda_copy_device_to_device(void* dst, const void* src, std::size_t bytes, void* stream) {
  STRAIT_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, as_stream(stream)));
}

DeviceBuffer::DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
  if (bytes > 0) STRAIT_CUDA_CHECK(cudaMalloc(&ptr_, bytes));
}
DeviceBuffer::~DeviceBuffer() {
  if (ptr_ != nullptr) (void)cudaFree(ptr_);
}
void DeviceBuffer::upload(const void* host, std::size_t bytes) {
  if (bytes > bytes_)
    throw CudaError(fmt::format("DeviceBuffer::upload: {} bytes into {}", bytes, bytes_));
  if (bytes > 0) STRAIT_CUDA_CHECK(cudaMemcpy(ptr_, host, bytes, cudaMemcpyHostToDevice));
}
void DeviceBuffer::download(void* host, std::size_t bytes) const {
  if (bytes > bytes_)
    throw CudaError(fmt::format("DeviceBuffer::download: {} bytes from {}", bytes, bytes_));
  if (bytes > 0) STRAIT_CUDA_CHECK(cudaMemcpy(host, ptr_, bytes, cudaMemcpyDeviceToHost));
}
void DeviceBuffer::zero() {
  if (bytes_ > 0) STRAIT_CUDA_CHECK(cudaMemset(ptr_, 0, bytes_));
}

DeviceTimer::DeviceTimer() {
  cudaEvent_t a = nullptr, b = nullptr;
  STRAIT_CUDA_CHECK(cudaEventCreate(&a));
  STRAIT_CUDA_CHECK(cudaEventCreate(&b));
  start_ = a;
  stop_ = b;
}
DeviceTimer::~DeviceTimer() {
  (void)cudaEventDestroy(static_cast<cudaEvent_t>(start_));
  (void)cudaEventDestroy(static_cast<cudaEvent_t>(stop_));
}
void DeviceTimer::start() { STRAIT_CUDA_CHECK(cudaEventRecord(static_cast<cudaEvent_t>(start_))); }
double DeviceTimer::stop_ms() {
  STRAIT_CUDA_CHECK(cudaEventRecord(static_cast<cudaEvent_t>(stop_)));
  STRAIT_CUDA_CHECK(cudaEventSynchronize(static_cast<cudaEvent_t>(stop_)));
  float ms = 0;
  STRAIT_CUDA_CHECK(
      cudaEventElapsedTime(&ms, static_cast<cudaEvent_t>(start_), static_cast<cudaEvent_t>(stop_)));
  return ms;
}

#else  // no CUDA in this build

namespace {
[[noreturn]] void no_cuda(const char* what) {
  throw CudaError(std::string(what) + ": strait was built without CUDA (STRAIT_HAVE_CUDA unset)");
}
}  // namespace

int cuda_device_count() { return 0; }
std::string cuda_device_name() { return ""; }
void cuda_synchronize() { no_cuda("cuda_synchronize"); }
void cuda_copy_device_to_device(void*, const void*, std::size_t, void*) {
  no_cuda("cuda_copy_device_to_device");
}
DeviceBuffer::DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
  if (bytes > 0) no_cuda("DeviceBuffer");
}
DeviceBuffer::~DeviceBuffer() = default;
void DeviceBuffer::upload(const void*, std::size_t) { no_cuda("DeviceBuffer::upload"); }
void DeviceBuffer::download(void*, std::size_t) const { no_cuda("DeviceBuffer::download"); }
void DeviceBuffer::zero() { no_cuda("DeviceBuffer::zero"); }
DeviceTimer::DeviceTimer() { no_cuda("DeviceTimer"); }
DeviceTimer::~DeviceTimer() = default;
void DeviceTimer::start() { no_cuda("DeviceTimer::start"); }
double DeviceTimer::stop_ms() { no_cuda("DeviceTimer::stop_ms"); }

#endif

DeviceBuffer::DeviceBuffer(DeviceBuffer&& o) noexcept
    : ptr_(std::exchange(o.ptr_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  if (this != &o) {
    DeviceBuffer old(std::move(*this));
    ptr_ = std::exchange(o.ptr_, nullptr);
    bytes_ = std::exchange(o.bytes_, 0);
  }
  return *this;
}

}  // namespace strait::kernels
