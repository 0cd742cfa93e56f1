#include "sim/topology/router.hpp"

#include <algorithm>
#include <limits>
#include <numeric>
#include <tuple>
#include <unordered_map>

#include <fmt/format.h>

#include "sim/core/error.hpp"
#include "sim/topology/detail/hop_graph.hpp"

namespace strait::sim::topology {
namespace {

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

}  // namespace

struct Router::Impl {
  struct Table {
    std::vector<std::uint16_t> dist;  // hops to the destination, per node
    std::vector<LinkIndex> next;      // d-mod-k next hop per node (kDestinationModK only)
  };

  Impl(const Cluster& cluster, EcmpPolicy p) : graph(cluster), policy(p) {
    const auto node_count = cluster.nodes().size();
    offsets.assign(node_count + 1, 0);
    for (NodeIndex n = 0; n < node_count; ++n) {
      for (LinkIndex l : cluster.out_links(n)) out.emplace_back(l, cluster.link(l).dst);
      offsets[n + 1] = static_cast<std::uint32_t>(out.size());
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
    tables.resize(node_count);
    const auto& routes = cluster.explicit_routes();
    for (std::size_t i = 0; i < routes.size(); ++i) {
      explicit_routes[pair_key(routes[i].first.first, routes[i].first.second)] = i;
    }
  }

  bool is_candidate(const Table& t, NodeIndex dst, NodeIndex u, NodeIndex v) const {
    return t.dist[v] != detail::kUnreachable && t.dist[v] + 1 == t.dist[u] &&
           (v == dst || !graph.is_gpu(v));
  }

  const Table& table(NodeIndex dst) {
    auto& slot = tables[dst];
    if (slot) return *slot;
    slot = std::make_unique<Table>();
    graph.distances_to(dst, slot->dist);
    if (policy == EcmpPolicy::kDestinationModK) {
      slot->next.assign(slot->dist.size(), kNoLink);
      const std::uint32_t key = ecmp_key[dst];
      for (NodeIndex u = 0; u < slot->dist.size(); ++u) {
        if (u == dst || slot->dist[u] == detail::kUnreachable) continue;
        std::uint32_t k = 0;
        for (auto i = offsets[u]; i < offsets[u + 1]; ++i)
          k += is_candidate(*slot, dst, u, out[i].second);
        std::uint32_t pick = key % k;
        for (auto i = offsets[u]; i < offsets[u + 1]; ++i) {
          if (is_candidate(*slot, dst, u, out[i].second) && pick-- == 0) {
            slot->next[u] = out[i].first;
            break;
          }
        }
      }
    }
    return *slot;
  }

  detail::HopGraph graph;
  EcmpPolicy policy;
  std::vector<std::uint32_t> offsets;  // CSR of (link, head node), links in index order
  std::vector<std::pair<LinkIndex, NodeIndex>> out;
  std::vector<std::uint32_t> ecmp_key;
  std::vector<std::unique_ptr<Table>> tables;  // by destination node, built on first use
  std::unordered_map<std::uint64_t, std::size_t> explicit_routes;
  std::vector<LinkIndex> scratch;
  std::vector<std::uint32_t> candidates;  // positions in `out`, reused by kHash walks
};

Router::Router(const Cluster& cluster, EcmpPolicy policy)
    : cluster_(cluster), impl_(std::make_unique<Impl>(cluster, policy)) {}

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
  const Impl::Table& t = im.table(dst);
  if (t.dist[src] == detail::kUnreachable) {
    throw Error(fmt::format("no path from node \"{}\" to node \"{}\"", cluster_.nodes()[src].name,
                            cluster_.nodes()[dst].name));
  }
  NodeIndex u = src;
  if (im.policy == EcmpPolicy::kDestinationModK) {
    while (u != dst) {
      const LinkIndex l = t.next[u];
      out.push_back(l);
      u = cluster_.link(l).dst;
    }
    return;
  }
  // kHash: one scan per hop collects the equal-cost next hops (in link order), then the
  // (src, dst) hash picks one.
  const std::uint64_t hash = mix(pair_key(src, dst));
  std::vector<std::uint32_t>& candidates = im.candidates;
  while (u != dst) {
    candidates.clear();
    const std::uint16_t want = static_cast<std::uint16_t>(t.dist[u] - 1);
    for (auto i = im.offsets[u]; i < im.offsets[u + 1]; ++i) {
      const NodeIndex v = im.out[i].second;
      if (t.dist[v] == want && (v == dst || !im.graph.is_gpu(v))) candidates.push_back(i);
    }
    const auto& [link, next] = im.out[candidates[hash % candidates.size()]];
    out.push_back(link);
    u = next;
  }
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
