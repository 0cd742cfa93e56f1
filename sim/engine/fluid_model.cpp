// Over 400 lines: the fluid model's progressive filling, components and incremental updates
// work on one Impl whose layout is the hot path.

#include "sim/engine/fluid_model.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <tuple>
#include <utility>

#include <boost/container/small_vector.hpp>

#include "sim/core/huge_pages.hpp"
#include "sim/engine/detail/completion_heap.hpp"

namespace strait::sim::engine {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr int kAllLevels = std::numeric_limits<int>::min();  // a change every level sees
constexpr std::uint32_t kVoid = std::numeric_limits<std::uint32_t>::max();  // a voided seed
// A dirty_resources entry with this bit names a parked activity whose resources are dirty
// (expanded at resolve(), so a ring step that parks and restarts costs O(1), not O(links)).
constexpr std::uint32_t kParkBit = 1u << 31;

struct Use {
  std::uint32_t resource;
  std::uint32_t slot;  // position of the matching Link in the resource's users
  double coefficient;
};

struct Link {
  std::uint32_t activity;
  std::uint32_t use;  // position of the matching Use in the activity's uses
};

enum class Fill : std::uint8_t { kPending, kOpen, kFrozen };

struct Activity {
  double remaining = 0;  // as of last_update
  double rate = 0;
  double weight = 1;
  double max_rate = kInf;      // the effective cap: own_max_rate, lowered by pacing
  double own_max_rate = kInf;  // as the spec gave it
  double pace = 0;             // latency in seconds (0: not paced)
  double paced_work = 0;       // the work its pacing cap was set for
  double bound = kInf;         // min(max_rate, rate alone on its resources): no rate exceeds it
  double new_rate = 0;         // scratch of resolve()
  Time last_update;
  std::uint64_t sequence = 0;
  std::uint32_t generation = 0;
  std::uint32_t version = 0;      // bumped on every new prediction and on release
  std::uint32_t mark = 0;         // epoch of the last resolve() that reached it
  std::uint32_t shared_uses = 0;  // uses on resources with more than one linked user
  // Its last parking, for a restart at the same instant: the rate it had, when, and the
  // entries of dirty_resources the parking added (voided if it takes its rate back).
  double parked_rate = 0;
  Time parked_at;
  std::uint64_t parked_resolve = 0;
  std::uint32_t park_entry = kVoid;  // its marker in dirty_resources, if it queued one
  int priority = 0;
  bool alive = false;   // linked to its resources (running or parked)
  bool parked = false;  // keep_linked and completed: linked, no rate, no work
  bool keep_linked = false;
  bool fresh = false;          // started, rate not yet set
  Fill fill = Fill::kPending;  // scratch of resolve()
  // Kept when the slot is released, so reuse does not allocate; a kernel's two (SMs, HBM)
  // inline: most activities are kernels, and a heap vector was a cache miss at every start
  // and end at 8,192 GPUs in flow mode.
  boost::container::small_vector<Use, 2> uses;
  std::function<void()> on_done;
  Touches touches = {};
};

struct Resource {
  double capacity = 0;
  double left = 0;             // scratch of resolve(): capacity not yet given out
  double weight_sum = 0;       // scratch: sum of weight * coefficient of unfrozen users
  double potential = 0;        // sum of coefficient * bound of its users
  double accumulated = 0;      // scratch of compute_bound()
  std::uint32_t unfrozen = 0;  // scratch: open users
  std::uint32_t mark = 0;
  bool saturated = false;
  /// Saturated (no capacity left) as of the last solve that reached it; a coupling resource
  /// is in every solve that changes its users' rates, so the flag is current for those. A
  /// user leaving a resource that was not full frees capacity nobody was waiting for.
  bool full = true;
  // A GPU's SMs and HBM have one or two users (a kernel, a communication kernel's hold):
  // inline, like Activity::uses.
  boost::container::small_vector<Link, 2> users;
};

// A candidate lambda of progressive filling: a resource's fair share (a lower bound, see
// fill_component) or an activity's max_rate / weight.
struct FillEntry {
  double share;
  std::uint32_t id;
  std::uint32_t kind;
};
constexpr std::uint32_t kResourceEntry = 0;
constexpr std::uint32_t kActivityEntry = 1;

struct LargerShare {
  bool operator()(const FillEntry& a, const FillEntry& b) const {
    return a.share != b.share ? a.share > b.share : a.id > b.id;
  }
};

bool constrains(const Resource& r, const Use& u) { return r.capacity < kInf && u.coefficient > 0; }

// A resource couples its users only if they could fill it: when the sum of their
// coefficient * bound stays within its capacity it can never saturate, so it cannot
// limit anyone beyond their own bounds and is left out of components and filling. This
// keeps the components of big collectives down to the links that are really shared.
bool couples(const Resource& r, const Use& u) {
  return constrains(r, u) && r.potential > r.capacity * (1 + 1e-9);
}

Time finish_after(Time now, double remaining, double rate) {
  if (remaining <= 0 || rate == kInf) return now;
  if (rate <= 0) return Time::infinite();
  // Beyond this the int64 picosecond count would overflow; such an activity never ends.
  if (remaining / rate * 1e12 >= 9.0e18 - static_cast<double>(now.ps())) return Time::infinite();
  return now + Time::for_work(remaining, rate);
}

}  // namespace

