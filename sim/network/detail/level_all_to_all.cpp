// Over 400 lines: the two closed forms of a direct all-to-all (uniform and matrix) share
// LevelEstimator's endpoints, classes and relays.

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

// matrix_all_to_all's receivers: each member's place, and the classes of members that a
// sender off their host reaches along one level path.
struct LevelEstimator::MatrixReceivers {
  static constexpr std::size_t kNoMember = ~std::size_t{0};
  struct Class {
    std::size_t member;                  // one member of the class
    std::size_t other_host = kNoMember;  // one on another host than `member`'s
  };
  std::vector<Endpoint> at;
  std::vector<std::int32_t> cls;  // each member's class as a receiver
  std::vector<Class> classes;
  // Members by host, in order: a sender's host block is taken back out of its sums.
  std::unordered_map<int, std::vector<std::size_t>> on_host;
  // Per member, whole bytes: all it receives, and what of it comes from its own host.
  std::vector<std::int64_t> received, host_received;
};

// One sender's row of a matrix all-to-all, summed by where its bytes leave its host.
struct LevelEstimator::MatrixSender {
  static constexpr int kUnknown = -2;
  // Bytes per relation of the cross-host leg: (datacenter of the leg's receiver, same leaf
  // or not), with one pair of the relation to find its path.
  struct Relation {
    double bytes = 0;
    const Endpoint* from = nullptr;
    const Endpoint* to = nullptr;
  };
  std::vector<std::int64_t> class_bytes;  // per receiver class, its host block taken out
  double host_bytes = 0;                  // over its own NVLink, relayed too
  double nic_bytes = 0;                   // over its NIC
  std::vector<int> relay_toward;          // per rail: its PXN relay (kUnknown: not looked up)
  std::vector<Endpoint> relay_at;         // per rail
  std::vector<double> relay_bytes;        // its bytes through each relay, per rail
  std::vector<Relation> relations;        // per relation: index 2 datacenter + same leaf
};

namespace {

// Runs of equal rows (an embedding output dist: every member holding the same shards sends
// the same row) keep their class sums, and their receivers' sums are added once per run
// (whole bytes: exact in any order).
class EqualRows {
 public:
  explicit EqualRows(std::size_t classes) : row_class_(classes) {}

  // `row`'s sums per receiver class (`cls`: each receiver's class).
  const std::vector<std::int64_t>& class_sums(const Bytes* row,
                                              const std::vector<std::int32_t>& cls,
                                              std::vector<std::int64_t>& received) {
    const auto un = cls.size();
    if (!run_row_ || !std::equal(row, row + un, run_row_)) {
      end(received);
      run_row_ = row;
      std::fill(row_class_.begin(), row_class_.end(), 0);
      for (std::size_t j = 0; j < un; ++j) row_class_[static_cast<std::size_t>(cls[j])] += row[j];
    }
    ++run_length_;
    return row_class_;
  }
  // Adds the current run's rows to what each receiver got.
  void end(std::vector<std::int64_t>& received) {
    for (std::size_t j = 0; run_row_ && j < received.size(); ++j)
      received[j] += run_length_ * run_row_[j];
    run_length_ = 0;
  }

 private:
  std::vector<std::int64_t> row_class_;
  const Bytes* run_row_ = nullptr;
  std::int64_t run_length_ = 0;
};

}  // namespace

Time LevelEstimator::matrix_all_to_all(const CollectiveSpec& spec, LinkClassBytes& link_bytes) {
  // n^2 pairs (512 x 512 per output dist of an embedding group). A pair's bytes go on
  // its sender's and receiver's NVLink or NIC (through the sender's PXN relay on the
  // receiver's rail when it is on another host: NVLink to the relay, then the relay's
  // NIC) and along one level path, which depends only on how the two GPUs relate (same
  // host; same datacenter, same leaf or not; datacenter pair). So receivers fall in
  // classes (rail, leaf, datacenter): each sender sums its row per class and per
  // receiver, in whole bytes (exact in any order), then takes its host's receivers back
  // out (they go over NVLink); relays, loads and paths are applied once per class.
  const auto un = spec.gpus.size();
  MatrixReceivers to;
  classify_receivers(spec, to);
  MatrixSender from;
  from.relations.resize(static_cast<std::size_t>(datacenters_) * 2);
  EqualRows rows(to.classes.size());
  Time latency = Time::zero();
  for (std::size_t i = 0; i < un; ++i) {
    const Bytes* row = spec.send_matrix.data() + i * un;
    from.class_bytes = rows.class_sums(row, to.cls, to.received);
    take_out_host_block(i, row, to, from);
    split_by_relation(to.at[i], to, from);
    latency = std::max(latency, load_sender(to.at[i], from, link_bytes));
  }
  rows.end(to.received);
  load_receivers(to);
  return latency;
}

