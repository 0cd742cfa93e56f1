// Over 400 lines: the Router's hub tables, exits, portals and next hops are one data structure;
// apart they would share every private member.

#include "sim/topology/router.hpp"

#include <algorithm>
#include <limits>
#include <numeric>
#include <tuple>
#include <unordered_map>

#include <fmt/format.h>

#include "sim/core/error.hpp"
#include "sim/topology/detail/hop_graph.hpp"  // kUnreachable

namespace strait::sim::topology {
namespace {

constexpr std::uint32_t kFar = std::numeric_limits<std::uint32_t>::max();
constexpr LinkIndex kNoLink = std::numeric_limits<LinkIndex>::max();

std::uint64_t pair_key(NodeIndex src, NodeIndex dst) {
  return (static_cast<std::uint64_t>(src) << 32) | dst;
}

// splitmix64 finalizer: a fixed hash, identical on every platform.
std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

bool is_hub(NodeKind kind) { return kind == NodeKind::kSwitch || kind == NodeKind::kGateway; }

}  // namespace

struct Router::Impl {
  // How paths reach one destination: the nodes of its own host that reach it without a
  // hub (switch or gateway), and the hubs ("portals") from which a hub-free path enters.
  struct Approach {
    std::vector<std::pair<NodeIndex, std::uint32_t>> local;    // non-hub node, hops to dst
    std::vector<std::pair<NodeIndex, std::uint32_t>> portals;  // hub, hops from it to dst
    std::vector<const std::uint16_t*> portal_tables;           // hub_table of each portal
    // d-mod-k next hop at the hubs paths to dst have crossed, memoized: (hub number, link)
    // sorted by hub while few, then a row over every hub (hub_row). At 16,384 GPUs a
    // training job's paths to a destination cross ~15 of ~1,100 hubs (dense rows for all
    // destinations were 71 MiB there); an all-to-all's destination trees cross them all.
    std::vector<std::pair<std::uint32_t, LinkIndex>> hub_next;
    std::vector<LinkIndex> hub_row;
  };
  static constexpr std::size_t kSparseMemo = 64;  // hub_next entries before hub_row

  Impl(const Cluster& c, EcmpPolicy p) : cluster(c), policy(p) {
    const auto node_count = cluster.nodes().size();
    is_gpu.reserve(node_count);
    for (const Node& n : cluster.nodes()) is_gpu.push_back(n.kind == NodeKind::kGpu ? 1 : 0);
    offsets.assign(node_count + 1, 0);
    in_offsets.assign(node_count + 1, 0);
    for (NodeIndex n = 0; n < node_count; ++n) {
      for (LinkIndex l : cluster.out_links(n)) out.emplace_back(l, cluster.link(l).dst);
      offsets[n + 1] = static_cast<std::uint32_t>(out.size());
    }
    for (const Link& l : cluster.links()) ++in_offsets[l.dst + 1];
    for (NodeIndex n = 0; n < node_count; ++n) in_offsets[n + 1] += in_offsets[n];
    in_nodes.resize(cluster.links().size());
    std::vector<std::uint32_t> fill(in_offsets.begin(), in_offsets.end() - 1);
    for (const Link& l : cluster.links()) in_nodes[fill[l.dst]++] = l.src;
    hub.reserve(node_count);
    hub_number.assign(node_count, 0U);
    for (NodeIndex n = 0; n < node_count; ++n) {
      hub.push_back(is_hub(cluster.nodes()[n].kind) ? 1 : 0);
      if (hub[n]) hub_number[n] = hub_count++;
    }
    // d-mod-k numbers destinations the way a fat tree numbers its end ports: in
    // rail-optimized hosts plane by plane (rail-major), so consecutive keys sit under
    // one leaf and a leaf's flows to a shifted block of hosts take distinct uplinks.
    ecmp_key.resize(node_count);
    std::iota(ecmp_key.begin(), ecmp_key.end(), 0U);
    std::vector<int> order(static_cast<std::size_t>(cluster.gpu_count()));
    std::iota(order.begin(), order.end(), 0);
    auto plane_order = [&](int g) {
      const Gpu& gpu = cluster.gpu(g);
      const Host& host = cluster.hosts()[static_cast<std::size_t>(gpu.host)];
      return std::make_tuple(gpu.datacenter, host.rail_optimized ? gpu.rail : 0, gpu.host,
                             gpu.local_index, g);
    };
    std::sort(order.begin(), order.end(),
              [&](int a, int b) { return plane_order(a) < plane_order(b); });
    for (std::size_t k = 0; k < order.size(); ++k) {
      ecmp_key[cluster.gpu(order[k]).node] = static_cast<std::uint32_t>(k);
    }
    approaches.resize(node_count);
    seen.assign(node_count, 0U);
    local_seen.assign(node_count, 0U);
    local_hops.assign(node_count, 0U);
    hub_tables.resize(node_count);
    find_exits();
    find_hub_links();
    const auto& routes = cluster.explicit_routes();
    for (std::size_t i = 0; i < routes.size(); ++i) {
      explicit_routes[pair_key(routes[i].first.first, routes[i].first.second)] = i;
    }
  }