struct FluidModel::Impl {
  Clock clock;
  HugeVector<Resource> resources;
  std::vector<std::string> names;
  HugeVector<Activity> activities;
  std::vector<std::uint32_t> free_slots;
  std::size_t alive = 0;
  std::uint64_t next_sequence = 0;
  std::uint32_t epoch = 0;
  std::uint64_t resolves = 0;  // resolve() calls, to tell whether one ran since a parking
  detail::CompletionHeap heap;
  std::vector<std::uint32_t> dirty_activities;
  // (resource, priority of the change): users of a higher priority (smaller number) than
  // the activity that changed keep their rates (strict priority).
  std::vector<std::pair<std::uint32_t, int>> dirty_resources;
  // Solving: activities of a priority below `floor` (higher priority) are not re-solved;
  // their current rates are fixed loads on the resources they share with the component.
  int floor = kAllLevels;
  struct Seed {
    int priority;
    std::uint32_t kind;  // 0: activity, 1: resource (activities first, as they came)
    std::uint32_t order;
    std::uint32_t index;
  };
  std::vector<Seed> seeds;
  // Scratch buffers, kept between calls so that resolve() and complete_due() do not allocate.
  std::vector<std::uint32_t> component_activities;
  std::vector<std::uint32_t> component_resources;
  std::vector<std::uint32_t> pending;
  std::vector<std::uint32_t> open;
  std::size_t open_left = 0;  // scratch of fill_component: open activities of this level
  std::vector<FillEntry> fill_heap;
  std::vector<std::function<void()>> done;

  bool is_live(const detail::Completion& c) const {
    const Activity& a = activities[c.activity];
    return a.alive && a.version == c.version;
  }
  // The next completion reads its activity (liveness) and what its on_done touches: at
  // thousands of ranks cache misses, which this overlaps with the work done before.
  void prefetch(const detail::Completion& c) const {
    const Activity& a = activities[c.activity];
    __builtin_prefetch(&a.version);
    __builtin_prefetch(&a.alive);
    c.touches.prefetch();
  }
  void drop_stale_top() {
    while (!heap.empty() && !is_live(heap.top())) heap.pop();
  }
  /// The running activity `id`, or nullptr (finished, parked or stale).
  const Activity* find(ActivityId id) const {
    const Activity* a = find_linked(id);
    return a != nullptr && !a->parked ? a : nullptr;
  }
  /// The activity `id` if still linked (running or parked), or nullptr.
  const Activity* find_linked(ActivityId id) const {
    if (id.index >= activities.size()) return nullptr;
    const Activity& a = activities[id.index];
    return a.alive && a.generation == id.generation ? &a : nullptr;
  }
  /// Remaining work of `a` at `now` under its current rate.
  static double remaining_at(const Activity& a, Time now) {
    if (now <= a.last_update || !(a.rate > 0) || a.rate == kInf) return a.remaining;
    return std::max(0.0, a.remaining - a.rate * (now - a.last_update).to_s());
  }

  std::uint32_t allocate();
  std::uint32_t create(ActivitySpec spec, std::span<const ResourceUse> uses, Time at);
  void link(std::uint32_t index, std::uint32_t resource, double coefficient);
  void release(std::uint32_t index);
  void park(std::uint32_t index);
  void park_seeds(std::uint32_t index, int priority, std::uint32_t& order);
  /// The parking's marker of `a` if it is still queued (no resolve() since), else nullptr.
  std::pair<std::uint32_t, int>* pending_park(const Activity& a) {
    if (a.park_entry == kVoid || a.parked_resolve != resolves) return nullptr;
    return &dirty_resources[a.park_entry];
  }
  void begin(std::uint32_t index, Time now);
  void next_epoch();
  void reach(std::uint32_t index) {
    Activity& a = activities[index];
    if (a.alive && !a.parked && a.mark != epoch && a.priority >= floor) {
      a.mark = epoch;
      component_activities.push_back(index);
    }
  }
  void grow_component();
  void freeze(Activity& a, double lambda);
  bool fill_alone(Activity& a);
  bool fits_alone(std::uint32_t index, Time now);
  void run_alone(std::uint32_t index, Time at);
  double compute_bound(Activity& a);
  void add_potential(const Activity& a, double sign);
  void fill_component();
  // fill_component's steps, per priority level (highest first).
  bool reserve_fixed_loads();
  void take_highest_level();
  void seed_fill_heap();
  void open_activity(std::uint32_t index);
  void fill_level();
  void apply_rates(Time now);
  void set_rate(std::uint32_t index, double rate, Time now);
  void solve_component(Time now);
};