void LevelEstimator::classify_receivers(const CollectiveSpec& spec, MatrixReceivers& to) {
  const auto un = spec.gpus.size();
  to.at.resize(un);
  to.cls.resize(un);
  std::map<std::tuple<int, int, topology::NodeIndex>, std::int32_t> index;
  for (std::size_t i = 0; i < un; ++i) {
    to.at[i] = endpoint(spec.gpus[i]);
    const Endpoint& e = to.at[i];
    const auto [it, fresh] = index.try_emplace({e.rail, e.datacenter, e.leaf},
                                               static_cast<std::int32_t>(to.classes.size()));
    if (fresh) to.classes.push_back({i});
    to.cls[i] = it->second;
  }
  for (std::size_t i = 0; i < un; ++i) {
    MatrixReceivers::Class& c = to.classes[static_cast<std::size_t>(to.cls[i])];
    if (c.other_host == MatrixReceivers::kNoMember && to.at[c.member].host != to.at[i].host)
      c.other_host = i;
  }
  for (std::size_t i = 0; i < un; ++i) to.on_host[to.at[i].host].push_back(i);
  to.received.assign(un, 0);
  to.host_received.assign(un, 0);
}

// The sender's own host: over NVLink (itself: nowhere), so out of its class sums.
void LevelEstimator::take_out_host_block(std::size_t i, const Bytes* row, MatrixReceivers& to,
                                         MatrixSender& from) {
  std::int64_t host_sent = 0;
  for (const std::size_t j : to.on_host[to.at[i].host]) {
    from.class_bytes[static_cast<std::size_t>(to.cls[j])] -= row[j];
    if (j == i) {
      to.received[j] -= row[j];
      continue;
    }
    to.host_received[j] += row[j];
    host_sent += row[j];
  }
  from.host_bytes = static_cast<double>(host_sent);
  from.nic_bytes = 0;
}

// The relay toward `rail` (pxn_relay's rule), looked up once per sender and rail (rails are
// >= 0: the cluster loaders check it); null when `a` sends by its own NIC.
const LevelEstimator::Endpoint* LevelEstimator::relay_toward(const Endpoint& a, int rail,
                                                             MatrixSender& from) {
  const auto r = static_cast<std::size_t>(rail);
  if (r >= from.relay_toward.size() || from.relay_toward[r] == MatrixSender::kUnknown)
    look_up_relay(a, rail, from);
  return from.relay_toward[r] >= 0 ? &from.relay_at[r] : nullptr;
}

void LevelEstimator::look_up_relay(const Endpoint& a, int rail, MatrixSender& from) {
  const auto r = static_cast<std::size_t>(rail);
  if (r >= from.relay_toward.size()) {
    from.relay_toward.resize(r + 1, MatrixSender::kUnknown);
    from.relay_at.resize(r + 1);
    from.relay_bytes.resize(r + 1, 0.0);
  }
  int& relay = from.relay_toward[r];
  relay = pxn_rail_relay(cluster_, a.gpu, rail);
  if (relay >= 0) from.relay_at[r] = endpoint(relay);
}

