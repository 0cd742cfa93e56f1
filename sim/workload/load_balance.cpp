#include "sim/workload/load_balance.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <queue>
#include <tuple>
#include <utility>

namespace strait::sim::workload {
namespace {

// Items by cost, largest first, equal costs in index order, as (cost, index). Finite
// non-negative doubles order as their bit patterns (IEEE 754; -0 is taken as 0, which adds
// the same to a load), so a stable LSD radix sort on 16-bit digits of the complemented bits
// orders them in at most 4 passes, skipping digits every item shares (a datacenter's
// 524,288 samples at 131,072 GPUs, twice per step); other costs take a comparison sort.
// Costs travel with their indices, so LPT then reads them in order.
std::vector<std::pair<double, std::int32_t>> lpt_order(const std::vector<double>& costs) {
  const auto n = costs.size();
  std::vector<std::pair<double, std::int32_t>> out(n);
  const bool radix =
      std::all_of(costs.begin(), costs.end(), [](double c) { return std::isfinite(c) && c >= 0; });
  if (!radix) {
    std::vector<std::int32_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](std::int32_t x, std::int32_t y) {
      return costs[static_cast<std::size_t>(x)] > costs[static_cast<std::size_t>(y)];
    });
    for (std::size_t k = 0; k < n; ++k)
      out[k] = {costs[static_cast<std::size_t>(order[k])], order[k]};
    return out;
  }
  struct Item {
    std::uint64_t key;  // complemented bits: ascending keys are descending costs
    std::int32_t index;
  };
  std::vector<Item> items(n), next(n);
  for (std::size_t i = 0; i < n; ++i)
    items[i] = {~std::bit_cast<std::uint64_t>(costs[i] + 0.0), static_cast<std::int32_t>(i)};
  std::vector<std::uint32_t> count(std::size_t{1} << 16);
  for (int shift = 0; shift < 64; shift += 16) {
    std::fill(count.begin(), count.end(), 0u);
    for (const auto& it : items) ++count[(it.key >> shift) & 0xFFFF];
    if (n == 0 || count[(items[0].key >> shift) & 0xFFFF] == n) continue;  // one digit
    std::uint32_t at = 0;
    for (auto& c : count) at += std::exchange(c, at);
    for (const auto& it : items) next[count[(it.key >> shift) & 0xFFFF]++] = it;
    items.swap(next);
  }
  for (std::size_t k = 0; k < n; ++k)
    out[k] = {std::bit_cast<double>(~items[k].key), items[k].index};
  return out;
}

// The bins as a binary min-heap of keys ordered as (load, bin), whose top is replaced in
// place (one sift down per item instead of a pop and a push). Keys are distinct, so every
// min-heap picks the same bins.
// `empty(b)`: bin b's key at load 0; `bin_of(key)`; `add(key, cost)`: the key with cost added.
template <class Key, class Empty, class Bin, class Add>
void lpt_heap(const std::vector<std::pair<double, std::int32_t>>& order, int bins,
              std::vector<int>& out, Empty empty, Bin bin_of, Add add) {
  std::vector<Key> heap(static_cast<std::size_t>(std::max(bins, 1)));
  for (std::size_t b = 0; b < heap.size(); ++b) heap[b] = empty(static_cast<int>(b));
  const std::size_t n = heap.size();
  for (const auto& [cost, i] : order) {
    out[static_cast<std::size_t>(i)] = bin_of(heap[0]);
    const Key moved = add(heap[0], cost);
    std::size_t at = 0;
    for (;;) {
      std::size_t child = 2 * at + 1;
      if (child >= n) break;
      if (child + 1 < n && heap[child + 1] < heap[child]) ++child;
      if (!(heap[child] < moved)) break;
      heap[at] = heap[child];
      at = child;
    }
    heap[at] = moved;
  }
}

}  // namespace

