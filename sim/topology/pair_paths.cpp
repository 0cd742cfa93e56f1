// Over 400 lines: PairPathCounter's tree walk and its scratch are one algorithm (header
// comment); the pieces share one Scratch.

#include "sim/topology/pair_paths.hpp"

#include <algorithm>
#include <limits>
#include <memory>
#include <utility>

namespace strait::sim::topology {
namespace {

bool is_hub(NodeKind kind) { return kind == NodeKind::kSwitch || kind == NodeKind::kGateway; }

// Paths per link, with the links touched and the longest latency seen.
class Tally {
 public:
  explicit Tally(const Cluster& cluster) : cluster_(cluster), count_(cluster.links().size(), 0) {}

  // Adds `paths` paths along `links`; `before` is the latency of what precedes them.
  void add_link(LinkIndex l, std::uint64_t paths) {
    if (count_[l] == 0) touched_.push_back(l);
    count_[l] += paths;
  }
  void saw_latency(Time latency) { longest_ = std::max(longest_, latency); }

  void add(std::span<const LinkIndex> links, std::uint64_t paths, Time before) {
    if (paths == 0) return;
    Time latency = before;
    for (LinkIndex l : links) {
      if (count_[l] == 0) touched_.push_back(l);
      count_[l] += paths;
      latency += cluster_.link(l).latency;
    }
    longest_ = std::max(longest_, latency);
  }

  // The counts so far; the tally is empty again afterwards.
  PairPathCounts result() {
    std::sort(touched_.begin(), touched_.end());
    PairPathCounts out;
    out.links.reserve(touched_.size());
    for (LinkIndex l : touched_) {
      out.links.emplace_back(l, count_[l]);
      count_[l] = 0;
    }
    out.longest_latency = longest_;
    touched_.clear();
    longest_ = Time::zero();
    return out;
  }

 private:
  const Cluster& cluster_;
  std::vector<std::uint64_t> count_;
  std::vector<LinkIndex> touched_;
  Time longest_ = Time::zero();
};

// How a GPU leaves its hub-free neighbourhood (the nodes it reaches through neither a
// switch nor a gateway nor another GPU).
struct Exit {
  bool unique = false;            // one link into a switch, reached along one shortest way
  NodeIndex hub = 0;              // the switch it enters
  std::vector<LinkIndex> prefix;  // from the GPU up to and including the link into `hub`
  Time latency;                   // of `prefix`
  std::vector<int> near;          // GPUs reached without a switch (other than itself)
};

// Breadth-first search from GPU node `src` over its hub-free neighbourhood, counting
// shortest ways (saturated at 2) so that a unique exit is recognised.
class Neighbourhood {
 public:
  explicit Neighbourhood(const Cluster& cluster)
      : cluster_(cluster),
        gpu_of_node_(cluster.nodes().size(), -1),
        seen_(cluster.nodes().size(), 0),
        ways_(cluster.nodes().size(), 0),
        parent_(cluster.nodes().size(), 0),
        depth_(cluster.nodes().size(), 0) {
    for (int g = 0; g < cluster.gpu_count(); ++g) gpu_of_node_[cluster.gpu(g).node] = g;
  }

