#pragma once
// Collective operations as NCCL and nccl-tests define them, and their algorithms.
//
// Sizes follow nccl-tests: `bytes` is the size of the buffer nccl-tests reports, i.e.
// the per-rank input of all-reduce, reduce-scatter's input, all-gather's output,
// all-to-all's per-rank send buffer, broadcast's buffer. busbw = algbw * factor with
// nccl-tests' factors (all-reduce 2(n-1)/n; all-gather, reduce-scatter, all-to-all
// (n-1)/n; broadcast, reduce, send/recv 1), so a simulated table reads like a real one.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/enum_names.hpp"
#include "sim/core/units.hpp"

namespace strait::sim::network {

enum class CollectiveOp {
  kAllReduce,
  kAllGather,
  kReduceScatter,
  kAllToAll,
  kAllToAllV,
  kBroadcast,
  kReduce,
  kSendRecv,
};
inline constexpr int kCollectiveOpCount = 8;

/// Fitted factors of one operation (a calibration profile's "collectives.ops", written by
/// `strait calibrate fit`): the collective starts `base_latency` after it is issued (the
/// library's software cost) and its transfers carry bytes / scale(S), where scale(S) in
/// (0, 1] is the achieved fraction of the link model's bandwidth at message size S
/// (protocols and algorithms change with size, as NCCL's LL/LL128/Simple or MPI's eager
/// and rendezvous paths do), interpolated in log2(S) between points, clamped at the ends.
struct OpCalibration {
  Time base_latency = Time::zero();
  std::vector<double> log2_bytes;  // strictly increasing; empty: scale 1 at every size
  std::vector<double> scales;      // in (0, 1], beside log2_bytes

  /// scale(S) for a collective of `bytes` (nccl-tests size convention).
  double scale_at(double bytes) const;
  bool neutral() const { return base_latency == Time::zero() && log2_bytes.empty(); }
};
using CollectiveCalibration = std::array<OpCalibration, kCollectiveOpCount>;

enum class Algorithm {
  kAuto,  // chosen like NCCL does (see choose_algorithm)
  kRing,  // ring (all-reduce = reduce-scatter + all-gather rings), chain for broadcast/reduce
  kTree,  // NCCL's: chains in hosts, binary tree across hosts; up then down, in chunks
  kHierarchical,  // level by level: rings inside hosts and across hosts of a datacenter, a direct
                  // exchange across datacenters (2 phases instead of 2(d-1): latency-bound)
  kDirect,        // all-to-all(v): every pair at once
  kPairwise,      // all-to-all(v): n-1 rounds, round k sends to rank + k
  kNvls,          // all-reduce inside one host with NVLink SHARP: the NVSwitch reduces and
                  // multicasts, each GPU sends and receives about S once (one phase)
  kNvlsTree,      // all-reduce across hosts: NVLS reduce in each host, rings of the slices
                  // across hosts (one per local position), NVLS multicast in each host
  kCollNet,       // all-reduce across hosts with SHARP in the switches (NCCL's CollNet): each
                  // host reduces (NVLS, or a ring), every GPU's slice goes up once and the
                  // sum comes back once, then each host spreads it (NVLS, or a ring)
};

/// NCCL's protocols (topology::CommParameters holds their costs); kAuto: the fastest by
/// the analytical estimate, as NCCL's tuner picks per size.
enum class Protocol { kAuto, kLL, kLL128, kSimple };

// The names files, options and reports use (sim/core/enum_names.hpp).
constexpr auto enum_names(CollectiveOp) {
  return std::to_array<EnumName<CollectiveOp>>({
      {CollectiveOp::kAllReduce, "all_reduce"},
      {CollectiveOp::kAllGather, "all_gather"},
      {CollectiveOp::kReduceScatter, "reduce_scatter"},
      {CollectiveOp::kAllToAll, "all_to_all"},
      {CollectiveOp::kAllToAllV, "all_to_allv"},
      {CollectiveOp::kBroadcast, "broadcast"},
      {CollectiveOp::kReduce, "reduce"},
      {CollectiveOp::kSendRecv, "sendrecv"},
  });
}
constexpr auto enum_names(Algorithm) {
  return std::to_array<EnumName<Algorithm>>({
      {Algorithm::kAuto, "auto"},
      {Algorithm::kRing, "ring"},
      {Algorithm::kTree, "tree"},
      {Algorithm::kHierarchical, "hierarchical"},
      {Algorithm::kDirect, "direct"},
      {Algorithm::kPairwise, "pairwise"},
      {Algorithm::kNvls, "nvls"},
      {Algorithm::kNvlsTree, "nvls_tree"},
      {Algorithm::kCollNet, "collnet"},
  });
}
constexpr auto enum_names(Protocol) {
  return std::to_array<EnumName<Protocol>>({
      {Protocol::kAuto, "auto"},
      {Protocol::kLL, "ll"},
      {Protocol::kLL128, "ll128"},
      {Protocol::kSimple, "simple"},
  });
}
inline const char* to_string(CollectiveOp op) { return name_of(op); }
inline const char* to_string(Algorithm algo) { return name_of(algo); }
inline const char* to_string(Protocol protocol) { return name_of(protocol); }
/// An operation by its name or as nccl-tests and NCCL spell it (allreduce, alltoall, ...).
std::optional<CollectiveOp> parse_collective_op(std::string_view text);
/// The operations' names (without those spellings), for error messages and --help.
std::string collective_op_names();

/// nccl-tests' bus bandwidth factor for `op` on `n` ranks.
double busbw_factor(CollectiveOp op, int n);

/// One collective on a set of GPUs.
struct CollectiveSpec {
  CollectiveOp op = CollectiveOp::kAllReduce;
  Algorithm algorithm = Algorithm::kAuto;
  Protocol protocol = Protocol::kAuto;
  Bytes bytes = 0;        // nccl-tests size convention (see above)
  std::vector<int> gpus;  // participating GPUs; rank i of the collective runs on gpus[i]
  int root = 0;           // broadcast/reduce root, send/recv source (a rank index)
  int peer = 1;           // send/recv destination (a rank index)
  /// all-to-all-v only: bytes sent from rank i to rank j at [i * n + j]; `bytes` is ignored.
  std::vector<Bytes> send_matrix;
  /// all-to-all only, optional: rank i's send buffer when ranks differ (it sends
  /// send_bytes[i] / n to every rank); empty = every rank sends `bytes`.
  std::vector<Bytes> send_bytes;
  int priority = 0;      // engine priority class of its flows (0 first)
  int traffic_tag = -1;  // when >= 0, its traffic is also counted in Network::tagged(tag)
  double weight = 1.0;   // share within the priority class
};

}  // namespace strait::sim::network