// The bytes left in each class go to receivers off `a`'s host: by NIC or by a relay, and
// along the path of their relation.
void LevelEstimator::split_by_relation(const Endpoint& a, const MatrixReceivers& to,
                                       MatrixSender& from) {
  const bool pxn = cluster_.comm().pxn;
  for (auto& r : from.relations) r = {};
  // A receiver of class c off a's host (bytes left in the class are to such ones).
  const auto receiver = [&](std::size_t c) -> const Endpoint& {
    const MatrixReceivers::Class& k = to.classes[c];
    return to.at[to.at[k.member].host != a.host ? k.member : k.other_host];
  };
  if (pxn) {
    // Relations point into the per-rail relays: sized for every rail first, so that no
    // lookup below moves them.
    std::size_t rails = from.relay_toward.size();
    for (std::size_t c = 0; c < to.classes.size(); ++c) {
      if (from.class_bytes[c] != 0)
        rails = std::max(rails, static_cast<std::size_t>(receiver(c).rail) + 1);
    }
    from.relay_toward.assign(rails, MatrixSender::kUnknown);
    from.relay_at.resize(rails);
    from.relay_bytes.assign(rails, 0.0);
  }
  for (std::size_t c = 0; c < to.classes.size(); ++c) {
    if (from.class_bytes[c] == 0) continue;
    const double b = static_cast<double>(from.class_bytes[c]);
    const Endpoint& d = receiver(c);
    const Endpoint* via = pxn ? relay_toward(a, d.rail, from) : nullptr;
    const Endpoint& leg_from = via ? *via : a;
    if (via) {
      from.host_bytes += b;
      from.relay_bytes[static_cast<std::size_t>(d.rail)] += b;
    } else {
      from.nic_bytes += b;
    }
    const bool same_leaf = leg_from.datacenter == d.datacenter && leg_from.leaf == d.leaf;
    MatrixSender::Relation& rel =
        from.relations[static_cast<std::size_t>(d.datacenter) * 2 + (same_leaf ? 1 : 0)];
    rel.bytes += b;
    if (!rel.from) rel = {rel.bytes, &leg_from, &d};
  }
}

// Loads and paths of a sender's sums; returns the longest latency they pay. A relayed pair
// pays the hop to its relay first.
Time LevelEstimator::load_sender(const Endpoint& a, const MatrixSender& from,
                                 LinkClassBytes& link_bytes) {
  Time latency = Time::zero();
  const LevelPath* host_path = nullptr;
  if (from.host_bytes > 0) {
    // Any GPU of a's host gives its host path; a itself when it relays to nobody else.
    host_path = &level_path(a, a);
    phase_.touch(a.gpu);
    phase_.nv_out[static_cast<std::size_t>(a.gpu)] += from.host_bytes;
    for (std::size_t c = 0; c < link_bytes.size(); ++c)
      link_bytes[c] += from.host_bytes * host_path->links[c];
    latency = std::max(latency, host_path->latency);
  }
  if (from.nic_bytes > 0) {
    phase_.touch(a.gpu);
    phase_.nic_out[static_cast<std::size_t>(a.gpu)] += from.nic_bytes;
  }
  for (std::size_t r = 0; r < from.relay_bytes.size(); ++r) {
    if (from.relay_bytes[r] <= 0) continue;
    const auto relay = static_cast<std::size_t>(from.relay_toward[r]);
    phase_.touch(from.relay_toward[r]);
    phase_.nv_in[relay] += from.relay_bytes[r];
    phase_.nic_out[relay] += from.relay_bytes[r];
  }
  for (const MatrixSender::Relation& rel : from.relations) {
    if (rel.bytes <= 0) continue;
    const LevelPath& level = level_path(*rel.from, *rel.to);
    for (std::size_t c = 0; c < link_bytes.size(); ++c) link_bytes[c] += rel.bytes * level.links[c];
    const int pair = dc_pair(a.datacenter, rel.to->datacenter);
    if (pair >= 0) phase_.add_cross(pair, rel.bytes);
    const bool relayed = rel.from->gpu != a.gpu;
    latency = std::max(latency, level.latency + (relayed ? host_path->latency : Time::zero()));
  }
  return latency;
}

// What each member received: from its own host over NVLink, the rest by its NIC.
void LevelEstimator::load_receivers(const MatrixReceivers& to) {
  for (std::size_t j = 0; j < to.at.size(); ++j) {
    const double nv = static_cast<double>(to.host_received[j]);
    const double nic = static_cast<double>(to.received[j] - to.host_received[j]);
    if (nv <= 0 && nic <= 0) continue;
    const auto g = static_cast<std::size_t>(to.at[j].gpu);
    phase_.touch(to.at[j].gpu);
    phase_.nv_in[g] += nv;
    phase_.nic_in[g] += nic;
  }
}

