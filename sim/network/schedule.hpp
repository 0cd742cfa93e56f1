#pragma once
// Schedule: a collective compiled into phases of point-to-point transfers, the form both
// network modes execute.
//
// Semantics (what flow mode simulates and analytical mode estimates):
//   - the phases run in order; a Phase with `repeat` k stands for k identical phases;
//   - every transfer is split into `chunks` equal lanes (pipelining of large messages);
//   - a rank starts its sends of (phase p, lane c) once it has completed every transfer
//     it sends or receives in (p-1, c) and in (p, c-1): a per-rank barrier between
//     phases, the data dependency of ring, tree and chain algorithms, and in-order chunks.
// Transfers name ranks of the collective (indices into `gpus`); self-transfers and empty
// transfers are never stored. A uniform direct all-to-all (every rank sends the same bytes
// to every other) is one implicit all-pairs phase instead: `all_pairs` bytes from each rank
// to each other rank, n(n-1) transfers that are not stored (268 M at 16,384 ranks, 4 GiB).
// Consumers read a phase through for_each_transfer / transfer_count, or route it as a
// whole (flow mode's coflow counts its paths per link, topology/pair_paths.hpp);
// expand_all_pairs() turns it back into stored transfers.

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/core/units.hpp"
#include "sim/network/collective.hpp"
#include "sim/topology/cluster.hpp"

namespace strait::sim::network {

struct Transfer {
  int src = 0;  // rank index
  int dst = 0;  // rank index
  Bytes bytes = 0;
};

/// The latency a transfer pays per repeat after its bytes drain, from its path's latency
/// (links) and the protocol's step latency. NCCL's per-step constants (hwLat) are measured
/// on ordinary links, wire and switches included, so adding the links' latency on top
/// counts the wire twice (an 8-GPU host's LL all-reduce came out 17.8 us against NCCL's own
/// model of 15 us and 12.5-16.7 us measured): a transfer pays the larger of the two, so a
/// wide-area hop of milliseconds still pays its wire and a protocol-free (neutral) cluster
/// its links.
inline Time repeat_latency(Time paths, Time step) { return std::max(paths, step); }

struct Phase {
  std::vector<Transfer> transfers;
  /// When > 0, the phase is implicit: every rank of the schedule sends `all_pairs` bytes to
  /// every other rank, and `transfers` is empty.
  Bytes all_pairs = 0;
  int repeat = 1;
  std::string name;  // e.g. "reduce_scatter/host", for traces
  /// The protocol's latency per repeat of a transfer inside a host and of one across hosts
  /// (step latency; network proxy and RDMA round trip; per-peer overheads; see
  /// apply_protocol). A transfer pays the larger of it and its path's latency
  /// (transfer_latency), and a repeat its transfers' largest (or mean, when pipelined).
  Time step_latency = Time::zero();
  Time net_step_latency = Time::zero();
  /// A pipelined ring step: data moves hop by hop around the ring and a rank forwards a
  /// slice as soon as it has it, so over the phase's repeats every hop's latency is paid in
  /// turn. Each repeat pays the mean latency of its transfers (path and protocol), not the
  /// largest: a ring over h hosts pays the network's latency on h of its n hops, as NCCL's
  /// tuner counts it ((nsteps - nInterSteps) intraLat + nInterSteps interLat).
  bool pipelined = false;
  /// Transfers across hosts and rails go through the relay GPU on the destination's rail
  /// (NCCL's PXN, detail/pxn.hpp): set on the stored phases of peer-to-peer operations.
  bool pxn = false;
  /// One of NVLS's in-host stages (reduce or multicast) inside NVLS tree or CollNet: it
  /// moves at NVLS's bandwidth share (`nvls_bandwidth_fraction`), whatever the protocol.
  bool nvls = false;
  /// Time a repeat takes beyond its transfers, loading no link: the channels NCCL leaves
  /// idle for a small ring or tree (protocol_channel_share), single-host NVLS's unoverlapped
  /// lane (nvls_lane_share). Added to every transfer's latency.
  Time fill = Time::zero();
  /// Share of the phase's bytes that is payload once apply_protocol has scaled them, over
  /// the schedule's payload_fraction (an NVLS stage's share differs from the protocol's):
  /// traffic counts bytes x payload_fraction x payload.
  double payload = 1.0;

