#pragma once
// Sample load balancing: assigns items with costs to k bins so that the largest bin
// cost is small. Greedy is LPT (longest processing time first: sort by cost descending,
// each to the least-loaded bin; at most 4/3 of optimal). Karmarkar-Karp is the multiway
// largest differencing method: every item starts as a k-tuple (cost, 0, ..., 0); the two
// tuples with the largest spread are merged largest-with-smallest until one remains.
// Ties break by index, so results are deterministic.

#include <cstdint>
#include <vector>

namespace strait::sim::workload {

/// Bin index of each item (LPT).
std::vector<int> balance_greedy(const std::vector<double>& costs, int bins);
/// Bin index of each item (multiway Karmarkar-Karp); O(n k log n) time, O(n k) memory.
std::vector<int> balance_karmarkar_karp(const std::vector<double>& costs, int bins);

}  // namespace strait::sim::workload
