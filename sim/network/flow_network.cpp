#include "sim/network/flow_network.hpp"

#include <algorithm>

#include "sim/network/detail/flow_collective.hpp"

namespace strait::sim::network {

FlowNetwork::FlowNetwork(engine::Simulator& sim, const topology::Cluster& cluster,
                         NetworkOptions options)
    : Network(sim, cluster, std::move(options)) {
  link_resources_.reserve(cluster.links().size());
  for (const auto& link : cluster.links()) {
    link_resources_.push_back(sim_.fluid().add_resource(link.bandwidth));
  }
}

FlowNetwork::~FlowNetwork() = default;

void FlowNetwork::start_schedule(Schedule schedule, int priority, double weight,
                                 std::function<void()> on_done) {
  collectives_.push_back(std::make_unique<detail::FlowCollective>(
      *this, std::move(schedule), priority, weight, std::move(on_done)));
  collectives_.back()->start();
}

void FlowNetwork::collective_done(detail::FlowCollective* run) {
  // Called from inside the run's own callbacks: notify and free it in a fresh event.
  sim_.after(Time::zero(), [this, run] {
    run->notify_done();
    std::erase_if(collectives_, [run](const auto& p) { return p.get() == run; });
  });
}

void FlowNetwork::start_transfer(int src, int dst, Bytes bytes, int priority,
                                 std::function<void()> on_done) {
  start_transfer(src, dst, bytes, priority, 1.0, std::move(on_done));
}

void FlowNetwork::start_transfer(int src, int dst, Bytes bytes, int priority, double weight,
                                 std::function<void()> on_done) {
  std::uint32_t slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  } else {
    slot = static_cast<std::uint32_t>(in_flight_.size());
    in_flight_.emplace_back();
  }
  router_.gpu_path(src, dst, path_);
  uses_.clear();
  Time latency = Time::zero();
  auto slowest = topology::LinkClass::kNvlink;
  for (auto l : path_) {
    const auto& link = cluster_.link(l);
    uses_.push_back({link_resources_[l], 1.0});
    latency += link.latency;
    slowest = std::max(slowest, link.link_class);
  }
  account(path_, static_cast<double>(bytes));
  auto& f = in_flight_[slot];
  f.on_done = std::move(on_done);
  f.start = sim_.now();
  f.latency = latency;
  f.src = src;
  f.dst = dst;
  f.bytes = bytes;
  f.slowest = slowest;
  engine::ActivitySpec spec;
  spec.work = static_cast<double>(bytes);
  spec.priority = priority;
  spec.weight = weight;
  spec.on_done = [this, slot] { arrived(slot); };
  sim_.fluid().start(std::move(spec), uses_);
}

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
  if (options_.on_transfer) {
    options_.on_transfer(TransferRecord{f.src, f.dst, f.bytes, f.start, sim_.now(), f.slowest});
  }
  free_slots_.push_back(slot);
  if (callback) callback();
}

}  // namespace strait::sim::network
