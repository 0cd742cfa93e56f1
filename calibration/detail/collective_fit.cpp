#include "calibration/detail/collective_fit.hpp"

#include <algorithm>
#include <functional>
#include <map>

#include <Eigen/Dense>
#include <fmt/format.h>

#include "calibration/detail/table_fit.hpp"
#include "calibration/kernel_case.hpp"
#include "sim/core/error.hpp"
#include "sim/network/network.hpp"

namespace strait::calibration::detail {
namespace {

using sim::network::CollectiveOp;
using sim::topology::Cluster;
using sim::topology::Link;

// Bandwidth factor that makes transfer time negligible (the latency part alone).
constexpr double kHugeBandwidth = 1e9;
// The achieved bandwidth of an operation stays within a factor 8 of its link model.
constexpr double kMaxScale = 8.0;

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

// Weighted (relative-error) non-negative least squares of t = A x.
Eigen::VectorXd relative_nnls(Eigen::MatrixXd a, Eigen::VectorXd t) {
  for (Eigen::Index i = 0; i < a.rows(); ++i) {
    a.row(i) /= t(i);
    t(i) = 1;
  }
  return nonnegative_least_squares(a, t, std::vector<bool>(static_cast<std::size_t>(a.cols()), true));
}

void fit_link_classes(const std::vector<const Measurement*>& sendrecv, const Cluster& cluster,
                      sim::cost::CollectiveFactors& factors) {
  const auto classes = path_classes(cluster);
  // Per record: time at nominal bandwidth without latency (x), and the latency part per
  // microsecond of link latency on the path classes (y): t = y L + x / e.
  const Cluster no_latency = with_links(cluster, [&](Link& l) {
    if (on_path(classes, l.link_class)) l.latency = Time::zero();
  });
  const Cluster unit_latency = with_links(cluster, [&](Link& l) {
    l.bandwidth *= kHugeBandwidth;
    if (on_path(classes, l.link_class)) l.latency = Time::from_us(1);
  });
  Eigen::MatrixXd a(static_cast<Eigen::Index>(sendrecv.size()), 2);
  Eigen::VectorXd t(a.rows());
  for (Eigen::Index i = 0; i < a.rows(); ++i) {
    const Measurement& m = *sendrecv[static_cast<std::size_t>(i)];
    a(i, 0) = simulate_us(m, unit_latency);
    a(i, 1) = simulate_us(m, no_latency);
    t(i) = m.median_us;
  }
  const Eigen::VectorXd x = relative_nnls(a, t);
  double latency_us = x(0);
  double efficiency = x(1) > 0 ? 1.0 / x(1) : 1.0;
  if (efficiency > 1) {
    // Faster than the cluster file's bandwidth: keep the file's, refit the latency alone.
    efficiency = 1;
    Eigen::MatrixXd a1 = a.col(0);
    const Eigen::VectorXd rest = t - a.col(1);
    latency_us = std::max(0.0, relative_nnls(a1, rest.cwiseMax(1e-9))(0));
  }
  for (sim::topology::LinkClass c : classes) {
    factors.link_classes[static_cast<std::size_t>(c)] =
        sim::cost::LinkClassFactors{efficiency, Time::from_s(latency_us * 1e-6)};
  }
}

sim::network::OpCalibration fit_op(const std::vector<const Measurement*>& records,
                                   const Cluster& calibrated) {
  const Cluster latency_only =
      with_links(calibrated, [](Link& l) { l.bandwidth *= kHugeBandwidth; });
  const Cluster bandwidth_only = with_links(calibrated, [](Link& l) { l.latency = Time::zero(); });
  // t - T_lat = a + T_bw / s.
  Eigen::MatrixXd a(static_cast<Eigen::Index>(records.size()), 2);
  Eigen::VectorXd t(a.rows());
  for (Eigen::Index i = 0; i < a.rows(); ++i) {
    const Measurement& m = *records[static_cast<std::size_t>(i)];
    a(i, 0) = 1;
    a(i, 1) = simulate_us(m, bandwidth_only);
    t(i) = std::max(m.median_us - simulate_us(m, latency_only), 1e-3);
  }
  const Eigen::VectorXd x = relative_nnls(a, t);
  sim::network::OpCalibration c;
  c.base_latency = Time::from_s(x(0) * 1e-6);
  c.bandwidth_scale = std::clamp(x(1) > 0 ? 1.0 / x(1) : kMaxScale, 1.0 / kMaxScale, kMaxScale);
  return c;
}

}  // namespace

void fit_collectives(const std::vector<const Measurement*>& fit_records, const Cluster& cluster,
                     sim::cost::CollectiveFactors& factors) {
  if (fit_records.empty()) return;
  factors.present = true;
  std::map<CollectiveOp, std::vector<const Measurement*>> by_op;
  for (const Measurement* m : fit_records) by_op[*m->family.collective].push_back(m);
  if (by_op.count(CollectiveOp::kSendRecv)) {
    fit_link_classes(by_op[CollectiveOp::kSendRecv], cluster, factors);
  }
  Cluster calibrated = with_links(cluster, [&](Link& l) {
    if (const auto& f = factors.link_classes[static_cast<std::size_t>(l.link_class)]) {
      l.bandwidth *= f->bandwidth_efficiency;
      l.latency = f->latency;
    }
  });
  for (const auto& [op, records] : by_op) {
    // Send/recv defines the link classes; its own factors stay neutral.
    if (op == CollectiveOp::kSendRecv && by_op.size() > 1) continue;
    factors.ops[static_cast<std::size_t>(op)] = fit_op(records, calibrated);
  }
}

double predict_collective_us(const Measurement& m, const Cluster& calibrated,
                             const sim::network::CollectiveCalibration& ops) {
  return simulate_us(m, calibrated, ops);
}

}  // namespace strait::calibration::detail
