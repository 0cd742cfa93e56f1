#include "sim/network/detail/flow_collective.hpp"

#include <algorithm>

#include "sim/network/flow_network.hpp"

namespace strait::sim::network::detail {
namespace {

std::uint64_t pack(int phase, int lane, int bundle) {
  return (static_cast<std::uint64_t>(phase) << (kLaneBits + kBundleBits)) |
         (static_cast<std::uint64_t>(lane) << kBundleBits) | static_cast<std::uint32_t>(bundle);
}

}  // namespace

FlowCollective::FlowCollective(FlowNetwork& network, std::shared_ptr<const FlowPlan> plan,
                               int priority, double weight, int traffic_tag,
                               std::function<void()> on_done)
    : network_(network),
      plan_(std::move(plan)),
      schedule_(plan_->schedule),
      priority_(priority),
      weight_(weight),
      traffic_tag_(traffic_tag),
      on_done_(std::move(on_done)),
      ranks_(plan_->ranks),
      lanes_(plan_->lanes),
      phases_(plan_->phases),
      not_before_(network.now() + (plan_->streamed ? plan_->streamed_latency : Time::zero()) +
                  schedule_.min_data_time) {
  const auto n = static_cast<std::size_t>(ranks_);
  lanes_left_ = static_cast<std::int64_t>(n) * lanes_;
  // In lockstep one coflow runs at a time and no rank moves on its own: no per-rank or
  // per-phase state (most runs are small lockstep collectives, e.g. a context-parallel
  // pair's, and each of these vectors was an allocation and a cache miss per run).
  if (plan_->lockstep) return;
  position_.assign(n * static_cast<std::size_t>(lanes_), 0);
  launched_.assign(n * static_cast<std::size_t>(lanes_), 0);
  launch_time_.assign(n * static_cast<std::size_t>(lanes_), Time::zero());
  done_.assign(static_cast<std::size_t>(phases_) * n * static_cast<std::size_t>(lanes_), 0);
  arrived_.assign(static_cast<std::size_t>(phases_), 0);
  phase_start_.assign(static_cast<std::size_t>(phases_), Time::zero());
}

void FlowCollective::start() {
  if (phases_ == 0) {
    finish();
    return;
  }
  if (plan_->lockstep) {
    start_coflow(0);
    return;
  }
  for (int r = 0; r < ranks_ && lanes_left_ > 0; ++r) advance(r, 0);
}

void FlowCollective::start_coflow(int phase) {
  const auto p = static_cast<std::size_t>(plan_->pattern[static_cast<std::size_t>(phase)]);
  coflow_start(phase) = network_.now();
  start_bundle(plan_->patterns[p], p, phase, 0, 0);
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
      const auto& pattern =
          plan_->patterns[static_cast<std::size_t>(plan_->pattern[static_cast<std::size_t>(pos)])];
      if (done_[done_index(pos, rank, lane)] < pattern.involvement[static_cast<std::size_t>(rank)])
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
  const auto p = static_cast<std::size_t>(plan_->pattern[static_cast<std::size_t>(phase)]);
  const auto& pattern = plan_->patterns[p];
  if (pattern.coflow) {
    if (pattern.involvement[static_cast<std::size_t>(rank)] == 0 ||
        ++arrived_[static_cast<std::size_t>(phase)] <
            static_cast<std::int32_t>(pattern.members.size())) {
      return;
    }
    start_coflow(phase);
    return;
  }
  launch_time_[lane_index(rank, lane)] = network_.now();
  for (auto b = pattern.src_bundles[static_cast<std::size_t>(rank)];
       b < pattern.src_bundles[static_cast<std::size_t>(rank) + 1]; ++b) {
    start_bundle(pattern, p, phase, lane, b);
  }
}

void FlowCollective::start_bundle(const Pattern& pattern, std::size_t index, int phase, int lane,
                                  std::int32_t b) {
  const auto& bundle = pattern.bundles[static_cast<std::size_t>(b)];
  const auto& routes = pattern.routes[static_cast<std::size_t>(b)];
  const Phase& stored = schedule_.phases[index];
  const std::uint64_t transfers =
      pattern.all_pairs ? stored.transfer_count(ranks_) : bundle.transfers_count;
  network_.add_traffic(routes.traffic, schedule_.payload_fraction * stored.payload / lanes_,
                       transfers, traffic_tag_);
  // Merged streaming phases pay every phase's latency in turn, not their longest path's.
  const Time latency = plan_->streamed ? plan_->streamed_latency : routes.latency;
  const std::uint64_t tag = pack(phase, lane, b);
  auto done = [this, tag] { bundle_done(tag); };
  if (!pattern.coflow || !pattern.repeats) {
    network_.start_flow(routes.uses, bundle.bytes / lanes_, latency, priority_, weight_,
                        std::move(done), nullptr, pattern.coflow);
  } else if (kept_.generation != 0 && kept_group_ == pattern.route_group) {
    network_.restart_flow(kept_, bundle.bytes / lanes_, latency, std::move(done));
  } else {
    // A repeated coflow keeps its links between repeats: later ones only restart it. One
    // is kept at a time, so a parked one never shares links with the next pattern's.
    release_kept();
    kept_group_ = pattern.route_group;
    network_.start_flow(routes.uses, bundle.bytes / lanes_, latency, priority_, weight_,
                        std::move(done), &kept_, true);
  }
}

void FlowCollective::bundle_done(std::uint64_t tag) {
  const int phase = static_cast<int>(tag >> (kLaneBits + kBundleBits));
  const int lane = static_cast<int>((tag >> kBundleBits) & ((1u << kLaneBits) - 1));
  const auto b = static_cast<std::size_t>(tag & 0xFFFFFFFFu);
  const auto p = static_cast<std::size_t>(plan_->pattern[static_cast<std::size_t>(phase)]);
  const auto& pattern = plan_->patterns[p];
  const auto& bundle = pattern.bundles[b];
  if (network_.tracing()) {
    const auto& transfers = schedule_.phases[p].transfers;
    const Time start =
        pattern.coflow ? coflow_start(phase) : launch_time_[lane_index(bundle.src, lane)];
    auto record = [&](const Transfer& t) {
      const int src = schedule_.gpus[static_cast<std::size_t>(t.src)];
      const int dst = schedule_.gpus[static_cast<std::size_t>(t.dst)];
      network_.record(TransferRecord{src, dst, (t.bytes + lanes_ - 1) / lanes_, start,
                                     network_.now(), network_.slowest_class(src, dst)});
    };
    if (pattern.all_pairs) {
      schedule_.phases[p].for_each_transfer(ranks_, record);
    } else {
      for (std::uint32_t i = 0; i < bundle.transfers_count; ++i) {
        record(
            transfers[static_cast<std::size_t>(pattern.transfer_list[bundle.transfers_begin + i])]);
      }
    }
  }
  if (plan_->lockstep) {
    if (phase + 1 < phases_) {
      start_coflow(phase + 1);
    } else {
      finish();
    }
    return;
  }
  if (bundle.src >= 0) ++done_[done_index(phase, bundle.src, lane)];
  for (std::uint32_t i = 0; i < bundle.dsts_count; ++i)
    ++done_[done_index(phase, pattern.dsts[bundle.dsts_begin + i], lane)];
  if (bundle.src >= 0) advance(bundle.src, lane);
  for (std::uint32_t i = 0; i < bundle.dsts_count && lanes_left_ > 0; ++i) {
    advance(pattern.dsts[bundle.dsts_begin + i], lane);
  }
}

}  // namespace strait::sim::network::detail
