#include "sim/network/network.hpp"

#include "sim/network/analytical_network.hpp"
#include "sim/network/flow_network.hpp"

namespace strait::sim::network {

const char* to_string(NetworkMode mode) {
  return mode == NetworkMode::kFlow ? "flow" : "analytical";
}

Network::Network(engine::Simulator& sim, const topology::Cluster& cluster, NetworkOptions options)
    : sim_(sim), cluster_(cluster), router_(cluster, options.ecmp), options_(std::move(options)) {}

void Network::start_collective(const CollectiveSpec& spec, std::function<void()> on_done) {
  start_schedule(build_schedule(spec, cluster_, options_.schedule), spec.priority, spec.weight,
                 std::move(on_done));
}

void Network::account(const std::vector<topology::LinkIndex>& path, double bytes) {
  for (auto l : path) {
    traffic_.link_bytes[static_cast<std::size_t>(cluster_.link(l).link_class)] += bytes;
  }
}

std::unique_ptr<Network> make_network(engine::Simulator& sim, const topology::Cluster& cluster,
                                      NetworkOptions options) {
  if (options.mode == NetworkMode::kAnalytical) {
    return std::make_unique<AnalyticalNetwork>(sim, cluster, std::move(options));
  }
  return std::make_unique<FlowNetwork>(sim, cluster, std::move(options));
}

CollectiveResult simulate_collective(const topology::Cluster& cluster, const CollectiveSpec& spec,
                                     const NetworkOptions& options) {
  Schedule schedule = build_schedule(spec, cluster, options.schedule);
  CollectiveResult result;
  result.algorithm = schedule.algorithm;
  result.channels = schedule.channels;
  result.chunks = schedule.chunks;
  engine::Simulator sim;
  auto network = make_network(sim, cluster, options);
  Time finished = Time::zero();
  network->start_schedule(std::move(schedule), spec.priority, spec.weight, [&] { finished = sim.now(); });
  sim.run();
  result.time = finished;
  result.events = sim.events();
  result.traffic = network->traffic();
  return result;
}

}  // namespace strait::sim::network