  Exit explore(int gpu) {
    Exit e;
    if (++epoch_ == 0) {
      std::fill(seen_.begin(), seen_.end(), 0U);
      epoch_ = 1;
    }
    const NodeIndex src = cluster_.gpu(gpu).node;
    queue_.assign(1, src);
    seen_[src] = epoch_;
    ways_[src] = 1;
    depth_[src] = 0;
    LinkIndex exit_link = 0;
    int exits = 0;
    for (std::size_t k = 0; k < queue_.size(); ++k) {
      const NodeIndex u = queue_[k];
      for (LinkIndex l : cluster_.out_links(u)) {
        const NodeIndex v = cluster_.link(l).dst;
        if (v == src) continue;
        if (is_hub(cluster_.nodes()[v].kind)) {
          exit_link = l;
          ++exits;
          continue;
        }
        if (gpu_of_node_[v] >= 0) {  // another GPU: reached, never transit
          if (seen_[v] != epoch_) {
            seen_[v] = epoch_;
            e.near.push_back(gpu_of_node_[v]);
          }
          continue;
        }
        if (seen_[v] != epoch_) {
          seen_[v] = epoch_;
          ways_[v] = ways_[u];
          parent_[v] = l;
          queue_.push_back(v);
          depth_[v] = depth_[u] + 1;
        } else if (depth_[v] == depth_[u] + 1) {
          ways_[v] = std::min<std::uint8_t>(2, static_cast<std::uint8_t>(ways_[v] + ways_[u]));
        }
      }
    }
    if (exits != 1 || ways_[cluster_.link(exit_link).src] != 1) return e;
    e.unique = true;
    e.hub = cluster_.link(exit_link).dst;
    e.prefix.push_back(exit_link);
    for (NodeIndex u = cluster_.link(exit_link).src; u != src; u = cluster_.link(parent_[u]).src)
      e.prefix.push_back(parent_[u]);
    std::reverse(e.prefix.begin(), e.prefix.end());
    for (LinkIndex l : e.prefix) e.latency += cluster_.link(l).latency;
    return e;
  }

 private:
  const Cluster& cluster_;
  std::vector<int> gpu_of_node_;
  std::vector<std::uint32_t> seen_;   // epoch of the last visit
  std::vector<std::uint8_t> ways_;    // shortest ways from the source, saturated at 2
  std::vector<LinkIndex> parent_;     // link a shortest way arrives by
  std::vector<std::uint32_t> depth_;  // hops from the source
  std::vector<NodeIndex> queue_;
  std::uint32_t epoch_ = 0;
};

// An exit switch of count(): the members that leave by it, longest exit latency first.
struct ExitSlot {
  NodeIndex hub = 0;
  std::uint64_t members = 0;
  std::vector<int> by_latency;  // its members (ranks)
};

// count()'s members by how they leave their neighbourhoods, and its per-destination scratch.
struct ExitGroups {
  std::vector<Exit> exits;  // per member (rank)
  // near_to[near_offsets[d] .. near_offsets[d + 1]): members that reach member d without a
  // switch (CSR).
  std::vector<std::uint32_t> near_offsets;
  std::vector<int> near_to;
  std::vector<ExitSlot> slots;
  std::vector<std::size_t> excluded;  // per member: destination (+ 1) it was excluded for
  std::vector<std::uint64_t> count;   // per slot: its members that count toward a destination
};

// count_bytes' second-leg senders (the relay, or the sender itself), each with its exit
// explored once, and first legs (sender to relay, inside its host), each distinct one routed
// once; found through per-GPU slots (Scratch::rank_of: a second-leg sender's slot,
// Scratch::leg_of: the head of a sender's list of first legs).
struct LegSender {
  int gpu = 0;
  Exit exit;
  std::uint64_t prefix_bytes = 0;  // sent through its exit prefix
};
struct FirstLeg {
  int src = 0, relay = 0;
  std::int32_t next = -1;  // the sender's next first leg
  std::vector<LinkIndex> links;
  std::uint64_t bytes = 0;
  Time latency;
};
// Bytes entering the current destination's tree at an exit switch.
struct SlotLoad {
  NodeIndex hub = 0;
  std::uint64_t bytes = 0;
  Time before;
};
struct ByteRoutes {
  std::vector<LegSender> senders;
  std::vector<FirstLeg> legs;
  std::vector<SlotLoad> slots;  // the current destination's exit switches
};

}  // namespace

// Scratch sized to the cluster, kept between calls and left clean after each (entries
// reset, epochs advanced), so that a call costs O(set + what it touches).
struct PairPathCounter::Scratch {
  explicit Scratch(const Cluster& cluster)
      : tally(cluster),
        neighbourhood(cluster),
        rank_of(static_cast<std::size_t>(cluster.gpu_count()), -1),
        leg_of(static_cast<std::size_t>(cluster.gpu_count()), -1),
        dst_slot(static_cast<std::size_t>(cluster.gpu_count()), -1),
        hub_slot(cluster.nodes().size(), -1),
        node_epoch(cluster.nodes().size(), 0),
        node_paths(cluster.nodes().size(), 0),
        node_latency(cluster.nodes().size()) {}