  // Fewest links from every hub (by hub number) to hub h. Other nodes reach h through
  // their exits (find_exits), so a table holds hubs only: hubs x hubs, not hubs x nodes.
  // A search over the hub graph (find_hub_links) with its links' lengths in buckets
  // (Dial's algorithm): at 16,384 GPUs ~1,000 tables, each O(hub links), where a search
  // over every node made the tables quadratic in GPUs.
  const std::vector<std::uint16_t>& hub_table(NodeIndex h) {
    auto& slot = hub_tables[h];
    if (slot) return *slot;
    slot = std::make_unique<std::vector<std::uint16_t>>(hub_count, detail::kUnreachable);
    auto& dist = *slot;
    const std::uint32_t source = hub_number[h];
    dist[source] = 0;
    buckets.resize(1);
    buckets[0].assign(1, source);
    for (std::size_t d = 0; d < buckets.size(); ++d) {
      for (std::size_t k = 0; k < buckets[d].size(); ++k) {
        const std::uint32_t v = buckets[d][k];
        if (dist[v] != d) continue;  // reached nearer since it was queued
        for (auto i = hub_in_offsets[v]; i < hub_in_offsets[v + 1]; ++i) {
          const auto [u, length] = hub_in[i];
          const std::size_t to = d + length;
          if (to >= dist[u]) continue;
          dist[u] = static_cast<std::uint16_t>(to);
          if (buckets.size() <= to) buckets.resize(to + 1);
          buckets[to].push_back(u);
        }
      }
      buckets[d].clear();
    }
    return dist;
  }

  // The hub graph: hub u links to hub v when a path from u reaches v through nodes that
  // are neither hubs nor GPUs (none, in a fat tree: a switch's uplink), its length the
  // fewest links of such a path. Every shortest path between two hubs is a chain of such
  // segments, so distances over it are those over every node. Stored by v (in-links).
  void find_hub_links() {
    const auto node_count = static_cast<NodeIndex>(hub.size());
    std::vector<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>> links;  // (v, u, len)
    for (NodeIndex node = 0; node < node_count; ++node) {
      if (!hub[node]) continue;
      border_hubs(node, [&](std::uint32_t h, std::uint32_t hops) {
        links.emplace_back(h, hub_number[node], hops);
      });
    }
    std::sort(links.begin(), links.end());
    hub_in_offsets.assign(hub_count + 1, 0);
    hub_in.reserve(links.size());
    for (const auto& [v, u, length] : links) {
      ++hub_in_offsets[v + 1];
      hub_in.emplace_back(u, length);
    }
    for (std::uint32_t v = 0; v < hub_count; ++v) hub_in_offsets[v + 1] += hub_in_offsets[v];
  }

  // Every non-hub node's exits: the hubs at its border (border_hubs). In a hierarchy
  // cluster a GPU's are its NICs' leaves, a NIC's its leaves.
  void find_exits() {
    const auto node_count = static_cast<NodeIndex>(hub.size());
    exit_offsets.assign(node_count + 1, 0);
    for (NodeIndex node = 0; node < node_count; ++node) {
      if (!hub[node]) {
        border_hubs(node,
                    [&](std::uint32_t h, std::uint32_t hops) { exit_hubs.emplace_back(h, hops); });
      }
      exit_offsets[node + 1] = static_cast<std::uint32_t>(exit_hubs.size());
    }
  }

