#pragma once
// CompletionHeap: predicted activity completions, earliest first, ties in start order.
// A prediction is never removed when it changes: the owner bumps the activity's version
// and pushes a new entry, and drops entries whose version is stale when they reach the
// top (lazy invalidation). compact() drops them all when they pile up.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "sim/core/huge_pages.hpp"
#include "sim/core/units.hpp"
#include "sim/engine/touches.hpp"

namespace strait::sim::engine::detail {

struct Completion {
  Time finish;
  std::uint64_t sequence;  // start order of the activity: breaks ties in finish time
  std::uint32_t activity;  // slot in the activity pool
  std::uint32_t version;   // the slot's version when this prediction was made
  Touches touches;         // what its on_done reads first (ActivitySpec::touches)
};

// A 4-ary heap: half the depth of a binary heap and a node's children within three cache
// lines (40-byte entries), which matters when a thousand flows of a ring step all end at
// one instant.
class CompletionHeap {
 public:
  void push(const Completion& c) {
    std::size_t hole = heap_.size();
    heap_.push_back(c);
    while (hole > 0) {
      const std::size_t parent = (hole - 1) / kArity;
      if (!earlier(c, heap_[parent])) break;
      heap_[hole] = heap_[parent];
      hole = parent;
    }
    heap_[hole] = c;
  }
  void pop() {
    const Completion last = heap_.back();
    heap_.pop_back();
    if (!heap_.empty()) sift_down(0, last);
  }
  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }
  const Completion& top() const { return heap_.front(); }

  /// Keeps only the entries for which `is_live(entry)` holds.
  template <class IsLive>
  void compact(IsLive is_live) {
    std::erase_if(heap_, [&](const Completion& c) { return !is_live(c); });
    for (std::size_t i = heap_.size(); i-- > 0;) sift_down(i, heap_[i]);
  }

 private:
  static constexpr std::size_t kArity = 4;
  static bool earlier(const Completion& a, const Completion& b) {
    return a.finish != b.finish ? a.finish < b.finish : a.sequence < b.sequence;
  }
  // Places `c` at `hole` or below, moving earlier children up.
  void sift_down(std::size_t hole, const Completion c) {
    const std::size_t n = heap_.size();
    for (;;) {
      const std::size_t first = hole * kArity + 1;
      if (first >= n) break;
      const std::size_t end = std::min(first + kArity, n);
      std::size_t best = first;
      for (std::size_t k = first + 1; k < end; ++k) {
        if (earlier(heap_[k], heap_[best])) best = k;
      }
      if (!earlier(heap_[best], c)) break;
      heap_[hole] = heap_[best];
      hole = best;
    }
    heap_[hole] = c;
  }
  HugeVector<Completion> heap_;
};

}  // namespace strait::sim::engine::detail
