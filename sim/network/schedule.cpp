#include "sim/network/schedule.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include <fmt/format.h>

#include "sim/core/error.hpp"
#include "sim/network/detail/link_rate.hpp"
#include "sim/network/detail/pxn.hpp"
#include "sim/network/detail/rank_layout.hpp"
#include "sim/network/detail/schedule_builders.hpp"

namespace strait::sim::network {

int Schedule::expanded_phase_count() const {
  int n = 0;
  for (const auto& p : phases) n += p.repeat;
  return n;
}

double Schedule::total_bytes() const {
  double sum = 0;
  for (const auto& p : phases) {
    for (const auto& t : p.transfers) sum += static_cast<double>(t.bytes) * p.repeat;
    if (p.all_pairs > 0) {
      sum += static_cast<double>(p.all_pairs) * static_cast<double>(p.transfer_count(ranks())) *
             p.repeat;
    }
  }
  return sum;
}

void expand_all_pairs(Schedule& schedule) {
  for (Phase& p : schedule.phases) {
    if (p.all_pairs <= 0) continue;
    p.transfers.reserve(p.transfer_count(schedule.ranks()));
    p.for_each_transfer(schedule.ranks(), [&](const Transfer& t) { p.transfers.push_back(t); });
    p.all_pairs = 0;
  }
}

namespace {

std::size_t protocol_index(Protocol protocol) {
  switch (protocol) {
    case Protocol::kLL:
      return 0;
    case Protocol::kLL128:
      return 1;
    default:
      return 2;
  }
}

// What a transfer from GPU `g` moves per second on an idle cluster, at the library's
// share: its NVLink inside its host; across hosts the slower of its PCIe link to its NIC
// and the NIC's scale-out link. A GPU without such links (graph form): its fastest link.
BytesPerSec idle_rate(const topology::Cluster& cluster, int g, bool crosses_hosts) {
  using topology::LinkClass;
  const auto node = cluster.gpu(g).node;
  BytesPerSec fastest = 0, nvlink = 0, nic = 0;
  for (auto l : cluster.out_links(node)) {
    const auto& link = cluster.link(l);
    const BytesPerSec rate = detail::library_bandwidth(cluster, link);
    fastest = std::max(fastest, rate);
    if (link.link_class == LinkClass::kNvlink) nvlink = std::max(nvlink, rate);
    if (link.link_class != LinkClass::kPcie) continue;
    for (auto out : cluster.out_links(link.dst)) {
      const auto& up = cluster.link(out);
      if (up.link_class == LinkClass::kScaleOut)
        nic = std::max(nic, std::min(rate, detail::library_bandwidth(cluster, up)));
    }
  }
  const BytesPerSec rate = crosses_hosts ? nic : nvlink;
  return rate > 0 ? rate : fastest;
}

// The time a phase's repeat loses on `share` of the channels: its slowest transfer takes
// bytes / rate on all channels and bytes / (share x rate) on those its size launches.
Time channel_fill(const topology::Cluster& cluster, const std::vector<int>& gpus,
                  const Phase& phase, double share) {
  double slowest = 0;
  for (const Transfer& t : phase.transfers) {
    const int src = gpus[static_cast<std::size_t>(t.src)];
    const int dst = gpus[static_cast<std::size_t>(t.dst)];
    const bool crosses = cluster.gpu(src).host != cluster.gpu(dst).host;
    slowest = std::max(slowest, static_cast<double>(t.bytes) / idle_rate(cluster, src, crosses));
  }
  return Time::from_s(slowest * (1.0 / share - 1.0));
}

// Single-host NVLS's unoverlapped lane: `lane` (nvls_lane_share) of the time its busiest
// sender takes on an idle host.
Time lane_fill(const topology::Cluster& cluster, const std::vector<int>& gpus, const Phase& phase,
               double lane) {
  std::vector<double> sent(gpus.size(), 0.0);
  double busiest = 0;
  for (const Transfer& t : phase.transfers) {
    auto& s = sent[static_cast<std::size_t>(t.src)];
    s += static_cast<double>(t.bytes);
    busiest =
        std::max(busiest, s / idle_rate(cluster, gpus[static_cast<std::size_t>(t.src)], false));
  }
  return Time::from_s(busiest * lane);
}

}  // namespace

Time protocol_step_latency(const topology::Cluster& cluster, Protocol protocol, Algorithm algorithm,
                           CollectiveOp op, bool crosses_hosts, int peer_messages) {
  const auto& comm = cluster.comm();
  const auto& p = comm.protocols[protocol_index(protocol)];
  const auto& column = algorithm == Algorithm::kTree ? p.tree : p.ring;
  const bool nvls = algorithm == Algorithm::kNvls || algorithm == Algorithm::kNvlsTree ||
                    (algorithm == Algorithm::kCollNet && comm.nvls);
  // NCCL's tuner charges NVLS's latency once per collective (intraLat + 2 log2(nNodes)
  // interLat for NVLS tree): NVLS tree's two in-host phases (reduce, multicast) pay half each,
  // as do CollNet's on NVLS hosts.
  const Time nvls_step = algorithm == Algorithm::kNvlsTree || algorithm == Algorithm::kCollNet
                             ? Time::from_ps(comm.nvls_step_latency.ps() / 2)
                             : comm.nvls_step_latency;
  Time t = crosses_hosts ? column.net_step_latency + comm.proxy_latency + comm.rdma_round_trip
           : nvls        ? nvls_step
                         : column.nvlink_step_latency;
  if (detail::peer_to_peer(op)) t += comm.per_peer_latency * peer_messages;
  return t;
}

double protocol_bandwidth_fraction(const topology::Cluster& cluster, Protocol protocol,
                                   Algorithm algorithm) {
  const auto& comm = cluster.comm();
  return algorithm == Algorithm::kNvls
             ? comm.nvls_bandwidth_fraction
             : comm.protocols[protocol_index(protocol)].bandwidth_fraction;
}

int protocol_channels(const topology::Cluster& cluster, Protocol protocol, Algorithm algorithm,
                      Bytes bytes, int ranks) {
  const auto& comm = cluster.comm();
  const auto& p = comm.protocols[protocol_index(protocol)];
  if (comm.channels <= 0 || (algorithm != Algorithm::kRing && algorithm != Algorithm::kTree))
    return 0;
  if (p.channel_bytes <= 0) return comm.channels;
  const Bytes per_channel =
      p.channel_bytes *
      (algorithm == Algorithm::kRing && protocol == Protocol::kLL ? std::max(1, ranks) : 1);
  return static_cast<int>(std::clamp<Bytes>(bytes / per_channel, 1, comm.channels));
}

double protocol_channel_share(const topology::Cluster& cluster, Protocol protocol,
                              Algorithm algorithm, Bytes bytes, int ranks) {
  const int launched = protocol_channels(cluster, protocol, algorithm, bytes, ranks);
  return launched > 0 ? static_cast<double>(launched) / cluster.comm().channels : 1.0;
}

double nvls_lane_share(const topology::Cluster& cluster, Algorithm algorithm, Bytes bytes) {
  const Bytes lane = cluster.comm().nvls_lane_bytes;
  if (algorithm != Algorithm::kNvls || lane <= 0 || bytes <= 0) return 0.0;
  return static_cast<double>(std::min(bytes, lane)) / static_cast<double>(bytes);
}

Time protocol_base_latency(const topology::Cluster& cluster, Protocol protocol,
                           Algorithm algorithm) {
  // NCCL's tuner gives its NVLS and CollNet algorithms no base latency (baseLat 0).
  const auto& p = cluster.comm().protocols[protocol_index(protocol)];
  if (algorithm == Algorithm::kNvls || algorithm == Algorithm::kNvlsTree ||
      algorithm == Algorithm::kCollNet)
    return Time::zero();
  return (algorithm == Algorithm::kTree ? p.tree : p.ring).base_latency;
}

namespace {

// Bytes moved at a share f of the links' bandwidth take as long as bytes / f at full rate.
Bytes scaled_by(Bytes b, double f) {
  return f == 1.0 ? b : static_cast<Bytes>(std::llround(static_cast<double>(b) / f));
}

// An implicit all-pairs phase under `protocol`: every rank sends to the n - 1 others, and
// one value serves every pair: its longest path is one that crosses hosts, if any does.
void apply_to_all_pairs(Phase& phase, const Schedule& schedule, const topology::Cluster& cluster,
                        Protocol protocol, double fraction) {
  bool crosses = false;
  for (int g : schedule.gpus)
    crosses = crosses || cluster.gpu(g).host != cluster.gpu(schedule.gpus.front()).host;
  phase.all_pairs = scaled_by(phase.all_pairs, fraction);
  phase.step_latency = phase.net_step_latency = protocol_step_latency(
      cluster, protocol, schedule.algorithm, schedule.op, crosses, schedule.ranks() - 1);
}

// A phase of stored transfers under `protocol`: bytes scaled to its share of line rate (an
// NVLS stage moves at NVLS's share whatever the protocol; its payload is kept), the idle
// time of the channels a small ring or tree leaves unused (`share`) or of NVLS's
// unoverlapped lane (`lane`), and step latencies by the most messages one rank sends.
// `sends` is zero per rank before and after.
void apply_to_transfers(Phase& phase, const Schedule& schedule, const topology::Cluster& cluster,
                        Protocol protocol, double fraction, double share, double lane,
                        std::vector<int>& sends) {
  const double nvls_fraction = cluster.comm().nvls_bandwidth_fraction;
  int most = 0;
  if (phase.nvls) phase.payload = nvls_fraction / fraction;
  for (Transfer& t : phase.transfers) {
    most = std::max(most, ++sends[static_cast<std::size_t>(t.src)]);
    t.bytes = scaled_by(t.bytes, phase.nvls ? nvls_fraction : fraction);
  }
  for (const Transfer& t : phase.transfers) sends[static_cast<std::size_t>(t.src)] = 0;
  if (share < 1.0) phase.fill = channel_fill(cluster, schedule.gpus, phase, share);
  if (lane > 0) phase.fill = lane_fill(cluster, schedule.gpus, phase, lane);
  phase.step_latency =
      protocol_step_latency(cluster, protocol, schedule.algorithm, schedule.op, false, most);
  phase.net_step_latency =
      protocol_step_latency(cluster, protocol, schedule.algorithm, schedule.op, true, most);
}

// LL and LL128 flag every line, so a tree's levels stream through each other (NCCL's LL
// tree at 4 KiB - 64 KiB across 2 and 4 HGX hosts rises by bytes / its busbw ceiling
// over its small-message latency, not by a store-and-forward hop per level).
void stream_tree_levels(Schedule& schedule, Protocol protocol) {
  schedule.cut_through = schedule.algorithm == Algorithm::kTree && protocol != Protocol::kSimple;
  if (!schedule.cut_through) return;
  schedule.chunks = 1;
  // Streaming levels move their bytes at once: the channels' loss is the slowest level's,
  // paid once (on the first phase), not once per level.
  Time most = Time::zero();
  for (Phase& phase : schedule.phases)
    most = std::max(most, std::exchange(phase.fill, Time::zero()));
  if (!schedule.phases.empty()) schedule.phases.front().fill = most;
}

// Hosts the schedule's GPUs span: 1, 2 or 3 for more (all a ceiling tells apart).
int hosts_spanned(const Schedule& schedule, const topology::Cluster& cluster) {
  const int first = cluster.gpu(schedule.gpus.front()).host;
  int second = -1, hosts = 1;
  for (int g : schedule.gpus) {
    const int h = cluster.gpu(g).host;
    if (h == first || h == second) continue;
    if (second >= 0) return 3;
    second = h;
    hosts = 2;
  }
  return hosts;
}

// NCCL's measured busbw ceiling of the protocol (of NVLS tree per channel) bounds the time
// of the schedule's bytes, at the channels' `share`.
void bound_by_busbw(Schedule& schedule, const topology::Cluster& cluster, Protocol protocol,
                    double share) {
  schedule.min_data_time = Time::zero();
  const auto& comm = cluster.comm();
  const bool nvls_tree = schedule.algorithm == Algorithm::kNvlsTree;
  if (schedule.gpus.empty() || schedule.bytes <= 0 ||
      !(nvls_tree ? comm.nvls_tree_channel_busbw.any()
                  : comm.protocols[protocol_index(protocol)].max_busbw.any()))
    return;
  const int first = cluster.gpu(schedule.gpus.front()).host;
  const int hosts = hosts_spanned(schedule, cluster);
  const BytesPerSec ceiling =
      nvls_tree ? comm.nvls_tree_channel_busbw.at(hosts) *
                      std::max(1, cluster.hosts()[static_cast<std::size_t>(first)].nics)
                : comm.protocols[protocol_index(protocol)].max_busbw.at(hosts);
  if (!(ceiling < std::numeric_limits<double>::infinity())) return;
  schedule.min_data_time = Time::for_work(
      static_cast<double>(schedule.bytes) * busbw_factor(schedule.op, schedule.ranks()),
      ceiling * share);
}

}  // namespace

void apply_protocol(Schedule& schedule, const topology::Cluster& cluster, Protocol protocol,
                    ProtocolView view) {
  if (protocol == Protocol::kAuto) protocol = Protocol::kSimple;
  schedule.protocol = protocol;
  schedule.start_latency = protocol_base_latency(cluster, protocol, schedule.algorithm);
  const double fraction = protocol_bandwidth_fraction(cluster, protocol, schedule.algorithm);
  // What a size costs at run time beyond the tuner's view, as time that loads no link:
  // the channels a small ring or tree leaves idle, and NVLS's unoverlapped lane.
  const bool run = view == ProtocolView::kRun;
  const double share = run ? protocol_channel_share(cluster, protocol, schedule.algorithm,
                                                    schedule.bytes, schedule.ranks())
                           : 1.0;
  const double lane = run ? nvls_lane_share(cluster, schedule.algorithm, schedule.bytes) : 0.0;
  std::vector<int> sends(schedule.gpus.size(), 0);
  for (Phase& phase : schedule.phases) {
    if (phase.all_pairs > 0) {
      apply_to_all_pairs(phase, schedule, cluster, protocol, fraction);
    } else {
      apply_to_transfers(phase, schedule, cluster, protocol, fraction, share, lane, sends);
    }
  }
  schedule.payload_fraction *= fraction;
  stream_tree_levels(schedule, protocol);
  bound_by_busbw(schedule, cluster, protocol, share);
}

Algorithm choose_algorithm(const CollectiveSpec& spec, const topology::Cluster& cluster) {
  switch (spec.op) {
    case CollectiveOp::kAllReduce: {
      // Only all-reduce looks at where its ranks sit.
      const auto layout = detail::make_rank_layout(spec, cluster);
      if (layout.hosts.size() == 1) return Algorithm::kRing;
      if (layout.datacenters.size() > 1 && layout.uniform_hosts && layout.uniform_datacenters) {
        return Algorithm::kHierarchical;
      }
      if (spec.bytes <= 256 * kKiB && layout.n > 8) return Algorithm::kTree;
      return Algorithm::kRing;
    }
    case CollectiveOp::kAllToAll:
    case CollectiveOp::kAllToAllV:
      return Algorithm::kDirect;
    case CollectiveOp::kSendRecv:
      return Algorithm::kDirect;
    default:
      return Algorithm::kRing;
  }
}

static detail::RankLayout validated_layout(const CollectiveSpec& spec,
                                           const topology::Cluster& cluster) {
  const auto layout = detail::make_rank_layout(spec, cluster);
  if (spec.bytes < 0) throw Error("collective: size must not be negative");
  if (spec.op == CollectiveOp::kAllToAllV &&
      spec.send_matrix.size() !=
          static_cast<std::size_t>(layout.n) * static_cast<std::size_t>(layout.n)) {
    throw Error(fmt::format("collective: all_to_allv needs an {}x{} send matrix, got {} entries",
                            layout.n, layout.n, spec.send_matrix.size()));
  }
  if (!spec.send_bytes.empty() && (spec.op != CollectiveOp::kAllToAll ||
                                   spec.send_bytes.size() != static_cast<std::size_t>(layout.n))) {
    throw Error(
        fmt::format("collective: per-rank send sizes need all_to_all and {} entries, got {} for {}",
                    layout.n, spec.send_bytes.size(), to_string(spec.op)));
  }
  if ((spec.op == CollectiveOp::kBroadcast || spec.op == CollectiveOp::kReduce ||
       spec.op == CollectiveOp::kSendRecv) &&
      (spec.root < 0 || spec.root >= layout.n)) {
    throw Error(fmt::format("collective: root rank {} is outside 0..{}", spec.root, layout.n - 1));
  }
  if (spec.op == CollectiveOp::kSendRecv && (spec.peer < 0 || spec.peer >= layout.n)) {
    throw Error(fmt::format("collective: peer rank {} is outside 0..{}", spec.peer, layout.n - 1));
  }
  return layout;
}

void validate_collective(const CollectiveSpec& spec, const topology::Cluster& cluster) {
  validated_layout(spec, cluster);
}

Schedule build_schedule(const CollectiveSpec& spec, const topology::Cluster& cluster,
                        const ScheduleOptions& options) {
  const auto layout = validated_layout(spec, cluster);
  Schedule s;
  s.op = spec.op;
  s.traffic_tag = spec.traffic_tag;
  s.gpus = spec.gpus;
  s.bytes = spec.bytes;
  s.algorithm =
      spec.algorithm == Algorithm::kAuto ? choose_algorithm(spec, cluster) : spec.algorithm;
  if (s.algorithm == Algorithm::kNvls &&
      (!cluster.comm().nvls || layout.hosts.size() != 1 || spec.op != CollectiveOp::kAllReduce)) {
    throw Error(
        "collective: algorithm 'nvls' needs all_reduce inside one host whose cluster file sets "
        "\"nccl\": {\"nvls\": true}");
  }
  if (s.algorithm == Algorithm::kNvlsTree &&
      (!cluster.comm().nvls || layout.hosts.size() < 2 || layout.datacenters.size() != 1 ||
       !layout.uniform_hosts || layout.hosts.front().size() < 2 ||
       spec.op != CollectiveOp::kAllReduce)) {
    throw Error(
        "collective: algorithm 'nvls_tree' needs all_reduce over the same number (2 or more) "
        "of GPUs on each of 2 or more hosts of one datacenter whose cluster file sets "
        "\"nccl\": {\"nvls\": true}");
  }
  if (s.algorithm == Algorithm::kCollNet &&
      (!cluster.comm().collnet || layout.hosts.size() < 2 || layout.datacenters.size() != 1 ||
       !layout.uniform_hosts || spec.op != CollectiveOp::kAllReduce)) {
    throw Error(
        "collective: algorithm 'collnet' needs all_reduce over the same number of GPUs on each "
        "of 2 or more hosts of one datacenter whose cluster file sets \"nccl\": {\"collnet\": "
        "true} (SHARP in the switches)");
  }
  detail::BuildContext ctx{spec, layout, options, s, cluster};
  if (layout.n > 1) detail::build_phases(ctx);
  // Drop empty phases (e.g. zero-byte all-to-all-v rows) so both modes skip them alike.
  std::erase_if(s.phases, [](const Phase& p) { return p.empty() || p.repeat <= 0; });
  // PXN routes the stored transfers of peer-to-peer operations (detail/pxn.hpp); implicit
  // all-pairs phases are counted without it, expanded or not.
  if (detail::peer_to_peer(s.op)) {
    for (Phase& p : s.phases) p.pxn = p.all_pairs <= 0;
  }
  return s;
}

}  // namespace strait::sim::network