std::uint32_t FluidModel::Impl::allocate() {
  if (!free_slots.empty()) {
    const std::uint32_t index = free_slots.back();
    free_slots.pop_back();
    return index;
  }
  activities.emplace_back();
  return static_cast<std::uint32_t>(activities.size() - 1);
}

// Links activity `index` to a resource, keeping the shared-use counts: the resource's
// earlier sole user and the newcomer both gain a shared use.
void FluidModel::Impl::link(std::uint32_t index, std::uint32_t resource, double coefficient) {
  Activity& a = activities[index];
  Resource& r = resources[resource];
  if (r.users.size() == 1) ++activities[r.users.front().activity].shared_uses;
  if (!r.users.empty()) ++a.shared_uses;
  const auto use_index = static_cast<std::uint32_t>(a.uses.size());
  a.uses.push_back({resource, static_cast<std::uint32_t>(r.users.size()), coefficient});
  r.users.push_back({index, use_index});
}

// Unlinks the activity from its resources (O(1) each, by swapping with the last link)
// and frees its slot. Resources still used by others are marked dirty: their users may
// now go faster (not for an activity parked before this instant, which had no rate).
void FluidModel::Impl::release(std::uint32_t index) {
  Activity& a = activities[index];
  // Parked in this instant and now gone: its marker cannot name it any more, so the
  // resources it stood for (shared ones that couple) are queued one by one below.
  auto* marker = pending_park(a);
  if (marker != nullptr) marker->first = kVoid;
  const bool had_rate = !a.parked || marker != nullptr;
  a.park_entry = kVoid;
  for (const Use& u : a.uses) {
    Resource& r = resources[u.resource];
    const bool coupled = couples(r, u);
    const Link moved = r.users.back();
    r.users[u.slot] = moved;
    activities[moved.activity].uses[moved.use].slot = u.slot;
    r.users.pop_back();
    if (r.users.size() == 1) --activities[r.users.front().activity].shared_uses;
    if (constrains(r, u))
      r.potential = r.users.empty() ? 0.0 : r.potential - u.coefficient * a.bound;
    if (!r.users.empty() && coupled && had_rate && r.full)
      dirty_resources.emplace_back(u.resource, a.priority);
  }
  a.uses.clear();
  a.on_done = nullptr;
  if (!a.parked) --alive;
  a.alive = false;
  a.fresh = false;
  a.parked = false;
  a.shared_uses = 0;
  ++a.version;
  free_slots.push_back(index);
}

// Completion of a keep_linked activity: it stays linked with no work and no rate. Its
// resources' other users may now go faster.
void FluidModel::Impl::park(std::uint32_t index) {
  Activity& a = activities[index];
  a.parked = true;
  a.parked_rate = a.fresh ? -1.0 : a.rate;  // a fresh one never had a solved rate
  a.remaining = 0;
  a.rate = 0;
  a.on_done = nullptr;
  ++a.version;
  --alive;
  a.parked_at = clock();
  a.parked_resolve = resolves;
  a.park_entry = kVoid;
  if (a.shared_uses != 0) {
    a.park_entry = static_cast<std::uint32_t>(dirty_resources.size());
    dirty_resources.emplace_back(index | kParkBit, a.priority);
  }
}

// The resources a parked activity's marker stands for: those it shares and that couple.
void FluidModel::Impl::park_seeds(std::uint32_t index, int priority, std::uint32_t& order) {
  for (const Use& u : activities[index].uses) {
    const Resource& r = resources[u.resource];
    if (r.users.size() > 1 && couples(r, u) && r.full)
      seeds.push_back({priority, 1, order++, u.resource});
  }
}

// A started or restarted activity with its work set: one with no work or no finite
// constraint completes within this instant, before resolve(); the others get their rate
// from the next resolve().
void FluidModel::Impl::begin(std::uint32_t index, Time now) {
  Activity& a = activities[index];
  const bool constrained = a.bound < kInf;
  if (a.remaining <= 0 || !constrained) {
    a.rate = constrained ? 0.0 : kInf;
    a.fresh = false;
    heap.push({now, a.sequence, index, a.version, a.touches});
  } else {
    a.fresh = true;
    dirty_activities.push_back(index);
  }
}