  // Breadth-first search forwards from `from` through nodes that are neither hubs nor GPUs
  // (GPUs are never transit; `from` itself is always left): found(hub number, hops) for
  // each hub at its border, once, at its fewest hops.
  template <class Found>
  void border_hubs(NodeIndex from, Found found) {
    next_epoch();
    frontier.assign(1, {from, 0});
    seen[from] = epoch;
    for (std::size_t k = 0; k < frontier.size(); ++k) {
      const auto [u, hops] = frontier[k];
      if (u != from && is_gpu[u]) continue;
      for (auto i = offsets[u]; i < offsets[u + 1]; ++i) {
        const NodeIndex v = out[i].second;
        if (seen[v] == epoch) continue;
        seen[v] = epoch;
        if (hub[v]) {
          found(hub_number[v], hops + 1);
        } else {
          frontier.emplace_back(v, hops + 1);
        }
      }
    }
  }

  void next_epoch() {
    if (++epoch == 0) {
      std::fill(seen.begin(), seen.end(), 0U);
      epoch = 1;
    }
  }

  // Breadth-first search backwards from `dst` that expands only non-hub, non-GPU nodes:
  // what it reaches without a hub is local (kept sorted by node); the hubs at its border
  // are the portals. In hierarchy clusters both lists stay within one host and its leaves.
  Approach& approach(NodeIndex dst) {
    auto& slot = approaches[dst];
    if (slot) return *slot;
    slot = std::make_unique<Approach>();
    Approach& a = *slot;
    if (hub[dst]) {
      a.portals.emplace_back(dst, 0);
      a.portal_tables.push_back(hub_table(dst).data());
      return a;
    }
    next_epoch();
    a.local.emplace_back(dst, 0);
    seen[dst] = epoch;
    for (std::size_t k = 0; k < a.local.size(); ++k) {
      const auto [node, hops] = a.local[k];
      if (node != dst && is_gpu[node]) continue;  // GPUs are never transit
      for (auto i = in_offsets[node]; i < in_offsets[node + 1]; ++i) {
        const NodeIndex prev = in_nodes[i];
        if (seen[prev] == epoch) continue;
        seen[prev] = epoch;
        (hub[prev] ? a.portals : a.local).emplace_back(prev, hops + 1);
      }
    }
    std::sort(a.local.begin(), a.local.end());
    for (const auto& [h, hops] : a.portals) a.portal_tables.push_back(hub_table(h).data());
    return a;
  }

  // Fewest links from hub number `h` (`hops` from it) to the destination of `a`.
  static std::uint32_t via_hub(const Approach& a, std::uint32_t h, std::uint32_t hops) {
    std::uint32_t best = kFar;
    for (std::size_t k = 0; k < a.portals.size(); ++k) {
      const std::uint16_t d = a.portal_tables[k][h];
      if (d != detail::kUnreachable) best = std::min(best, hops + d + a.portals[k].second);
    }
    return best;
  }

  // Fewest links from non-hub `node` to the destination of `a` through a hub: the best of
  // its exits' hops plus that hub's way there.
  std::uint32_t via_exits(const Approach& a, NodeIndex node) const {
    std::uint32_t best = kFar;
    for (auto k = exit_offsets[node]; k < exit_offsets[node + 1]; ++k)
      best = std::min(best, via_hub(a, exit_hubs[k].first, exit_hubs[k].second));
    return best;
  }

  // Fewest links from `node` to the destination of `a`: hub-free inside its host, or the
  // best portal's table plus the portal's hub-free hops, a non-hub node reaching the
  // tables through its exits. Exact: the last hub on any shortest path is a portal, the
  // first is an exit, and a path without hubs stays local.
  std::uint32_t distance(const Approach& a, NodeIndex node) {
    if (hub[node]) return via_hub(a, hub_number[node], 0);
    std::uint32_t best = via_exits(a, node);
    const auto it = std::lower_bound(a.local.begin(), a.local.end(),
                                     std::pair<NodeIndex, std::uint32_t>{node, 0});
    if (it != a.local.end() && it->first == node) best = std::min(best, it->second);
    return best;
  }

