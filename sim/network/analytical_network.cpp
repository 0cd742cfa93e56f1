#include "sim/network/analytical_network.hpp"

#include <algorithm>

namespace strait::sim::network {

AnalyticalNetwork::AnalyticalNetwork(engine::Simulator& sim, const topology::Cluster& cluster,
                                     NetworkOptions options)
    : Network(sim, cluster, std::move(options)) {}

void AnalyticalNetwork::start_collective(const CollectiveSpec& spec,
                                         std::function<void()> on_done) {
  const bool all_to_all = spec.op == CollectiveOp::kAllToAll || spec.op == CollectiveOp::kAllToAllV;
  if (all_to_all && levels_.applicable() && resolve_algorithm(spec) == Algorithm::kDirect) {
    validate_collective(spec, cluster_);
    // The closed form takes the calibrated sizes for its time; traffic stays the payload.
    const OpCalibration& c = options_.calibration[static_cast<std::size_t>(spec.op)];
    const double scale = calibration_scale(c, spec);
    TrafficStats delta;
    const Time t = levels_.all_to_all(scale == 1.0 ? spec : scaled_spec(spec, scale), &delta);
    for (double& b : delta.link_bytes) b *= scale;
    sim_.after(c.base_latency + t, std::move(on_done));
    add_traffic(delta, spec.traffic_tag);
    return;
  }
  Network::start_collective(spec, std::move(on_done));
}

void AnalyticalNetwork::start_schedule(Schedule schedule, int /*priority*/, double /*weight*/,
                                       std::function<void()> on_done) {
  TrafficStats delta;
  sim_.after(estimate(schedule, &delta), std::move(on_done));
  for (double& b : delta.link_bytes) b *= schedule.payload_fraction;
  add_traffic(delta, schedule.traffic_tag);
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
  const Time t = path_.empty() ? Time::zero()
                               : Time::for_work(static_cast<double>(bytes), bandwidth) + latency;
  sim_.after(t, std::move(on_done));
}

}  // namespace strait::sim::network