  bool empty() const { return transfers.empty() && all_pairs <= 0; }
  /// A transfer's latency per repeat from its path's (links) and whether it crosses hosts.
  Time transfer_latency(Time path, bool crosses_hosts) const {
    return repeat_latency(path, crosses_hosts ? net_step_latency : step_latency) + fill;
  }
  /// Transfers of one repeat, the implicit ones included, for a schedule of `ranks` ranks.
  std::uint64_t transfer_count(int ranks) const {
    const auto n = static_cast<std::uint64_t>(ranks);
    return all_pairs > 0 ? n * (n - 1) : transfers.size();
  }
  /// Calls visit(const Transfer&) for every transfer, the implicit ones included (in order
  /// of sender, then receiver).
  template <typename Visit>
  void for_each_transfer(int ranks, Visit&& visit) const {
    if (all_pairs <= 0) {
      for (const Transfer& t : transfers) visit(t);
      return;
    }
    for (int src = 0; src < ranks; ++src) {
      for (int dst = 0; dst < ranks; ++dst) {
        if (src != dst) visit(Transfer{src, dst, all_pairs});
      }
    }
  }
};

struct Schedule {
  CollectiveOp op = CollectiveOp::kAllReduce;
  Algorithm algorithm = Algorithm::kRing;  // never kAuto once built
  std::vector<int> gpus;
  std::vector<Phase> phases;
  int chunks = 1;
  int channels = 1;
  int traffic_tag = -1;                   // from the spec
  Protocol protocol = Protocol::kSimple;  // never kAuto once the protocol is applied
  Time start_latency = Time::zero();      // before the first phase (protocol base latency)
  Bytes bytes = 0;                        // the spec's size (nccl-tests' convention)
  /// The least time its phases can take: bytes x busbw_factor / the busbw ceiling of its
  /// protocol or algorithm (NCCL's measured caps, see apply_protocol). Both modes end the
  /// collective no earlier than start_latency + this after it is issued.
  Time min_data_time = Time::zero();
  /// The phases stream through each other (LL and LL128 trees, see apply_protocol): every
  /// 8- or 120-byte line carries its own flag, so a rank forwards data as it lands, not
  /// after a whole chunk. The collective then pays each phase's latency once (the first
  /// line's way up and down the tree) and, after them, the time its busiest link takes for
  /// the bytes of all phases, no less than min_data_time: NCCL's own model of a tree, lat +
  /// bytes / busbw. Lanes do not apply (chunks is 1). Flow mode runs the phases as one
  /// coflow with their latencies summed.
  bool cut_through = false;
  /// Payload share of each transfer's bytes: a calibrated schedule carries bytes / scale so
  /// that it takes the measured time (apply_calibration); traffic counts only the payload.
  double payload_fraction = 1.0;

