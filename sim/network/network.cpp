#include "sim/network/network.hpp"

#include <algorithm>
#include <cmath>

#include "sim/core/error.hpp"
#include "sim/core/log2_interpolation.hpp"

#include "sim/network/analytical_network.hpp"
#include "sim/network/flow_network.hpp"

namespace strait::sim::network {

Network::Network(engine::Simulator& sim, const topology::Cluster& cluster, NetworkOptions options)
    : sim_(sim),
      cluster_(cluster),
      router_(cluster, options.ecmp),
      options_(std::move(options)),
      estimator_(cluster, router_),
      levels_(cluster, router_) {}

Time Network::estimate(const Schedule& schedule, TrafficStats* traffic) {
  const Time phases = levels_.applicable() ? levels_.estimate(schedule, traffic)
                                           : estimator_.estimate(schedule, traffic);
  return schedule.start_latency + std::max(phases, schedule.min_data_time);
}

std::uint64_t Network::size_and_ranks_hash(const CollectiveSpec& spec) {
  return size_and_ranks_hash(spec, spec.gpus);
}

std::uint64_t Network::size_and_ranks_hash(const CollectiveSpec& spec, std::span<const int> ranks) {
  std::uint64_t key = std::hash<std::int64_t>{}(spec.bytes) ^
                      (static_cast<std::uint64_t>(spec.op) << 56) ^
                      (static_cast<std::uint64_t>(spec.algorithm) << 48) ^
                      (static_cast<std::uint64_t>(spec.protocol) << 44);
  for (int g : ranks) key = (key ^ static_cast<std::uint64_t>(g)) * 0x100000001B3ULL;
  return key;
}

Algorithm Network::resolve_algorithm(const CollectiveSpec& spec) { return resolve(spec).algorithm; }

Network::Choice Network::resolve(const CollectiveSpec& spec) {
  std::optional<Schedule> unused;
  return resolve(spec, unused);
}

namespace {

// Peer-to-peer ops run Simple (NCCL's p2p path); tuning them would build n^2 transfers
// three times. kAuto: the tuner picks.
Protocol fixed_protocol(const CollectiveSpec& spec) {
  const bool p2p = spec.op == CollectiveOp::kAllToAll || spec.op == CollectiveOp::kAllToAllV ||
                   spec.op == CollectiveOp::kSendRecv;
  return spec.protocol != Protocol::kAuto ? spec.protocol
         : p2p || spec.gpus.size() < 2    ? Protocol::kSimple
                                          : Protocol::kAuto;
}

// The algorithms the tuner weighs: the spec's own, choose_algorithm's rule, or for an
// all-reduce NCCL's (and strait's hierarchical one) that the cluster offers.
std::vector<Algorithm> candidate_algorithms(const CollectiveSpec& spec,
                                            const topology::Cluster& cluster) {
  if (spec.algorithm != Algorithm::kAuto) return {spec.algorithm};
  if (spec.op != CollectiveOp::kAllReduce || spec.gpus.size() < 2)
    return {choose_algorithm(spec, cluster)};
  std::vector<Algorithm> algorithms = {Algorithm::kRing, Algorithm::kTree,
                                       Algorithm::kHierarchical};
  if (cluster.comm().nvls) {
    algorithms.push_back(Algorithm::kNvls);
    algorithms.push_back(Algorithm::kNvlsTree);
  }
  if (cluster.comm().collnet) algorithms.push_back(Algorithm::kCollNet);
  return algorithms;
}

// NVLS tree and CollNet pipeline their in-host and cross-host stages chunk by chunk; a
// lane pays every step's latency, so deep pipelines only pay off for large messages: the
// tuner picks the depth (1, 2, 4 .. the builder's lanes, a chunk each).
bool tuned_depth(Algorithm a) { return a == Algorithm::kNvlsTree || a == Algorithm::kCollNet; }

// NCCL has no hierarchical all-reduce: inside one datacenter `auto` weighs its own.
void drop_hierarchical_in_one_datacenter(const CollectiveSpec& spec,
                                         const topology::Cluster& cluster,
                                         std::vector<Algorithm>& algorithms) {
  const int dc = cluster.gpu(spec.gpus.front()).datacenter;
  const bool one_datacenter = std::all_of(spec.gpus.begin(), spec.gpus.end(),
                                          [&](int g) { return cluster.gpu(g).datacenter == dc; });
  if (one_datacenter) std::erase(algorithms, Algorithm::kHierarchical);
}

// `spec`'s schedule under `algorithm`; none where the algorithm does not apply to its rank
// set (e.g. hierarchical on uneven hosts).
std::optional<Schedule> build_for_algorithm(const CollectiveSpec& spec, Algorithm algorithm,
                                            const topology::Cluster& cluster,
                                            const ScheduleOptions& options) {
  CollectiveSpec s = spec;
  s.algorithm = algorithm;
  try {
    return build_schedule(s, cluster, options);
  } catch (const Error&) {
    return std::nullopt;
  }
}

// Simple first: on ties (a neutral cluster) the choice stays what it was without
// protocols. NVLS and CollNet run Simple only, as in NCCL.
std::vector<Protocol> candidate_protocols(Algorithm algorithm, Protocol fixed) {
  if (algorithm == Algorithm::kNvls || algorithm == Algorithm::kNvlsTree ||
      algorithm == Algorithm::kCollNet)
    return {Protocol::kSimple};
  if (fixed != Protocol::kAuto) return {fixed};
  return {Protocol::kSimple, Protocol::kLL128, Protocol::kLL};
}

// Pipeline depths to weigh (0: the builder's own).
std::vector<int> candidate_depths(Algorithm algorithm, const Schedule& built) {
  if (!tuned_depth(algorithm)) return {0};
  std::vector<int> depths;
  for (int k = 1; k <= built.chunks; k *= 2) depths.push_back(k);
  return depths;
}

// The tuner's fastest choice so far, with NCCL's preference apart
// (CommParameters::nvls_tree_first): the fastest NVLS tree, which replaces a Simple or
// LL128 ring or tree that wins the estimate.
class TunerChoice {
 public:
  TunerChoice(Network::Choice first, bool prefer_nvls_tree)
      : best_(first), prefer_nvls_tree_(prefer_nvls_tree) {}