// The rate `a` would get alone: min over its finite resources of capacity / (sum of its
// coefficients there), capped by max_rate. Sets max_rate: the spec's, lowered by pacing
// to paced_work / (paced_work / raw + pace), raw being the rate alone without pacing.
double FluidModel::Impl::compute_bound(Activity& a) {
  for (const Use& u : a.uses) {
    if (constrains(resources[u.resource], u)) resources[u.resource].accumulated += u.coefficient;
  }
  double bound = a.own_max_rate;
  for (const Use& u : a.uses) {
    Resource& r = resources[u.resource];
    if (r.accumulated > 0) {
      bound = std::min(bound, r.capacity / r.accumulated);
      r.accumulated = 0;
    }
  }
  a.max_rate = a.own_max_rate;
  if (a.pace > 0 && a.paced_work > 0) {
    const double alone = bound == kInf ? 0.0 : a.paced_work / bound;
    a.max_rate = std::min(a.max_rate, a.paced_work / (alone + a.pace));
    bound = std::min(bound, a.max_rate);
  }
  return bound;
}

void FluidModel::Impl::add_potential(const Activity& a, double sign) {
  for (const Use& u : a.uses) {
    Resource& r = resources[u.resource];
    if (constrains(r, u)) r.potential = std::max(0.0, r.potential + sign * u.coefficient * a.bound);
  }
}

void FluidModel::Impl::next_epoch() {
  if (++epoch != 0) return;
  for (Activity& a : activities) a.mark = 0;
  for (Resource& r : resources) r.mark = 0;
  epoch = 1;
}

// Breadth-first search over activity <-> resource links from one seed. Only finite
// resources with a positive coefficient couple activities; marks carry the epoch so
// nothing has to be cleared between calls.
void FluidModel::Impl::grow_component() {
  for (std::size_t k = 0; k < component_activities.size(); ++k) {
    const Activity& a = activities[component_activities[k]];
    for (const Use& u : a.uses) {
      Resource& r = resources[u.resource];
      if (r.mark == epoch || !couples(r, u)) continue;
      r.mark = epoch;
      component_resources.push_back(u.resource);
      for (const Link& l : r.users) reach(l.activity);
    }
  }
}

void FluidModel::Impl::freeze(Activity& a, double lambda) {
  a.fill = Fill::kFrozen;
  --open_left;
  a.new_rate = std::min(a.weight * lambda, a.bound);
  for (const Use& u : a.uses) {
    Resource& r = resources[u.resource];
    if (r.mark != epoch || !couples(r, u)) continue;
    r.weight_sum -= a.weight * u.coefficient;
    --r.unfrozen;
    if (r.saturated) {
      r.left = 0;
    } else {
      r.left = std::max(0.0, r.left - a.new_rate * u.coefficient);
    }
  }
}

// An activity alone in its component shares no resource that could saturate: its own
// bound is its rate.
bool FluidModel::Impl::fill_alone(Activity& a) {
  a.new_rate = a.bound;
  for (const Use& u : a.uses) {
    Resource& r = resources[u.resource];
    if (r.mark == epoch && couples(r, u))
      r.left = std::max(0.0, r.left - a.new_rate * u.coefficient);
  }
  return true;
}

// A started activity whose bound fits in what its coupling resources have left (their
// users' current rates counted, none of them full) runs at its bound and nobody else
// moves: no resource it touches saturates, so no other activity's bottleneck changes.
// Exact, and it spares the solve of the component it joins (a small flow crossing links
// that a collective spanning thousands of links also uses).
bool FluidModel::Impl::fits_alone(std::uint32_t index, Time now) {
  Activity& a = activities[index];
  if (!a.alive || a.parked || !a.fresh || a.mark == epoch || !(a.bound < kInf)) return false;
  // Its coefficients summed per resource (it may use one several times).
  for (const Use& u : a.uses) {
    if (couples(resources[u.resource], u)) resources[u.resource].accumulated += u.coefficient;
  }
  bool fits = true;
  for (const Use& u : a.uses) {
    Resource& r = resources[u.resource];
    if (r.accumulated == 0) continue;
    if (fits) {
      double load = a.bound * r.accumulated;
      for (const Link& l : r.users) {
        if (l.activity == index) continue;
        const Activity& other = activities[l.activity];
        const double c = other.uses[l.use].coefficient;
        if (c > 0 && other.rate > 0) load += other.rate * c;
      }
      fits = load <= r.capacity * (1 - 1e-9);
    }
    r.accumulated = 0;
  }
  if (!fits) return false;
  run_alone(index, now);
  return true;
}

// Activity `index` takes its bound as rate from `at`: nothing it couples with is full now.
void FluidModel::Impl::run_alone(std::uint32_t index, Time at) {
  Activity& a = activities[index];
  for (const Use& u : a.uses) {
    Resource& r = resources[u.resource];
    if (couples(r, u)) r.full = false;
  }
  set_rate(index, a.bound, at);
}

