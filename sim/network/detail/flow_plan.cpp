#include "sim/network/detail/flow_plan.hpp"

#include <algorithm>

#include "sim/core/error.hpp"
#include "sim/network/detail/pxn.hpp"
#include "sim/network/flow_network.hpp"

namespace strait::sim::network::detail {

namespace {

template <class T>
std::size_t held(const std::vector<T>& v) {
  return v.capacity() * sizeof(T);
}

}  // namespace

std::size_t FlowPlan::bytes() const {
  std::size_t total = sizeof(FlowPlan) + held(schedule.gpus) + held(schedule.phases) +
                      held(pattern) + held(patterns);
  for (const Phase& p : schedule.phases) total += held(p.transfers) + p.name.capacity();
  for (const Pattern& p : patterns) {
    total += held(p.bundles) + held(p.src_bundles) + held(p.dsts) + held(p.transfer_list) +
             held(p.involvement) + held(p.routes) + held(p.members);
    for (const Routes& r : p.routes) total += held(r.uses);
  }
  return total;
}

std::shared_ptr<const FlowPlan> FlowPlanner::plan(Schedule schedule) {
  auto made = std::make_shared<FlowPlan>();
  FlowPlan& plan = *made;
  plan.schedule = std::move(schedule);
  Schedule& s = plan.schedule;
  plan.ranks = static_cast<int>(s.gpus.size());
  plan.lanes = s.chunks;
  plan.phases = s.expanded_phase_count();
  if (plan.lanes < 1 || plan.lanes >= (1 << kLaneBits))
    throw Error("collective: chunk lanes must be in 1..255");
  if (plan.phases >= (1 << (64 - kLaneBits - kBundleBits - 1)))
    throw Error("collective: too many phases");
  // Pipelined lanes keep one flow per transfer: an implicit all-pairs phase (built with one
  // lane only) would need its transfers stored then.
  if (plan.lanes > 1) expand_all_pairs(s);
  if (s.cut_through) merge_streaming_phases(plan);
  plan.pattern.reserve(static_cast<std::size_t>(plan.phases));
  for (std::size_t i = 0; i < s.phases.size(); ++i) {
    for (int k = 0; k < s.phases[i].repeat; ++k)
      plan.pattern.push_back(static_cast<std::int32_t>(i));
  }
  plan.patterns.resize(s.phases.size());
  for (std::size_t i = 0; i < s.phases.size(); ++i) make_pattern(plan, i);
  for (std::size_t i = 0; i < plan.patterns.size(); ++i) {
    auto& p = plan.patterns[i];
    if (p.coflow && p.repeats) p.route_group = route_group(plan, i);
  }
  // Every phase one coflow of every rank: phase p + 1 starts when p's coflow ends, for all
  // ranks at once, so per-rank progress would only repeat that (and cost n per phase).
  plan.lockstep = plan.lanes == 1 &&
                  std::all_of(plan.patterns.begin(), plan.patterns.end(), [&](const auto& p) {
                    return p.coflow && static_cast<int>(p.members.size()) == plan.ranks;
                  });
  return made;
}

// A cut-through schedule's phases stream through each other: they run as one coflow of all
// their transfers, which pays the phases' latencies in turn (each as its own coflow would
// pay it) and ends no earlier than min_data_time after them, as the estimators count it.
void FlowPlanner::merge_streaming_phases(FlowPlan& plan) {
  Schedule& s = plan.schedule;
  plan.lanes = 1;
  Phase merged;
  merged.name = s.phases.empty() ? "streamed" : s.phases.front().name;
  plan.streamed_latency = Time::zero();
  plan.patterns.resize(s.phases.size());
  for (std::size_t i = 0; i < s.phases.size(); ++i) {
    const Phase& phase = s.phases[i];
    make_pattern(plan, i);
    for (const auto& routes : plan.patterns[i].routes)
      plan.streamed_latency += routes.latency * phase.repeat;
    merged.payload = phase.payload;
    for (int k = 0; k < phase.repeat; ++k)
      merged.transfers.insert(merged.transfers.end(), phase.transfers.begin(),
                              phase.transfers.end());
  }
  plan.patterns.clear();
  s.phases.clear();
  if (!merged.transfers.empty()) s.phases.push_back(std::move(merged));
  plan.phases = static_cast<int>(s.phases.size());
  plan.streamed = true;
}

void FlowPlanner::make_pattern(FlowPlan& plan, std::size_t index) {
  const Phase& phase = plan.schedule.phases[index];
  auto& pattern = plan.patterns[index];
  const auto n = static_cast<std::size_t>(plan.ranks);
  pattern.src_bundles.assign(n + 1, 0);
  pattern.involvement.assign(n, 0);
  group_by_sender(phase, n, pattern);
  seen_.assign(n, -1);
  if (phase.all_pairs > 0) {
    add_all_pairs_coflow(plan, phase, pattern);
  } else if (plan.lanes == 1 && !phase.transfers.empty()) {
    add_phase_coflow(phase, pattern);
  } else {
    add_transfer_bundles(phase, n, pattern);
  }
  // Phases that run more than once (ring steps, chunk lanes) keep their coflow linked
  // between repeats (FlowCollective).
  pattern.repeats = phase.repeat > 1 || plan.lanes > 1;
  pattern.routes.resize(pattern.bundles.size());
  for (std::size_t i = 0; i < pattern.bundles.size(); ++i)
    route_bundle(plan, pattern, pattern.bundles[i], index, pattern.routes[i]);
}

// The phase's transfers grouped by sender into the pattern's transfer list (a counting sort
// keeps their order within a sender); offsets_ holds each sender's range.
void FlowPlanner::group_by_sender(const Phase& phase, std::size_t n, FlowPlan::Pattern& pattern) {
  const auto& transfers = phase.transfers;
  offsets_.assign(n + 1, 0);
  for (const auto& t : transfers) ++offsets_[static_cast<std::size_t>(t.src) + 1];
  for (std::size_t r = 0; r < n; ++r) offsets_[r + 1] += offsets_[r];
  pattern.transfer_list.resize(transfers.size());
  fill_.assign(offsets_.begin(), offsets_.end() - 1);
  for (std::size_t t = 0; t < transfers.size(); ++t) {
    pattern.transfer_list[static_cast<std::size_t>(
        fill_[static_cast<std::size_t>(transfers[t].src)]++)] = static_cast<std::int32_t>(t);
  }
}

// Implicit all-pairs phase: one coflow of every rank, routed as a whole (route_bundle).
void FlowPlanner::add_all_pairs_coflow(const FlowPlan& plan, const Phase& phase,
                                       FlowPlan::Pattern& pattern) {
  const auto n = static_cast<std::size_t>(plan.ranks);
  pattern.coflow = true;
  pattern.all_pairs = true;
  FlowPlan::Bundle b;
  b.src = -1;
  b.bytes =
      static_cast<double>(phase.all_pairs) * static_cast<double>(phase.transfer_count(plan.ranks));
  pattern.members.resize(n);
  for (std::size_t r = 0; r < n; ++r) pattern.members[r] = static_cast<std::int32_t>(r);
  pattern.involvement.assign(n, 1);
  b.dsts_count = static_cast<std::uint32_t>(n);
  pattern.dsts = pattern.members;
  pattern.bundles.push_back(b);
}

// One coflow for the whole phase; every rank that sends or receives waits for it.
void FlowPlanner::add_phase_coflow(const Phase& phase, FlowPlan::Pattern& pattern) {
  const auto& transfers = phase.transfers;
  pattern.coflow = true;
  FlowPlan::Bundle b;
  b.src = -1;
  b.transfers_begin = 0;
  b.transfers_count = static_cast<std::uint32_t>(transfers.size());
  for (const auto& t : transfers) {
    b.bytes += static_cast<double>(t.bytes);
    for (int r : {t.src, t.dst}) {
      if (seen_[static_cast<std::size_t>(r)] < 0) {
        seen_[static_cast<std::size_t>(r)] = 0;
        pattern.members.push_back(r);
        pattern.involvement[static_cast<std::size_t>(r)] = 1;
      }
    }
  }
  b.dsts_begin = 0;
  b.dsts_count = static_cast<std::uint32_t>(pattern.members.size());
  pattern.dsts = pattern.members;
  pattern.bundles.push_back(b);
}

// One bundle per transfer, by sender (per-rank progress: pipelined lanes).
void FlowPlanner::add_transfer_bundles(const Phase& phase, std::size_t n,
                                       FlowPlan::Pattern& pattern) {
  const auto& transfers = phase.transfers;
  for (std::size_t r = 0; r < n; ++r) {
    pattern.src_bundles[r] = static_cast<std::int32_t>(pattern.bundles.size());
    for (auto i = offsets_[r]; i < offsets_[r + 1]; ++i) {
      const auto& t =
          transfers[static_cast<std::size_t>(pattern.transfer_list[static_cast<std::size_t>(i)])];
      FlowPlan::Bundle b;
      b.src = static_cast<int>(r);
      b.transfers_begin = static_cast<std::uint32_t>(i);
      b.transfers_count = 1;
      b.bytes = static_cast<double>(t.bytes);
      b.dsts_begin = static_cast<std::uint32_t>(pattern.dsts.size());
      b.dsts_count = 1;
      pattern.dsts.push_back(t.dst);
      ++pattern.involvement[static_cast<std::size_t>(t.dst)];
      ++pattern.involvement[r];
      pattern.bundles.push_back(b);
    }
  }
  pattern.src_bundles[n] = static_cast<std::int32_t>(pattern.bundles.size());
}

void FlowPlanner::route_bundle(const FlowPlan& plan, const FlowPlan::Pattern& pattern,
                               const FlowPlan::Bundle& bundle, std::size_t index,
                               FlowPlan::Routes& out) {
  const Phase& phase = plan.schedule.phases[index];
  out.uses.clear();
  out.traffic.fill(0.0);
  out.latency = Time::zero();
  if (pattern.all_pairs) {
    route_all_pairs(plan.schedule, phase, bundle, out);
  } else if (!phase.pipelined && bundle.transfers_count >= kCountedTransfers) {
    route_counted(plan.schedule, phase, pattern, bundle, out);
  } else {
    route_transfers(plan.schedule, phase, pattern, bundle, out);
  }
}

// Each link carries all_pairs bytes for every pair whose path crosses it; the pairs are
// counted per link by destination trees, not routed one by one (268 M at 16k ranks).
void FlowPlanner::route_all_pairs(const Schedule& s, const Phase& phase,
                                  const FlowPlan::Bundle& bundle, FlowPlan::Routes& out) {
  const auto& cluster = network_.cluster();
  const Bytes each = phase.all_pairs;
  const auto paths = network_.pair_paths().count(s.gpus);
  out.uses.reserve(paths.links.size());
  for (const auto& [link, count] : paths.links) {
    const double bytes = static_cast<double>(count) * static_cast<double>(each);
    out.uses.push_back({network_.link_resource(link), bytes / bundle.bytes});
    out.traffic[static_cast<std::size_t>(cluster.link(link).link_class)] += bytes;
  }
  out.latency = phase.transfer_latency(paths.longest_latency, false);
}

// Many transfers (an embedding group's all_to_allv, 512 x 512): bytes per link summed down
// the destinations' routing trees (topology::PairPathCounter::count_bytes), not routed one
// by one; the same sums. A transfer pays max(its path, its step latency), so the phase pays
// the larger of its longest path and the steps its transfers take.
void FlowPlanner::route_counted(const Schedule& s, const Phase& phase,
                                const FlowPlan::Pattern& pattern, const FlowPlan::Bundle& bundle,
                                FlowPlan::Routes& out) {
  const auto& cluster = network_.cluster();
  const auto& transfers = phase.transfers;
  counted_.clear();
  bool in_host = false, across = false;
  for (std::uint32_t i = 0; i < bundle.transfers_count; ++i) {
    const auto& t =
        transfers[static_cast<std::size_t>(pattern.transfer_list[bundle.transfers_begin + i])];
    const int src = s.gpus[static_cast<std::size_t>(t.src)];
    const int dst = s.gpus[static_cast<std::size_t>(t.dst)];
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
}

// Transfer by transfer along its route. Per-link sums of bytes in the network's scratch (one
// per network, not per collective: a training run starts thousands of collectives on a
// cluster of 10^5 links). Whole bytes sum exactly, so a link's share is rounded once, as the
// all-pairs count gives it.
void FlowPlanner::route_transfers(const Schedule& s, const Phase& phase,
                                  const FlowPlan::Pattern& pattern, const FlowPlan::Bundle& bundle,
                                  FlowPlan::Routes& out) {
  const auto& cluster = network_.cluster();
  const auto& transfers = phase.transfers;
  std::vector<double>& link_bytes = network_.link_sums_;
  std::vector<std::uint32_t>& touched = network_.touched_links_;
  if (link_bytes.empty()) link_bytes.assign(cluster.links().size(), 0.0);
  Time latency_sum = Time::zero();
  int legs_of = -1;  // the sender whose relay legs relay_legs_ holds (transfers come by sender)
  for (std::uint32_t i = 0; i < bundle.transfers_count; ++i) {
    const auto& t =
        transfers[static_cast<std::size_t>(pattern.transfer_list[bundle.transfers_begin + i])];
    scratch_uses_.clear();
    const int src = s.gpus[static_cast<std::size_t>(t.src)];
    const int dst = s.gpus[static_cast<std::size_t>(t.dst)];
    const int relay = phase.pxn ? pxn_relay(cluster, src, dst) : -1;
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
      const Time to_relay = relay_leg(src, relay, b);  // its links first in scratch_uses_
      path = to_relay + network_.route(relay, dst, b, scratch_uses_, nullptr);
    }
    const Time latency =
        phase.transfer_latency(path, cluster.gpu(src).host != cluster.gpu(dst).host);
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
  out.latency = phase_latency(phase, out.latency, latency_sum, bundle.transfers_count);
  for (auto link : touched) {
    out.uses.push_back({network_.link_resource(link), link_bytes[link] / bundle.bytes});
    link_bytes[link] = 0.0;
  }
  touched.clear();
}

// The in-host leg from `src` to its PXN relay `relay`, with `bytes`, into scratch_uses_;
// routed once per sender and relay (relay_legs_), then replayed. Returns its latency.
Time FlowPlanner::relay_leg(int src, int relay, double bytes) {
  for (const auto& l : relay_legs_) {
    if (l.relay != relay) continue;
    for (auto k = l.begin; k < l.end; ++k) scratch_uses_.push_back({relay_resources_[k], bytes});
    return l.latency;
  }
  RelayLeg fresh;
  fresh.relay = relay;
  fresh.begin = relay_resources_.size();
  fresh.latency = network_.route(src, relay, bytes, scratch_uses_, nullptr);
  for (const auto& u : scratch_uses_) relay_resources_.push_back(u.resource);
  fresh.end = relay_resources_.size();
  relay_legs_.push_back(fresh);
  return fresh.latency;
}

// Patterns whose coflows use the same links with the same shares (a ring's reduce-scatter
// and all-gather steps) share one kept flow.
std::int32_t FlowPlanner::route_group(const FlowPlan& plan, std::size_t index) {
  const auto same = [](const FlowPlan::Routes& a, const FlowPlan::Routes& b) {
    return std::equal(a.uses.begin(), a.uses.end(), b.uses.begin(), b.uses.end(),
                      [](const engine::ResourceUse& x, const engine::ResourceUse& y) {
                        return x.resource == y.resource && x.coefficient == y.coefficient;
                      });
  };
  const auto& patterns = plan.patterns;
  for (std::size_t j = 0; j < index; ++j) {
    if (patterns[j].coflow && patterns[j].repeats &&
        same(patterns[j].routes[0], patterns[index].routes[0]))
      return static_cast<std::int32_t>(j);
  }
  return static_cast<std::int32_t>(index);
}

}  // namespace strait::sim::network::detail
