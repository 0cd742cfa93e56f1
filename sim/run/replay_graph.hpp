#pragma once
// ReplayGraph: the op graph as the replay reads it, compact enough for 131,072 ranks.
//
// Why. A workload::OpGraph keeps every op of every rank whole (a KernelWork and a
// CollectiveCall side by side, ~200 bytes): 28 million ops and 7 GiB at 131,072 GPUs. Ranks
// of one role issue the same ops with the same dependencies on the same streams; they
// differ only in what their batch decides (kernel costs, collective bytes, send rows) and
// in which group of a dimension they call. So a ReplayGraph keeps
//   - one OpShape per distinct op sequence (a role): per op its kind, name, stream, step,
//     dependencies and successors (CSR), its predecessor on its stream, and for a
//     collective the operation, algorithm, class, priority, SM use and call number on its
//     group (the k-th collective a rank issues on a group is the group's call k);
//   - per rank, in arrays over all ranks (offsets, no pointers): each kernel's cost as the
//     replay needs it (analytical mode: its duration; flow mode: compute and memory seconds
//     and launch overhead) and its flops, each collective's group and bytes, and each
//     all_to_allv's send row.
// Kernels are costed as their rank is added, so a rank's KernelWork lives only while it is
// built (build_op_graph's sink hands ranks over one at a time). Traced ranks also keep
// their whole ops: the trace shows each kernel's flops, bytes and family.
//
// A graph for the dataflow replay (analytical mode, untraced; op_replay.hpp) merges runs of
// kernels: a kernel whose only successor is the next op on its stream, a kernel of the same
// step that depends on nothing else, hands over to it at the instant it ends, so the two
// replay as one kernel lasting their sum (whole picoseconds: the sum is exact). Every
// figure of the replay is unchanged (tests/run/replay_graph_test.cpp); an HSTU rank's 290
// kernels of two steps become 40, and the replay's per-op state and kernel durations shrink
// as much.

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "sim/core/huge_pages.hpp"
#include "sim/cost/cost_model.hpp"
#include "sim/cost/gpu_model.hpp"
#include "sim/network/network.hpp"
#include "sim/workload/op_graph.hpp"

namespace strait::sim::run {

/// The shared fields of a collective op (those every rank of a role issues alike).
struct CollectiveShape {
  network::CollectiveOp op = network::CollectiveOp::kAllReduce;
  network::Algorithm algorithm = network::Algorithm::kAuto;
  workload::CommClass comm_class = workload::CommClass::kDenseSync;
  std::int32_t priority = 0;
  bool sm_free = false;
  std::int32_t row = -1;  // all_to_allv: index among the rank's send rows; else -1
  std::int32_t call = 0;  // its call number on its group (sim/workload/collective_calls.hpp)
};

/// One role's op sequence: what all ranks of the role share, op by op.
struct OpShape {
  std::vector<workload::OpKind> kind;
  std::vector<std::int32_t> name, stream, step;
  std::vector<std::int32_t> slot;  // index among the rank's kernels, or its collectives
  std::vector<std::int32_t> dep_offsets, deps;        // CSR: deps of op i
  std::vector<std::int32_t> succ_offsets, succ;       // CSR: ops that depend on op i
  std::vector<std::int32_t> stream_prev;              // previous op on op i's stream, or -1
  std::vector<std::vector<std::int32_t>> stream_ops;  // op indices per stream, in order
  std::vector<CollectiveShape> collectives;           // by collective slot
  std::vector<std::int32_t> runs;  // merged graphs: the built ops op i stands for; else empty
  // Kernel i hands over to hands_over[i], the next op on its stream, when that is a kernel
  // depending on nothing but i and no other op depends on i (kNone = -1 otherwise): the
  // next starts the instant i ends, and nothing else sees i end. Kernel runs merge along
  // these (within a step), and flow mode's solo runs follow them (detail/solo_runs.hpp).
  std::vector<std::int32_t> hands_over;
  std::int32_t kernels = 0;
  std::int32_t rows = 0;  // all_to_allv send rows per rank
  std::size_t hash = 0;

  std::size_t ops() const { return kind.size(); }
  /// Whether `ops`, whose call numbers are `calls` (workload::call_numbers), issue this
  /// shape (every shared field equal).
  bool matches(const std::vector<workload::Op>& ops, const std::vector<std::int32_t>& calls) const;
  /// How many built ops op i stands for (1 unless kernel runs were merged).
  std::int32_t run(std::size_t i) const { return runs.empty() ? 1 : runs[i]; }
};

struct ReplayRank {
  int gpu = 0;
  std::int64_t samples = 0;
  std::int32_t shape = -1;  // -1: a rank without ops
  double flops = 0;         // of all its kernels (every kernel of a rank runs once)
  // Offsets of this rank's entries in the graph's per-op, per-kernel, per-collective and
  // per-row arrays.
  std::int64_t op_base = 0, kernel_base = 0, collective_base = 0, row_base = 0;
};

class ReplayGraph {
 public:
  /// `mode` decides how kernels are costed (a duration, or a flow activity's loads).
  /// `merge_kernel_runs` (analytical mode only): merge runs of kernels for the dataflow
  /// replay (see above); such a graph cannot be traced.
  explicit ReplayGraph(network::NetworkMode mode, bool merge_kernel_runs = false);