std::vector<int> balance_greedy(const std::vector<double>& costs, int bins) {
  // Items by cost, largest first (equal costs in index order), each to the bin of least
  // load (equal loads: the lowest bin): a datacenter's 524,288 samples into 16,384 bins at
  // 131,072 GPUs, twice per step.
  const auto order = lpt_order(costs);
  std::vector<int> out(costs.size(), 0);
  // Whole-number costs (an HSTU sample's a L + b L^2) whose loads stay below 2^52 (LPT's
  // largest load is at most the mean load plus the largest cost) sum exactly in doubles and
  // in integers alike, so (load, bin) can be one integer, load * 2^k + bin (k bits for the
  // bin; loads below 2^(63 - k)): one comparison per heap step, 2.7x faster.
  const int k =
      std::max(1, static_cast<int>(std::bit_width(static_cast<unsigned>(std::max(bins, 1)))));
  double total = 0, largest = 0;
  bool whole = true;
  for (double c : costs) {
    whole = whole && c >= 0 && c == std::floor(c) && c < 0x1p52;
    total += c;
    largest = std::max(largest, c);
  }
  const double bound = (total / std::max(bins, 1) + largest) * 1.01;  // margin for total's rounding
  if (whole && bound < std::ldexp(1.0, std::min(52, 63 - k))) {
    lpt_heap<std::uint64_t>(
        order, bins, out, [](int b) { return static_cast<std::uint64_t>(b); },
        [k](std::uint64_t key) { return static_cast<int>(key & ((std::uint64_t{1} << k) - 1)); },
        [k](std::uint64_t key, double cost) {
          return key + (static_cast<std::uint64_t>(cost) << k);
        });
    return out;
  }
  using Entry = std::pair<double, int>;  // (load, bin)
  lpt_heap<Entry>(
      order, bins, out,
      [](int b) {
        return Entry{0.0, b};
      },
      [](const Entry& e) { return e.second; },
      [](const Entry& e, double cost) {
        return Entry{e.first + cost, e.second};
      });
  return out;
}

namespace {

// A Karmarkar-Karp tuple slot: its sum and the list of its items (chained through `next`).
struct KkSlot {
  double sum = 0;
  std::int32_t head = -1, tail = -1;
};

// Stable sort of a tuple's slots by sum.
void sort_slots(std::vector<KkSlot>& t, bool descending) {
  std::stable_sort(t.begin(), t.end(), [&](const KkSlot& x, const KkSlot& y) {
    return descending ? x.sum > y.sum : x.sum < y.sum;
  });
}

// Bin of every item: the final tuple's slots, largest first, are bins 0, 1, ...
std::vector<int> bins_of(std::vector<KkSlot>& last, const std::vector<std::int32_t>& next) {
  std::vector<int> out(next.size(), 0);
  sort_slots(last, true);
  for (std::size_t s = 0; s < last.size(); ++s) {
    for (auto i = last[s].head; i >= 0; i = next[static_cast<std::size_t>(i)]) {
      out[static_cast<std::size_t>(i)] = static_cast<int>(s);
    }
  }
  return out;
}

// Karmarkar-Karp with every tuple stored as all k slots: the reference, used when a cost is
// not positive (an empty slot and a zero-cost item would then tie in the sorts).
std::vector<int> karmarkar_karp_dense(const std::vector<double>& costs, int bins) {
  const auto k = static_cast<std::size_t>(bins);
  // A tuple is k slots (sum, head of an item list); items chain through `next`.
  using Slot = KkSlot;
  std::vector<std::int32_t> next(costs.size(), -1);
  std::vector<std::vector<Slot>> tuples;
  tuples.reserve(costs.size());
  using Entry = std::tuple<double, std::int32_t>;  // (spread, -tuple) so lower index wins ties
  std::priority_queue<Entry> heap;
  for (std::size_t i = 0; i < costs.size(); ++i) {
    std::vector<Slot> t(k);
    t[0] = {costs[i], static_cast<std::int32_t>(i), static_cast<std::int32_t>(i)};
    tuples.push_back(std::move(t));
    heap.emplace(costs[i], -static_cast<std::int32_t>(i));
  }
  while (heap.size() > 1) {
    const auto a = static_cast<std::size_t>(-std::get<1>(heap.top()));
    heap.pop();
    const auto b = static_cast<std::size_t>(-std::get<1>(heap.top()));
    heap.pop();
    auto& ta = tuples[a];
    auto& tb = tuples[b];
    sort_slots(ta, true);
    sort_slots(tb, false);
    for (std::size_t s = 0; s < k; ++s) {
      Slot& x = ta[s];
      const Slot& y = tb[s];
      x.sum += y.sum;
      if (y.head < 0) continue;
      if (x.head < 0) {
        x.head = y.head;
      } else {
        next[static_cast<std::size_t>(x.tail)] = y.head;
      }
      x.tail = y.tail;
    }
    tuples[b].clear();
    tuples[b].shrink_to_fit();
    const auto [lo, hi] = std::minmax_element(
        ta.begin(), ta.end(), [](const Slot& x, const Slot& y) { return x.sum < y.sum; });
    heap.emplace(hi->sum - lo->sum, -static_cast<std::int32_t>(a));
  }
  if (heap.empty()) return std::vector<int>(costs.size(), 0);
  return bins_of(tuples[static_cast<std::size_t>(-std::get<1>(heap.top()))], next);
}

// The same differencing with each tuple stored as its non-empty slots only, in slot order.
// With every cost > 0 an empty slot (sum 0) sorts after all non-empty ones when descending
// and before them when ascending, so pairing the i-th largest of one tuple with the slot
// k - 1 - i places up of the other, as the dense version does, yields the same tuples, the
// same spreads and the same assignment in O(m log m) per merge instead of O(k log k)
// (m = non-empty slots), and with no k-slot tuple per item.
std::vector<int> karmarkar_karp_sparse(const std::vector<double>& costs, int bins) {
  const auto k = static_cast<std::size_t>(bins);
  using Slot = KkSlot;
  std::vector<std::int32_t> next(costs.size(), -1);
  std::vector<std::vector<Slot>> tuples(costs.size());
  using Entry = std::tuple<double, std::int32_t>;  // (spread, -tuple) so lower index wins ties
  std::priority_queue<Entry> heap;
  for (std::size_t i = 0; i < costs.size(); ++i) {
    const auto id = static_cast<std::int32_t>(i);
    tuples[i] = {{costs[i], id, id}};
    heap.emplace(costs[i], -id);
  }
  std::vector<Slot> merged;
  while (heap.size() > 1) {
    const auto a = static_cast<std::size_t>(-std::get<1>(heap.top()));
    heap.pop();
    const auto b = static_cast<std::size_t>(-std::get<1>(heap.top()));
    heap.pop();
    auto& ta = tuples[a];
    auto& tb = tuples[b];
    sort_slots(ta, true);   // dense slots 0..ma-1, then empties
    sort_slots(tb, false);  // empties, then dense slots k-mb..k-1
    const std::size_t ma = ta.size(), mb = tb.size(), first_b = k - mb;
    merged.clear();
    for (std::size_t s = 0; s < ma; ++s) {
      Slot x = ta[s];
      if (s >= first_b) {
        const Slot& y = tb[s - first_b];
        x.sum += y.sum;
        next[static_cast<std::size_t>(x.tail)] = y.head;
        x.tail = y.tail;
      }
      merged.push_back(x);
    }
    for (std::size_t s = std::max(ma, first_b); s < k; ++s) merged.push_back(tb[s - first_b]);
    ta.swap(merged);
    tb.clear();
    tb.shrink_to_fit();
    const auto [lo, hi] = std::minmax_element(
        ta.begin(), ta.end(), [](const Slot& x, const Slot& y) { return x.sum < y.sum; });
    heap.emplace(hi->sum - (ta.size() < k ? 0.0 : lo->sum), -static_cast<std::int32_t>(a));
  }
  if (heap.empty()) return std::vector<int>(costs.size(), 0);
  return bins_of(tuples[static_cast<std::size_t>(-std::get<1>(heap.top()))], next);
}

}  // namespace