// Weighted progressive filling, one priority level at a time. Within a level every open
// activity runs at weight * lambda; lambda rises to the smallest fair share of a resource
// (left / weight_sum of its open users) or max_rate / weight of an activity, which freezes
// them, which raises the shares of the resources they touch. A min-heap of shares, each
// refreshed only when it reaches the top, keeps this near O(links log resources).
void FluidModel::Impl::fill_component() {
  if (!reserve_fixed_loads() && component_activities.size() == 1 &&
      fill_alone(activities[component_activities.front()]))
    return;
  pending.assign(component_activities.begin(), component_activities.end());
  while (!pending.empty()) {
    take_highest_level();
    seed_fill_heap();
    fill_level();
    for (const std::uint32_t index : open) {
      Activity& a = activities[index];
      if (a.fill == Fill::kOpen) {  // nothing finite constrains it: it finishes at once
        a.fill = Fill::kFrozen;
        a.new_rate = kInf;
      }
    }
  }
}

// Users above the floor keep their rates: what they take is gone before filling starts.
// Returns whether any such user takes something.
bool FluidModel::Impl::reserve_fixed_loads() {
  bool fixed_loads = false;
  for (const std::uint32_t r_index : component_resources) {
    Resource& r = resources[r_index];
    r.left = r.capacity;
    r.saturated = false;
    if (floor == kAllLevels) continue;
    for (const Link& l : r.users) {
      const Activity& a = activities[l.activity];
      const double coefficient = a.uses[l.use].coefficient;
      if (a.priority < floor && !a.parked && coefficient > 0 && a.rate > 0) {
        r.left -= a.rate * coefficient;
        fixed_loads = true;
      }
    }
    if (r.left <= r.capacity * 1e-12) r.left = 0;  // saturated by higher levels
  }
  return fixed_loads;
}

// Moves the pending activities of the highest priority (smallest number) to `open`.
void FluidModel::Impl::take_highest_level() {
  int level = activities[pending.front()].priority;
  for (const std::uint32_t index : pending) level = std::min(level, activities[index].priority);
  open.clear();
  std::size_t kept = 0;
  for (const std::uint32_t index : pending) {
    if (activities[index].priority == level) {
      open.push_back(index);
    } else {
      pending[kept++] = index;
    }
  }
  pending.resize(kept);
}

// The level's fill heap: each open activity's own limit, each shared resource's fair share.
void FluidModel::Impl::seed_fill_heap() {
  // A resource saturated by a higher level keeps left = 0: it saturates again at once.
  for (const std::uint32_t r_index : component_resources) {
    Resource& r = resources[r_index];
    r.weight_sum = 0;
    r.unfrozen = 0;
    r.saturated = false;
  }
  fill_heap.clear();
  for (const std::uint32_t index : open) open_activity(index);
  for (const std::uint32_t r_index : component_resources) {
    const Resource& r = resources[r_index];
    if (r.unfrozen > 0) fill_heap.push_back({r.left / r.weight_sum, r_index, kResourceEntry});
  }
  std::make_heap(fill_heap.begin(), fill_heap.end(), LargerShare{});
}

// Opens activity `index` on the resources it shares and queues its own limit: max_rate and
// the resources it uses that cannot saturate (the others limit it through their fair
// share). Equal to its bound when nothing is shared.
void FluidModel::Impl::open_activity(std::uint32_t index) {
  Activity& a = activities[index];
  a.fill = Fill::kOpen;
  double own = a.max_rate;
  for (const Use& u : a.uses) {
    Resource& r = resources[u.resource];
    if (r.mark == epoch && couples(r, u)) {
      r.weight_sum += a.weight * u.coefficient;
      ++r.unfrozen;
    } else if (constrains(r, u)) {
      r.accumulated += u.coefficient;
    }
  }
  for (const Use& u : a.uses) {
    Resource& r = resources[u.resource];
    if (r.accumulated > 0) {
      own = std::min(own, r.capacity / r.accumulated);
      r.accumulated = 0;
    }
  }
  if (own < kInf) fill_heap.push_back({own / a.weight, index, kActivityEntry});
}

// Raises lambda through the fill heap, freezing activities at their own limits and at the
// resources that saturate.
void FluidModel::Impl::fill_level() {
  double lambda = 0;
  // Once every activity of the level is frozen the remaining entries cannot change a
  // rate: stop (a component of a few big coflows has one entry per link).
  open_left = open.size();
  while (!fill_heap.empty() && open_left > 0) {
    std::pop_heap(fill_heap.begin(), fill_heap.end(), LargerShare{});
    const FillEntry e = fill_heap.back();
    fill_heap.pop_back();
    if (e.kind == kActivityEntry) {
      Activity& a = activities[e.id];
      if (a.fill != Fill::kOpen) continue;
      lambda = std::max(lambda, e.share);
      freeze(a, lambda);
      continue;
    }
    Resource& r = resources[e.id];
    if (r.saturated || r.unfrozen == 0) continue;
    // A freeze only raises the share of the resources it leaves (their share was >= lambda),
    // so an entry is a lower bound: re-queue it at its current share until it is exact.
    const double share = r.left / r.weight_sum;
    if (share > e.share) {
      fill_heap.push_back({share, e.id, kResourceEntry});
      std::push_heap(fill_heap.begin(), fill_heap.end(), LargerShare{});
      continue;
    }
    // Rounding can put a share a hair below lambda; lambda never falls.
    lambda = std::max(lambda, share);
    r.saturated = true;
    for (const Link& l : r.users) {
      Activity& a = activities[l.activity];
      if (a.fill == Fill::kOpen && a.uses[l.use].coefficient > 0) freeze(a, lambda);
    }
  }
}

