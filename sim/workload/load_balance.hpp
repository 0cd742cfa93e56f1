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

/// Karmarkar-Karp bounded to about `max_work` items x bins: exact where n k fits; else in
/// two levels, KK into g groups (g the largest divisor of k at most sqrt(k)) and KK of
/// each group's items into its k / g bins, O(n (g + k / g) log n), about 2 n sqrt(k) for a
/// square k (1,024 ranks x 32 samples: 2.1 M instead of 33.6 M). A bounded approximation:
/// the level-1 split fixes which items may share a bin, so LPT (balance_greedy) is returned
/// instead where its largest bin is smaller. A k without such a divisor (a prime) is LPT.
std::vector<int> balance_karmarkar_karp_bounded(const std::vector<double>& costs, int bins,
                                                double max_work);

}  // namespace strait::sim::workload
