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

Network::Choice Network::resolve(const CollectiveSpec& spec, std::optional<Schedule>& chosen) {
  chosen.reset();
  const bool p2p = spec.op == CollectiveOp::kAllToAll || spec.op == CollectiveOp::kAllToAllV ||
                   spec.op == CollectiveOp::kSendRecv;
  // Peer-to-peer ops run Simple (NCCL's p2p path); tuning them would build n^2 transfers
  // three times.
  const Protocol fixed_protocol = spec.protocol != Protocol::kAuto ? spec.protocol
                                  : p2p || spec.gpus.size() < 2    ? Protocol::kSimple
                                                                   : Protocol::kAuto;
  std::vector<Algorithm> algorithms;
  if (spec.algorithm != Algorithm::kAuto) {
    algorithms.push_back(spec.algorithm);
  } else if (spec.op != CollectiveOp::kAllReduce || spec.gpus.size() < 2) {
    algorithms.push_back(choose_algorithm(spec, cluster_));
  } else {
    algorithms = {Algorithm::kRing, Algorithm::kTree, Algorithm::kHierarchical};
    if (cluster_.comm().nvls) {
      algorithms.push_back(Algorithm::kNvls);
      algorithms.push_back(Algorithm::kNvlsTree);
    }
    if (cluster_.comm().collnet) algorithms.push_back(Algorithm::kCollNet);
  }
  // NVLS tree and CollNet pipeline their in-host and cross-host stages chunk by chunk; a
  // lane pays every step's latency, so deep pipelines only pay off for large messages: the
  // tuner picks the depth (1, 2, 4 .. the builder's lanes, a chunk each).
  const auto tuned_depth = [](Algorithm a) {
    return a == Algorithm::kNvlsTree || a == Algorithm::kCollNet;
  };
  if (algorithms.size() == 1 && fixed_protocol != Protocol::kAuto &&
      !tuned_depth(algorithms.front()))
    return {algorithms.front(), fixed_protocol};
  const std::uint64_t key = size_and_ranks_hash(spec);
  if (auto it = auto_choice_.find(key); it != auto_choice_.end()) return it->second;
  if (spec.algorithm == Algorithm::kAuto && !cluster_.comm().hierarchical_in_datacenter) {
    // NCCL has no hierarchical all-reduce: inside one datacenter `auto` weighs its own.
    const int dc = cluster_.gpu(spec.gpus.front()).datacenter;
    const bool one_datacenter = std::all_of(spec.gpus.begin(), spec.gpus.end(), [&](int g) {
      return cluster_.gpu(g).datacenter == dc;
    });
    if (one_datacenter) std::erase(algorithms, Algorithm::kHierarchical);
  }
  Choice best{algorithms.front() == Algorithm::kTree ? Algorithm::kRing : algorithms.front(),
              fixed_protocol == Protocol::kAuto ? Protocol::kSimple : fixed_protocol};
  if (spec.algorithm == Algorithm::kAuto && spec.op == CollectiveOp::kAllReduce)
    best.algorithm = choose_algorithm(spec, cluster_);
  Time best_time = Time::infinite();
  // NCCL's preference (CommParameters::nvls_tree_first): the fastest NVLS tree, which
  // replaces a Simple or LL128 ring or tree that wins the estimate.
  Choice nvls_tree_best;
  Time nvls_tree_time = Time::infinite();
  std::optional<Schedule> nvls_tree_schedule;
  const bool prefer_nvls_tree = cluster_.comm().nvls_tree_first &&
                                spec.algorithm == Algorithm::kAuto &&
                                spec.op == CollectiveOp::kAllReduce;
  for (Algorithm algorithm : algorithms) {
    // Auto trees only for messages of one chunk: pipelined trees contend with themselves
    // in ways the estimate does not see (and cost many flows in flow mode); for larger
    // messages hierarchical plays the part of NCCL's trees across hosts.
    if (spec.algorithm == Algorithm::kAuto && algorithm == Algorithm::kTree &&
        spec.bytes > options_.schedule.chunk_bytes) {
      continue;
    }
    CollectiveSpec s = spec;
    s.algorithm = algorithm;
    Schedule built;
    try {
      built = build_schedule(s, cluster_, options_.schedule);
    } catch (const Error&) {
      continue;  // not applicable to this rank set (e.g. hierarchical on uneven hosts)
    }
    // Simple first: on ties (a neutral cluster) the choice stays what it was without
    // protocols. NVLS and CollNet run Simple only, as in NCCL.
    std::vector<Protocol> protocols = {Protocol::kSimple, Protocol::kLL128, Protocol::kLL};
    if (fixed_protocol != Protocol::kAuto) protocols = {fixed_protocol};
    if (algorithm == Algorithm::kNvls || algorithm == Algorithm::kNvlsTree ||
        algorithm == Algorithm::kCollNet)
      protocols = {Protocol::kSimple};
    std::vector<int> depths = {0};
    if (tuned_depth(algorithm)) {
      depths.clear();
      for (int k = 1; k <= built.chunks; k *= 2) depths.push_back(k);
    }
    for (Protocol protocol : protocols) {
      for (int depth : depths) {
        Schedule schedule = built;
        if (depth > 0) schedule.chunks = depth;
        apply_protocol(schedule, cluster_, protocol, ProtocolView::kTuner);
        const Time t = estimate(schedule, nullptr);
        if (prefer_nvls_tree && algorithm == Algorithm::kNvlsTree && t < nvls_tree_time) {
          nvls_tree_time = t;
          nvls_tree_best = {algorithm, protocol, depth};
          nvls_tree_schedule = schedule;
        }
        if (t < best_time) {
          best_time = t;
          best = {algorithm, protocol, depth};
          chosen = std::move(schedule);
        }
      }
    }
  }
  // NCCL's model bounds a ring or tree below NVLS tree's busbw under Simple and LL128 (LL128
  // at 0.92 of Simple and its per-channel caps); LL, capped far lower, wins only where its
  // latency does, as in strait's estimate.
  if (nvls_tree_schedule && best.protocol != Protocol::kLL &&
      (best.algorithm == Algorithm::kRing || best.algorithm == Algorithm::kTree)) {
    best = nvls_tree_best;
    chosen = std::move(nvls_tree_schedule);
  }
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

CollectiveSpec scaled_spec(const CollectiveSpec& spec, double scale) {
  CollectiveSpec out = spec;
  const auto scaled = [scale](Bytes b) {
    return static_cast<Bytes>(std::llround(static_cast<double>(b) / scale));
  };
  out.bytes = scaled(spec.bytes);
  for (Bytes& b : out.send_bytes) b = scaled(b);
  for (Bytes& b : out.send_matrix) b = scaled(b);
  return out;
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