// Only activities whose rate changed get a new prediction; an unchanged one keeps its
// heap entry, which is what makes steady components cheap.
void FluidModel::Impl::apply_rates(Time now) {
  for (const std::uint32_t index : component_activities) {
    Activity& a = activities[index];
    if (!a.fresh && a.new_rate == a.rate) continue;
    set_rate(index, a.new_rate, now);
  }
}

// A new rate from now: progress so far is banked and the finish predicted anew (the old
// prediction goes stale with the version).
void FluidModel::Impl::set_rate(std::uint32_t index, double rate, Time now) {
  Activity& a = activities[index];
  a.remaining = remaining_at(a, now);
  a.last_update = now;
  a.rate = rate;
  a.fresh = false;
  ++a.version;
  const Time finish = finish_after(now, a.remaining, a.rate);
  if (!finish.is_infinite()) heap.push({finish, a.sequence, index, a.version, a.touches});
}

void FluidModel::Impl::solve_component(Time now) {
  grow_component();
  fill_component();
  apply_rates(now);
  for (const std::uint32_t r_index : component_resources) {
    Resource& r = resources[r_index];
    r.full = r.left <= r.capacity * 1e-9;
  }
  component_activities.clear();
  component_resources.clear();
}

FluidModel::FluidModel(Clock clock) : impl_(std::make_unique<Impl>()) {
  impl_->clock = std::move(clock);
}
FluidModel::~FluidModel() = default;

ResourceId FluidModel::add_resource(double capacity, std::string name) {
  if (!(capacity > 0)) throw std::invalid_argument("FluidModel: resource capacity must be > 0");
  impl_->resources.emplace_back().capacity = capacity;
  impl_->names.push_back(std::move(name));
  return ResourceId{static_cast<std::uint32_t>(impl_->resources.size() - 1)};
}

void FluidModel::set_capacity(ResourceId id, double capacity) {
  if (!(capacity >= 0)) throw std::invalid_argument("FluidModel: resource capacity must be >= 0");
  Impl& m = *impl_;
  Resource& r = m.resources.at(id.index);
  if (r.capacity == capacity) return;
  // Bounds depend on capacities: refresh every user's, and the potentials they feed.
  std::vector<std::uint32_t> users;
  for (const Link& l : r.users) users.push_back(l.activity);
  for (auto index : users) m.add_potential(m.activities[index], -1.0);
  r.capacity = capacity;
  for (auto index : users) {
    Activity& a = m.activities[index];
    a.bound = m.compute_bound(a);
    m.add_potential(a, +1.0);
    for (const Use& u : a.uses) m.dirty_resources.emplace_back(u.resource, kAllLevels);
    m.dirty_activities.push_back(index);
  }
  m.dirty_resources.emplace_back(id.index, kAllLevels);
}

double FluidModel::capacity(ResourceId id) const { return impl_->resources.at(id.index).capacity; }
const std::string& FluidModel::name(ResourceId id) const { return impl_->names.at(id.index); }
std::size_t FluidModel::resource_count() const { return impl_->resources.size(); }

void FluidModel::prefetch(ResourceId id) const {
  const char* at = reinterpret_cast<const char*>(&impl_->resources[id.index]);
  __builtin_prefetch(at);
  __builtin_prefetch(at + sizeof(Resource) - 1);
}

ActivityId FluidModel::start(ActivitySpec spec, std::span<const ResourceUse> uses) {
  Impl& m = *impl_;
  const Time now = m.clock();
  const std::uint32_t index = m.create(std::move(spec), uses, now);
  m.begin(index, now);
  return ActivityId{index, m.activities[index].generation};
}

ActivityId FluidModel::start_since(ActivitySpec spec, std::span<const ResourceUse> uses,
                                   Time since) {
  Impl& m = *impl_;
  const Time now = m.clock();
  if (since > now) throw std::invalid_argument("FluidModel: start_since after now");
  for (const ResourceUse& u : uses) {
    if (u.resource.index < m.resources.size() && !m.resources[u.resource.index].users.empty())
      throw std::invalid_argument("FluidModel: start_since on a resource with another user");
  }
  const std::uint32_t index = m.create(std::move(spec), uses, since);
  Activity& a = m.activities[index];
  if (a.remaining <= 0 || !(a.bound < kInf)) {
    m.begin(index, now);  // it ended at since: completes now, as nothing bounds it
  } else {
    m.run_alone(index, since);  // what fits_alone() did at `since`
  }
  return ActivityId{index, a.generation};
}