  /// Adds rank `rank`'s ops (checked: dependencies point backwards), costing its kernels
  /// with `profile`. `keep_ops`: keep the whole ops too (traced ranks).
  void add_rank(int rank, const workload::RankOps& ops, const cost::CalibrationProfile& profile,
                bool keep_ops);
  /// Reserves room for about `ranks` ranks of `per_rank` ops each, or of the first shape's
  /// replay ops once there is one (no regrowth at scale).
  void reserve(std::size_t ranks, std::size_t per_rank);
  /// Takes the graph's names, streams, groups, steps and ranks from `header` (its ops are
  /// not read): ranks never added keep their GPU and samples and have no ops.
  void finish(const workload::OpGraph& header);

  network::NetworkMode mode() const { return mode_; }
  bool merges_kernel_runs() const { return merge_; }
  const std::vector<std::string>& names() const { return names_; }
  const std::vector<std::string>& streams() const { return streams_; }
  /// The index of stream `name`, or -1 where no op runs on it.
  std::int32_t stream_index(const std::string& name) const;
  const std::vector<workload::ProcessGroup>& groups() const { return groups_; }
  int steps() const { return steps_; }
  const HugeVector<ReplayRank>& ranks() const { return ranks_; }
  const OpShape& shape(const ReplayRank& r) const {
    return shapes_[static_cast<std::size_t>(r.shape)];
  }
  std::size_t shape_count() const { return shapes_.size(); }
  /// Ops as built (every kernel and collective of every rank).
  std::size_t total_ops() const { return total_ops_; }
  /// Ops the replay keeps state for: total_ops() less the kernels merged into others.
  std::size_t replay_ops() const { return replay_ops_; }
  /// Kernel costs stored (durations or flow kernels): ranks whose kernels all equal the
  /// previous rank of their shape's share its costs (see CostMemo).
  std::size_t kernel_costs() const { return static_cast<std::size_t>(kernels_); }
  /// Ops of rank r, or empty when r keeps no ops (see add_rank).
  const std::vector<workload::Op>* kept_ops(int r) const;

  // Per-rank values, at the rank's offset plus the op's slot.
  /// Analytical mode: the rank's kernel durations by slot.
  const Time* kernel_durations(const ReplayRank& r) const { return timed_.data() + r.kernel_base; }
  /// Flow mode: the rank's kernels by slot (as the GPU model runs them; in analytical mode
  /// a kernel is its duration alone).
  const cost::FlowKernel* flow_kernels(const ReplayRank& r) const {
    return flow_.data() + r.kernel_base;
  }
  Time kernel_duration(const ReplayRank& r, std::int32_t slot) const {
    return kernel_durations(r)[slot];
  }
  const cost::FlowKernel& flow_kernel(const ReplayRank& r, std::int32_t slot) const {
    return flow_kernels(r)[slot];
  }
  Bytes collective_bytes(const ReplayRank& r, std::int32_t slot) const {
    return bytes_[static_cast<std::size_t>(r.collective_base + slot)];
  }
  std::int32_t collective_group(const ReplayRank& r, std::int32_t slot) const {
    return group_[static_cast<std::size_t>(r.collective_base + slot)];
  }
  const workload::SendRow& send_row(const ReplayRank& r, std::int32_t row) const {
    return rows_[static_cast<std::size_t>(r.row_base + row)];
  }

 private:
  std::int32_t shape_of(const std::vector<workload::Op>& ops);

  network::NetworkMode mode_;
  bool merge_ = false;
  std::vector<std::string> names_, streams_;
  std::vector<workload::ProcessGroup> groups_;
  int steps_ = 1;
  std::vector<OpShape> shapes_;
  // Merged graphs: each shape as built (what ranks are matched against) and, by the built
  // shape's kernel slot, the merged kernel it adds to.
  std::vector<OpShape> built_;
  std::vector<std::vector<std::int32_t>> merged_slot_;
  // Per shape, by built kernel slot: the last kernel costed there and its cost. A kernel
  // equal to it (the other rank of a context-parallel pair, which trains on the same
  // sequences; kernels no batch changes) takes that cost: a cost is a function of the
  // kernel and the profile alone. Every slot holds the last rank of the shape added, whose
  // costs start at `kernel_base`: a rank whose kernels all equal them shares those costs
  // instead of storing its own (half the kernel costs of an HSTU job with context-parallel
  // pairs, and the pair's ranks, which run in step, read the same cache lines).
  struct CostMemo {
    const cost::CalibrationProfile* profile = nullptr;
    std::vector<workload::Kernel> work;
    std::vector<cost::KernelCost> cost;
    std::int64_t kernel_base = -1;  // -1: no rank's costs to share
  };
  std::vector<CostMemo> costs_;
  std::unordered_multimap<std::size_t, std::int32_t> shape_index_;  // hash -> shape
  std::int32_t last_shape_ = -1;                                    // the last rank's
  HugeVector<ReplayRank> ranks_;
  std::size_t total_ops_ = 0, replay_ops_ = 0;
  std::int64_t kernels_ = 0, collectives_ = 0;
  HugeVector<Time> timed_;             // analytical mode, per kernel
  HugeVector<cost::FlowKernel> flow_;  // flow mode, per kernel
  HugeVector<Bytes> bytes_;            // per collective
  HugeVector<std::int32_t> group_;     // per collective
  std::vector<workload::SendRow> rows_;
  std::unordered_map<int, std::vector<workload::Op>> kept_;
};

}  // namespace strait::sim::run
