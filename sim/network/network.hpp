#pragma once
// Network: moves bytes between GPUs of a Cluster inside a Simulator, in one of two modes
// with the same interface:
//   - flow mode (FlowNetwork): every transfer is a fluid activity on the links of its
//     routed path; rates come from the engine's weighted max-min sharing, so collectives
//     contend with each other and with any other traffic;
//   - analytical mode (AnalyticalNetwork): a collective takes the time its schedule needs
//     when each phase is bound by its most loaded link (bytes on link / bandwidth) plus
//     the longest path latency, pipelined over chunks; no per-flow events, no contention
//     between different collectives. Both agree where nothing else contends.
// A transfer takes bytes / rate on the fluid model, then the path latency.

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "sim/core/enum_names.hpp"
#include "sim/engine/simulator.hpp"
#include "sim/network/collective.hpp"
#include "sim/network/detail/level_estimator.hpp"
#include "sim/network/detail/schedule_estimator.hpp"
#include "sim/network/schedule.hpp"
#include "sim/network/traffic.hpp"
#include "sim/topology/cluster.hpp"
#include "sim/topology/router.hpp"

namespace strait::sim::network {

enum class NetworkMode { kFlow, kAnalytical };
/// The names scenarios, options and reports use (sim/core/enum_names.hpp).
constexpr auto enum_names(NetworkMode) {
  return std::to_array<EnumName<NetworkMode>>(
      {{NetworkMode::kFlow, "flow"}, {NetworkMode::kAnalytical, "analytical"}});
}
inline const char* to_string(NetworkMode mode) { return name_of(mode); }

/// One finished transfer, for traces (set NetworkOptions::on_transfer to receive them).
struct TransferRecord {
  int src_gpu = 0;
  int dst_gpu = 0;
  Bytes bytes = 0;
  Time start;
  Time end;
  topology::LinkClass widest_class = topology::LinkClass::kNvlink;  // the slowest class crossed
};

struct NetworkOptions {
  NetworkMode mode = NetworkMode::kFlow;
  ScheduleOptions schedule;
  topology::EcmpPolicy ecmp = topology::EcmpPolicy::kDestinationModK;
  std::function<void(const TransferRecord&)> on_transfer;  // flow mode only; empty = off
  CollectiveCalibration calibration{};  // per-operation fitted factors; default: none
};

/// The bandwidth scale of `spec` under `c`: 1 without a table (no size is computed then,
/// so uncalibrated runs pay nothing), else c.scale_at(calibration_bytes(spec)).
double calibration_scale(const OpCalibration& c, const CollectiveSpec& spec);
/// `schedule` with every transfer's bytes divided by `scale` (rounded); its
/// payload_fraction keeps traffic counts at the payload.
void apply_calibration(Schedule& schedule, double scale);
/// The size a collective's calibration is keyed on: `bytes`, or for all-to-all-v the mean
/// bytes a rank sends.
double calibration_bytes(const CollectiveSpec& spec);
/// `spec` with every size divided by `scale` (what a calibrated collective takes time for),
/// written into `out`, whose buffers are reused (an all-to-all-v matrix of 16,384 members
/// is 2 GiB: a fresh one per call costs more in page faults than the estimate itself).
void scale_spec(const CollectiveSpec& spec, double scale, CollectiveSpec& out);

class Network {
 public:
  virtual ~Network() = default;
  Network(const Network&) = delete;
  Network& operator=(const Network&) = delete;

  /// Starts `spec` now; `on_done` runs when every rank has finished.
  virtual void start_collective(const CollectiveSpec& spec, std::function<void()> on_done);
  /// True when start_collective(spec) times `spec` without building its schedule (then
  /// simulate_collective does not build it either).
  virtual bool in_closed_form(const CollectiveSpec& /*spec*/) { return false; }
  /// Starts an already built schedule now (its flows get `priority` and `weight`).
  virtual void start_schedule(Schedule schedule, int priority, double weight,
                              std::function<void()> on_done) = 0;
  /// Starts one transfer of `bytes` from GPU `src` to GPU `dst` now.
  virtual void start_transfer(int src, int dst, Bytes bytes, int priority,
                              std::function<void()> on_done) = 0;

  /// The algorithm `spec` runs with: its own, or for kAuto the one NCCL's tuner would
  /// pick — for all-reduce the fastest by the analytical estimate (cached per op, size and
  /// rank set) of ring, hierarchical (under NCCL, for ranks across datacenters only, see
  /// CommParameters::hierarchical_in_datacenter), NVLS, NVLS tree, CollNet and, for
  /// messages of one chunk, tree; else choose_algorithm's rule.
  Algorithm resolve_algorithm(const CollectiveSpec& spec);
  /// The algorithm and protocol `spec` runs with: each fixed where the spec names it,
  /// else the pair with the least analytical estimate (NCCL's tuner does the same with its
  /// own cost model), cached per op, size and rank set. Peer-to-peer ops run Simple.
  /// NVLS tree and CollNet also get their pipeline depth (chunks in flight, 1 to 8) this
  /// way, as NCCL sizes their chunks per message.
  struct Choice {
    Algorithm algorithm = Algorithm::kRing;
    Protocol protocol = Protocol::kSimple;
    int chunks = 0;  // pipeline lanes; 0 = what build_schedule gives the algorithm
  };
  Choice resolve(const CollectiveSpec& spec);
  /// The same; where the tuner built the chosen schedule (not a cached choice), it is left
  /// in `chosen` with the protocol applied (not the calibration): start_collective then
  /// needs no second build (at 131,072 GPUs millions of small collectives are tuned once each).
  Choice resolve(const CollectiveSpec& spec, std::optional<Schedule>& chosen);
  /// `spec`'s schedule as `choice` runs it: built, protocol and calibration applied.
  Schedule build_chosen(const CollectiveSpec& spec, const Choice& choice) const;

