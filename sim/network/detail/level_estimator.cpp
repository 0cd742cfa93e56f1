#include "sim/network/detail/level_estimator.hpp"

#include <algorithm>
#include <bit>
#include <limits>
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>

#include "sim/core/error.hpp"
#include "sim/network/detail/link_rate.hpp"
#include "sim/network/detail/pxn.hpp"

namespace strait::sim::network::detail {
namespace {

Bytes divide_up(Bytes bytes, std::int64_t parts) { return (bytes + parts - 1) / parts; }

struct PairHash {
  std::size_t operator()(const std::pair<std::uint64_t, std::int64_t>& p) const {
    return std::hash<std::uint64_t>{}(p.first * 0x9E3779B97F4A7C15ULL ^
                                      static_cast<std::uint64_t>(p.second));
  }
};

}  // namespace

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

Time LevelEstimator::all_to_all(const CollectiveSpec& spec, Time step_latency,
                                TrafficStats* traffic) {
  const auto n = static_cast<std::int64_t>(spec.gpus.size());
  const auto un = static_cast<std::size_t>(n);
  auto gpu = [&](std::size_t i) -> const topology::Gpu& { return cluster_.gpu(spec.gpus[i]); };
  Time latency = Time::zero();
  std::array<double, topology::kLinkClassCount> link_bytes{};
  // Bytes along the level path between two GPUs; its latency.
  auto add_gpu_level = [&](int a, int b, double bytes) {
    const auto& level = level_path(a, b);
    for (std::size_t c = 0; c < link_bytes.size(); ++c) link_bytes[c] += bytes * level.links[c];
    return level.latency;
  };
  auto add_level = [&](std::size_t i, std::size_t j, double bytes) {
    latency = std::max(latency, add_gpu_level(spec.gpus[i], spec.gpus[j], bytes));
  };
  if (spec.op == CollectiveOp::kAllToAllV) {
    // n^2 pairs (512 x 512 per output dist of an embedding group). A pair's bytes go on
    // its sender's and receiver's NVLink or NIC (through the sender's PXN relay on the
    // receiver's rail when it is on another host: NVLink to the relay, then the relay's
    // NIC) and along one level path, which depends only on how the two GPUs relate (same
    // host; same datacenter, same leaf or not; datacenter pair). So receivers fall in
    // classes (rail, leaf, datacenter): each sender sums its row per class and per
    // receiver, in whole bytes (exact in any order), then takes its host's receivers back
    // out (they go over NVLink); relays, loads and paths are applied once per class.
    std::vector<Endpoint> at(un);
    std::vector<std::int32_t> cls(un);  // each member's class as a receiver
    constexpr std::size_t kNoMember = ~std::size_t{0};
    struct Class {
      std::size_t member;                  // one member of the class
      std::size_t other_host = kNoMember;  // one on another host than `member`'s
    };
    std::vector<Class> classes;
    {
      std::map<std::tuple<int, int, topology::NodeIndex>, std::int32_t> index;
      for (std::size_t i = 0; i < un; ++i) {
        at[i] = endpoint(spec.gpus[i]);
        const auto [it, fresh] = index.try_emplace({at[i].rail, at[i].datacenter, at[i].leaf},
                                                   static_cast<std::int32_t>(classes.size()));
        if (fresh) classes.push_back({i});
        cls[i] = it->second;
      }
      for (std::size_t i = 0; i < un; ++i) {
        Class& c = classes[static_cast<std::size_t>(cls[i])];
        if (c.other_host == kNoMember && at[c.member].host != at[i].host) c.other_host = i;
      }
    }
    // Members by host, in order: a sender's host block is taken back out of its sums.
    std::unordered_map<int, std::vector<std::size_t>> on_host;
    for (std::size_t i = 0; i < un; ++i) on_host[at[i].host].push_back(i);
    std::vector<std::int64_t> received(un, 0), host_received(un, 0), class_bytes(classes.size());
    const bool pxn = cluster_.comm().pxn;
    constexpr int kUnknown = -2;
    std::vector<int> relay_toward;    // per rail, for this sender
    std::vector<Endpoint> relay_at;   // per rail
    std::vector<double> relay_bytes;  // this sender's bytes through each relay, per rail
    // This sender's bytes per relation of the cross-host leg: (datacenter of the leg's
    // receiver, same leaf or not), with one pair of the relation to find its path.
    struct Relation {
      double bytes = 0;
      const Endpoint* from = nullptr;
      const Endpoint* to = nullptr;
    };
    const auto ud = static_cast<std::size_t>(datacenters_);
    std::vector<Relation> relations(ud * 2);
    for (std::size_t i = 0; i < un; ++i) {
      const Endpoint& a = at[i];
      const Bytes* row = spec.send_matrix.data() + i * un;
      std::fill(class_bytes.begin(), class_bytes.end(), 0);
      for (std::size_t j = 0; j < un; ++j) {
        class_bytes[static_cast<std::size_t>(cls[j])] += row[j];
        received[j] += row[j];
      }
      // The sender's own host: over NVLink (itself: nowhere).
      std::int64_t host_sent = 0;
      for (const std::size_t j : on_host[a.host]) {
        class_bytes[static_cast<std::size_t>(cls[j])] -= row[j];
        if (j == i) {
          received[j] -= row[j];
          continue;
        }
        host_received[j] += row[j];
        host_sent += row[j];
      }
      double host_bytes = static_cast<double>(host_sent);  // over a's own NVLink, relayed too
      double nic_bytes = 0;                                // over a's NIC
      for (auto& r : relations) r = {};
      if (pxn) {
        relay_toward.assign(relay_toward.size(), kUnknown);
        relay_bytes.assign(relay_bytes.size(), 0.0);
      }
      for (std::size_t c = 0; c < classes.size(); ++c) {
        if (class_bytes[c] == 0) continue;
        const double b = static_cast<double>(class_bytes[c]);
        // A receiver of the class off a's host (bytes left in the class are to such ones).
        const Class& k = classes[c];
        const Endpoint& d = at[at[k.member].host != a.host ? k.member : k.other_host];
        // The relay toward d's rail (pxn_relay's rule), looked up once per sender and rail
        // (rails are >= 0: the cluster loaders check it).
        const Endpoint* via = nullptr;
        if (pxn) {
          const auto rail = static_cast<std::size_t>(d.rail);
          if (rail >= relay_toward.size()) {
            relay_toward.resize(rail + 1, kUnknown);
            relay_at.resize(rail + 1);
            relay_bytes.resize(rail + 1, 0.0);
          }
          auto& r = relay_toward[rail];
          if (r == kUnknown) {
            r = pxn_rail_relay(cluster_, a.gpu, d.rail);
            if (r >= 0) relay_at[rail] = endpoint(r);
          }
          if (r >= 0) via = &relay_at[rail];
        }
        const Endpoint& from = via ? *via : a;
        if (via) {
          host_bytes += b;
          relay_bytes[static_cast<std::size_t>(d.rail)] += b;
        } else {
          nic_bytes += b;
        }
        Relation& rel = relations[static_cast<std::size_t>(d.datacenter) * 2 +
                                  (from.datacenter == d.datacenter && from.leaf == d.leaf ? 1 : 0)];
        rel.bytes += b;
        if (!rel.from) rel = {rel.bytes, &from, &d};
      }
      // Loads and paths of the sums. A relayed pair pays the hop to its relay first.
      const LevelPath* host_path = nullptr;
      if (host_bytes > 0) {
        // Any GPU of a's host gives its host path; a itself when it relays to nobody else.
        host_path = &level_path(a, a);
        phase_.touch(a.gpu);
        phase_.nv_out[static_cast<std::size_t>(a.gpu)] += host_bytes;
        for (std::size_t c = 0; c < link_bytes.size(); ++c)
          link_bytes[c] += host_bytes * host_path->links[c];
        latency = std::max(latency, host_path->latency);
      }
      if (nic_bytes > 0) {
        phase_.touch(a.gpu);
        phase_.nic_out[static_cast<std::size_t>(a.gpu)] += nic_bytes;
      }
      for (std::size_t r = 0; r < relay_bytes.size(); ++r) {
        if (relay_bytes[r] <= 0) continue;
        const auto relay = static_cast<std::size_t>(relay_toward[r]);
        phase_.touch(relay_toward[r]);
        phase_.nv_in[relay] += relay_bytes[r];
        phase_.nic_out[relay] += relay_bytes[r];
      }
      for (const Relation& rel : relations) {
        if (rel.bytes <= 0) continue;
        const LevelPath& level = level_path(*rel.from, *rel.to);
        for (std::size_t c = 0; c < link_bytes.size(); ++c)
          link_bytes[c] += rel.bytes * level.links[c];
        const int pair = dc_pair(a.datacenter, rel.to->datacenter);
        if (pair >= 0) phase_.add_cross(pair, rel.bytes);
        const bool relayed = rel.from->gpu != a.gpu;
        latency = std::max(latency, level.latency + (relayed ? host_path->latency : Time::zero()));
      }
    }
    for (std::size_t j = 0; j < un; ++j) {
      const double nv = static_cast<double>(host_received[j]);
      const double nic = static_cast<double>(received[j] - host_received[j]);
      if (nv <= 0 && nic <= 0) continue;
      const auto g = static_cast<std::size_t>(at[j].gpu);
      phase_.touch(at[j].gpu);
      phase_.nv_in[g] += nv;
      phase_.nic_in[g] += nic;
    }
  } else {
    // Rank i sends s_i / n to every member: sum per host and per datacenter in O(n).
    std::unordered_map<int, double> host_send;
    std::unordered_map<int, std::int64_t> host_members;
    std::vector<double> dc_send(static_cast<std::size_t>(datacenters_), 0.0);
    std::vector<std::int64_t> dc_members(static_cast<std::size_t>(datacenters_), 0);
    std::vector<double> share(un);
    double total = 0;
    for (std::size_t i = 0; i < un; ++i) {
      share[i] = static_cast<double>(
          divide_up(spec.send_bytes.empty() ? spec.bytes : spec.send_bytes[i], n));
      const double s = share[i] * static_cast<double>(n);
      host_send[gpu(i).host] += s;
      ++host_members[gpu(i).host];
      dc_send[static_cast<std::size_t>(gpu(i).datacenter)] += s;
      ++dc_members[static_cast<std::size_t>(gpu(i).datacenter)];
      total += s;
    }
    for (std::size_t i = 0; i < un; ++i) {
      const auto g = static_cast<std::size_t>(spec.gpus[i]);
      const double local = static_cast<double>(host_members[gpu(i).host]);
      const double host_total = host_send[gpu(i).host];
      phase_.touch(spec.gpus[i]);
      phase_.nv_out[g] = share[i] * (local - 1);
      phase_.nv_in[g] = (host_total - share[i] * static_cast<double>(n)) / static_cast<double>(n);
      phase_.nic_out[g] = share[i] * (static_cast<double>(n) - local);
      phase_.nic_in[g] = (total - host_total) / static_cast<double>(n);
    }
    for (int a = 0; a < datacenters_; ++a) {
      for (int b = 0; b < datacenters_; ++b) {
        const double bytes = dc_send[static_cast<std::size_t>(a)] *
                             static_cast<double>(dc_members[static_cast<std::size_t>(b)]) /
                             static_cast<double>(n);
        if (a == b || bytes <= 0) continue;
        phase_.pairs.push_back(a * datacenters_ + b);
        phase_.cross[static_cast<std::size_t>(a * datacenters_ + b)] = bytes;
      }
    }
    // Latency and traffic: from member 0 to one member of each other host level; bytes per
    // level from the sums above.
    double intra = 0, inter = 0, cross = 0;
    for (std::size_t i = 0; i < un; ++i) {
      intra += phase_.nv_out[static_cast<std::size_t>(spec.gpus[i])];
      inter += phase_.nic_out[static_cast<std::size_t>(spec.gpus[i])];
    }
    // PXN (per-rank sizes only: a uniform all-to-all is an implicit all-pairs phase, pxn.hpp):
    // what member i sends to rail r on other hosts, share_i m_r (m_r: members on rail r off
    // i's host), crosses NVLink to i's relay for r and leaves by the relay's NIC.
    std::unordered_map<std::int64_t, double> rail_members, host_rail_members;
    const auto host_rail = [](int host, int rail) {
      return (static_cast<std::int64_t>(host) << 16) | rail;
    };
    double pxn_nvlink = 0;
    Time pxn_hop = Time::zero();
    const bool pxn = !spec.send_bytes.empty() && cluster_.comm().pxn;
    if (pxn) {
      for (std::size_t i = 0; i < un; ++i) {
        rail_members[gpu(i).rail] += 1;
        host_rail_members[host_rail(gpu(i).host, gpu(i).rail)] += 1;
      }
      for (std::size_t i = 0; i < un; ++i) {
        const int g = spec.gpus[i];
        const LevelPath* to_relay = nullptr;  // every relay is on g's host: one level
        for (const auto& [rail, members] : rail_members) {
          const int relay = pxn_rail_relay(cluster_, g, static_cast<int>(rail));
          if (relay < 0) continue;
          const auto off_host = members - host_rail_members[host_rail(gpu(i).host, rail)];
          const double b = share[i] * off_host;
          if (b <= 0) continue;
          phase_.touch(relay);
          const auto gi = static_cast<std::size_t>(g), ri = static_cast<std::size_t>(relay);
          phase_.nic_out[gi] -= b;
          phase_.nic_out[ri] += b;
          phase_.nv_out[gi] += b;
          phase_.nv_in[ri] += b;
          pxn_nvlink += b;
          if (!to_relay) to_relay = &level_path(g, relay);
          for (std::size_t c = 0; c < link_bytes.size(); ++c)
            link_bytes[c] += b * to_relay->links[c];
          pxn_hop = std::max(pxn_hop, to_relay->latency);
        }
      }
    }
    std::size_t same_host = un;
    for (std::size_t j = 1; j < un && same_host == un; ++j) {
      if (gpu(j).host == gpu(0).host) same_host = j;
    }
    if (same_host < un) add_level(0, same_host, intra);
    // Levels across hosts: their latency plus, under PXN, the hop to the relay.
    const Time intra_latency = latency;
    latency = Time::zero();
    // Every pair of datacenters with members: its own path (latency, links), its own bytes.
    std::vector<std::size_t> first_of_dc(static_cast<std::size_t>(datacenters_), un);
    for (std::size_t i = 0; i < un; ++i) {
      auto& f = first_of_dc[static_cast<std::size_t>(gpu(i).datacenter)];
      f = std::min(f, i);
    }
    for (int p : phase_.pairs) {
      const double bytes = phase_.cross[static_cast<std::size_t>(p)];
      cross += bytes;
      add_level(first_of_dc[static_cast<std::size_t>(p / datacenters_)],
                first_of_dc[static_cast<std::size_t>(p % datacenters_)], bytes);
    }
    // Other hosts of the same datacenter, split by leaf switch: under one leaf a message
    // crosses 2 scale-out links, through a spine 4 (on rails, most pairs go through one).
    std::unordered_map<std::uint64_t, double> on_leaf, on_host_leaf;
    std::unordered_map<std::uint64_t, std::size_t> first_on_leaf;
    std::unordered_map<int, std::size_t> first_in_dc;
    const auto leaf = [&](std::size_t i) { return std::uint64_t{leaf_of(spec.gpus[i])}; };
    const auto host_leaf = [&](std::size_t i) {
      return (static_cast<std::uint64_t>(gpu(i).host) << 32) | leaf(i);
    };
    std::unordered_map<std::pair<std::uint64_t, std::int64_t>, double, PairHash> on_leaf_rail,
        on_host_leaf_rail;
    for (std::size_t i = 0; i < un; ++i) {
      ++on_leaf[leaf(i)];
      ++on_host_leaf[host_leaf(i)];
      if (pxn) {
        ++on_leaf_rail[{leaf(i), gpu(i).rail}];
        ++on_host_leaf_rail[{host_leaf(i), gpu(i).rail}];
      }
      first_on_leaf.try_emplace(leaf(i), i);
      first_in_dc.try_emplace(gpu(i).datacenter, i);
    }
    double same_leaf = 0;
    std::size_t leaf_pair = un, spine_pair = un, leaf_from = 0, spine_from = 0;
    for (std::size_t i = 0; i < un; ++i) {
      if (!pxn) {
        same_leaf += share[i] * (on_leaf[leaf(i)] - on_host_leaf[host_leaf(i)]);
      } else {
        // Toward each rail the message leaves by the relay's leaf (its own for its rail).
        for (const auto& [rail, members] : rail_members) {
          const int relay = pxn_rail_relay(cluster_, spec.gpus[i], static_cast<int>(rail));
          const std::uint64_t egress = relay < 0 ? leaf(i) : std::uint64_t{leaf_of(relay)};
          const std::uint64_t key = (static_cast<std::uint64_t>(gpu(i).host) << 32) | egress;
          const auto on = on_leaf_rail.find({egress, rail});
          const auto mine = on_host_leaf_rail.find({key, rail});
          same_leaf += share[i] * ((on == on_leaf_rail.end() ? 0 : on->second) -
                                   (mine == on_host_leaf_rail.end() ? 0 : mine->second));
        }
      }
      const std::size_t f = first_on_leaf[leaf(i)], d = first_in_dc[gpu(i).datacenter];
      if (leaf_pair == un && gpu(f).host != gpu(i).host) {
        leaf_pair = i;
        leaf_from = f;
      }
      if (spine_pair == un && gpu(d).host != gpu(i).host && leaf(d) != leaf(i)) {
        spine_pair = i;
        spine_from = d;
      }
    }
    if (leaf_pair < un) add_level(leaf_from, leaf_pair, same_leaf);
    if (spine_pair < un) add_level(spine_from, spine_pair, inter - cross - same_leaf);
    // A PXN message pays the hop to its relay before its level's path.
    latency = std::max(intra_latency, latency + (pxn_nvlink > 0 ? pxn_hop : Time::zero()));
  }
  const Time t = phase_.busiest(*this) + repeat_latency(latency, step_latency);
  phase_.clear();
  if (traffic) {
    for (std::size_t c = 0; c < link_bytes.size(); ++c) traffic->link_bytes[c] += link_bytes[c];
    traffic->transfers += static_cast<std::uint64_t>(n * (n - 1));
  }
  return t;
}

}  // namespace strait::sim::network::detail