Time FluidModel::finish_alone(double work, std::span<const CapacityUse> uses, Time start) {
  // compute_bound() without an activity (no max_rate, no pacing), each resource used once.
  double bound = kInf;
  for (const CapacityUse& u : uses) {
    if (u.capacity < kInf && u.coefficient > 0) bound = std::min(bound, u.capacity / u.coefficient);
  }
  return bound < kInf ? finish_after(start, work, bound) : start;
}

// A new activity linked to its resources with its bound, counted alive and given the next
// sequence number, its progress counted from `at`; not yet rated (begin() or set_rate()).
std::uint32_t FluidModel::Impl::create(ActivitySpec spec, std::span<const ResourceUse> uses,
                                       Time at) {
  Impl& m = *this;
  if (!(spec.work >= 0)) throw std::invalid_argument("FluidModel: activity work must be >= 0");
  if (!(spec.weight > 0) || spec.weight == kInf) {
    throw std::invalid_argument("FluidModel: activity weight must be positive and finite");
  }
  if (!(spec.max_rate >= 0))
    throw std::invalid_argument("FluidModel: activity max_rate must be >= 0");
  if (spec.latency < Time::zero())
    throw std::invalid_argument("FluidModel: activity latency must be >= 0");
  for (const ResourceUse& u : uses) {
    if (u.resource.index >= m.resources.size())
      throw std::invalid_argument("FluidModel: unknown resource");
    if (!(u.coefficient >= 0) || u.coefficient == kInf) {
      throw std::invalid_argument("FluidModel: resource coefficient must be finite and >= 0");
    }
  }
  const std::uint32_t index = m.allocate();
  Activity& a = m.activities[index];
  ++a.generation;
  ++a.version;
  a.alive = true;
  a.fresh = true;
  a.remaining = spec.work;
  a.rate = 0;
  a.weight = spec.weight;
  a.own_max_rate = spec.max_rate;
  a.pace = spec.latency.to_s();
  a.paced_work = spec.work;
  a.priority = spec.priority;
  a.last_update = at;
  a.sequence = m.next_sequence++;
  a.on_done = std::move(spec.on_done);
  a.touches = spec.touches;
  a.keep_linked = spec.keep_linked;
  for (const ResourceUse& u : uses) m.link(index, u.resource.index, u.coefficient);
  a.bound = m.compute_bound(a);
  m.add_potential(a, +1.0);
  ++m.alive;
  return index;
}

void FluidModel::restart(ActivityId id, double work, std::function<void()> on_done, Time latency) {
  Impl& m = *impl_;
  const Activity* found = m.find_linked(id);
  if (found == nullptr || !found->parked)
    throw std::invalid_argument("FluidModel: restart of an activity that is not parked");
  if (!(work >= 0)) throw std::invalid_argument("FluidModel: activity work must be >= 0");
  if (latency < Time::zero())
    throw std::invalid_argument("FluidModel: activity latency must be >= 0");
  const Time now = m.clock();
  Activity& a = m.activities[id.index];
  a.parked = false;
  ++m.alive;
  ++a.version;
  a.remaining = work;
  a.last_update = now;
  a.sequence = m.next_sequence++;
  a.on_done = std::move(on_done);
  a.rate = 0;
  // Pacing follows the new work and latency; a new cap changes what it can take.
  const double old_bound = a.bound;
  if (a.pace != latency.to_s() || a.paced_work != work) {
    m.add_potential(a, -1.0);
    a.pace = latency.to_s();
    a.paced_work = work;
    a.bound = m.compute_bound(a);
    m.add_potential(a, +1.0);
  }
  const bool same_bound = a.bound == old_bound;
  if (!same_bound) {
    // Potentials moved: users of its resources may couple differently now.
    for (const Use& u : a.uses) m.dirty_resources.emplace_back(u.resource, a.priority);
  }
  const auto run_at = [&](double rate) {
    a.rate = rate;
    a.fresh = false;
    const Time finish = finish_after(now, work, a.rate);
    if (!finish.is_infinite()) m.heap.push({finish, a.sequence, id.index, a.version, a.touches});
  };
  if (work > 0 && a.bound < kInf && a.shared_uses == 0) {
    run_at(a.bound);  // alone on all its resources: the solver would give it its bound
    return;
  }
  if (work > 0 && same_bound && a.parked_rate > 0 && a.parked_at == now &&
      a.parked_resolve == m.resolves) {
    // Parked and restarted within one instant with the same cap: every rate is what it
    // was before the parking, so the parking's changes are voided and it runs on.
    if (auto* marker = m.pending_park(a)) marker->first = kVoid;
    run_at(a.parked_rate);
    return;
  }
  m.begin(id.index, now);
}

