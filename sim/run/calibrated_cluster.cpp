#include "sim/run/calibrated_cluster.hpp"

#include <optional>
#include <string>

namespace strait::sim::run {
namespace {

// The GPU type every GPU of the cluster has, or nullopt on mixed clusters.
std::optional<std::string> single_type(const topology::Cluster& cluster) {
  if (cluster.gpus().empty()) return std::nullopt;
  const std::string& first = cluster.gpu(0).type;
  for (const auto& g : cluster.gpus()) {
    if (g.type != first) return std::nullopt;
  }
  return first;
}

// The profile whose factors govern link `l`, or nullptr.
const cost::CalibrationProfile* link_profile(const topology::Cluster& cluster,
                                             const cost::CostModel& cost, const topology::Link& l,
                                             const std::optional<std::string>& only_type) {
  int host = cluster.nodes()[l.src].host;
  if (host < 0) host = cluster.nodes()[l.dst].host;
  std::string type;
  if (host >= 0 && !cluster.hosts()[static_cast<std::size_t>(host)].gpus.empty()) {
    type = cluster.gpu(cluster.hosts()[static_cast<std::size_t>(host)].gpus.front()).type;
  } else if (only_type) {
    type = *only_type;
  } else {
    return nullptr;
  }
  return &cost.profile(type);
}

}  // namespace

bool has_link_factors(const topology::Cluster& cluster, const cost::CostModel& cost) {
  for (const auto& g : cluster.gpus()) {
    for (const auto& f : cost.profile(g.type).collectives.link_classes) {
      if (f) return true;
    }
  }
  return false;
}

topology::Cluster calibrated_cluster(const topology::Cluster& cluster,
                                     const cost::CostModel& cost) {
  topology::Cluster out = cluster;
  const auto only_type = single_type(cluster);
  for (std::size_t i = 0; i < cluster.links().size(); ++i) {
    const topology::Link& l = cluster.links()[i];
    const auto* profile = link_profile(cluster, cost, l, only_type);
    if (profile == nullptr) continue;
    const auto& f = profile->collectives.link_classes[static_cast<std::size_t>(l.link_class)];
    if (!f) continue;
    out.set_link_parameters(static_cast<topology::LinkIndex>(i),
                            l.bandwidth * f->bandwidth_efficiency, f->latency);
  }
  return out;
}

network::CollectiveCalibration collective_calibration(const topology::Cluster& cluster,
                                                      const cost::CostModel& cost) {
  const auto only_type = single_type(cluster);
  if (!only_type) return {};
  return cost.profile(*only_type).collectives.ops;
}

std::unique_ptr<network::Network> calibrated_network(engine::Simulator& sim,
                                                     const topology::Cluster& cluster,
                                                     const cost::CostModel& cost,
                                                     network::NetworkMode mode) {
  network::NetworkOptions options;
  options.mode = mode;
  options.calibration = collective_calibration(cluster, cost);
  return network::make_network(sim, cluster, options);
}

}  // namespace strait::sim::run
