#include "sim/network/flow_network.hpp"

#include <algorithm>

#include "sim/network/detail/flow_collective.hpp"
#include "sim/network/detail/flow_plan.hpp"
#include "sim/network/detail/link_rate.hpp"

namespace strait::sim::network {

FlowNetwork::FlowNetwork(engine::Simulator& sim, const topology::Cluster& cluster,
                         NetworkOptions options)
    : Network(sim, cluster, std::move(options)),
      planner_(std::make_unique<detail::FlowPlanner>(*this)) {
  link_resources_.reserve(cluster.links().size());
  for (const auto& link : cluster.links()) {
    link_resources_.push_back(sim_.fluid().add_resource(detail::library_bandwidth(cluster, link)));
  }
}

FlowNetwork::~FlowNetwork() = default;

void FlowNetwork::start_collective(const CollectiveSpec& spec, std::function<void()> on_done) {
  after_base_latency(
      spec, [this, plan = plan_of(spec), priority = spec.priority, weight = spec.weight,
             tag = spec.traffic_tag, on_done = std::move(on_done)]() mutable {
        start_plan(std::move(plan), priority, weight, tag, std::move(on_done), false);
      });
}

std::shared_ptr<const detail::FlowPlan> FlowNetwork::plan(Schedule schedule) {
  ++plans_built_;
  return planner_->plan(std::move(schedule));
}

std::shared_ptr<const detail::FlowPlan> FlowNetwork::plan_of(const CollectiveSpec& spec) {
  if (!rememberable(spec)) return plan(chosen_schedule(spec));
  const std::uint64_t hash = call_hash(spec, spec.gpus);
  if (const auto it = plans_.find(hash); it != plans_.end() && it->second.key.is(spec, spec.gpus))
    return it->second.plan;
  auto made = plan(chosen_schedule(spec));
  const std::size_t bytes = made->bytes();
  if (bytes > kRememberedBytes) return made;
  if (plans_.size() >= kRememberedPlans || remembered_bytes_ + bytes > kRememberedBytes) {
    plans_.clear();
    remembered_bytes_ = 0;
  }
  // A colliding spec's plan is replaced; its bytes stay counted until the next emptying.
  plans_.insert_or_assign(hash, RememberedPlan{call_key(spec, spec.gpus), made});
  remembered_bytes_ += bytes;
  return made;
}

void FlowNetwork::start_schedule(Schedule schedule, int priority, double weight,
                                 std::function<void()> on_done) {
  const int tag = schedule.traffic_tag;
  start_plan(plan(std::move(schedule)), priority, weight, tag, std::move(on_done), false);
}

void FlowNetwork::start_plan(std::shared_ptr<const detail::FlowPlan> plan, int priority,
                             double weight, int traffic_tag, std::function<void()> on_done,
                             bool waited) {
  const Time delay = plan->schedule.start_latency;
  if (!waited && delay > Time::zero()) {
    sim_.after(delay, [this, plan = std::move(plan), priority, weight, traffic_tag,
                       on_done = std::move(on_done)]() mutable {
      start_plan(std::move(plan), priority, weight, traffic_tag, std::move(on_done), true);
    });
    return;
  }
  collectives_.push_back(std::make_unique<detail::FlowCollective>(
      *this, std::move(plan), priority, weight, traffic_tag, std::move(on_done)));
  collectives_.back()->set_slot(collectives_.size() - 1);
  collectives_.back()->start();
}

void FlowNetwork::collective_done(detail::FlowCollective* run, Time not_before) {
  // Called from inside the run's own callbacks: notify and free it in a fresh event, at
  // the earliest when its busbw ceiling lets it end (Schedule::min_data_time).
  const Time wait = not_before > sim_.now() ? not_before - sim_.now() : Time::zero();
  sim_.after(wait, [this, run] {
    run->notify_done();
    // Swap with the last (thousands run at once at 16k GPUs: a search was O(n) each).
    const std::size_t slot = run->slot();
    if (slot + 1 != collectives_.size()) {
      collectives_[slot] = std::move(collectives_.back());
      collectives_[slot]->set_slot(slot);
    }
    collectives_.pop_back();
  });
}

void FlowNetwork::start_transfer(int src, int dst, Bytes bytes, int priority,
                                 std::function<void()> on_done) {
  start_transfer(src, dst, bytes, priority, 1.0, std::move(on_done));
}

void FlowNetwork::start_transfer(int src, int dst, Bytes bytes, int priority, double weight,
                                 std::function<void()> on_done) {
  uses_.clear();
  auto slowest = topology::LinkClass::kNvlink;
  const Time latency = route(src, dst, 1.0, uses_, &slowest);
  account(path_, static_cast<double>(bytes));
  ++traffic_.transfers;
  const auto slot =
      start_flow(uses_, static_cast<double>(bytes), latency, priority, weight, std::move(on_done));
  if (tracing())
    in_flight_[slot].record = TransferRecord{src, dst, bytes, sim_.now(), Time::zero(), slowest};
}

Time FlowNetwork::route(int src, int dst, double coefficient, std::vector<engine::ResourceUse>& out,
                        topology::LinkClass* slowest) {
  router_.gpu_path(src, dst, path_);
  Time latency = Time::zero();
  for (auto l : path_) {
    const auto& link = cluster_.link(l);
    out.push_back({link_resources_[l], coefficient});
    latency += link.latency;
    if (slowest) *slowest = std::max(*slowest, link.link_class);
  }
  return latency;
}

void FlowNetwork::add_traffic(const std::array<double, topology::kLinkClassCount>& bytes,
                              double scale, std::uint64_t transfers, int tag) {
  TrafficStats delta;
  for (std::size_t c = 0; c < bytes.size(); ++c) delta.link_bytes[c] = bytes[c] * scale;
  delta.transfers = transfers;
  add_traffic(delta, tag);
}

topology::PairPathCounter& FlowNetwork::pair_paths() {
  if (!pair_paths_) pair_paths_ = std::make_unique<topology::PairPathCounter>(router_);
  return *pair_paths_;
}

topology::LinkClass FlowNetwork::slowest_class(int src, int dst) {
  router_.gpu_path(src, dst, path_);
  auto slowest = topology::LinkClass::kNvlink;
  for (auto l : path_) slowest = std::max(slowest, cluster_.link(l).link_class);
  return slowest;
}

std::uint32_t FlowNetwork::flight(Time latency, std::function<void()> on_done) {
  std::uint32_t slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  } else {
    slot = static_cast<std::uint32_t>(in_flight_.size());
    in_flight_.emplace_back();
  }
  auto& f = in_flight_[slot];
  f.on_done = std::move(on_done);
  f.start = sim_.now();
  f.latency = latency;
  f.record.src_gpu = -1;
  return slot;
}