  // The link from `u` (`hops` from dst) chosen by `choice` among the next hops one link
  // closer, in link order.
  LinkIndex next_hop(const Approach& a, NodeIndex u, NodeIndex dst, std::uint32_t hops,
                     std::uint64_t choice) {
    candidates.clear();
    // The destination's local nodes marked for this call: a switch has tens of neighbours.
    if (++local_epoch == 0) {
      std::fill(local_seen.begin(), local_seen.end(), 0U);
      local_epoch = 1;
    }
    for (const auto& [node, h] : a.local) {
      local_seen[node] = local_epoch;
      local_hops[node] = h;
    }
    for (auto i = offsets[u]; i < offsets[u + 1]; ++i) {
      const NodeIndex v = out[i].second;
      if (v != dst && is_gpu[v]) continue;
      // distance(a, v) with the local nodes marked: no neighbour is nearer than hops - 1,
      // so a local route of that length decides without the exits.
      const bool on_path = hub[v] ? via_hub(a, hub_number[v], 0) + 1 == hops
                                  : (local_seen[v] == local_epoch && local_hops[v] + 1 == hops) ||
                                        via_exits(a, v) + 1 == hops;
      if (on_path) candidates.push_back(i);
    }
    return out[candidates[choice % candidates.size()]].first;
  }

  // Links from `src` to the destination of `a`; throws when there is no path.
  std::uint32_t routed_hops(const Approach& a, NodeIndex src, NodeIndex dst) {
    const std::uint32_t hops = distance(a, src);
    if (hops == kFar) {
      throw Error(fmt::format("no path from node \"{}\" to node \"{}\"", cluster.nodes()[src].name,
                              cluster.nodes()[dst].name));
    }
    return hops;
  }

  // Each hop picks among the next hops one link closer (in link order): d-mod-k by the
  // destination's end-port key, or by a hash of the (src, dst) pair.
  std::uint64_t ecmp_choice(NodeIndex src, NodeIndex dst) const {
    return policy == EcmpPolicy::kDestinationModK ? ecmp_key[dst] : mix(pair_key(src, dst));
  }

  // The link node_path takes from `u` (`hops` from dst); d-mod-k picks the same next hop
  // at a switch for every source: memoized per hub.
  LinkIndex step(Approach& a, NodeIndex u, NodeIndex dst, std::uint32_t hops,
                 std::uint64_t choice) {
    if (policy != EcmpPolicy::kDestinationModK || !hub[u]) return next_hop(a, u, dst, hops, choice);
    const std::uint32_t h = hub_number[u];
    if (!a.hub_row.empty()) {
      LinkIndex& memo = a.hub_row[h];
      if (memo == kNoLink) memo = next_hop(a, u, dst, hops, choice);
      return memo;
    }
    const auto it = std::lower_bound(
        a.hub_next.begin(), a.hub_next.end(), std::pair<std::uint32_t, LinkIndex>{h, 0},
        [](const auto& x, const auto& y) { return x.first < y.first; });
    if (it != a.hub_next.end() && it->first == h) return it->second;
    const LinkIndex link = next_hop(a, u, dst, hops, choice);
    if (a.hub_next.size() < kSparseMemo) {
      a.hub_next.insert(it, {h, link});
    } else {
      a.hub_row.assign(hub_count, kNoLink);
      for (const auto& [k, l] : a.hub_next) a.hub_row[k] = l;
      a.hub_row[h] = link;
      a.hub_next = {};
    }
    return link;
  }