std::vector<int> balance_karmarkar_karp(const std::vector<double>& costs, int bins) {
  const bool positive =
      std::all_of(costs.begin(), costs.end(), [](double c) { return c > 0 && std::isfinite(c); });
  return positive ? karmarkar_karp_sparse(costs, bins) : karmarkar_karp_dense(costs, bins);
}

}  // namespace strait::sim::workload

namespace strait::sim::workload {

std::vector<int> balance_karmarkar_karp_bounded(const std::vector<double>& costs, int bins,
                                                double max_work) {
  const double n = static_cast<double>(costs.size());
  if (bins <= 1 || n * bins <= max_work) return balance_karmarkar_karp(costs, bins);
  int groups = 1;
  for (int g = static_cast<int>(std::sqrt(static_cast<double>(bins))); g > 1; --g) {
    if (bins % g == 0) {
      groups = g;
      break;
    }
  }
  if (groups == 1) return balance_greedy(costs, bins);
  const int per_group = bins / groups;
  const auto group_of = balance_karmarkar_karp(costs, groups);
  std::vector<int> out(costs.size(), 0);
  for (int g = 0; g < groups; ++g) {
    std::vector<std::size_t> members;
    std::vector<double> member_costs;
    for (std::size_t i = 0; i < costs.size(); ++i) {
      if (group_of[i] != g) continue;
      members.push_back(i);
      member_costs.push_back(costs[i]);
    }
    const auto bin_of = balance_karmarkar_karp(member_costs, per_group);
    for (std::size_t m = 0; m < members.size(); ++m) out[members[m]] = g * per_group + bin_of[m];
  }
  // The level-1 split constrains which items may share a bin: keep LPT where it does better.
  const auto lpt = balance_greedy(costs, bins);
  const auto largest = [&](const std::vector<int>& assignment) {
    std::vector<double> load(static_cast<std::size_t>(bins), 0.0);
    for (std::size_t i = 0; i < costs.size(); ++i)
      load[static_cast<std::size_t>(assignment[i])] += costs[i];
    return *std::max_element(load.begin(), load.end());
  };
  return largest(lpt) < largest(out) ? lpt : out;
}

}  // namespace strait::sim::workload
