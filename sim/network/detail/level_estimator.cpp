#include "sim/network/detail/level_estimator.hpp"

#include <algorithm>
#include <bit>
#include <limits>
#include <string>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>

#include "sim/core/error.hpp"
#include "sim/network/detail/link_rate.hpp"
#include "sim/network/detail/pxn.hpp"

namespace strait::sim::network::detail {
LevelEstimator::LevelEstimator(const topology::Cluster& cluster, topology::Router& router)
    : cluster_(cluster), router_(router) {
  applicable_ = !cluster.hosts().empty();
  for (const auto& h : cluster.hosts())
    applicable_ = applicable_ && (h.nics > 0 || cluster.hosts().size() == 1);
  datacenters_ = std::max<int>(1, static_cast<int>(cluster.datacenters().size()));
  nvlink_bw_.assign(static_cast<std::size_t>(cluster.gpu_count()), 0.0);
  nic_bw_.assign(static_cast<std::size_t>(cluster.gpu_count()), 0.0);
  leaf_.assign(static_cast<std::size_t>(cluster.gpu_count()), kNoNode);
  cross_cap_.assign(static_cast<std::size_t>(datacenters_ * datacenters_), -1.0);
  host_paths_.resize(cluster.hosts().size());
  datacenter_paths_.resize(static_cast<std::size_t>(2 * datacenters_));
  cross_paths_.resize(static_cast<std::size_t>(datacenters_ * datacenters_));
  phase_ = make_loads();
  lane_ = make_loads();
}

LevelEstimator::Loads LevelEstimator::make_loads() const {
  Loads l;
  const auto n = static_cast<std::size_t>(cluster_.gpu_count());
  l.nv_out.assign(n, 0);
  l.nv_in.assign(n, 0);
  l.nic_out.assign(n, 0);
  l.nic_in.assign(n, 0);
  l.cross.assign(static_cast<std::size_t>(datacenters_ * datacenters_), 0);
  return l;
}

void LevelEstimator::Loads::touch(int gpu) {
  const auto g = static_cast<std::size_t>(gpu);
  if (nv_out[g] == 0 && nv_in[g] == 0 && nic_out[g] == 0 && nic_in[g] == 0) gpus.push_back(gpu);
}

void LevelEstimator::Loads::add_cross(int pair, double bytes) {
  if (cross[static_cast<std::size_t>(pair)] == 0) pairs.push_back(pair);
  cross[static_cast<std::size_t>(pair)] += bytes;
}

void LevelEstimator::Loads::add(int src, int dst, bool same_host, int pair, double bytes) {
  const auto s = static_cast<std::size_t>(src), d = static_cast<std::size_t>(dst);
  touch(src);
  touch(dst);
  if (same_host) {
    nv_out[s] += bytes;
    nv_in[d] += bytes;
  } else {
    nic_out[s] += bytes;
    nic_in[d] += bytes;
  }
  if (pair >= 0) add_cross(pair, bytes);
}

Time LevelEstimator::Loads::busiest(LevelEstimator& e) {
  Time t = Time::zero();
  for (int g : gpus) {
    const auto i = static_cast<std::size_t>(g);
    const double nv = std::max(nv_out[i], nv_in[i]), nic = std::max(nic_out[i], nic_in[i]);
    if (nv > 0) t = std::max(t, Time::for_work(nv, e.nvlink_bandwidth(g)));
    if (nic > 0) t = std::max(t, Time::for_work(nic, e.nic_bandwidth(g)));
  }
  for (int p : pairs)
    t = std::max(t, Time::for_work(cross[static_cast<std::size_t>(p)], e.cross_capacity(p)));
  return t;
}

void LevelEstimator::Loads::clear() {
  for (int g : gpus) {
    const auto i = static_cast<std::size_t>(g);
    nv_out[i] = nv_in[i] = nic_out[i] = nic_in[i] = 0;
  }
  for (int p : pairs) cross[static_cast<std::size_t>(p)] = 0;
  gpus.clear();
  pairs.clear();
}

int LevelEstimator::pair_index(int src, int dst) const {
  return dc_pair(cluster_.gpu(src).datacenter, cluster_.gpu(dst).datacenter);
}

int LevelEstimator::dc_pair(int a, int b) const { return a == b ? -1 : a * datacenters_ + b; }

LevelEstimator::LevelPath LevelEstimator::route(int src, int dst) {
  LevelPath p;
  router_.gpu_path(src, dst, path_);
  for (auto l : path_) {
    p.latency += cluster_.link(l).latency;
    p.links[static_cast<std::size_t>(cluster_.link(l).link_class)] += 1;
  }
  return p;
}

topology::NodeIndex LevelEstimator::leaf_of(int gpu) {
  auto& leaf = leaf_[static_cast<std::size_t>(gpu)];
  if (leaf != kNoNode) return leaf;
  // GPU -> (PCIe) -> NIC -> (scale-out) -> leaf switch: the first switch off the host.
  topology::NodeIndex node = cluster_.gpu(gpu).node;
  leaf = node;
  for (int hop = 0; hop < 2; ++hop) {
    for (auto l : cluster_.out_links(node)) {
      const auto c = cluster_.link(l).link_class;
      if (c == (hop == 0 ? topology::LinkClass::kPcie : topology::LinkClass::kScaleOut)) {
        node = cluster_.link(l).dst;
        break;
      }
    }
  }
  leaf = node;
  return leaf;
}

LevelEstimator::Endpoint LevelEstimator::endpoint(int gpu) {
  const auto& g = cluster_.gpu(gpu);
  return {gpu, g.host, g.datacenter, g.rail, leaf_of(gpu)};
}

const LevelEstimator::LevelPath& LevelEstimator::level_path(int src, int dst) {
  return level_path(endpoint(src), endpoint(dst));
}

const LevelEstimator::LevelPath& LevelEstimator::level_path(const Endpoint& s, const Endpoint& d) {
  // Levels: inside a host (per host); across hosts of datacenter d under one leaf switch or
  // not; across datacenters (per pair).
  const int src = s.gpu, dst = d.gpu;
  const bool same_leaf = s.host != d.host && s.datacenter == d.datacenter && s.leaf == d.leaf;
  auto& cached =
      s.host == d.host ? host_paths_[static_cast<std::size_t>(s.host)]
      : s.datacenter == d.datacenter
          ? datacenter_paths_[static_cast<std::size_t>(s.datacenter * 2 + (same_leaf ? 1 : 0))]
          : cross_paths_[static_cast<std::size_t>(s.datacenter * datacenters_ + d.datacenter)];
  if (cached) return *cached;
  LevelPath p;
  if (s.host == d.host) {
    // GPU -> NVSwitch -> GPU, read off the links rather than routed (no table per host).
    for (auto l : cluster_.out_links(cluster_.gpu(src).node)) {
      if (cluster_.link(l).link_class != topology::LinkClass::kNvlink) continue;
      p.latency = cluster_.link(l).latency * 2;
      p.links[static_cast<std::size_t>(topology::LinkClass::kNvlink)] = 2;
      break;
    }
  } else if (s.datacenter == d.datacenter) {
    // A pair of the datacenter with the same relation (same leaf or not) as this one,
    // found from the datacenter's first GPU so that few routing tables are built.
    const auto& hosts = cluster_.datacenters()[static_cast<std::size_t>(s.datacenter)].hosts;
    const int first = cluster_.hosts()[static_cast<std::size_t>(hosts.front())].gpus.front();
    int other = dst;
    for (std::size_t h = 1; h < hosts.size() && other == dst; ++h) {
      for (int g : cluster_.hosts()[static_cast<std::size_t>(hosts[h])].gpus) {
        if ((leaf_of(g) == leaf_of(first)) == same_leaf) {
          other = g;
          break;
        }
      }
    }
    p = other == dst ? route(src, dst) : route(first, other);
  } else {
    const auto& a = cluster_.datacenters()[static_cast<std::size_t>(s.datacenter)].hosts;
    const auto& b = cluster_.datacenters()[static_cast<std::size_t>(d.datacenter)].hosts;
    p = route(cluster_.hosts()[static_cast<std::size_t>(a.front())].gpus.front(),
              cluster_.hosts()[static_cast<std::size_t>(b.front())].gpus.front());
  }
  cached = p;
  return *cached;
}

int LevelEstimator::host_class(int host) {
  if (host_class_.empty()) host_class_.assign(cluster_.hosts().size(), -1);
  auto& known = host_class_[static_cast<std::size_t>(host)];
  if (known >= 0) return known;
  const auto& h = cluster_.hosts()[static_cast<std::size_t>(host)];
  std::vector<std::int64_t> f = {h.nics, h.rail_optimized ? 1 : 0,
                                 static_cast<std::int64_t>(h.gpus.size())};
  // The host's nodes in the order they are met from its GPUs, numbered locally; every link
  // out of them with where it goes (a local node, or the kind of an outside one).
  std::vector<topology::NodeIndex> nodes;
  std::unordered_map<topology::NodeIndex, std::int64_t> local;
  for (int g : h.gpus) {
    const auto& gpu = cluster_.gpu(g);
    local.emplace(gpu.node, static_cast<std::int64_t>(nodes.size()));
    nodes.push_back(gpu.node);
    f.push_back(gpu.local_index);
    f.push_back(gpu.rail);
    f.push_back(types_.emplace(gpu.type, static_cast<std::int64_t>(types_.size())).first->second);
  }
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    for (auto l : cluster_.out_links(nodes[i])) {
      const auto& link = cluster_.link(l);
      const auto& dst = cluster_.nodes()[link.dst];
      std::int64_t to = -1 - static_cast<std::int64_t>(dst.kind);
      if (dst.host == host) {
        const auto [it, fresh] = local.emplace(link.dst, static_cast<std::int64_t>(nodes.size()));
        if (fresh) nodes.push_back(link.dst);
        to = it->second;
      }
      f.insert(f.end(), {static_cast<std::int64_t>(link.link_class),
                         std::bit_cast<std::int64_t>(link.bandwidth), link.latency.ps(), to});
    }
    f.push_back(std::numeric_limits<std::int64_t>::min());  // end of node i's links
  }
  const auto [it, fresh] = classes_.emplace(std::move(f), static_cast<int>(classes_.size()));
  known = it->second;
  return known;
}