// Members counted by where they sit, as uniform_group reads them: per rail and per (host,
// rail) for PXN; per leaf switch and per (host, leaf), each also per rail; the first member
// met under each leaf and in each datacenter. Per rail and per (host, rail) summed in
// member order (an unordered map's order of rails is the order the closed form has always
// summed them in).
struct LevelEstimator::PlacementCounts {
  std::unordered_map<std::int64_t, double> rail_members, host_rail_members;
  std::unordered_map<std::uint64_t, double> on_leaf, on_host_leaf;
  std::unordered_map<std::uint64_t, std::size_t> first_on_leaf;
  std::unordered_map<int, std::size_t> first_in_dc;
  std::unordered_map<std::pair<std::uint64_t, std::int64_t>, double, PairHash> on_leaf_rail,
      on_host_leaf_rail;
};

namespace {

std::int64_t host_rail_key(int host, std::int64_t rail) {
  return (static_cast<std::int64_t>(host) << 16) | rail;
}

std::uint64_t host_leaf_key(int host, std::uint64_t leaf) {
  return (static_cast<std::uint64_t>(host) << 32) | leaf;
}

}  // namespace

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
  G = UniformGroup{};
  G.gpus = gpus;
  place_hosts(G);
  const PlacementCounts counts = count_placement(gpus);
  place_rails_and_leaves(G, counts);
  return G;
}

// Hosts and datacenters of the members, and the members that stand for them.
void LevelEstimator::place_hosts(UniformGroup& G) {
  const auto& gpus = G.gpus;
  const auto un = gpus.size();
  auto gpu = [&](std::size_t i) -> const topology::Gpu& { return cluster_.gpu(gpus[i]); };
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
}

LevelEstimator::PlacementCounts LevelEstimator::count_placement(const std::vector<int>& gpus) {
  PlacementCounts k;
  const bool pxn = cluster_.comm().pxn;
  if (pxn) {
    for (const int g : gpus) {
      const topology::Gpu& gpu = cluster_.gpu(g);
      k.rail_members[gpu.rail] += 1;
      k.host_rail_members[host_rail_key(gpu.host, gpu.rail)] += 1;
    }
  }
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    const topology::Gpu& gpu = cluster_.gpu(gpus[i]);
    const std::uint64_t leaf{leaf_of(gpus[i])};
    const std::uint64_t host_leaf = host_leaf_key(gpu.host, leaf);
    ++k.on_leaf[leaf];
    ++k.on_host_leaf[host_leaf];
    if (pxn) {
      ++k.on_leaf_rail[{leaf, gpu.rail}];
      ++k.on_host_leaf_rail[{host_leaf, gpu.rail}];
    }
    k.first_on_leaf.try_emplace(leaf, i);
    k.first_in_dc.try_emplace(gpu.datacenter, i);
  }
  return k;
}

// Other hosts of the same datacenter, split by leaf switch (per rail under PXN), and the
// member pairs whose levels stand for the group's.
void LevelEstimator::place_rails_and_leaves(UniformGroup& G, const PlacementCounts& k) {
  const auto& gpus = G.gpus;
  const auto un = gpus.size();
  auto gpu = [&](std::size_t i) -> const topology::Gpu& { return cluster_.gpu(gpus[i]); };
  const auto leaf = [&](std::size_t i) { return std::uint64_t{leaf_of(gpus[i])}; };
  G.same_leaf.resize(un);
  G.rail_offsets.assign(1, 0);
  G.leaf_pair = G.spine_pair = un;
  for (std::size_t i = 0; i < un; ++i) {
    G.same_leaf[i] = static_cast<std::int32_t>(
        k.on_leaf.at(leaf(i)) - k.on_host_leaf.at(host_leaf_key(gpu(i).host, leaf(i))));
    add_rails(G, k, i);
    G.rail_offsets.push_back(static_cast<std::int32_t>(G.rails.size()));
    const std::size_t f = k.first_on_leaf.at(leaf(i)), d = k.first_in_dc.at(gpu(i).datacenter);
    if (G.leaf_pair == un && gpu(f).host != gpu(i).host) {
      G.leaf_pair = i;
      G.leaf_from = f;
    }
    if (G.spine_pair == un && gpu(d).host != gpu(i).host && leaf(d) != leaf(i)) {
      G.spine_pair = i;
      G.spine_from = d;
    }
  }
}