  // `schedule`, built for `choice`, takes `t`; the fastest is left in `chosen`.
  void offer(const Network::Choice& choice, Schedule& schedule, Time t,
             std::optional<Schedule>& chosen) {
    if (prefer_nvls_tree_ && choice.algorithm == Algorithm::kNvlsTree && t < nvls_tree_time_) {
      nvls_tree_time_ = t;
      nvls_tree_best_ = choice;
      nvls_tree_schedule_ = schedule;
    }
    if (t < best_time_) {
      best_time_ = t;
      best_ = choice;
      chosen = std::move(schedule);
    }
  }
  // NCCL's model bounds a ring or tree below NVLS tree's busbw under Simple and LL128
  // (LL128 at 0.92 of Simple and its per-channel caps); LL, capped far lower, wins only
  // where its latency does, as in strait's estimate.
  Network::Choice finish(std::optional<Schedule>& chosen) {
    if (nvls_tree_schedule_ && best_.protocol != Protocol::kLL &&
        (best_.algorithm == Algorithm::kRing || best_.algorithm == Algorithm::kTree)) {
      best_ = nvls_tree_best_;
      chosen = std::move(nvls_tree_schedule_);
    }
    return best_;
  }

 private:
  Network::Choice best_;
  Time best_time_ = Time::infinite();
  bool prefer_nvls_tree_;
  Network::Choice nvls_tree_best_;
  Time nvls_tree_time_ = Time::infinite();
  std::optional<Schedule> nvls_tree_schedule_;
};

}  // namespace

Network::Choice Network::resolve(const CollectiveSpec& spec, std::optional<Schedule>& chosen) {
  chosen.reset();
  const Protocol fixed = fixed_protocol(spec);
  std::vector<Algorithm> algorithms = candidate_algorithms(spec, cluster_);
  if (algorithms.size() == 1 && fixed != Protocol::kAuto && !tuned_depth(algorithms.front()))
    return {algorithms.front(), fixed};
  const std::uint64_t key = size_and_ranks_hash(spec);
  if (auto it = auto_choice_.find(key); it != auto_choice_.end()) return it->second;
  const bool auto_all_reduce =
      spec.algorithm == Algorithm::kAuto && spec.op == CollectiveOp::kAllReduce;
  if (spec.algorithm == Algorithm::kAuto && !cluster_.comm().hierarchical_in_datacenter)
    drop_hierarchical_in_one_datacenter(spec, cluster_, algorithms);
  Choice first{algorithms.front() == Algorithm::kTree ? Algorithm::kRing : algorithms.front(),
               fixed == Protocol::kAuto ? Protocol::kSimple : fixed};
  if (auto_all_reduce) first.algorithm = choose_algorithm(spec, cluster_);
  TunerChoice tuner(first, cluster_.comm().nvls_tree_first && auto_all_reduce);
  for (Algorithm algorithm : algorithms) {
    // Auto trees only for messages of one chunk: pipelined trees contend with themselves
    // in ways the estimate does not see (and cost many flows in flow mode); for larger
    // messages hierarchical plays the part of NCCL's trees across hosts.
    if (spec.algorithm == Algorithm::kAuto && algorithm == Algorithm::kTree &&
        spec.bytes > options_.schedule.chunk_bytes) {
      continue;
    }
    const std::optional<Schedule> built =
        build_for_algorithm(spec, algorithm, cluster_, options_.schedule);
    if (!built) continue;
    for (Protocol protocol : candidate_protocols(algorithm, fixed)) {
      for (int depth : candidate_depths(algorithm, *built)) {
        Schedule schedule = *built;
        if (depth > 0) schedule.chunks = depth;
        apply_protocol(schedule, cluster_, protocol, ProtocolView::kTuner);
        tuner.offer({algorithm, protocol, depth}, schedule, estimate(schedule, nullptr), chosen);
      }
    }
  }
  const Choice best = tuner.finish(chosen);
  // The tuner's view left out what a size pays at run time; build_chosen adds it.
  if (size_effects(cluster_.comm())) chosen.reset();
  auto_choice_.emplace(key, best);
  return best;
}

double OpCalibration::scale_at(double bytes) const {
  if (log2_bytes.empty()) return 1.0;
  return interpolate_log2(log2_bytes, scales, bytes > 0 ? std::log2(bytes) : -INFINITY);
}

double calibration_bytes(const CollectiveSpec& spec) {
  if (spec.op != CollectiveOp::kAllToAllV || spec.send_matrix.empty() || spec.gpus.empty()) {
    return static_cast<double>(spec.bytes);
  }
  double total = 0;
  for (Bytes b : spec.send_matrix) total += static_cast<double>(b);
  return total / static_cast<double>(spec.gpus.size());
}

void scale_spec(const CollectiveSpec& spec, double scale, CollectiveSpec& out) {
  const auto scaled = [scale](Bytes b) {
    return static_cast<Bytes>(std::llround(static_cast<double>(b) / scale));
  };
  // Every field but the sizes as they are; the size vectors refilled in place.
  std::vector<Bytes> send_bytes = std::move(out.send_bytes);
  std::vector<Bytes> send_matrix = std::move(out.send_matrix);
  std::vector<int> gpus = std::move(out.gpus);
  gpus.assign(spec.gpus.begin(), spec.gpus.end());
  send_bytes.resize(spec.send_bytes.size());
  std::transform(spec.send_bytes.begin(), spec.send_bytes.end(), send_bytes.begin(), scaled);
  send_matrix.resize(spec.send_matrix.size());
  std::transform(spec.send_matrix.begin(), spec.send_matrix.end(), send_matrix.begin(), scaled);
  out = CollectiveSpec{.op = spec.op,
                       .algorithm = spec.algorithm,
                       .protocol = spec.protocol,
                       .bytes = scaled(spec.bytes),
                       .gpus = std::move(gpus),
                       .root = spec.root,
                       .peer = spec.peer,
                       .send_matrix = std::move(send_matrix),
                       .send_bytes = std::move(send_bytes),
                       .priority = spec.priority,
                       .traffic_tag = spec.traffic_tag,
                       .weight = spec.weight};
}

double calibration_scale(const OpCalibration& c, const CollectiveSpec& spec) {
  return c.log2_bytes.empty() ? 1.0 : c.scale_at(calibration_bytes(spec));
}

void apply_calibration(Schedule& schedule, double scale) {
  if (scale == 1.0) return;
  schedule.payload_fraction = scale;
  schedule.min_data_time =
      Time::from_ps(std::llround(static_cast<double>(schedule.min_data_time.ps()) / scale));
  const auto scaled = [scale](Bytes b) {
    return static_cast<Bytes>(std::llround(static_cast<double>(b) / scale));
  };
  for (Phase& phase : schedule.phases) {
    for (Transfer& t : phase.transfers) t.bytes = scaled(t.bytes);
    if (phase.all_pairs > 0) phase.all_pairs = scaled(phase.all_pairs);
  }
}

Schedule Network::build_chosen(const CollectiveSpec& spec, const Choice& choice) const {
  CollectiveSpec resolved = spec;
  resolved.algorithm = choice.algorithm;
  Schedule schedule = build_schedule(resolved, cluster_, options_.schedule);
  if (choice.chunks > 0) schedule.chunks = choice.chunks;
  apply_protocol(schedule, cluster_, choice.protocol);
  const OpCalibration& c = options_.calibration[static_cast<std::size_t>(spec.op)];
  apply_calibration(schedule, calibration_scale(c, spec));
  return schedule;
}

Schedule Network::chosen_schedule(const CollectiveSpec& spec) {
  std::optional<Schedule> tuned;
  const Choice choice = resolve(spec, tuned);
  if (!tuned) return build_chosen(spec, choice);
  const OpCalibration& c = options_.calibration[static_cast<std::size_t>(spec.op)];
  apply_calibration(*tuned, calibration_scale(c, spec));
  return std::move(*tuned);
}

void Network::start_collective(const CollectiveSpec& spec, std::function<void()> on_done) {
  after_base_latency(spec, [this, schedule = chosen_schedule(spec), priority = spec.priority,
                            weight = spec.weight, on_done = std::move(on_done)]() mutable {
    start_schedule(std::move(schedule), priority, weight, std::move(on_done));
  });
}

TrafficStats Network::tagged(int tag) const {
  return tag >= 0 && static_cast<std::size_t>(tag) < tagged_.size()
             ? tagged_[static_cast<std::size_t>(tag)]
             : TrafficStats{};
}

void Network::add_traffic(const TrafficStats& delta, int tag) {
  traffic_ += delta;
  if (tag < 0) return;
  if (static_cast<std::size_t>(tag) >= tagged_.size())
    tagged_.resize(static_cast<std::size_t>(tag) + 1);
  tagged_[static_cast<std::size_t>(tag)] += delta;
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
  engine::Simulator sim;
  auto network = make_network(sim, cluster, options);
  CollectiveSpec resolved = spec;
  const auto choice = network->resolve(spec);
  resolved.algorithm = choice.algorithm;
  resolved.protocol = choice.protocol;
  CollectiveResult result;
  Time finished = Time::zero();
  if (network->in_closed_form(resolved)) {
    // One phase, one lane, one channel: what build_schedule's direct all-to-all would say.
    result.algorithm = choice.algorithm;
    result.protocol = choice.protocol;
    network->start_collective(resolved, [&] { finished = sim.now(); });
    sim.run();
    result.time = finished;
    result.events = sim.events();
    result.traffic = network->traffic();
    return result;
  }
  Schedule schedule = network->build_chosen(resolved, choice);
  const OpCalibration& c = options.calibration[static_cast<std::size_t>(spec.op)];
  result.algorithm = schedule.algorithm;
  result.protocol = schedule.protocol;
  result.channels = schedule.channels;
  result.chunks = schedule.chunks;
  result.nccl_channels = protocol_channels(cluster, schedule.protocol, schedule.algorithm,
                                           spec.bytes, static_cast<int>(spec.gpus.size()));
  sim.after(c.base_latency, [&, schedule = std::move(schedule)]() mutable {
    network->start_schedule(std::move(schedule), spec.priority, spec.weight,
                            [&] { finished = sim.now(); });
  });
  sim.run();
  result.time = finished;
  result.events = sim.events();
  result.traffic = network->traffic();
  return result;
}

}  // namespace strait::sim::network
