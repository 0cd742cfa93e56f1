#pragma once
// HugePageAllocator: for the simulator's largest arrays, walked in no useful order (the
// replay's per-op state, per-kernel costs and per-collective sizes: gigabytes at 131,072
// GPUs). A block of kHugeBlock or more is aligned to 2 MiB and advised to the kernel as
// transparent huge pages (madvise MADV_HUGEPAGE; Debian's default THP mode "madvise" gives
// them only to memory that asks), which cuts the page faults of first touch and the TLB
// misses of every access after. Smaller blocks come from the ordinary heap. Where the
// advice is refused or unknown (not Linux), the memory is ordinary pages: same results.

#include <cstddef>
#include <cstdlib>
#include <new>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace strait {

inline constexpr std::size_t kHugePage = std::size_t{2} << 20;
inline constexpr std::size_t kHugeBlock = std::size_t{4} << 20;

/// Allocates `bytes`, on huge pages when it is kHugeBlock or more (see the file comment).
inline void* allocate_huge_pages(std::size_t bytes) {
  if (bytes < kHugeBlock) {
    if (void* p = std::malloc(bytes)) return p;
    throw std::bad_alloc();
  }
  const std::size_t rounded = (bytes + kHugePage - 1) / kHugePage * kHugePage;
  void* p = std::aligned_alloc(kHugePage, rounded);
  if (!p) throw std::bad_alloc();
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  madvise(p, rounded, MADV_HUGEPAGE);  // advice only: failure leaves ordinary pages
#endif
  return p;
}

template <typename T>
struct HugePageAllocator {
  using value_type = T;
  HugePageAllocator() = default;
  template <typename U>
  HugePageAllocator(const HugePageAllocator<U>&) noexcept {}
  T* allocate(std::size_t n) { return static_cast<T*>(allocate_huge_pages(n * sizeof(T))); }
  void deallocate(T* p, std::size_t) noexcept { std::free(p); }
  template <typename U>
  bool operator==(const HugePageAllocator<U>&) const noexcept {
    return true;
  }
};

/// A vector whose large buffers sit on huge pages.
template <typename T>
using HugeVector = std::vector<T, HugePageAllocator<T>>;

}  // namespace strait
