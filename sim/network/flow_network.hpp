#pragma once
// FlowNetwork: flow mode. Each link direction of the cluster is a resource of the
// engine's fluid model with the link's bandwidth as capacity; a transfer is an activity
// using every link of its routed path. Collectives run their Schedule with per-rank
// barriers between phases and in-order chunk lanes (see schedule.hpp).
//
// Latency: a collective's step that moves as one coflow is paced over bytes / bandwidth +
// latency (FluidModel's latency): alone it takes exactly that, the alpha-beta time, and
// its fixed part (protocol step, proxy, RDMA round trip) overlaps its bytes as in NCCL's
// pipelined protocols, so a latency-bound ring step takes a trickle of its links for its
// whole duration rather than the whole links for a moment and then nothing; contended,
// it takes at least its fair share's time. A point-to-point transfer and the lanes of
// pipelined schedules (tree, chain) pay their latency after their bytes, so that lanes
// sharing a link interleave in its gaps (analytical mode's pipelined cycle is built on
// that).
//
// Known limits: no packet-level effects (incast loss, congestion control dynamics);
// store-and-forward at message granularity is not modeled.

#include <memory>
#include <span>
#include <unordered_map>
#include <vector>

#include "sim/network/network.hpp"
#include "sim/topology/pair_paths.hpp"

namespace strait::sim::network {

namespace detail {
class FlowCollective;
class FlowPlanner;
struct FlowPlan;
}  // namespace detail

class FlowNetwork final : public Network {
 public:
  FlowNetwork(engine::Simulator& sim, const topology::Cluster& cluster, NetworkOptions options);
  ~FlowNetwork() override;

  /// Starts `spec` now. Calls with the same spec (sizes equal on every rank) share one
  /// plan: its schedule is built, planned and routed at the first call only.
  void start_collective(const CollectiveSpec& spec, std::function<void()> on_done) override;
  void start_schedule(Schedule schedule, int priority, double weight,
                      std::function<void()> on_done) override;
  void start_transfer(int src, int dst, Bytes bytes, int priority,
                      std::function<void()> on_done) override;
  /// The same with a weight inside the priority class.
  void start_transfer(int src, int dst, Bytes bytes, int priority, double weight,
                      std::function<void()> on_done);

  /// Starts one fluid flow of `work` bytes over `uses` (link resources with the share of
  /// the flow each carries); `on_done` runs `latency` after its last byte, or, when
  /// `paced`, when its bytes drain, paced over bytes and latency. Returns its slot.
  /// With `kept`, the flow stays linked to its links when its bytes drain (parked; its
  /// id goes to *kept), so restart_flow() can run it again without linking it anew, until
  /// release_flow().
  std::uint32_t start_flow(std::span<const engine::ResourceUse> uses, double work, Time latency,
                           int priority, double weight, std::function<void()> on_done,
                           engine::ActivityId* kept = nullptr, bool paced = false);
  /// Runs a parked flow again with `work` bytes paced with `latency` (kept flows are the
  /// coflows of collective steps), then `on_done`.
  void restart_flow(engine::ActivityId kept, double work, Time latency,
                    std::function<void()> on_done);
  /// Unlinks a parked flow for good.
  void release_flow(engine::ActivityId kept);
  /// Routes GPU `src` to `dst` into `out` as resource uses; returns the path latency and
  /// adds `bytes` to the traffic counters (when `account_bytes`).
  Time route(int src, int dst, double coefficient, std::vector<engine::ResourceUse>& out,
             topology::LinkClass* slowest);
  /// Adds precomputed link-bytes per class (times `scale`) and `transfers` to the counters.
  void add_traffic(const std::array<double, topology::kLinkClassCount>& bytes, double scale,
                   std::uint64_t transfers, int tag);
  using Network::add_traffic;
  /// The slowest link class on the path from `src` to `dst` (for trace tracks).
  topology::LinkClass slowest_class(int src, int dst);
  Time now() const { return sim_.now(); }
  bool tracing() const { return static_cast<bool>(options_.on_transfer); }
  void record(const TransferRecord& r) const { options_.on_transfer(r); }

  /// Plans built so far (calls of a remembered spec build none; for tests).
  std::uint64_t plans_built() const { return plans_built_; }

  /// The fluid resource of a link (for tests and link-utilization reports).
  engine::ResourceId link_resource(topology::LinkIndex link) const { return link_resources_[link]; }

 private:
  friend class detail::FlowCollective;
  friend class detail::FlowPlanner;
  struct InFlight {
    std::function<void()> on_done;
    Time start;
    Time latency;
    TransferRecord record;  // src < 0: nothing to record
  };
  /// A slot of in_flight_ for a flow that finishes `latency` after its bytes.
  std::uint32_t flight(Time latency, std::function<void()> on_done);
  void arrived(std::uint32_t slot);
  void finish(std::uint32_t slot);
  /// `schedule`'s plan, built now.
  std::shared_ptr<const detail::FlowPlan> plan(Schedule schedule);
  /// `spec`'s plan: remembered from an earlier call of the same spec, or built.
  std::shared_ptr<const detail::FlowPlan> plan_of(const CollectiveSpec& spec);
  /// Starts a run of `plan` after its schedule's start latency (when `waited` is false).
  void start_plan(std::shared_ptr<const detail::FlowPlan> plan, int priority, double weight,
                  int traffic_tag, std::function<void()> on_done, bool waited);
  /// A run's last phase ended: notify (no earlier than `not_before`) and free it.
  void collective_done(detail::FlowCollective* run, Time not_before);

  std::vector<engine::ResourceId> link_resources_;
  std::vector<InFlight> in_flight_;
  std::vector<std::uint32_t> free_slots_;
  std::vector<topology::LinkIndex> path_;  // scratch
  std::vector<engine::ResourceUse> uses_;  // scratch
  std::vector<std::unique_ptr<detail::FlowCollective>> collectives_;
  std::unique_ptr<detail::FlowPlanner> planner_;
  // Plans by call_hash of their spec (a colliding spec replaces the entry). A training
  // run's specs repeat within a step (every layer) but sizes may change between steps, so
  // the table is emptied when it would pass kRememberedPlans plans or kRememberedBytes
  // (FlowPlan::bytes) rather than let grow: a plan of a 16,384-GPU collective holds ~1 MiB
  // of routes, a context-parallel pair's ~1 KiB.
  struct RememberedPlan {
    CallKey key;
    std::shared_ptr<const detail::FlowPlan> plan;
  };
  static constexpr std::size_t kRememberedPlans = std::size_t{1} << 16;
  static constexpr std::size_t kRememberedBytes = std::size_t{256} << 20;
  std::unordered_map<std::uint64_t, RememberedPlan> plans_;
  std::size_t remembered_bytes_ = 0;
  std::uint64_t plans_built_ = 0;
  std::vector<double> link_sums_;             // scratch of FlowPlanner::route_bundle
  std::vector<std::uint32_t> touched_links_;  // the links it summed into
  /// Paths per link of all-pairs phases, made on first use (its scratch is per cluster).
  topology::PairPathCounter& pair_paths();
  std::unique_ptr<topology::PairPathCounter> pair_paths_;
};

}  // namespace strait::sim::network