// Member i's rails (PXN): toward each a message leaves by the relay's leaf (its own for its
// rail).
void LevelEstimator::add_rails(UniformGroup& G, const PlacementCounts& k, std::size_t i) {
  const int g = G.gpus[i];
  const int host = cluster_.gpu(g).host;
  const auto found = [](const auto& map, const auto& key) {
    const auto it = map.find(key);
    return it == map.end() ? 0.0 : it->second;
  };
  for (const auto& [rail, members] : k.rail_members) {
    const int relay = pxn_rail_relay(cluster_, g, static_cast<int>(rail));
    const std::uint64_t egress = std::uint64_t{relay < 0 ? leaf_of(g) : leaf_of(relay)};
    const std::uint64_t key = host_leaf_key(host, egress);
    G.rails.push_back(
        {relay,
         static_cast<std::int32_t>(members - found(k.host_rail_members, host_rail_key(host, rail))),
         static_cast<std::int32_t>(found(k.on_leaf_rail, std::pair{egress, rail}) -
                                   found(k.on_host_leaf_rail, std::pair{key, rail}))});
  }
}

Time LevelEstimator::uniform_all_to_all(const CollectiveSpec& spec, LinkClassBytes& link_bytes) {
  // Rank i sends s_i / n to every member: sums per host and per datacenter in O(n), over
  // the group's placement worked out once (uniform_group).
  const UniformGroup& G = uniform_group(spec.gpus);
  const auto un = spec.gpus.size();
  Time latency = Time::zero();
  auto add_level = [&](std::size_t i, std::size_t j, double bytes) {
    const auto& level = level_path(spec.gpus[i], spec.gpus[j]);
    for (std::size_t c = 0; c < link_bytes.size(); ++c) link_bytes[c] += bytes * level.links[c];
    latency = std::max(latency, level.latency);
  };
  std::vector<double> dc_send(static_cast<std::size_t>(datacenters_), 0.0);
  const double total = sum_uniform_shares(spec, G, dc_send);
  load_uniform_members(spec, G, total);
  load_uniform_datacenter_pairs(G, dc_send);
  // Latency and traffic: from member 0 to one member of each other host level; bytes per
  // level from the sums above.
  double intra = 0, inter = 0, cross = 0;
  for (std::size_t i = 0; i < un; ++i) {
    intra += phase_.nv_out[static_cast<std::size_t>(spec.gpus[i])];
    inter += phase_.nic_out[static_cast<std::size_t>(spec.gpus[i])];
  }
  const bool pxn = !spec.send_bytes.empty() && cluster_.comm().pxn;
  const UniformRelays relays = pxn ? relay_uniform(spec, G, link_bytes) : UniformRelays{};
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
  const double same_leaf = uniform_same_leaf_bytes(G, pxn);
  if (G.leaf_pair < un) add_level(G.leaf_from, G.leaf_pair, same_leaf);
  if (G.spine_pair < un) add_level(G.spine_from, G.spine_pair, inter - cross - same_leaf);
  // A PXN message pays the hop to its relay before its level's path.
  return std::max(intra_latency, latency + (relays.nvlink > 0 ? relays.hop : Time::zero()));
}

// Each member's share (what it sends every member) into share_, and what members send per
// host (host_send_) and per datacenter (`dc_send`); returns what all send.
double LevelEstimator::sum_uniform_shares(const CollectiveSpec& spec, const UniformGroup& G,
                                          std::vector<double>& dc_send) {
  const auto n = static_cast<std::int64_t>(spec.gpus.size());
  const auto un = static_cast<std::size_t>(n);
  share_.resize(un);
  host_send_.assign(G.hosts, 0.0);
  double total = 0;
  for (std::size_t i = 0; i < un; ++i) {
    share_[i] = static_cast<double>(
        divide_up(spec.send_bytes.empty() ? spec.bytes : spec.send_bytes[i], n));
    const double s = share_[i] * static_cast<double>(n);
    host_send_[static_cast<std::size_t>(G.host[i])] += s;
    dc_send[static_cast<std::size_t>(G.datacenter[i])] += s;
    total += s;
  }
  return total;
}

