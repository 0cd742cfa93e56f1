#include "calibration/detail/collective_fit.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>

#include <fmt/format.h>
#include <Eigen/Dense>

#include "calibration/detail/table_fit.hpp"
#include "calibration/kernel_case.hpp"
#include "sim/core/error.hpp"
#include "sim/core/statistics.hpp"
#include "sim/network/network.hpp"

namespace strait::calibration::detail {
namespace {

using sim::network::CollectiveOp;
using sim::topology::Cluster;
using sim::topology::Link;

// Bandwidth factor that makes transfer time negligible (the latency part alone).
constexpr double kHugeBandwidth = 1e9;

Cluster with_links(const Cluster& cluster, const std::function<void(Link&)>& change) {
  Cluster out = cluster;
  for (std::size_t i = 0; i < cluster.links().size(); ++i) {
    Link l = cluster.links()[i];
    change(l);
    out.set_link_parameters(static_cast<sim::topology::LinkIndex>(i), l.bandwidth, l.latency);
  }
  return out;
}

sim::network::CollectiveSpec spec_of(const Measurement& m, const Cluster& cluster) {
  const int n = m.ranks();
  if (n > cluster.gpu_count()) {
    throw Error(fmt::format("calibrate fit: {} ran on {} ranks, but the cluster {} has {} GPUs",
                            m.label(), n, cluster.name(), cluster.gpu_count()));
  }
  sim::network::CollectiveSpec spec;
  spec.op = *m.family.collective;
  spec.bytes = static_cast<Bytes>(m.bytes);
  for (int g = 0; g < n; ++g) spec.gpus.push_back(g);
  if (spec.op == CollectiveOp::kAllToAllV) spec.send_matrix = all_to_allv_matrix(n, spec.bytes);
  return spec;
}

double simulate_us(const Measurement& m, const Cluster& cluster,
                   const sim::network::CollectiveCalibration& ops = {}) {
  sim::network::NetworkOptions options;
  options.mode = sim::network::NetworkMode::kAnalytical;
  options.calibration = ops;
  return sim::network::simulate_collective(cluster, spec_of(m, cluster), options).time.to_s() * 1e6;
}

// Link classes a transfer from GPU 0 to GPU 1 crosses.
std::vector<sim::topology::LinkClass> path_classes(const Cluster& cluster) {
  sim::network::CollectiveSpec spec;
  spec.op = CollectiveOp::kSendRecv;
  spec.bytes = 1 << 20;
  spec.gpus = {0, 1};
  const auto result = sim::network::simulate_collective(cluster, spec, {});
  std::vector<sim::topology::LinkClass> out;
  for (int c = 0; c < sim::topology::kLinkClassCount; ++c) {
    if (result.traffic.link_bytes[static_cast<std::size_t>(c)] > 0) {
      out.push_back(static_cast<sim::topology::LinkClass>(c));
    }
  }
  return out;
}

bool on_path(const std::vector<sim::topology::LinkClass>& classes, sim::topology::LinkClass c) {
  return std::find(classes.begin(), classes.end(), c) != classes.end();
}

// Sizes up to this are latency-bound on every fabric strait models: they fix latencies.
constexpr double kSmallBytes = 4096;
// Observations whose bandwidth part is below this share of the time do not shape tables.
constexpr double kMinBandwidthShare = 0.05;

// Per record: the model's bandwidth part at nominal bandwidth (x, no latency) and its
// latency part per microsecond of link latency on `classes` (y, no bandwidth limit).
struct ModelParts {
  std::vector<double> x, y;
};

ModelParts model_parts(const std::vector<const Measurement*>& records, const Cluster& cluster,
                       const std::vector<sim::topology::LinkClass>& classes) {
  const Cluster no_latency = with_links(cluster, [&](Link& l) { l.latency = Time::zero(); });
  const Cluster unit_latency = with_links(cluster, [&](Link& l) {
    l.bandwidth *= kHugeBandwidth;
    l.latency = on_path(classes, l.link_class) ? Time::from_us(1) : Time::zero();
  });
  ModelParts parts;
  for (const Measurement* m : records) {
    parts.x.push_back(simulate_us(*m, no_latency));
    parts.y.push_back(simulate_us(*m, unit_latency));
  }
  return parts;
}

}  // namespace

void fit_collectives(const std::vector<const Measurement*>& fit_records, const Cluster& cluster,
                     sim::cost::CollectiveFactors& factors) {
  if (fit_records.empty()) return;
  factors.present = true;
  std::map<CollectiveOp, std::vector<const Measurement*>> by_op;
  for (const Measurement* m : fit_records) by_op[*m->family.collective].push_back(m);
  const auto classes = path_classes(cluster);
  std::map<CollectiveOp, ModelParts> parts;
  for (const auto& [op, records] : by_op) parts[op] = model_parts(records, cluster, classes);

  // 1. Link latency: small messages are latency alone (t = a + y L). L is the smallest
  //    any operation implies (the median of t / y over its small messages), so that every
  //    operation's start-up a is >= 0: a library's small all-reduce may take fewer steps
  //    than the modelled algorithm, and the difference then goes into the others' a.
  double latency_us = std::numeric_limits<double>::infinity();
  for (const auto& [op, records] : by_op) {
    std::vector<double> per_unit;
    for (std::size_t i = 0; i < records.size(); ++i) {
      if (records[i]->bytes <= kSmallBytes && parts[op].y[i] > 0) {
        per_unit.push_back(records[i]->median_us / parts[op].y[i]);
      }
    }
    if (!per_unit.empty()) latency_us = std::min(latency_us, percentile(per_unit, 0.5));
  }
  if (!std::isfinite(latency_us)) latency_us = 0;
  // 2. Start-up latency per operation: what small messages take beyond the link latency.
  std::map<CollectiveOp, double> base_us;
  for (const auto& [op, records] : by_op) {
    std::vector<double> extra;
    for (std::size_t i = 0; i < records.size(); ++i) {
      if (records[i]->bytes <= kSmallBytes) {
        extra.push_back(records[i]->median_us - parts[op].y[i] * latency_us);
      }
    }
    base_us[op] = extra.empty() ? 0.0 : std::max(0.0, percentile(extra, 0.5));
  }
  // 3. Achieved bandwidth per record, relative to the nominal links: s = x / (t - a - y L).
  //    The link class efficiency is the best any operation achieves; each operation's
  //    table is its fraction of that, by size.
  std::map<CollectiveOp, std::vector<ObservedEfficiency>> observed;
  double best = 0;
  for (const auto& [op, records] : by_op) {
    for (std::size_t i = 0; i < records.size(); ++i) {
      const double t = records[i]->median_us;
      const double bandwidth_us = t - base_us[op] - parts[op].y[i] * latency_us;
      const double share = bandwidth_us / t;
      if (share < kMinBandwidthShare || parts[op].x[i] <= 0) continue;
      const double s = parts[op].x[i] / bandwidth_us;
      // Keyed on the size the network looks the table up with (calibration_bytes).
      const double key = sim::network::calibration_bytes(spec_of(*records[i], cluster));
      observed[op].push_back({key, s, share});
      if (share > 0.5) best = std::max(best, s);
    }
  }
  const double efficiency = best > 0 ? std::min(best, 1.0) : 1.0;
  for (sim::topology::LinkClass c : classes) {
    factors.link_classes[static_cast<std::size_t>(c)] =
        sim::cost::LinkClassFactors{efficiency, Time::from_s(latency_us * 1e-6)};
  }
  for (const auto& [op, records] : by_op) {
    sim::network::OpCalibration c;
    c.base_latency = Time::from_s(base_us[op] * 1e-6);
    auto& obs = observed[op];
    for (auto& o : obs) o.efficiency /= efficiency;
    if (!obs.empty()) {
      const auto table = fit_table(obs, false, 24);
      for (const auto& p : table.points()) {
        c.log2_bytes.push_back(std::log2(p.key));
        c.scales.push_back(p.efficiency);
      }
    }
    factors.ops[static_cast<std::size_t>(op)] = c;
  }
}

double predict_collective_us(const Measurement& m, const Cluster& calibrated,
                             const sim::network::CollectiveCalibration& ops) {
  return simulate_us(m, calibrated, ops);
}

}  // namespace strait::calibration::detail
