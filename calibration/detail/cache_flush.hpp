#pragma once
// CacheFlush: evicts this core's caches and its share of the last-level cache by writing a
// buffer twice the last-level cache's size (sysconf; 32 MiB where a VM does not say). The
// CPU backend's cold kernel samples start after one (cpu_kernels.cpp).
// evict(data, bytes): evicts one buffer's cache lines from every cache (clflush on x86-64;
// elsewhere a whole CacheFlush): the collectives' samples start with their send and receive
// buffers cold (mpi_collectives.cpp), as a step reaches them, at a cost of the buffer's size
// rather than the cache's (256 MiB here: a whole flush per sample made the collective part of
// the suite 6x longer).

#include <unistd.h>

#include <cstddef>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace strait::calibration::detail {

class CacheFlush {
 public:
  CacheFlush() : buffer_(2 * last_level_bytes() / sizeof(float), 1.0f) {}

  // Writes every cache line of the buffer, evicting what it displaces.
  void operator()() {
    for (std::size_t i = 0; i < buffer_.size(); i += 16) buffer_[i] += 1.0f;
    sink_ = sink_ + buffer_[buffer_.size() / 2];
  }

 private:
  static std::size_t last_level_bytes() {
    const long size = sysconf(_SC_LEVEL3_CACHE_SIZE);
    return size > 0 ? static_cast<std::size_t>(size) : std::size_t{32} << 20;
  }

  std::vector<float> buffer_;
  volatile float sink_ = 0;  // keeps the writes observable
};

/// Evicts the cache lines of `bytes` bytes at `data` from every cache level.
inline void evict(const void* data, std::size_t bytes) {
#if defined(__x86_64__)
  const auto* p = static_cast<const char*>(data);
  for (std::size_t i = 0; i < bytes; i += 64) _mm_clflush(p + i);
  if (bytes > 0) _mm_clflush(p + bytes - 1);
  _mm_mfence();
#else
  static CacheFlush flush;
  flush();
  (void)data;
  (void)bytes;
#endif
}

}  // namespace strait::calibration::detail
