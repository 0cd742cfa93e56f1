#include "sim/network/analytical_network.hpp"

#include <algorithm>

#include "sim/network/detail/link_rate.hpp"

namespace strait::sim::network {
namespace {

bool spans_hosts(const topology::Cluster& cluster, const CollectiveSpec& spec) {
  for (int g : spec.gpus) {
    if (cluster.gpu(g).host != cluster.gpu(spec.gpus.front()).host) return true;
  }
  return false;
}

// The most messages one rank posts in a direct all-to-all(v) (as build_all_to_all drops
// empty ones).
int direct_peer_messages(const CollectiveSpec& spec) {
  const auto n = spec.gpus.size();
  if (spec.op == CollectiveOp::kAllToAll) {
    // A rank with a non-empty buffer sends a share to each of the n - 1 others: O(n), not
    // O(n^2) (groups of 512 members with per-member sizes, at every call).
    bool any = spec.send_bytes.empty() ? spec.bytes > 0 : false;
    for (Bytes b : spec.send_bytes) any = any || b > 0;
    return any && n > 1 ? static_cast<int>(n - 1) : 0;
  }
  int most = 0;
  for (std::size_t i = 0; i < n; ++i) {
    int count = 0;
    for (std::size_t j = 0; j < n; ++j) {
      if (i != j && spec.send_matrix[i * n + j] > 0) ++count;
    }
    most = std::max(most, count);
  }
  return most;
}

}  // namespace

AnalyticalNetwork::AnalyticalNetwork(engine::Simulator& sim, const topology::Cluster& cluster,
                                     NetworkOptions options)
    : Network(sim, cluster, std::move(options)) {}

bool AnalyticalNetwork::in_closed_form(const CollectiveSpec& spec) {
  const bool all_to_all = spec.op == CollectiveOp::kAllToAll || spec.op == CollectiveOp::kAllToAllV;
  return all_to_all && levels_.applicable() && resolve(spec).algorithm == Algorithm::kDirect;
}

void AnalyticalNetwork::start_collective(const CollectiveSpec& spec,
                                         std::function<void()> on_done) {
  const Timed timed = time_collective(spec);
  if (timed.delay > Time::zero()) {
    // A calibrated base latency first, then the schedule: two events, as Network's own.
    sim_.after(timed.delay,
               [this, rest = timed.time - timed.delay, on_done = std::move(on_done)]() mutable {
                 sim_.after(rest, std::move(on_done));
               });
    return;
  }
  sim_.after(timed.time, std::move(on_done));
}

AnalyticalNetwork::Timed AnalyticalNetwork::time_collective(const CollectiveSpec& spec) {
  const OpCalibration& c = options_.calibration[static_cast<std::size_t>(spec.op)];
  if (in_closed_form(spec)) {
    const Choice choice = resolve(spec);
    validate_collective(spec, cluster_);
    // The closed form takes the calibrated sizes (and the protocol's bandwidth share) for
    // its time; traffic stays the payload.
    const double scale = calibration_scale(c, spec) *
                         protocol_bandwidth_fraction(cluster_, choice.protocol, Algorithm::kDirect);
    TrafficStats delta;
    const Time step =
        protocol_step_latency(cluster_, choice.protocol, Algorithm::kDirect, spec.op,
                              spans_hosts(cluster_, spec), direct_peer_messages(spec));
    if (scale != 1.0) scale_spec(spec, scale, scaled_);
    const Time t = levels_.all_to_all(scale == 1.0 ? spec : scaled_, step, &delta);
    for (double& b : delta.link_bytes) b *= scale;
    const Time base = protocol_base_latency(cluster_, choice.protocol, Algorithm::kDirect);
    add_traffic(delta, spec.traffic_tag);
    return {c.base_latency + t + base, Time::zero()};
  }
  // Remembered calls: what Network::start_collective would take (no calibration delay,
  // which would split the call in two events), as one event. A hash collision with
  // another spec is timed afresh.
  if (c.base_latency > Time::zero() || !rememberable(spec)) {
    // Network::start_collective's way: the calibrated base latency, then the schedule.
    return {c.base_latency + timed_schedule(chosen_schedule(spec)), c.base_latency};
  }
  if (levels_.applicable()) {
    levels_.placement(spec.gpus, placed_);
  } else {
    placed_ = spec.gpus;
  }
  const std::uint64_t hash = call_hash(spec, placed_);
  if (const auto it = timed_.find(hash); it != timed_.end() && it->second.key.is(spec, placed_)) {
    add_traffic(it->second.traffic, spec.traffic_tag);
    return {it->second.time, Time::zero()};
  }
  const Schedule schedule = chosen_schedule(spec);  // checks the GPUs (placed_ is empty if bad)
  TimedCall call{call_key(spec, placed_), Time::zero(), {}};
  call.time = estimate(schedule, &call.traffic);
  for (double& b : call.traffic.link_bytes) b *= schedule.payload_fraction;
  add_traffic(call.traffic, spec.traffic_tag);
  const Time time = call.time;
  timed_.insert_or_assign(hash, std::move(call));
  return {time, Time::zero()};
}

void AnalyticalNetwork::start_schedule(Schedule schedule, int /*priority*/, double /*weight*/,
                                       std::function<void()> on_done) {
  sim_.after(timed_schedule(schedule), std::move(on_done));
}

Time AnalyticalNetwork::timed_schedule(const Schedule& schedule) {
  TrafficStats delta;
  const Time t = estimate(schedule, &delta);
  for (double& b : delta.link_bytes) b *= schedule.payload_fraction;
  add_traffic(delta, schedule.traffic_tag);
  return t;
}

void AnalyticalNetwork::start_transfer(int src, int dst, Bytes bytes, int /*priority*/,
                                       std::function<void()> on_done) {
  router_.gpu_path(src, dst, path_);
  Time latency = Time::zero();
  double bandwidth = 0;
  for (auto l : path_) {
    const auto& link = cluster_.link(l);
    latency += link.latency;
    const double rate = detail::library_bandwidth(cluster_, link);
    bandwidth = bandwidth == 0 ? rate : std::min(bandwidth, rate);
  }
  account(path_, static_cast<double>(bytes));
  ++traffic_.transfers;
  const Time t = path_.empty() ? Time::zero()
                               : Time::for_work(static_cast<double>(bytes), bandwidth) + latency;
  sim_.after(t, std::move(on_done));
}

}  // namespace strait::sim::network