void LevelEstimator::placement(const std::vector<int>& gpus, std::vector<int>& key) {
  key.clear();
  for (int g : gpus) {
    if (g < 0 || g >= cluster_.gpu_count()) return;
  }
  if (host_seen_.empty()) host_seen_.assign(cluster_.hosts().size(), -1);
  if (leaf_seen_.empty()) leaf_seen_.assign(cluster_.nodes().size(), -1);
  auto& hosts = hosts_met_;
  auto& leaves = leaves_met_;
  hosts.clear();
  leaves.clear();
  key.push_back(static_cast<int>(gpus.size()));
  for (int g : gpus) {
    const auto& gpu = cluster_.gpu(g);
    auto& h = host_seen_[static_cast<std::size_t>(gpu.host)];
    if (h < 0) {
      h = static_cast<int>(hosts.size());
      hosts.push_back(gpu.host);
    }
    const auto leaf = leaf_of(g);
    auto& f = leaf_seen_[leaf];
    if (f < 0) {
      f = static_cast<int>(leaves.size());
      leaves.push_back(leaf);
    }
    key.insert(key.end(), {gpu.datacenter, h, gpu.local_index, f});
  }
  for (int h : hosts) {
    key.push_back(host_class(h));
    host_seen_[static_cast<std::size_t>(h)] = -1;
  }
  for (auto l : leaves) leaf_seen_[l] = -1;
}