  int ranks() const { return static_cast<int>(gpus.size()); }
  int expanded_phase_count() const;
  /// Bytes moved by all transfers of all phases (each chunk counted once).
  double total_bytes() const;
};

struct ScheduleOptions {
  Bytes chunk_bytes = 512 * kKiB;  // pipelining unit of tree and chain algorithms
  int max_chunks = 64;             // at most this many lanes
  int channels = 0;                // rings in parallel; 0 = one per NIC rail the ring crosses
};

/// Stores the transfers of every implicit all-pairs phase of `schedule` (for consumers
/// that need them one by one on small rank sets, and for tests).
void expand_all_pairs(Schedule& schedule);

/// The algorithm kAuto resolves to for `spec` on `cluster` by rule alone (the networks
/// refine all-reduce by estimated time, see Network::resolve_algorithm), after NCCL's habits:
/// all-reduce: ring inside one host, hierarchical across datacenters, tree for small
/// messages (<= 256 KiB) on more than 8 ranks across hosts, ring otherwise;
/// all-gather, reduce-scatter, broadcast, reduce: ring; all-to-all(v): direct (NCCL
/// posts every peer's send and receive in one group); send/recv: direct.
Algorithm choose_algorithm(const CollectiveSpec& spec, const topology::Cluster& cluster);

enum class ProtocolView { kRun, kTuner };

/// Applies `protocol`'s costs from cluster.comm() to `schedule`: its transfers carry
/// bytes / bandwidth_fraction (payload_fraction keeps traffic at the payload), it starts
/// base_latency late, and every phase pays, per repeat, the protocol's step latency
/// (nvlink or net, net when a transfer crosses hosts, plus proxy and RDMA round trip; a
/// pipelined phase pays the mean over its transfers, see Phase::pipelined),
/// and for all-to-all(v) and send/recv per_peer_latency times the most messages one rank
/// sends in the phase. NVLS pays nvls_step_latency (nvls_tree's two in-host phases half of
/// it each) and no base latency; nvls moves at nvls_bandwidth_fraction, nvls_tree at the
/// protocol's. What a size costs beyond the tuner's view is Phase::fill, time that loads no
/// link (so a small collective on few channels does not crowd a shared link): a ring or
/// tree on `share` of the channels (protocol_channel_share) takes its slowest transfer's
/// idle-cluster time x (1/share - 1) longer per repeat; single-host NVLS one lane's worth
/// (nvls_lane_share). Trees pay the tree column of the latencies. The busbw ceiling
/// (protocol's max_busbw at the channels' share; NVLS tree's per-channel ceiling x NICs per
/// host) sets min_data_time.
/// With ProtocolView::kTuner it leaves out what a collective's size costs at run time
/// (the channels' share and NVLS's lane): NCCL's tuner picks an algorithm and protocol at
/// full channels with NVLS's stages overlapped, and `auto` picks as it does.
void apply_protocol(Schedule& schedule, const topology::Cluster& cluster, Protocol protocol,
                    ProtocolView view = ProtocolView::kRun);
/// Whether `comm` makes a collective's size cost more at run time than NCCL's tuner sees.
inline bool size_effects(const topology::CommParameters& comm) {
  return comm.channels > 1 || comm.nvls_lane_bytes > 0;
}
/// The latency of a phase's repeat from its transfers' latencies: the largest, or for a
/// pipelined phase their mean (`sum` over `count` transfers, rounded down to the ps).
inline Time phase_latency(const Phase& phase, Time largest, Time sum, std::uint64_t count) {
  if (!phase.pipelined || count == 0) return largest;
  return Time::from_ps(sum.ps() / static_cast<std::int64_t>(count));
}
/// The latency one phase pays per repeat under `protocol` (see apply_protocol).
Time protocol_step_latency(const topology::Cluster& cluster, Protocol protocol, Algorithm algorithm,
                           CollectiveOp op, bool crosses_hosts, int peer_messages);
/// The share of link bandwidth `protocol` achieves for `algorithm`.
double protocol_bandwidth_fraction(const topology::Cluster& cluster, Protocol protocol,
                                   Algorithm algorithm);
/// The NCCL channels a ring or tree of `bytes` on `ranks` ranks launches:
/// clamp(bytes / channel_bytes, 1, CommParameters::channels) (channel_bytes x ranks for a
/// ring under LL; all channels where the protocol has no channel_bytes); 0 for other
/// algorithms and where the cluster sets no channels.
int protocol_channels(const topology::Cluster& cluster, Protocol protocol, Algorithm algorithm,
                      Bytes bytes, int ranks);
/// The share of its protocol's bandwidth those channels give: protocol_channels / channels,
/// 1 where protocol_channels is 0.
double protocol_channel_share(const topology::Cluster& cluster, Protocol protocol,
                              Algorithm algorithm, Bytes bytes, int ranks);
/// The share of single-host NVLS's data time its reduce and multicast stages do not
/// overlap (CommParameters::nvls_lane_bytes): min(S, lane) / S, 0 for other algorithms.
/// apply_protocol adds that much more time as Phase::fill.
double nvls_lane_share(const topology::Cluster& cluster, Algorithm algorithm, Bytes bytes);
/// The latency a collective pays once before its first phase under `protocol`.
Time protocol_base_latency(const topology::Cluster& cluster, Protocol protocol,
                           Algorithm algorithm);

/// Checks a spec (GPUs exist and are distinct, sizes and matrices fit the rank set, roots
/// are ranks); throws strait::Error like build_schedule.
void validate_collective(const CollectiveSpec& spec, const topology::Cluster& cluster);

/// Compiles `spec` into a schedule. Throws strait::Error if the algorithm does not apply
/// to the op, a GPU index is out of range or repeated, or the ranks are unsuitable
/// (e.g. hierarchical on hosts with unequal rank counts).
Schedule build_schedule(const CollectiveSpec& spec, const topology::Cluster& cluster,
                        const ScheduleOptions& options = {});

}  // namespace strait::sim::network