void FluidModel::cancel(ActivityId id) {
  if (impl_->find_linked(id) != nullptr) impl_->release(id.index);
}

bool FluidModel::active(ActivityId id) const { return impl_->find(id) != nullptr; }

double FluidModel::rate(ActivityId id) const {
  const Activity* a = impl_->find(id);
  return a != nullptr ? a->rate : 0.0;
}

double FluidModel::remaining(ActivityId id) const {
  const Activity* a = impl_->find(id);
  if (a == nullptr) return 0.0;
  return Impl::remaining_at(*a, impl_->clock());
}

std::size_t FluidModel::users(ResourceId id) const {
  return impl_->resources.at(id.index).users.size();
}

double FluidModel::load(ResourceId id) const {
  double sum = 0;
  for (const Link& l : impl_->resources.at(id.index).users) {
    const Activity& a = impl_->activities[l.activity];
    const double coefficient = a.uses[l.use].coefficient;
    if (coefficient > 0) sum += a.rate * coefficient;
  }
  return sum;
}

std::size_t FluidModel::active_count() const { return impl_->alive; }

Time FluidModel::next_completion() const {
  impl_->drop_stale_top();
  return impl_->heap.empty() ? Time::infinite() : impl_->heap.top().finish;
}

void FluidModel::complete_due(Time t) {
  Impl& m = *impl_;
  // The whole batch leaves the model before any on_done runs, so callbacks see every
  // activity of this instant finished, and the heap pops in (finish, start) order.
  m.done.clear();
  for (;;) {
    m.drop_stale_top();
    if (m.heap.empty() || m.heap.top().finish > t) break;
    const std::uint32_t index = m.heap.top().activity;
    m.heap.pop();
    if (!m.heap.empty()) m.prefetch(m.heap.top());
    m.done.push_back(std::move(m.activities[index].on_done));
    if (m.activities[index].keep_linked) {
      m.park(index);
    } else {
      m.release(index);
    }
  }
  completions_ += m.done.size();
  for (std::size_t k = 0; k < m.done.size(); ++k) {
    if (m.done[k]) m.done[k]();
  }
  m.done.clear();
}

// Each connected component reached from a change is solved on its own: small components
// stay cheap however many changed in this instant.
void FluidModel::resolve() {
  Impl& m = *impl_;
  ++m.resolves;
  if (m.dirty_activities.empty() && m.dirty_resources.empty()) return;
  m.next_epoch();
  const Time now = m.clock();
  // Changes are solved from the highest priority down: a component seeded by a change at
  // level p re-solves only levels >= p, which is exact under strict priority, and keeps
  // a small low-priority flow from re-solving every high-priority flow it shares a link
  // with. Levels above p have their final rates of this instant by then.
  m.seeds.clear();
  for (std::size_t k = 0; k < m.dirty_activities.size(); ++k) {
    const std::uint32_t index = m.dirty_activities[k];
    m.seeds.push_back({m.activities[index].priority, 0, static_cast<std::uint32_t>(k), index});
  }
  std::uint32_t order = 0;
  for (const auto& [index, priority] : m.dirty_resources) {
    if (index == kVoid) continue;
    if ((index & kParkBit) != 0) {
      m.park_seeds(index & ~kParkBit, priority, order);
    } else {
      m.seeds.push_back({priority, 1, order++, index});
    }
  }
  std::sort(m.seeds.begin(), m.seeds.end(), [](const Impl::Seed& a, const Impl::Seed& b) {
    return std::tie(a.priority, a.kind, a.order) < std::tie(b.priority, b.kind, b.order);
  });
  for (const Impl::Seed& seed : m.seeds) {
    m.floor = seed.priority;
    if (seed.kind == 0) {
      if (m.fits_alone(seed.index, now)) continue;
      m.reach(seed.index);
      if (!m.component_activities.empty()) m.solve_component(now);
      continue;
    }
    // A dirty resource reaches its users even when now infinite (its capacity was raised).
    Resource& r = m.resources[seed.index];
    if (r.mark == m.epoch) continue;
    r.mark = m.epoch;
    if (r.capacity < kInf && r.potential > r.capacity * (1 + 1e-9))
      m.component_resources.push_back(seed.index);
    for (const Link& l : r.users) m.reach(l.activity);
    if (!m.component_activities.empty()) m.solve_component(now);
    m.component_resources.clear();
  }
  m.floor = kAllLevels;
  m.dirty_activities.clear();
  m.dirty_resources.clear();
  if (m.heap.size() > 4 * m.alive + 1024) {
    m.heap.compact([&m](const detail::Completion& c) { return m.is_live(c); });
  }
}

bool FluidModel::has_pending_changes() const {
  return !impl_->dirty_activities.empty() || !impl_->dirty_resources.empty();
}

}  // namespace strait::sim::engine