  const Cluster& cluster;
  std::vector<char> is_gpu;  // by node: GPUs are never transit
  EcmpPolicy policy;
  std::vector<std::uint32_t> offsets;  // CSR of (link, head node), links in index order
  std::vector<std::pair<LinkIndex, NodeIndex>> out;
  std::vector<std::uint32_t> in_offsets;  // CSR of tail nodes per head node
  std::vector<NodeIndex> in_nodes;
  std::vector<char> hub;
  std::vector<std::uint32_t> hub_number;  // dense numbering of hubs, for Approach::hub_next
  std::uint32_t hub_count = 0;
  std::vector<std::uint32_t> seen;  // scratch of approach() and border_hubs(): epoch of a visit
  std::vector<std::pair<NodeIndex, std::uint32_t>> frontier;  // scratch of border_hubs()
  std::uint32_t epoch = 0;
  std::vector<std::uint32_t> hub_in_offsets;  // CSR of the hub graph's in-links, by hub number
  std::vector<std::pair<std::uint32_t, std::uint32_t>> hub_in;  // (hub number, length)
  std::vector<std::vector<std::uint32_t>> buckets;              // scratch of hub_table()
  std::vector<std::uint32_t> local_seen, local_hops;            // scratch of next_hop(), by node
  std::uint32_t local_epoch = 0;
  // CSR of each non-hub node's exits: (hub number, hops), from exit_offsets[node].
  std::vector<std::uint32_t> exit_offsets;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> exit_hubs;
  std::vector<std::uint32_t> ecmp_key;
  std::vector<std::unique_ptr<Approach>> approaches;                    // by destination node
  std::vector<std::unique_ptr<std::vector<std::uint16_t>>> hub_tables;  // by hub node, over hubs
  std::unordered_map<std::uint64_t, std::size_t> explicit_routes;
  std::vector<LinkIndex> scratch;
  std::vector<std::uint32_t> candidates;  // positions in `out` of equal-cost next hops
};

Router::Router(const Cluster& cluster, EcmpPolicy policy)
    : cluster_(cluster), policy_(policy), impl_(std::make_unique<Impl>(cluster, policy)) {}

Router::~Router() = default;

void Router::gpu_path(int src, int dst, std::vector<LinkIndex>& out) {
  node_path(cluster_.gpu(src).node, cluster_.gpu(dst).node, out);
}

void Router::node_path(NodeIndex src, NodeIndex dst, std::vector<LinkIndex>& out) {
  out.clear();
  if (src == dst) return;
  Impl& im = *impl_;
  if (!im.explicit_routes.empty()) {
    auto it = im.explicit_routes.find(pair_key(src, dst));
    if (it != im.explicit_routes.end()) {
      const auto& links = cluster_.explicit_routes()[it->second].second;
      out.assign(links.begin(), links.end());
      return;
    }
  }
  Impl::Approach& a = im.approach(dst);
  std::uint32_t hops = im.routed_hops(a, src, dst);
  const std::uint64_t choice = im.ecmp_choice(src, dst);
  NodeIndex u = src;
  while (u != dst) {
    const LinkIndex link = im.step(a, u, dst, hops, choice);
    out.push_back(link);
    u = cluster_.link(link).dst;
    --hops;
  }
}

std::uint32_t Router::hops(NodeIndex src, NodeIndex dst) {
  if (src == dst) return 0;
  Impl& im = *impl_;
  if (!im.explicit_routes.empty()) {
    auto it = im.explicit_routes.find(pair_key(src, dst));
    if (it != im.explicit_routes.end())
      return static_cast<std::uint32_t>(cluster_.explicit_routes()[it->second].second.size());
  }
  return im.routed_hops(im.approach(dst), src, dst);
}

LinkIndex Router::first_link(NodeIndex src, NodeIndex dst) {
  Impl& im = *impl_;
  if (!im.explicit_routes.empty()) {
    auto it = im.explicit_routes.find(pair_key(src, dst));
    if (it != im.explicit_routes.end())
      return cluster_.explicit_routes()[it->second].second.front();
  }
  Impl::Approach& a = im.approach(dst);
  return im.step(a, src, dst, im.routed_hops(a, src, dst), im.ecmp_choice(src, dst));
}

Time Router::gpu_path_latency(int src, int dst) {
  gpu_path(src, dst, impl_->scratch);
  Time total;
  for (LinkIndex l : impl_->scratch) total += cluster_.link(l).latency;
  return total;
}

BytesPerSec Router::gpu_path_bandwidth(int src, int dst) {
  gpu_path(src, dst, impl_->scratch);
  BytesPerSec smallest = std::numeric_limits<BytesPerSec>::infinity();
  for (LinkIndex l : impl_->scratch) smallest = std::min(smallest, cluster_.link(l).bandwidth);
  return smallest;
}

}  // namespace strait::sim::topology
