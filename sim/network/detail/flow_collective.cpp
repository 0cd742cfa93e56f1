#include "sim/network/detail/flow_collective.hpp"

#include <algorithm>

#include "sim/core/error.hpp"
#include "sim/network/detail/pxn.hpp"
#include "sim/network/flow_network.hpp"

namespace strait::sim::network::detail {
namespace {

// A finished bundle is identified by (expanded phase, lane, bundle index in its plan),
// packed so the completion callback fits std::function's inline storage.
constexpr int kLaneBits = 8;
constexpr int kBundleBits = 32;
std::uint64_t pack(int phase, int lane, int bundle) {
  return (static_cast<std::uint64_t>(phase) << (kLaneBits + kBundleBits)) |
         (static_cast<std::uint64_t>(lane) << kBundleBits) | static_cast<std::uint32_t>(bundle);
}

}  // namespace

FlowCollective::FlowCollective(FlowNetwork& network, Schedule schedule, int priority, double weight,
                               std::function<void()> on_done)
    : network_(network),
      schedule_(std::move(schedule)),
      priority_(priority),
      weight_(weight),
      on_done_(std::move(on_done)),
      ranks_(static_cast<int>(schedule_.gpus.size())),
      lanes_(schedule_.chunks),
      phases_(schedule_.expanded_phase_count()),
      not_before_(network.now() + schedule_.min_data_time) {
  if (lanes_ < 1 || lanes_ >= (1 << kLaneBits))
    throw Error("collective: chunk lanes must be in 1..255");
  if (phases_ >= (1 << (64 - kLaneBits - kBundleBits - 1)))
    throw Error("collective: too many phases");
  // Pipelined lanes keep one flow per transfer: an implicit all-pairs phase (built with one
  // lane only) would need its transfers stored then.
  if (lanes_ > 1) expand_all_pairs(schedule_);
  if (schedule_.cut_through) merge_streaming_phases();
  pattern_.reserve(static_cast<std::size_t>(phases_));
  for (std::size_t i = 0; i < schedule_.phases.size(); ++i) {
    for (int k = 0; k < schedule_.phases[i].repeat; ++k)
      pattern_.push_back(static_cast<std::int32_t>(i));
  }
  plans_.resize(schedule_.phases.size());
  for (std::size_t i = 0; i < schedule_.phases.size(); ++i) make_plan(i);
  for (std::size_t i = 0; i < plans_.size(); ++i) {
    if (plans_[i].coflow && plans_[i].cached) plans_[i].route_group = route_group(i);
  }
  // Every phase one coflow of every rank: phase p + 1 starts when p's coflow ends, for all
  // ranks at once, so per-rank progress would only repeat that (and cost n per phase).
  lockstep_ = lanes_ == 1 && std::all_of(plans_.begin(), plans_.end(), [&](const Plan& p) {
                return p.coflow && static_cast<int>(p.members.size()) == ranks_;
              });
  const auto n = static_cast<std::size_t>(ranks_);
  position_.assign(n * static_cast<std::size_t>(lanes_), 0);
  launched_.assign(n * static_cast<std::size_t>(lanes_), 0);
  launch_time_.assign(n * static_cast<std::size_t>(lanes_), Time::zero());
  if (!lockstep_)
    done_.assign(static_cast<std::size_t>(phases_) * n * static_cast<std::size_t>(lanes_), 0);
  arrived_.assign(static_cast<std::size_t>(phases_), 0);
  phase_start_.assign(static_cast<std::size_t>(phases_), Time::zero());
  lanes_left_ = static_cast<std::int64_t>(n) * lanes_;
}

// A cut-through schedule's phases stream through each other: they run as one coflow of all
// their transfers, which pays the phases' latencies in turn (each as its own coflow would
// pay it) and ends no earlier than min_data_time after them, as the estimators count it.
void FlowCollective::merge_streaming_phases() {
  lanes_ = 1;
  Phase merged;
  merged.name = schedule_.phases.empty() ? "streamed" : schedule_.phases.front().name;
  streamed_latency_ = Time::zero();
  plans_.resize(schedule_.phases.size());
  for (std::size_t i = 0; i < schedule_.phases.size(); ++i) {
    const Phase& phase = schedule_.phases[i];
    make_plan(i);
    for (const auto& bundle : plans_[i].bundles) {
      route_bundle(plans_[i], bundle, i, scratch_routes_);
      streamed_latency_ += scratch_routes_.latency * phase.repeat;
    }
    merged.payload = phase.payload;
    for (int k = 0; k < phase.repeat; ++k)
      merged.transfers.insert(merged.transfers.end(), phase.transfers.begin(),
                              phase.transfers.end());
  }
  plans_.clear();
  schedule_.phases.clear();
  if (!merged.transfers.empty()) schedule_.phases.push_back(std::move(merged));
  phases_ = static_cast<int>(schedule_.phases.size());
  streamed_ = true;
  not_before_ = network_.now() + streamed_latency_ + schedule_.min_data_time;
}

void FlowCollective::make_plan(std::size_t pattern) {
  const auto& transfers = schedule_.phases[pattern].transfers;
  auto& plan = plans_[pattern];
  const auto n = static_cast<std::size_t>(ranks_);
  plan.src_bundles.assign(n + 1, 0);
  plan.involvement.assign(n, 0);
  // Group transfers by sender (counting sort keeps their order within a sender).
  std::vector<std::int32_t> offsets(n + 1, 0);
  for (const auto& t : transfers) ++offsets[static_cast<std::size_t>(t.src) + 1];
  for (std::size_t r = 0; r < n; ++r) offsets[r + 1] += offsets[r];
  plan.transfer_list.resize(transfers.size());
  std::vector<std::int32_t> fill(offsets.begin(), offsets.end() - 1);
  for (std::size_t t = 0; t < transfers.size(); ++t) {
    plan.transfer_list[static_cast<std::size_t>(
        fill[static_cast<std::size_t>(transfers[t].src)]++)] = static_cast<std::int32_t>(t);
  }
  std::vector<std::int32_t> seen(n, -1);
  if (schedule_.phases[pattern].all_pairs > 0) {
    // Implicit all-pairs phase: one coflow of every rank, routed as a whole (route_bundle).
    plan.coflow = true;
    plan.all_pairs = true;
    Bundle b;
    b.src = -1;
    b.bytes = static_cast<double>(schedule_.phases[pattern].all_pairs) *
              static_cast<double>(schedule_.phases[pattern].transfer_count(ranks_));
    plan.members.resize(n);
    for (std::size_t r = 0; r < n; ++r) plan.members[r] = static_cast<std::int32_t>(r);
    plan.involvement.assign(n, 1);
    b.dsts_count = static_cast<std::uint32_t>(n);
    plan.dsts = plan.members;
    plan.bundles.push_back(b);
  } else if (lanes_ == 1 && !transfers.empty()) {
    // One coflow for the whole phase; every rank that sends or receives waits for it.
    plan.coflow = true;
    Bundle b;
    b.src = -1;
    b.transfers_begin = 0;
    b.transfers_count = static_cast<std::uint32_t>(transfers.size());
    for (const auto& t : transfers) {
      b.bytes += static_cast<double>(t.bytes);
      for (int r : {t.src, t.dst}) {
        if (seen[static_cast<std::size_t>(r)] < 0) {
          seen[static_cast<std::size_t>(r)] = 0;
          plan.members.push_back(r);
          plan.involvement[static_cast<std::size_t>(r)] = 1;
        }
      }
    }
    b.dsts_begin = 0;
    b.dsts_count = static_cast<std::uint32_t>(plan.members.size());
    plan.dsts = plan.members;
    plan.bundles.push_back(b);
  } else {
    for (std::size_t r = 0; r < n; ++r) {
      plan.src_bundles[r] = static_cast<std::int32_t>(plan.bundles.size());
      for (auto i = offsets[r]; i < offsets[r + 1]; ++i) {
        const auto& t =
            transfers[static_cast<std::size_t>(plan.transfer_list[static_cast<std::size_t>(i)])];
        Bundle b;
        b.src = static_cast<int>(r);
        b.transfers_begin = static_cast<std::uint32_t>(i);
        b.transfers_count = 1;
        b.bytes = static_cast<double>(t.bytes);
        b.dsts_begin = static_cast<std::uint32_t>(plan.dsts.size());
        b.dsts_count = 1;
        plan.dsts.push_back(t.dst);
        ++plan.involvement[static_cast<std::size_t>(t.dst)];
        ++plan.involvement[r];
        plan.bundles.push_back(b);
      }
    }
    plan.src_bundles[n] = static_cast<std::int32_t>(plan.bundles.size());
  }
  // Phases that run more than once (ring steps, chunk lanes) keep their routes.
  plan.cached = schedule_.phases[pattern].repeat > 1 || lanes_ > 1;
  if (plan.cached) {
    plan.routes.resize(plan.bundles.size());
    for (std::size_t i = 0; i < plan.bundles.size(); ++i)
      route_bundle(plan, plan.bundles[i], pattern, plan.routes[i]);
  }
}

void FlowCollective::route_bundle(const Plan& plan, const Bundle& bundle, std::size_t pattern,
                                  Routes& out) {
  const auto& transfers = schedule_.phases[pattern].transfers;
  out.uses.clear();
  out.traffic.fill(0.0);
  out.latency = Time::zero();
  const auto& cluster = network_.cluster();
  if (plan.all_pairs) {
    // Each link carries all_pairs bytes for every pair whose path crosses it; the pairs are
    // counted per link by destination trees, not routed one by one (268 M at 16k ranks).
    const Bytes each = schedule_.phases[pattern].all_pairs;
    const auto paths = network_.pair_paths().count(schedule_.gpus);
    out.uses.reserve(paths.links.size());
    for (const auto& [link, count] : paths.links) {
      const double bytes = static_cast<double>(count) * static_cast<double>(each);
      out.uses.push_back({network_.link_resource(link), bytes / bundle.bytes});
      out.traffic[static_cast<std::size_t>(cluster.link(link).link_class)] += bytes;
    }
    out.latency = schedule_.phases[pattern].transfer_latency(paths.longest_latency, false);
    return;
  }
  const Phase& phase = schedule_.phases[pattern];
  if (!phase.pipelined && bundle.transfers_count >= kCountedTransfers) {
    // Many transfers (an embedding group's all_to_allv, 512 x 512): bytes per link summed
    // down the destinations' routing trees (topology::PairPathCounter::count_bytes), not
    // routed one by one; the same sums. A transfer pays max(its path, its step latency),
    // so the phase pays the larger of its longest path and the steps its transfers take.
    counted_.clear();
    bool in_host = false, across = false;
    for (std::uint32_t i = 0; i < bundle.transfers_count; ++i) {
      const auto& t =
          transfers[static_cast<std::size_t>(plan.transfer_list[bundle.transfers_begin + i])];
      const int src = schedule_.gpus[static_cast<std::size_t>(t.src)];
      const int dst = schedule_.gpus[static_cast<std::size_t>(t.dst)];
      (cluster.gpu(src).host == cluster.gpu(dst).host ? in_host : across) = true;
      counted_.push_back({src, dst, static_cast<std::uint64_t>(t.bytes),
                          phase.pxn ? pxn_relay(cluster, src, dst) : -1});
    }
    const auto counts = network_.pair_paths().count_bytes(counted_);
    out.latency = std::max({counts.longest_latency, in_host ? phase.step_latency : Time::zero(),
                            across ? phase.net_step_latency : Time::zero()}) +
                  phase.fill;
    out.uses.reserve(counts.links.size());
    for (const auto& [link, bytes] : counts.links) {
      const double b = static_cast<double>(bytes);
      out.uses.push_back({network_.link_resource(link), b / bundle.bytes});
      out.traffic[static_cast<std::size_t>(cluster.link(link).link_class)] += b;
    }
    return;
  }
  // Per-link sums of bytes in the network's scratch (one per network, not per collective: a
  // training run starts thousands of collectives on a cluster of 10^5 links). Whole bytes
  // sum exactly, so a link's share is rounded once, as the all-pairs count gives it.
  std::vector<double>& link_bytes = network_.link_sums_;
  std::vector<std::uint32_t>& touched = network_.touched_links_;
  if (link_bytes.empty()) link_bytes.assign(cluster.links().size(), 0.0);
  Time latency_sum = Time::zero();
  int legs_of = -1;  // the sender whose relay legs relay_legs_ holds (transfers come by sender)
  for (std::uint32_t i = 0; i < bundle.transfers_count; ++i) {
    const auto& t =
        transfers[static_cast<std::size_t>(plan.transfer_list[bundle.transfers_begin + i])];
    scratch_uses_.clear();
    const int src = schedule_.gpus[static_cast<std::size_t>(t.src)];
    const int dst = schedule_.gpus[static_cast<std::size_t>(t.dst)];
    const int relay = schedule_.phases[pattern].pxn ? pxn_relay(cluster, src, dst) : -1;
    const double b = static_cast<double>(t.bytes);
    Time path = Time::zero();
    if (relay < 0) {
      path = network_.route(src, dst, b, scratch_uses_, nullptr);
    } else {
      if (legs_of != src) {
        relay_legs_.clear();
        relay_resources_.clear();
        legs_of = src;
      }
      const RelayLeg* leg = nullptr;
      for (const auto& l : relay_legs_) {
        if (l.relay == relay) leg = &l;
      }
      if (!leg) {
        RelayLeg fresh;
        fresh.relay = relay;
        fresh.begin = relay_resources_.size();
        fresh.latency = network_.route(src, relay, b, scratch_uses_, nullptr);
        for (const auto& u : scratch_uses_) relay_resources_.push_back(u.resource);
        fresh.end = relay_resources_.size();
        relay_legs_.push_back(fresh);
        leg = &relay_legs_.back();
      } else {
        for (auto k = leg->begin; k < leg->end; ++k)
          scratch_uses_.push_back({relay_resources_[k], b});
      }
      path = leg->latency + network_.route(relay, dst, b, scratch_uses_, nullptr);
    }
    const Time latency = schedule_.phases[pattern].transfer_latency(
        path, cluster.gpu(src).host != cluster.gpu(dst).host);
    out.latency = std::max(out.latency, latency);
    latency_sum += latency;
    for (const auto& u : scratch_uses_) {
      // Resource ids of links are their link indices (FlowNetwork adds them in order).
      const auto link = u.resource.index;
      if (link_bytes[link] == 0.0) touched.push_back(link);
      link_bytes[link] += u.coefficient;
      out.traffic[static_cast<std::size_t>(cluster.link(link).link_class)] +=
          static_cast<double>(t.bytes);
    }
  }
  // A pipelined phase is a ring, which runs as one coflow (rings are never chunked): its
  // bundle holds every transfer of the phase, so the mean below is the phase's.
  out.latency =
      phase_latency(schedule_.phases[pattern], out.latency, latency_sum, bundle.transfers_count);
  for (auto link : touched) {
    out.uses.push_back({network_.link_resource(link), link_bytes[link] / bundle.bytes});
    link_bytes[link] = 0.0;
  }
  touched.clear();
}

void FlowCollective::start() {
  if (phases_ == 0) {
    finish();
    return;
  }
  if (lockstep_) {
    start_coflow(0);
    return;
  }
  for (int r = 0; r < ranks_ && lanes_left_ > 0; ++r) advance(r, 0);
}

void FlowCollective::start_coflow(int phase) {
  const auto p = static_cast<std::size_t>(pattern_[static_cast<std::size_t>(phase)]);
  phase_start_[static_cast<std::size_t>(phase)] = network_.now();
  start_bundle(plans_[p], p, phase, 0, 0);
}

void FlowCollective::release_kept() {
  if (kept_.generation != 0) network_.release_flow(kept_);
  kept_ = {};
}

// Every lane passed the last phase: the kept flow goes and the network is told.
void FlowCollective::finish() {
  lanes_left_ = 0;
  release_kept();
  network_.collective_done(this, not_before_);
}

// Patterns whose coflows use the same links with the same shares (a ring's reduce-scatter
// and all-gather steps) share one kept flow.
std::int32_t FlowCollective::route_group(std::size_t pattern) const {
  const auto same = [](const Routes& a, const Routes& b) {
    return std::equal(a.uses.begin(), a.uses.end(), b.uses.begin(), b.uses.end(),
                      [](const engine::ResourceUse& x, const engine::ResourceUse& y) {
                        return x.resource == y.resource && x.coefficient == y.coefficient;
                      });
  };
  for (std::size_t j = 0; j < pattern; ++j) {
    if (plans_[j].coflow && plans_[j].cached &&
        same(plans_[j].routes[0], plans_[pattern].routes[0]))
      return static_cast<std::int32_t>(j);
  }
  return static_cast<std::int32_t>(pattern);
}

void FlowCollective::notify_done() {
  if (on_done_) {
    auto callback = std::move(on_done_);
    on_done_ = nullptr;
    callback();
  }
}

void FlowCollective::advance(int rank, int lane) {
  // Iterative over lanes: finishing a phase in lane c may release lane c+1 of this rank.
  for (; lane < lanes_; ++lane) {
    auto& pos = position_[lane_index(rank, lane)];
    bool moved = false;
    while (pos < phases_) {
      if (lane > 0 && position_[lane_index(rank, lane - 1)] <= pos) break;
      if (launched_[lane_index(rank, lane)] <= pos) launch(rank, lane, pos);
      const auto& plan = plans_[static_cast<std::size_t>(pattern_[static_cast<std::size_t>(pos)])];
      if (done_[done_index(pos, rank, lane)] < plan.involvement[static_cast<std::size_t>(rank)])
        break;
      ++pos;
      moved = true;
      if (pos == phases_ && --lanes_left_ == 0) {
        finish();
        return;
      }
    }
    if (!moved) return;
  }
}

void FlowCollective::launch(int rank, int lane, int phase) {
  launched_[lane_index(rank, lane)] = phase + 1;
  const auto p = static_cast<std::size_t>(pattern_[static_cast<std::size_t>(phase)]);
  auto& plan = plans_[p];
  if (plan.coflow) {
    if (plan.involvement[static_cast<std::size_t>(rank)] == 0 ||
        ++arrived_[static_cast<std::size_t>(phase)] <
            static_cast<std::int32_t>(plan.members.size())) {
      return;
    }
    start_coflow(phase);
    return;
  }
  launch_time_[lane_index(rank, lane)] = network_.now();
  for (auto b = plan.src_bundles[static_cast<std::size_t>(rank)];
       b < plan.src_bundles[static_cast<std::size_t>(rank) + 1]; ++b) {
    start_bundle(plan, p, phase, lane, b);
  }
}

void FlowCollective::start_bundle(Plan& plan, std::size_t pattern, int phase, int lane,
                                  std::int32_t b) {
  const auto& bundle = plan.bundles[static_cast<std::size_t>(b)];
  const Routes* routes = &scratch_routes_;
  if (plan.cached) {
    routes = &plan.routes[static_cast<std::size_t>(b)];
  } else {
    route_bundle(plan, bundle, pattern, scratch_routes_);
  }
  const std::uint64_t transfers =
      plan.all_pairs ? schedule_.phases[pattern].transfer_count(ranks_) : bundle.transfers_count;
  network_.add_traffic(routes->traffic,
                       schedule_.payload_fraction * schedule_.phases[pattern].payload / lanes_,
                       transfers, schedule_.traffic_tag);
  // Merged streaming phases pay every phase's latency in turn, not their longest path's.
  const Time latency = streamed_ ? streamed_latency_ : routes->latency;
  const std::uint64_t tag = pack(phase, lane, b);
  auto done = [this, tag] { bundle_done(tag); };
  if (!plan.coflow || !plan.cached) {
    network_.start_flow(routes->uses, bundle.bytes / lanes_, latency, priority_, weight_,
                        std::move(done), nullptr, plan.coflow);
  } else if (kept_.generation != 0 && kept_group_ == plan.route_group) {
    network_.restart_flow(kept_, bundle.bytes / lanes_, latency, std::move(done));
  } else {
    // A repeated coflow keeps its links between repeats: later ones only restart it. One
    // is kept at a time, so a parked one never shares links with the next pattern's.
    release_kept();
    kept_group_ = plan.route_group;
    network_.start_flow(routes->uses, bundle.bytes / lanes_, latency, priority_, weight_,
                        std::move(done), &kept_, true);
  }
}

void FlowCollective::bundle_done(std::uint64_t tag) {
  const int phase = static_cast<int>(tag >> (kLaneBits + kBundleBits));
  const int lane = static_cast<int>((tag >> kBundleBits) & ((1u << kLaneBits) - 1));
  const auto b = static_cast<std::size_t>(tag & 0xFFFFFFFFu);
  const auto p = static_cast<std::size_t>(pattern_[static_cast<std::size_t>(phase)]);
  const auto& plan = plans_[p];
  const auto& bundle = plan.bundles[b];
  if (network_.tracing()) {
    const auto& transfers = schedule_.phases[p].transfers;
    const Time start = plan.coflow ? phase_start_[static_cast<std::size_t>(phase)]
                                   : launch_time_[lane_index(bundle.src, lane)];
    auto record = [&](const Transfer& t) {
      const int src = schedule_.gpus[static_cast<std::size_t>(t.src)];
      const int dst = schedule_.gpus[static_cast<std::size_t>(t.dst)];
      network_.record(TransferRecord{src, dst, (t.bytes + lanes_ - 1) / lanes_, start,
                                     network_.now(), network_.slowest_class(src, dst)});
    };
    if (plan.all_pairs) {
      schedule_.phases[p].for_each_transfer(ranks_, record);
    } else {
      for (std::uint32_t i = 0; i < bundle.transfers_count; ++i) {
        record(transfers[static_cast<std::size_t>(plan.transfer_list[bundle.transfers_begin + i])]);
      }
    }
  }
  if (lockstep_) {
    if (phase + 1 < phases_) {
      start_coflow(phase + 1);
    } else {
      finish();
    }
    return;
  }
  if (bundle.src >= 0) ++done_[done_index(phase, bundle.src, lane)];
  for (std::uint32_t i = 0; i < bundle.dsts_count; ++i)
    ++done_[done_index(phase, plan.dsts[bundle.dsts_begin + i], lane)];
  if (bundle.src >= 0) advance(bundle.src, lane);
  for (std::uint32_t i = 0; i < bundle.dsts_count && lanes_left_ > 0; ++i) {
    advance(plan.dsts[bundle.dsts_begin + i], lane);
  }
}

}  // namespace strait::sim::network::detail
