#include "sim/network/detail/schedule_estimator.hpp"

#include <algorithm>

#include "sim/network/detail/link_rate.hpp"
#include "sim/network/detail/pxn.hpp"

namespace strait::sim::network::detail {

ScheduleEstimator::ScheduleEstimator(const topology::Cluster& cluster, topology::Router& router)
    : cluster_(cluster), router_(router), link_load_(cluster.links().size(), 0.0) {}

Time ScheduleEstimator::estimate(const Schedule& schedule, TrafficStats* traffic) {
  const int lanes = schedule.cut_through ? 1 : std::max(1, schedule.chunks);
  const bool whole = lanes > 1 || schedule.cut_through;  // loads of all phases together
  Time sum = Time::zero(), slowest = Time::zero(), latencies = Time::zero();
  if (whole) lane_load_.assign(cluster_.links().size(), 0.0);
  for (const auto& phase : schedule.phases) {
    Time latency =
        phase.all_pairs > 0 ? load_all_pairs(schedule, phase, lanes, whole, traffic) : Time::zero();
    Time latency_sum = Time::zero();
    load_transfers(schedule, phase, lanes, whole, traffic, latency, latency_sum);
    const Time busiest = busiest_phase_link();
    const Time phase_lat = phase_latency(phase, latency, latency_sum, phase.transfers.size());
    latencies += phase_lat * phase.repeat;
    const Time t = busiest + phase_lat;
    sum += t * phase.repeat;
    slowest = std::max(slowest, t);
  }
  if (!whole) return sum;
  // The link that the phases together load most (a tree node receives children's
  // reductions and its parent's broadcast on the same link).
  const Time shared = busiest_lane_link();
  // Streaming phases: their latencies in turn, then every phase's bytes at once.
  if (schedule.cut_through) return latencies + std::max(shared, schedule.min_data_time);
  // In steady state a new lane enters every cycle; a cycle is bound by the slowest phase
  // and by the links that several phases load.
  return sum + std::max(slowest, shared) * (lanes - 1);
}

// Every pair's path of an implicit all-pairs phase, counted per link without routing n^2
// pairs one by one; returns the phase's transfer latency.
Time ScheduleEstimator::load_all_pairs(const Schedule& schedule, const Phase& phase, int lanes,
                                       bool whole, TrafficStats* traffic) {
  if (!pair_paths_) pair_paths_ = std::make_unique<topology::PairPathCounter>(router_);
  const auto paths = pair_paths_->count(schedule.gpus);
  const auto per_lane = (phase.all_pairs + lanes - 1) / lanes;  // whole units, rounded up
  const double lane_bytes = static_cast<double>(per_lane);
  for (const auto& [l, count] : paths.links) {
    const double k = static_cast<double>(count);
    if (link_load_[l] == 0.0) touched_.push_back(l);
    link_load_[l] += k * lane_bytes;
    if (whole) lane_load_[l] += k * lane_bytes * phase.repeat;
    if (traffic) {
      traffic->link_bytes[static_cast<std::size_t>(cluster_.link(l).link_class)] +=
          k * static_cast<double>(phase.all_pairs) * phase.repeat * phase.payload;
    }
  }
  if (traffic) {
    traffic->transfers += phase.transfer_count(schedule.ranks()) *
                          static_cast<std::uint64_t>(phase.repeat) *
                          static_cast<std::uint64_t>(lanes);
  }
  return phase.transfer_latency(paths.longest_latency, false);
}

// The phase's stored transfers, each along its route (through its PXN relay); `latency`
// becomes the longest transfer latency and `latency_sum` their sum.
void ScheduleEstimator::load_transfers(const Schedule& schedule, const Phase& phase, int lanes,
                                       bool whole, TrafficStats* traffic, Time& latency,
                                       Time& latency_sum) {
  for (const auto& t : phase.transfers) {
    const int src = schedule.gpus[static_cast<std::size_t>(t.src)];
    const int dst = schedule.gpus[static_cast<std::size_t>(t.dst)];
    const int relay = phase.pxn ? pxn_relay(cluster_, src, dst) : -1;
    router_.gpu_path(src, relay < 0 ? dst : relay, path_);
    if (relay >= 0) {
      router_.gpu_path(relay, dst, leg_);
      path_.insert(path_.end(), leg_.begin(), leg_.end());
    }
    const auto per_lane = (t.bytes + lanes - 1) / lanes;  // whole bytes, rounded up
    const double lane_bytes = static_cast<double>(per_lane);
    Time path_latency = Time::zero();
    for (auto l : path_) {
      if (link_load_[l] == 0.0) touched_.push_back(l);
      link_load_[l] += lane_bytes;
      if (whole) lane_load_[l] += lane_bytes * phase.repeat;
      path_latency += cluster_.link(l).latency;
      if (traffic) {
        traffic->link_bytes[static_cast<std::size_t>(cluster_.link(l).link_class)] +=
            static_cast<double>(t.bytes) * phase.repeat * phase.payload;
      }
    }
    path_latency =
        phase.transfer_latency(path_latency, cluster_.gpu(src).host != cluster_.gpu(dst).host);
    latency = std::max(latency, path_latency);
    latency_sum += path_latency;
    if (traffic)
      traffic->transfers +=
          static_cast<std::uint64_t>(phase.repeat) * static_cast<std::uint64_t>(lanes);
  }
}

// The time of the most loaded link of the phase; the phase's loads are cleared.
Time ScheduleEstimator::busiest_phase_link() {
  Time busiest = Time::zero();
  for (auto l : touched_) {
    busiest = std::max(
        busiest, Time::for_work(link_load_[l], library_bandwidth(cluster_, cluster_.link(l))));
    link_load_[l] = 0.0;
  }
  touched_.clear();
  return busiest;
}

// The time of the link that one lane of all phases loads most.
Time ScheduleEstimator::busiest_lane_link() const {
  Time shared = Time::zero();
  for (std::size_t l = 0; l < lane_load_.size(); ++l) {
    if (lane_load_[l] > 0) {
      shared = std::max(
          shared,
          Time::for_work(
              lane_load_[l],
              library_bandwidth(cluster_, cluster_.link(static_cast<topology::LinkIndex>(l)))));
    }
  }
  return shared;
}

}  // namespace strait::sim::network::detail