BytesPerSec LevelEstimator::nvlink_bandwidth(int gpu) {
  auto& bw = nvlink_bw_[static_cast<std::size_t>(gpu)];
  if (bw > 0) return bw;
  for (auto l : cluster_.out_links(cluster_.gpu(gpu).node)) {
    if (cluster_.link(l).link_class == topology::LinkClass::kNvlink) {
      const BytesPerSec rate = library_bandwidth(cluster_, cluster_.link(l));
      bw = bw == 0 ? rate : std::min(bw, rate);
    }
  }
  if (bw == 0)
    throw Error(fmt::format("cluster '{}': GPU {} has no NVLink link", cluster_.name(), gpu));
  return bw;
}

BytesPerSec LevelEstimator::nic_bandwidth(int gpu) {
  auto& bw = nic_bw_[static_cast<std::size_t>(gpu)];
  if (bw > 0) return bw;
  // The bottleneck of the path to the first GPU of another host of its datacenter (one of
  // the datacenter's first two hosts; O(1), this runs for every GPU), else of the last other
  // host (scale-out and PCIe links only).
  const int host = cluster_.gpu(gpu).host;
  int probe = -1;
  const auto& own = cluster_.datacenters()[static_cast<std::size_t>(cluster_.gpu(gpu).datacenter)];
  for (std::size_t i = 0; i < own.hosts.size() && i < 2 && probe < 0; ++i) {
    const auto& h = cluster_.hosts()[static_cast<std::size_t>(own.hosts[i])];
    if (!h.gpus.empty() && own.hosts[i] != host) probe = h.gpus.front();
  }
  for (std::size_t i = cluster_.hosts().size(); probe < 0 && i-- > 0;) {
    const auto& h = cluster_.hosts()[i];
    if (!h.gpus.empty() && static_cast<int>(i) != host) probe = h.gpus.front();
  }
  if (probe < 0)
    throw Error(
        fmt::format("cluster '{}': GPU {} has no other host to reach", cluster_.name(), gpu));
  router_.gpu_path(gpu, probe, path_);
  for (auto l : path_) {
    const auto& link = cluster_.link(l);
    if (link.link_class == topology::LinkClass::kCrossDc) continue;
    const BytesPerSec rate = library_bandwidth(cluster_, link);
    bw = bw == 0 ? rate : std::min(bw, rate);
  }
  return bw;
}