  const TrafficStats& traffic() const { return traffic_; }
  /// Traffic of the collectives started with `traffic_tag` == tag (zero if none).
  TrafficStats tagged(int tag) const;
  const topology::Cluster& cluster() const { return cluster_; }
  topology::Router& router() { return router_; }

 protected:
  Network(engine::Simulator& sim, const topology::Cluster& cluster, NetworkOptions options);
  /// A hash of `spec`'s op, algorithm, protocol, size and GPUs (the tuner's cache key).
  static std::uint64_t size_and_ranks_hash(const CollectiveSpec& spec);
  /// The same with `ranks` in place of the spec's GPUs (e.g. their placement).
  static std::uint64_t size_and_ranks_hash(const CollectiveSpec& spec, std::span<const int> ranks);
  /// What a collective's schedule depends on, for networks that remember calls by spec
  /// (priority, weight and traffic tag do not change it); calls with per-rank sizes are
  /// not remembered. `ranks`: the spec's GPUs, or their placement.
  struct CallKey {
    CollectiveOp op;
    Algorithm algorithm;
    Protocol protocol;
    int root, peer;
    Bytes bytes;
    std::vector<int> ranks;
    bool is(const CollectiveSpec& s, std::span<const int> r) const {
      return op == s.op && algorithm == s.algorithm && protocol == s.protocol && root == s.root &&
             peer == s.peer && bytes == s.bytes && std::ranges::equal(ranks, r);
    }
  };
  static CallKey call_key(const CollectiveSpec& spec, std::span<const int> ranks) {
    return {spec.op,
            spec.algorithm,
            spec.protocol,
            spec.root,
            spec.peer,
            spec.bytes,
            {ranks.begin(), ranks.end()}};
  }
  /// The hash of call_key(spec, ranks).
  static std::uint64_t call_hash(const CollectiveSpec& spec, std::span<const int> ranks) {
    return size_and_ranks_hash(spec, ranks) ^ (static_cast<std::uint64_t>(spec.root) << 24) ^
           (static_cast<std::uint64_t>(spec.peer) << 8);
  }
  /// Whether calls of `spec` may be remembered: the same sizes on every rank.
  static bool rememberable(const CollectiveSpec& spec) {
    return spec.send_matrix.empty() && spec.send_bytes.empty();
  }
  /// Runs `start()` now, or as an event of its own after `spec`'s calibrated base latency
  /// (what a collective pays before its schedule starts).
  template <class Start>
  void after_base_latency(const CollectiveSpec& spec, Start start) {
    const Time base = options_.calibration[static_cast<std::size_t>(spec.op)].base_latency;
    if (base > Time::zero()) {
      sim_.after(base, std::move(start));
    } else {
      start();
    }
  }
  /// build_chosen(spec, resolve(spec)), reusing the tuner's build where it made one.
  Schedule chosen_schedule(const CollectiveSpec& spec);
  /// Adds `delta` to the totals and to the counters of `tag` (if >= 0).
  void add_traffic(const TrafficStats& delta, int tag);
  /// Adds `bytes` on every link of `path` to the traffic counters.
  void account(const std::vector<topology::LinkIndex>& path, double bytes);

  engine::Simulator& sim_;
  const topology::Cluster& cluster_;
  topology::Router router_;
  NetworkOptions options_;
  TrafficStats traffic_;
  std::vector<TrafficStats> tagged_;
  /// The analytical time of a schedule on an idle network: per level on hierarchy-form
  /// clusters, by routing every transfer otherwise.
  Time estimate(const Schedule& schedule, TrafficStats* traffic);

  detail::ScheduleEstimator estimator_;
  detail::LevelEstimator levels_;
  std::unordered_map<std::uint64_t, Choice> auto_choice_;
};

std::unique_ptr<Network> make_network(engine::Simulator& sim, const topology::Cluster& cluster,
                                      NetworkOptions options);

/// The outcome of one collective simulated alone on an idle cluster.
struct CollectiveResult {
  Time time;
  std::uint64_t events = 0;
  TrafficStats traffic;
  Algorithm algorithm = Algorithm::kRing;
  Protocol protocol = Protocol::kSimple;
  int channels = 1;
  int chunks = 1;
  /// NCCL channels the size launches for a ring or tree (protocol_channels); 0 where the
  /// cluster sets no channels or another algorithm ran.
  int nccl_channels = 0;
};

/// Simulates `spec` alone, from time 0 to its completion (the engine of `strait collective`).
CollectiveResult simulate_collective(const topology::Cluster& cluster, const CollectiveSpec& spec,
                                     const NetworkOptions& options);

}  // namespace strait::sim::network
