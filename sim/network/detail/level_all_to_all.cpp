#include "sim/network/detail/level_estimator.hpp"

// LevelEstimator's closed forms of a direct all-to-all (all_to_all and all_to_allv): per
// GPU and per datacenter pair sums in O(n) (O(n^2) for a matrix), no transfers built.

#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "sim/network/detail/pxn.hpp"

namespace strait::sim::network::detail {
namespace {

struct PairHash {
  std::size_t operator()(const std::pair<std::uint64_t, std::int64_t>& p) const {
    return std::hash<std::uint64_t>{}(p.first * 0x9E3779B97F4A7C15ULL ^
                                      static_cast<std::uint64_t>(p.second));
  }
};

}  // namespace

Time LevelEstimator::all_to_all(const CollectiveSpec& spec, Time step_latency,
                                TrafficStats* traffic) {
  std::array<double, topology::kLinkClassCount> link_bytes{};
  const Time latency = spec.op == CollectiveOp::kAllToAllV ? matrix_all_to_all(spec, link_bytes)
                                                           : uniform_all_to_all(spec, link_bytes);
  const Time t = phase_.busiest(*this) + repeat_latency(latency, step_latency);
  phase_.clear();
  if (traffic) {
    const auto n = static_cast<std::int64_t>(spec.gpus.size());
    for (std::size_t c = 0; c < link_bytes.size(); ++c) traffic->link_bytes[c] += link_bytes[c];
    traffic->transfers += static_cast<std::uint64_t>(n * (n - 1));
  }
  return t;
}

Time LevelEstimator::matrix_all_to_all(const CollectiveSpec& spec, LinkClassBytes& link_bytes) {
  const auto un = spec.gpus.size();
  Time latency = Time::zero();
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
  // A row equal to the one before (an embedding output dist: every member holding the same
  // shards sends the same row) keeps its class sums, and its receivers' sums are added once
  // for the run of equal rows (whole bytes: exact in any order).
  std::vector<std::int64_t> row_class(classes.size());
  const Bytes* run_row = nullptr;
  std::int64_t run_length = 0;
  const auto end_run = [&] {
    for (std::size_t j = 0; run_row && j < un; ++j) received[j] += run_length * run_row[j];
    run_length = 0;
  };
  for (std::size_t i = 0; i < un; ++i) {
    const Endpoint& a = at[i];
    const Bytes* row = spec.send_matrix.data() + i * un;
    if (!run_row || !std::equal(row, row + un, run_row)) {
      end_run();
      run_row = row;
      std::fill(row_class.begin(), row_class.end(), 0);
      for (std::size_t j = 0; j < un; ++j) row_class[static_cast<std::size_t>(cls[j])] += row[j];
    }
    ++run_length;
    class_bytes = row_class;
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
  end_run();
  for (std::size_t j = 0; j < un; ++j) {
    const double nv = static_cast<double>(host_received[j]);
    const double nic = static_cast<double>(received[j] - host_received[j]);
    if (nv <= 0 && nic <= 0) continue;
    const auto g = static_cast<std::size_t>(at[j].gpu);
    phase_.touch(at[j].gpu);
    phase_.nv_in[g] += nv;
    phase_.nic_in[g] += nic;
  }
  return latency;
}

const LevelEstimator::UniformGroup& LevelEstimator::uniform_group(const std::vector<int>& gpus) {
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  for (int g : gpus) hash = (hash ^ static_cast<std::uint32_t>(g)) * 0x100000001b3ULL;
  auto [it, fresh] = uniform_groups_.try_emplace(hash);
  UniformGroup* group = &it->second;
  if (!fresh) {
    if (group->gpus == gpus) return *group;
    group = &uniform_scratch_;  // another group with this hash: worked out, not kept
  }
  UniformGroup& G = *group;
  const auto un = gpus.size();
  auto gpu = [&](std::size_t i) -> const topology::Gpu& { return cluster_.gpu(gpus[i]); };
  G = UniformGroup{};
  G.gpus = gpus;
  G.host.resize(un);
  G.datacenter.resize(un);
  G.host_members.resize(un);
  G.dc_members.assign(static_cast<std::size_t>(datacenters_), 0);
  std::unordered_map<int, std::int32_t> host_index;
  std::vector<std::int64_t> on_host;
  for (std::size_t i = 0; i < un; ++i) {
    const auto [h, first] =
        host_index.try_emplace(gpu(i).host, static_cast<std::int32_t>(on_host.size()));
    if (first) on_host.push_back(0);
    G.host[i] = h->second;
    ++on_host[static_cast<std::size_t>(h->second)];
    G.datacenter[i] = gpu(i).datacenter;
    ++G.dc_members[static_cast<std::size_t>(gpu(i).datacenter)];
  }
  G.hosts = on_host.size();
  for (std::size_t i = 0; i < un; ++i)
    G.host_members[i] = static_cast<std::int32_t>(on_host[static_cast<std::size_t>(G.host[i])]);
  G.same_host = un;
  for (std::size_t j = 1; j < un && G.same_host == un; ++j) {
    if (gpu(j).host == gpu(0).host) G.same_host = j;
  }
  G.first_of_dc.assign(static_cast<std::size_t>(datacenters_), un);
  for (std::size_t i = 0; i < un; ++i) {
    auto& f = G.first_of_dc[static_cast<std::size_t>(gpu(i).datacenter)];
    f = std::min(f, i);
  }
  // Members per rail, and per host and rail, summed in member order (an unordered map's
  // order of rails is the order the closed form has always summed them in).
  std::unordered_map<std::int64_t, double> rail_members, host_rail_members;
  const auto host_rail = [](int host, int rail) {
    return (static_cast<std::int64_t>(host) << 16) | rail;
  };
  const bool pxn = cluster_.comm().pxn;
  if (pxn) {
    for (std::size_t i = 0; i < un; ++i) {
      rail_members[gpu(i).rail] += 1;
      host_rail_members[host_rail(gpu(i).host, gpu(i).rail)] += 1;
    }
  }
  // Other hosts of the same datacenter, split by leaf switch.
  std::unordered_map<std::uint64_t, double> on_leaf, on_host_leaf;
  std::unordered_map<std::uint64_t, std::size_t> first_on_leaf;
  std::unordered_map<int, std::size_t> first_in_dc;
  const auto leaf = [&](std::size_t i) { return std::uint64_t{leaf_of(gpus[i])}; };
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
  G.same_leaf.resize(un);
  G.rail_offsets.assign(1, 0);
  G.leaf_pair = G.spine_pair = un;
  for (std::size_t i = 0; i < un; ++i) {
    G.same_leaf[i] = static_cast<std::int32_t>(on_leaf[leaf(i)] - on_host_leaf[host_leaf(i)]);
    for (const auto& [rail, members] : rail_members) {
      // Toward each rail a message leaves by the relay's leaf (its own for its rail).
      const int relay = pxn_rail_relay(cluster_, gpus[i], static_cast<int>(rail));
      const std::uint64_t egress = relay < 0 ? leaf(i) : std::uint64_t{leaf_of(relay)};
      const std::uint64_t key = (static_cast<std::uint64_t>(gpu(i).host) << 32) | egress;
      const auto on = on_leaf_rail.find({egress, rail});
      const auto mine = on_host_leaf_rail.find({key, rail});
      G.rails.push_back(
          {relay,
           static_cast<std::int32_t>(members - host_rail_members[host_rail(gpu(i).host, rail)]),
           static_cast<std::int32_t>((on == on_leaf_rail.end() ? 0 : on->second) -
                                     (mine == on_host_leaf_rail.end() ? 0 : mine->second))});
    }
    G.rail_offsets.push_back(static_cast<std::int32_t>(G.rails.size()));
    const std::size_t f = first_on_leaf[leaf(i)], d = first_in_dc[gpu(i).datacenter];
    if (G.leaf_pair == un && gpu(f).host != gpu(i).host) {
      G.leaf_pair = i;
      G.leaf_from = f;
    }
    if (G.spine_pair == un && gpu(d).host != gpu(i).host && leaf(d) != leaf(i)) {
      G.spine_pair = i;
      G.spine_from = d;
    }
  }
  return G;
}

Time LevelEstimator::uniform_all_to_all(const CollectiveSpec& spec, LinkClassBytes& link_bytes) {
  // Rank i sends s_i / n to every member: sums per host and per datacenter in O(n), over
  // the group's placement worked out once (uniform_group).
  const UniformGroup& G = uniform_group(spec.gpus);
  const auto n = static_cast<std::int64_t>(spec.gpus.size());
  const auto un = static_cast<std::size_t>(n);
  Time latency = Time::zero();
  auto add_level = [&](std::size_t i, std::size_t j, double bytes) {
    const auto& level = level_path(spec.gpus[i], spec.gpus[j]);
    for (std::size_t c = 0; c < link_bytes.size(); ++c) link_bytes[c] += bytes * level.links[c];
    latency = std::max(latency, level.latency);
  };
  auto& share = share_;
  auto& host_send = host_send_;
  share.resize(un);
  host_send.assign(G.hosts, 0.0);
  std::vector<double> dc_send(static_cast<std::size_t>(datacenters_), 0.0);
  double total = 0;
  for (std::size_t i = 0; i < un; ++i) {
    share[i] = static_cast<double>(
        divide_up(spec.send_bytes.empty() ? spec.bytes : spec.send_bytes[i], n));
    const double s = share[i] * static_cast<double>(n);
    host_send[static_cast<std::size_t>(G.host[i])] += s;
    dc_send[static_cast<std::size_t>(G.datacenter[i])] += s;
    total += s;
  }
  for (std::size_t i = 0; i < un; ++i) {
    const auto g = static_cast<std::size_t>(spec.gpus[i]);
    const double local = G.host_members[i];
    const double host_total = host_send[static_cast<std::size_t>(G.host[i])];
    phase_.touch(spec.gpus[i]);
    phase_.nv_out[g] = share[i] * (local - 1);
    phase_.nv_in[g] = (host_total - share[i] * static_cast<double>(n)) / static_cast<double>(n);
    phase_.nic_out[g] = share[i] * (static_cast<double>(n) - local);
    phase_.nic_in[g] = (total - host_total) / static_cast<double>(n);
  }
  for (int a = 0; a < datacenters_; ++a) {
    for (int b = 0; b < datacenters_; ++b) {
      const double bytes = dc_send[static_cast<std::size_t>(a)] *
                           static_cast<double>(G.dc_members[static_cast<std::size_t>(b)]) /
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
  double pxn_nvlink = 0;
  Time pxn_hop = Time::zero();
  const bool pxn = !spec.send_bytes.empty() && cluster_.comm().pxn;
  if (pxn) {
    for (std::size_t i = 0; i < un; ++i) {
      const int g = spec.gpus[i];
      const LevelPath* to_relay = nullptr;  // every relay is on g's host: one level
      for (auto k = G.rail_offsets[i]; k < G.rail_offsets[i + 1]; ++k) {
        const UniformGroup::Rail& rail = G.rails[static_cast<std::size_t>(k)];
        if (rail.relay < 0) continue;
        const double b = share[i] * rail.off_host;
        if (b <= 0) continue;
        phase_.touch(rail.relay);
        const auto gi = static_cast<std::size_t>(g), ri = static_cast<std::size_t>(rail.relay);
        phase_.nic_out[gi] -= b;
        phase_.nic_out[ri] += b;
        phase_.nv_out[gi] += b;
        phase_.nv_in[ri] += b;
        pxn_nvlink += b;
        if (!to_relay) to_relay = &level_path(g, rail.relay);
        for (std::size_t c = 0; c < link_bytes.size(); ++c) link_bytes[c] += b * to_relay->links[c];
        pxn_hop = std::max(pxn_hop, to_relay->latency);
      }
    }
  }
  if (G.same_host < un) add_level(0, G.same_host, intra);
  // Levels across hosts: their latency plus, under PXN, the hop to the relay.
  const Time intra_latency = latency;
  latency = Time::zero();
  // Every pair of datacenters with members: its own path (latency, links), its own bytes.
  for (int p : phase_.pairs) {
    const double bytes = phase_.cross[static_cast<std::size_t>(p)];
    cross += bytes;
    add_level(G.first_of_dc[static_cast<std::size_t>(p / datacenters_)],
              G.first_of_dc[static_cast<std::size_t>(p % datacenters_)], bytes);
  }
  // Other hosts of the same datacenter, split by leaf switch: under one leaf a message
  // crosses 2 scale-out links, through a spine 4 (on rails, most pairs go through one).
  double same_leaf = 0;
  for (std::size_t i = 0; i < un; ++i) {
    if (!pxn) {
      same_leaf += share[i] * G.same_leaf[i];
    } else {
      // Toward each rail the message leaves by the relay's leaf (its own for its rail).
      for (auto k = G.rail_offsets[i]; k < G.rail_offsets[i + 1]; ++k)
        same_leaf += share[i] * G.rails[static_cast<std::size_t>(k)].same_leaf;
    }
  }
  if (G.leaf_pair < un) add_level(G.leaf_from, G.leaf_pair, same_leaf);
  if (G.spine_pair < un) add_level(G.spine_from, G.spine_pair, inter - cross - same_leaf);
  // A PXN message pays the hop to its relay before its level's path.
  return std::max(intra_latency, latency + (pxn_nvlink > 0 ? pxn_hop : Time::zero()));
}

}  // namespace strait::sim::network::detail
