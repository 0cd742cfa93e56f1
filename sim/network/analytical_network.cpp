#include "sim/network/analytical_network.hpp"

#include <algorithm>

namespace strait::sim::network {

AnalyticalNetwork::AnalyticalNetwork(engine::Simulator& sim, const topology::Cluster& cluster,
                                     NetworkOptions options)
    : Network(sim, cluster, std::move(options)), link_load_(cluster.links().size(), 0.0) {}

Time AnalyticalNetwork::estimate(const Schedule& schedule) {
  const int lanes = std::max(1, schedule.chunks);
  Time sum = Time::zero(), slowest = Time::zero();
  if (lanes > 1) lane_load_.assign(cluster_.links().size(), 0.0);
  for (const auto& phase : schedule.phases) {
    Time latency = Time::zero();
    for (const auto& t : phase.transfers) {
      router_.gpu_path(schedule.gpus[static_cast<std::size_t>(t.src)],
                       schedule.gpus[static_cast<std::size_t>(t.dst)], path_);
      const double lane_bytes = static_cast<double>((t.bytes + lanes - 1) / lanes);
      Time path_latency = Time::zero();
      for (auto l : path_) {
        if (link_load_[l] == 0.0) touched_.push_back(l);
        link_load_[l] += lane_bytes;
        if (lanes > 1) lane_load_[l] += lane_bytes * phase.repeat;
        path_latency += cluster_.link(l).latency;
      }
      latency = std::max(latency, path_latency);
      account(path_, static_cast<double>(t.bytes) * phase.repeat);
      traffic_.transfers += static_cast<std::uint64_t>(phase.repeat) * static_cast<std::uint64_t>(lanes);
    }
    Time busiest = Time::zero();
    for (auto l : touched_) {
      busiest = std::max(busiest, Time::for_work(link_load_[l], cluster_.link(l).bandwidth));
      link_load_[l] = 0.0;
    }
    touched_.clear();
    const Time t = busiest + latency;
    sum += t * phase.repeat;
    slowest = std::max(slowest, t);
  }
  if (lanes == 1) return sum;
  // In steady state a new lane enters every cycle; a cycle is bound by the slowest phase
  // and by links that several phases load (a tree node receives children's reductions
  // and its parent's broadcast on the same link).
  Time cycle = slowest;
  for (std::size_t l = 0; l < lane_load_.size(); ++l) {
    if (lane_load_[l] > 0) cycle = std::max(cycle, Time::for_work(lane_load_[l], cluster_.link(static_cast<topology::LinkIndex>(l)).bandwidth));
  }
  return sum + cycle * (lanes - 1);
}

void AnalyticalNetwork::start_schedule(Schedule schedule, int /*priority*/, double /*weight*/,
                                       std::function<void()> on_done) {
  const Time t = estimate(schedule);
  sim_.after(t, std::move(on_done));
}

void AnalyticalNetwork::start_transfer(int src, int dst, Bytes bytes, int /*priority*/,
                                       std::function<void()> on_done) {
  router_.gpu_path(src, dst, path_);
  Time latency = Time::zero();
  double bandwidth = 0;
  for (auto l : path_) {
    const auto& link = cluster_.link(l);
    latency += link.latency;
    bandwidth = bandwidth == 0 ? link.bandwidth : std::min(bandwidth, link.bandwidth);
  }
  account(path_, static_cast<double>(bytes));
  ++traffic_.transfers;
  const Time t = path_.empty() ? Time::zero() : Time::for_work(static_cast<double>(bytes), bandwidth) + latency;
  sim_.after(t, std::move(on_done));
}

}  // namespace strait::sim::network