BytesPerSec LevelEstimator::cross_capacity(int pair) {
  auto& cap = cross_cap_[static_cast<std::size_t>(pair)];
  if (cap >= 0) return cap;
  const int a = pair / datacenters_, b = pair % datacenters_;
  cap = 0;
  for (const auto& link : cluster_.links()) {
    if (link.link_class == topology::LinkClass::kCrossDc &&
        cluster_.nodes()[link.src].datacenter == a && cluster_.nodes()[link.dst].datacenter == b) {
      cap += link.bandwidth;
    }
  }
  if (cap == 0) {
    // No direct link: the pair is joined through a third datacenter; its path's narrowest
    // cross-datacenter hop bounds it.
    const auto& ha = cluster_.datacenters()[static_cast<std::size_t>(a)].hosts;
    const auto& hb = cluster_.datacenters()[static_cast<std::size_t>(b)].hosts;
    router_.gpu_path(cluster_.hosts()[static_cast<std::size_t>(ha.front())].gpus.front(),
                     cluster_.hosts()[static_cast<std::size_t>(hb.front())].gpus.front(), path_);
    for (auto l : path_) {
      if (cluster_.link(l).link_class == topology::LinkClass::kCrossDc) {
        cap = cap == 0 ? cluster_.link(l).bandwidth : std::min(cap, cluster_.link(l).bandwidth);
      }
    }
  }
  return cap;
}

Time LevelEstimator::estimate(const Schedule& schedule, TrafficStats* traffic) {
  const int lanes = schedule.cut_through ? 1 : std::max(1, schedule.chunks);
  Time sum = Time::zero(), slowest = Time::zero(), latencies = Time::zero();
  for (const auto& phase : schedule.phases) {
    Time latency = Time::zero(), latency_sum = Time::zero();
    std::uint64_t count = 0;
    // An implicit all-pairs phase is visited pair by pair (n^2 time, no storage); the direct
    // all-to-all of analytical mode takes all_to_all()'s O(n) form before building one.
    phase.for_each_transfer(schedule.ranks(), [&](const Transfer& t) {
      const int src = schedule.gpus[static_cast<std::size_t>(t.src)];
      const int dst = schedule.gpus[static_cast<std::size_t>(t.dst)];
      const double lane_bytes = static_cast<double>(divide_up(t.bytes, lanes));
      // One leg of the transfer (two under PXN: to the relay, then from it); its latency.
      auto leg = [&](int a, int b) {
        const bool same_host = cluster_.gpu(a).host == cluster_.gpu(b).host;
        const int pair = pair_index(a, b);
        phase_.add(a, b, same_host, pair, lane_bytes);
        if (lanes > 1 || schedule.cut_through)
          lane_.add(a, b, same_host, pair, lane_bytes * phase.repeat);
        const auto& level = level_path(a, b);
        if (traffic) {
          for (std::size_t c = 0; c < level.links.size(); ++c) {
            traffic->link_bytes[c] +=
                static_cast<double>(t.bytes) * phase.repeat * level.links[c] * phase.payload;
          }
        }
        return level.latency;
      };
      const int relay = phase.pxn ? pxn_relay(cluster_, src, dst) : -1;
      const Time l =
          phase.transfer_latency(relay < 0 ? leg(src, dst) : leg(src, relay) + leg(relay, dst),
                                 cluster_.gpu(src).host != cluster_.gpu(dst).host);
      latency = std::max(latency, l);
      latency_sum += l;
      ++count;
      if (traffic) {
        traffic->transfers +=
            static_cast<std::uint64_t>(phase.repeat) * static_cast<std::uint64_t>(lanes);
      }
    });
    const Time phase_lat = phase_latency(phase, latency, latency_sum, count);
    latencies += phase_lat * phase.repeat;
    const Time t = phase_.busiest(*this) + phase_lat;
    phase_.clear();
    sum += t * phase.repeat;
    slowest = std::max(slowest, t);
  }
  if (schedule.cut_through) {
    // Streaming phases: their latencies in turn, then every phase's bytes at once.
    const Time data = std::max(lane_.busiest(*this), schedule.min_data_time);
    lane_.clear();
    return latencies + data;
  }
  if (lanes == 1) return sum;
  const Time cycle = std::max(slowest, lane_.busiest(*this));
  lane_.clear();
  return sum + cycle * (lanes - 1);
}

}  // namespace strait::sim::network::detail