// Each member's NVLink and NIC loads: its host's members over NVLink, the rest by its NIC.
void LevelEstimator::load_uniform_members(const CollectiveSpec& spec, const UniformGroup& G,
                                          double total) {
  const auto n = static_cast<double>(spec.gpus.size());
  for (std::size_t i = 0; i < spec.gpus.size(); ++i) {
    const auto g = static_cast<std::size_t>(spec.gpus[i]);
    const double local = G.host_members[i];
    const double host_total = host_send_[static_cast<std::size_t>(G.host[i])];
    phase_.touch(spec.gpus[i]);
    phase_.nv_out[g] = share_[i] * (local - 1);
    phase_.nv_in[g] = (host_total - share_[i] * n) / n;
    phase_.nic_out[g] = share_[i] * (n - local);
    phase_.nic_in[g] = (total - host_total) / n;
  }
}

// Bytes between each ordered pair of datacenters: what a sends, times b's part of the members.
void LevelEstimator::load_uniform_datacenter_pairs(const UniformGroup& G,
                                                   const std::vector<double>& dc_send) {
  const auto n = static_cast<double>(G.gpus.size());
  for (int a = 0; a < datacenters_; ++a) {
    for (int b = 0; b < datacenters_; ++b) {
      const double bytes = dc_send[static_cast<std::size_t>(a)] *
                           static_cast<double>(G.dc_members[static_cast<std::size_t>(b)]) / n;
      if (a == b || bytes <= 0) continue;
      phase_.pairs.push_back(a * datacenters_ + b);
      phase_.cross[static_cast<std::size_t>(a * datacenters_ + b)] = bytes;
    }
  }
}

// PXN (per-rank sizes only: a uniform all-to-all is an implicit all-pairs phase, pxn.hpp):
// what member i sends to rail r on other hosts, share_i m_r (m_r: members on rail r off
// i's host), crosses NVLink to i's relay for r and leaves by the relay's NIC.
LevelEstimator::UniformRelays LevelEstimator::relay_uniform(const CollectiveSpec& spec,
                                                            const UniformGroup& G,
                                                            LinkClassBytes& link_bytes) {
  UniformRelays out;
  for (std::size_t i = 0; i < spec.gpus.size(); ++i) {
    const int g = spec.gpus[i];
    const LevelPath* to_relay = nullptr;  // every relay is on g's host: one level
    for (auto k = G.rail_offsets[i]; k < G.rail_offsets[i + 1]; ++k) {
      const UniformGroup::Rail& rail = G.rails[static_cast<std::size_t>(k)];
      if (rail.relay < 0) continue;
      const double b = share_[i] * rail.off_host;
      if (b <= 0) continue;
      phase_.touch(rail.relay);
      const auto gi = static_cast<std::size_t>(g), ri = static_cast<std::size_t>(rail.relay);
      phase_.nic_out[gi] -= b;
      phase_.nic_out[ri] += b;
      phase_.nv_out[gi] += b;
      phase_.nv_in[ri] += b;
      out.nvlink += b;
      if (!to_relay) to_relay = &level_path(g, rail.relay);
      for (std::size_t c = 0; c < link_bytes.size(); ++c) link_bytes[c] += b * to_relay->links[c];
      out.hop = std::max(out.hop, to_relay->latency);
    }
  }
  return out;
}

// Bytes to other hosts under the sender's leaf (under PXN, the leaf each rail's message
// leaves by: the relay's, its own for its rail).
double LevelEstimator::uniform_same_leaf_bytes(const UniformGroup& G, bool pxn) const {
  double same_leaf = 0;
  for (std::size_t i = 0; i < G.gpus.size(); ++i) {
    if (!pxn) {
      same_leaf += share_[i] * G.same_leaf[i];
    } else {
      for (auto k = G.rail_offsets[i]; k < G.rail_offsets[i + 1]; ++k)
        same_leaf += share_[i] * G.rails[static_cast<std::size_t>(k)].same_leaf;
    }
  }
  return same_leaf;
}

}  // namespace strait::sim::network::detail