  Tally tally;
  Neighbourhood neighbourhood;
  std::vector<int> rank_of;               // per GPU: its rank in the set, -1 outside
  std::vector<int> leg_of;                // per GPU: its first relay leg (count_bytes), or -1
  std::vector<int> dst_slot;              // per GPU: its destination slot (count_bytes), or -1
  std::vector<int> hub_slot;              // per node: its exit-switch slot, -1 if none
  std::vector<std::uint32_t> node_epoch;  // destination tree a node was last reached in
  std::vector<std::uint64_t> node_paths;  // paths through it toward the destination
  std::vector<Time> node_latency;         // longest way there from a source
  std::uint32_t epoch = 0;
  std::vector<std::vector<NodeIndex>> at_hops;  // tree nodes by hops to go
  std::vector<LinkIndex> path;

  // A new destination tree.
  void next_tree() {
    if (++epoch == 0) {
      std::fill(node_epoch.begin(), node_epoch.end(), 0U);
      epoch = 1;
    }
  }
  // `paths` (or bytes) enter the current tree at node u, `hops` from its destination, after
  // `latency` at the longest.
  void reach(NodeIndex u, std::uint32_t hops, std::uint64_t paths, Time latency) {
    if (node_epoch[u] != epoch) {
      node_epoch[u] = epoch;
      node_paths[u] = 0;
      node_latency[u] = latency;
      if (at_hops.size() <= hops) at_hops.resize(hops + 1);
      at_hops[hops].push_back(u);
    }
    node_paths[u] += paths;
    node_latency[u] = std::max(node_latency[u], latency);
  }
  // What reached the tree flows down it to `dst_node`, node by node in decreasing hops
  // (each tree link once, however many sources feed it).
  void flow_down(Router& router, NodeIndex dst_node) {
    const Cluster& cluster = router.cluster();
    for (std::size_t hops = at_hops.size(); hops-- > 1;) {
      for (std::size_t i = 0; i < at_hops[hops].size(); ++i) {
        const NodeIndex u = at_hops[hops][i];
        const LinkIndex l = router.first_link(u, dst_node);
        tally.add_link(l, node_paths[u]);
        reach(cluster.link(l).dst, static_cast<std::uint32_t>(hops - 1), node_paths[u],
              node_latency[u] + cluster.link(l).latency);
      }
      at_hops[hops].clear();
    }
    if (!at_hops.empty()) {
      if (!at_hops[0].empty()) tally.saw_latency(node_latency[dst_node]);
      at_hops[0].clear();
    }
  }