std::uint32_t FlowNetwork::start_flow(std::span<const engine::ResourceUse> uses, double work,
                                      Time latency, int priority, double weight,
                                      std::function<void()> on_done, engine::ActivityId* kept,
                                      bool paced) {
  // A paced flow's latency overlaps its bytes (see FluidModel); one without bytes waits
  // its latency after it drains at once.
  paced = paced && work > 0;
  const std::uint32_t slot = flight(paced ? Time::zero() : latency, std::move(on_done));
  engine::ActivitySpec spec;
  spec.work = work;
  if (paced) spec.latency = latency;
  spec.priority = priority;
  spec.weight = weight;
  spec.keep_linked = kept != nullptr;
  spec.on_done = [this, slot] { arrived(slot); };
  const auto id = sim_.fluid().start(std::move(spec), uses);
  if (kept != nullptr) *kept = id;
  return slot;
}

void FlowNetwork::restart_flow(engine::ActivityId kept, double work, Time latency,
                               std::function<void()> on_done) {
  const bool paced = work > 0;
  const std::uint32_t slot = flight(paced ? Time::zero() : latency, std::move(on_done));
  sim_.fluid().restart(
      kept, work, [this, slot] { arrived(slot); }, paced ? latency : Time::zero());
}

void FlowNetwork::release_flow(engine::ActivityId kept) { sim_.fluid().cancel(kept); }

void FlowNetwork::arrived(std::uint32_t slot) {
  const Time latency = in_flight_[slot].latency;
  if (latency > Time::zero()) {
    sim_.after(latency, [this, slot] { finish(slot); });
  } else {
    finish(slot);
  }
}

void FlowNetwork::finish(std::uint32_t slot) {
  auto& f = in_flight_[slot];
  auto callback = std::move(f.on_done);
  f.on_done = nullptr;
  if (f.record.src_gpu >= 0 && tracing()) {
    f.record.start = f.start;
    f.record.end = sim_.now();
    options_.on_transfer(f.record);
  }
  free_slots_.push_back(slot);
  if (callback) callback();
}

}  // namespace strait::sim::network