  // count()'s steps.
  void walk(Router& router, int src, int dst) {
    router.gpu_path(src, dst, path);
    tally.add(path, 1, Time::zero());
  }
  void walk_every_pair(Router& router, std::span<const int> gpus);
  ExitGroups group_by_exit(Router& router, std::span<const int> gpus);
  void index_near(ExitGroups& groups) const;
  void count_toward(Router& router, std::span<const int> gpus, std::size_t d, ExitGroups& groups);
  // count_bytes' steps.
  std::vector<std::uint32_t> order_by_destination(std::span<const PairBytes> transfers);
  FirstLeg& first_leg(Router& router, const PairBytes& t, ByteRoutes& routes);
  void add_transfer(Router& router, const PairBytes& t, bool trees, ByteRoutes& routes);
  void flow_to(Router& router, NodeIndex dst_node, ByteRoutes& routes);
  void add_legs_and_prefixes(ByteRoutes& routes);
};

PairPathCounter::PairPathCounter(Router& router)
    : router_(router), scratch_(std::make_unique<Scratch>(router.cluster())) {}

PairPathCounter::~PairPathCounter() = default;

PairPathCounts count_pair_paths(Router& router, std::span<const int> gpus) {
  return PairPathCounter(router).count(gpus);
}

PairPathCounts PairPathCounter::count(std::span<const int> gpus) {
  Router& router = router_;
  Scratch& z = *scratch_;
  const Cluster& cluster = router.cluster();
  if (gpus.size() < 2) return z.tally.result();
  if (router.policy() != EcmpPolicy::kDestinationModK || !cluster.explicit_routes().empty()) {
    z.walk_every_pair(router, gpus);
    return z.tally.result();
  }
  ExitGroups groups = z.group_by_exit(router, gpus);
  // Per destination: members near it (and itself) leave the switch counts; the pairs near
  // it are routed one by one, the rest flow as counts down the destination's tree from the
  // exit switches, node by node in decreasing hops (each tree link once, not once per
  // exit switch).
  for (std::size_t d = 0; d < gpus.size(); ++d) z.count_toward(router, gpus, d, groups);
  for (int g : gpus) z.rank_of[static_cast<std::size_t>(g)] = -1;
  for (const auto& slot : groups.slots) z.hub_slot[slot.hub] = -1;
  return z.tally.result();
}

void PairPathCounter::Scratch::walk_every_pair(Router& router, std::span<const int> gpus) {
  for (int dst : gpus) {
    for (int src : gpus) {
      if (src != dst) walk(router, src, dst);
    }
  }
}

// Each member's exit: a member with several exits has its pairs routed one by one; one with
// a unique exit carries its paths through its exit prefix and is counted at its exit switch.
ExitGroups PairPathCounter::Scratch::group_by_exit(Router& router, std::span<const int> gpus) {
  const auto n = gpus.size();
  for (std::size_t r = 0; r < n; ++r)
    rank_of[static_cast<std::size_t>(gpus[r])] = static_cast<int>(r);
  ExitGroups groups;
  groups.exits.resize(n);
  groups.near_offsets.assign(n + 1, 0);
  for (std::size_t r = 0; r < n; ++r) {
    Exit& e = groups.exits[r];
    e = neighbourhood.explore(gpus[r]);
    std::erase_if(e.near, [&](int g) { return rank_of[static_cast<std::size_t>(g)] < 0; });
    for (int g : e.near)
      ++groups.near_offsets[static_cast<std::size_t>(rank_of[static_cast<std::size_t>(g)]) + 1];
    if (!e.unique) {
      for (int dst : gpus) {
        if (dst != gpus[r]) walk(router, gpus[r], dst);
      }
      continue;
    }
    // Its exit prefix carries its paths to every member outside its neighbourhood.
    tally.add(e.prefix, n - 1 - e.near.size(), Time::zero());
    int& slot = hub_slot[e.hub];
    if (slot < 0) {
      slot = static_cast<int>(groups.slots.size());
      groups.slots.push_back({e.hub, 0, {}});
    }
    ++groups.slots[static_cast<std::size_t>(slot)].members;
    groups.slots[static_cast<std::size_t>(slot)].by_latency.push_back(static_cast<int>(r));
  }
  for (auto& s : groups.slots) {
    std::stable_sort(s.by_latency.begin(), s.by_latency.end(), [&](int a, int b) {
      return groups.exits[static_cast<std::size_t>(a)].latency >
             groups.exits[static_cast<std::size_t>(b)].latency;
    });
  }
  index_near(groups);
  groups.excluded.assign(n, 0);
  groups.count.assign(groups.slots.size(), 0);
  return groups;
}

// near_offsets from counts to offsets, and near_to filled from the members' near lists.
void PairPathCounter::Scratch::index_near(ExitGroups& groups) const {
  const auto n = groups.exits.size();
  auto& offsets = groups.near_offsets;
  for (std::size_t d = 0; d < n; ++d) offsets[d + 1] += offsets[d];
  groups.near_to.resize(offsets[n]);
  std::vector<std::uint32_t> fill(offsets.begin(), offsets.end() - 1);
  for (std::size_t r = 0; r < n; ++r) {
    for (int g : groups.exits[r].near)
      groups.near_to[fill[static_cast<std::size_t>(rank_of[static_cast<std::size_t>(g)])]++] =
          static_cast<int>(r);
  }
}

// The paths toward member d: its near members routed one by one, the others as counts down
// d's tree from their exit switches.
void PairPathCounter::Scratch::count_toward(Router& router, std::span<const int> gpus,
                                            std::size_t d, ExitGroups& groups) {
  const Cluster& cluster = router.cluster();
  const auto& exits = groups.exits;
  auto& count = groups.count;
  next_tree();
  const int dst = gpus[d];
  const NodeIndex dst_node = cluster.gpu(dst).node;
  auto exclude = [&](std::size_t s) {
    groups.excluded[s] = d + 1;
    if (exits[s].unique) --count[static_cast<std::size_t>(hub_slot[exits[s].hub])];
  };
  for (std::size_t k = 0; k < groups.slots.size(); ++k) count[k] = groups.slots[k].members;
  exclude(d);
  for (auto i = groups.near_offsets[d]; i < groups.near_offsets[d + 1]; ++i) {
    const auto s = static_cast<std::size_t>(groups.near_to[i]);
    exclude(s);
    if (exits[s].unique) walk(router, gpus[s], dst);
  }
  for (std::size_t k = 0; k < groups.slots.size(); ++k) {
    if (count[k] == 0) continue;
    // The longest exit latency among the slot's members still counted.
    Time before = Time::zero();
    for (int s : groups.slots[k].by_latency) {
      if (groups.excluded[static_cast<std::size_t>(s)] != d + 1) {
        before = exits[static_cast<std::size_t>(s)].latency;
        break;
      }
    }
    reach(groups.slots[k].hub, router.hops(groups.slots[k].hub, dst_node), count[k], before);
  }
  flow_down(router, dst_node);
}

PairPathCounts PairPathCounter::count_bytes(std::span<const PairBytes> transfers) {
  Router& router = router_;
  Scratch& z = *scratch_;
  const Cluster& cluster = router.cluster();
  const bool trees =
      router.policy() == EcmpPolicy::kDestinationModK && cluster.explicit_routes().empty();
  const std::vector<std::uint32_t> order = z.order_by_destination(transfers);
  ByteRoutes routes;
  for (std::size_t at = 0; at < order.size();) {
    const int dst = transfers[order[at]].dst;
    z.next_tree();
    for (; at < order.size() && transfers[order[at]].dst == dst; ++at)
      z.add_transfer(router, transfers[order[at]], trees, routes);
    z.flow_to(router, cluster.gpu(dst).node, routes);
  }
  z.add_legs_and_prefixes(routes);
  return z.tally.result();
}

// Transfer indices by destination (a counting sort over the destinations' first appearance).
std::vector<std::uint32_t> PairPathCounter::Scratch::order_by_destination(
    std::span<const PairBytes> transfers) {
  std::vector<std::uint32_t> order(transfers.size());
  std::vector<int> dsts;
  std::vector<std::uint32_t> offsets;
  for (const PairBytes& t : transfers) {
    int& d = dst_slot[static_cast<std::size_t>(t.dst)];
    if (d < 0) {
      d = static_cast<int>(dsts.size());
      dsts.push_back(t.dst);
      offsets.push_back(0);
    }
    ++offsets[static_cast<std::size_t>(d)];
  }
  std::uint32_t sum = 0;
  for (auto& o : offsets) sum += std::exchange(o, sum);
  for (std::uint32_t i = 0; i < transfers.size(); ++i)
    order[offsets[static_cast<std::size_t>(
        dst_slot[static_cast<std::size_t>(transfers[i].dst)])]++] = i;
  for (int g : dsts) dst_slot[static_cast<std::size_t>(g)] = -1;
  return order;
}

// The first leg of `t` (its sender to its relay), routed the first time it is met.
FirstLeg& PairPathCounter::Scratch::first_leg(Router& router, const PairBytes& t,
                                              ByteRoutes& routes) {
  auto& legs = routes.legs;
  std::int32_t& head = leg_of[static_cast<std::size_t>(t.src)];
  std::int32_t k = head;
  while (k >= 0 && legs[static_cast<std::size_t>(k)].relay != t.relay)
    k = legs[static_cast<std::size_t>(k)].next;
  if (k < 0) {
    k = static_cast<std::int32_t>(legs.size());
    FirstLeg leg{t.src, t.relay, head, {}, 0, Time::zero()};
    router.gpu_path(t.src, t.relay, leg.links);
    for (LinkIndex l : leg.links) leg.latency += router.cluster().link(l).latency;
    legs.push_back(std::move(leg));
    head = k;
  }
  return legs[static_cast<std::size_t>(k)];
}

// One transfer toward the current destination: its first leg (through a relay) tallied
// later, its second routed now when it does not leave by a unique exit away from the
// destination, else added at its exit switch.
void PairPathCounter::Scratch::add_transfer(Router& router, const PairBytes& t, bool trees,
                                            ByteRoutes& routes) {
  if (t.bytes == 0 || t.src == t.dst) return;
  Time before = Time::zero();
  int from = t.src;
  if (t.relay >= 0 && t.relay != t.src) {
    FirstLeg& leg = first_leg(router, t, routes);
    leg.bytes += t.bytes;
    before = leg.latency;
    from = t.relay;
  }
  int& slot_of = rank_of[static_cast<std::size_t>(from)];
  if (slot_of < 0) {
    slot_of = static_cast<int>(routes.senders.size());
    routes.senders.push_back({from, trees ? neighbourhood.explore(from) : Exit{}, 0});
  }
  LegSender& sender = routes.senders[static_cast<std::size_t>(slot_of)];
  const Exit& e = sender.exit;
  if (!e.unique || std::find(e.near.begin(), e.near.end(), t.dst) != e.near.end()) {
    router.gpu_path(from, t.dst, path);
    tally.add(path, t.bytes, before);
    return;
  }
  sender.prefix_bytes += t.bytes;
  int& slot = hub_slot[e.hub];
  if (slot < 0) {
    slot = static_cast<int>(routes.slots.size());
    routes.slots.push_back({e.hub, 0, Time::zero()});
  }
  SlotLoad& load = routes.slots[static_cast<std::size_t>(slot)];
  load.bytes += t.bytes;
  load.before = std::max(load.before, before + e.latency);
}

// What entered at the exit switches flows down the destination's tree.
void PairPathCounter::Scratch::flow_to(Router& router, NodeIndex dst_node, ByteRoutes& routes) {
  for (const SlotLoad& load : routes.slots) {
    reach(load.hub, router.hops(load.hub, dst_node), load.bytes, load.before);
    hub_slot[load.hub] = -1;
  }
  routes.slots.clear();
  flow_down(router, dst_node);
}

// The first legs and exit prefixes carry their sums once, and their slots are freed.
void PairPathCounter::Scratch::add_legs_and_prefixes(ByteRoutes& routes) {
  for (const FirstLeg& leg : routes.legs) {
    tally.add(leg.links, leg.bytes, Time::zero());
    leg_of[static_cast<std::size_t>(leg.src)] = -1;
  }
  for (const LegSender& sender : routes.senders) {
    if (sender.prefix_bytes > 0) tally.add(sender.exit.prefix, sender.prefix_bytes, Time::zero());
    rank_of[static_cast<std::size_t>(sender.gpu)] = -1;
  }
}

}  // namespace strait::sim::topology
