// Over 400 lines: ReplayGraph compacts and replays one concept; its shape deduplication, slices
// and group calls read the same arrays.

#include "sim/run/replay_graph.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "sim/core/error.hpp"
#include "sim/run/op_replay.hpp"
#include "sim/workload/collective_calls.hpp"

namespace strait::sim::run {
namespace {

using workload::Op;
using workload::OpKind;

void mix(std::size_t& h, std::uint64_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); }

// Hash of the fields a role shares (what OpShape::matches compares, call numbers aside: they
// follow from the ops but for the groups, which are the rank's).
std::size_t shape_hash(const std::vector<Op>& ops) {
  std::size_t h = ops.size();
  for (const auto& op : ops) {
    mix(h, static_cast<std::uint64_t>(op.kind));
    mix(h, static_cast<std::uint64_t>(op.name));
    mix(h, static_cast<std::uint64_t>(op.stream));
    mix(h, static_cast<std::uint64_t>(op.step));
    for (auto d : op.deps) mix(h, static_cast<std::uint64_t>(d));
    mix(h, 0xdeadULL);  // end of deps
    if (op.kind == OpKind::kCollective) {
      const auto& c = op.collective;
      mix(h, static_cast<std::uint64_t>(c.op));
      mix(h, static_cast<std::uint64_t>(c.algorithm));
      mix(h, static_cast<std::uint64_t>(c.comm_class));
      mix(h, static_cast<std::uint64_t>(c.priority));
      mix(h, c.sm_free ? 1 : 0);
    }
  }
  return h;
}

OpShape make_shape(const std::vector<Op>& ops, std::size_t hash) {
  OpShape s;
  const auto calls = workload::call_numbers(ops);
  s.hash = hash;
  const auto n = ops.size();
  s.kind.reserve(n);
  s.dep_offsets.assign(1, 0);
  std::vector<std::int32_t> succ_count(n, 0);  // successors of each op
  s.stream_prev.assign(n, -1);
  std::vector<std::int32_t> last_on_stream;
  for (std::size_t i = 0; i < n; ++i) {
    const Op& op = ops[i];
    s.kind.push_back(op.kind);
    s.name.push_back(op.name);
    s.stream.push_back(op.stream);
    s.step.push_back(op.step);
    if (op.kind == OpKind::kKernel) {
      s.slot.push_back(s.kernels++);
    } else {
      s.slot.push_back(static_cast<std::int32_t>(s.collectives.size()));
      const auto& c = op.collective;
      CollectiveShape cs{c.op, c.algorithm, c.comm_class, c.priority, c.sm_free, -1, calls[i]};
      if (c.op == network::CollectiveOp::kAllToAllV) cs.row = s.rows++;
      s.collectives.push_back(cs);
    }
    for (auto d : op.deps) {
      s.deps.push_back(d);
      ++succ_count[static_cast<std::size_t>(d)];
    }
    s.dep_offsets.push_back(static_cast<std::int32_t>(s.deps.size()));
    const auto st = static_cast<std::size_t>(op.stream);
    if (st >= s.stream_ops.size()) {
      s.stream_ops.resize(st + 1);
      last_on_stream.resize(st + 1, -1);
    }
    s.stream_prev[i] = last_on_stream[st];
    last_on_stream[st] = static_cast<std::int32_t>(i);
    s.stream_ops[st].push_back(static_cast<std::int32_t>(i));
  }
  s.succ_offsets.reserve(n + 1);
  s.succ_offsets.push_back(0);
  for (std::size_t i = 0; i < n; ++i) s.succ_offsets.push_back(s.succ_offsets[i] + succ_count[i]);
  s.succ.resize(static_cast<std::size_t>(s.succ_offsets.back()));
  std::vector<std::int32_t> fill(s.succ_offsets.begin(),
                                 s.succ_offsets.begin() + static_cast<std::ptrdiff_t>(n));
  for (std::size_t i = 0; i < n; ++i) {
    for (auto d : ops[i].deps)
      s.succ[static_cast<std::size_t>(fill[static_cast<std::size_t>(d)]++)] =
          static_cast<std::int32_t>(i);
  }
  s.hands_over.assign(n, -1);
  for (const auto& on_stream : s.stream_ops) {
    for (std::size_t k = 0; k + 1 < on_stream.size(); ++k) {
      const auto i = static_cast<std::size_t>(on_stream[k]);
      const auto nx = on_stream[k + 1];
      const auto x = static_cast<std::size_t>(nx);
      if (s.kind[i] != OpKind::kKernel || s.kind[x] != OpKind::kKernel) continue;
      bool alone = true;  // nothing but nx depends on i, and nx on nothing but i
      for (auto j = s.succ_offsets[i]; j < s.succ_offsets[i + 1]; ++j)
        alone = alone && s.succ[static_cast<std::size_t>(j)] == nx;
      for (auto j = s.dep_offsets[x]; j < s.dep_offsets[x + 1]; ++j)
        alone = alone && s.deps[static_cast<std::size_t>(j)] == on_stream[k];
      if (alone) s.hands_over[i] = nx;
    }
  }
  return s;
}

// `ops` (of shape `built`) with runs of kernels merged (replay_graph.hpp): kernel i merges
// into the next op on its stream when that is a kernel of the same step depending on
// nothing but i, and no other op depends on i. A merged op sits at its run's last index and
// takes the run's first dependencies (the others are inside the run); no op outside a run
// depends on the run's inner ops, so every dependency maps to a merged op. Out: per merged
// op, the built ops it stands for; per built kernel slot, its merged kernel slot.
std::vector<Op> merge_kernel_runs(const OpShape& built, const std::vector<Op>& ops,
                                  std::vector<std::int32_t>& runs,
                                  std::vector<std::int32_t>& merged_slot) {
  const auto n = ops.size();
  constexpr std::int32_t kNone = -1;
  const auto& next = built.hands_over;  // i merges into next[i] within a step
  std::vector<char> merges(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    const auto nx = next[i];
    merges[i] = nx != kNone && built.step[static_cast<std::size_t>(nx)] == built.step[i] ? 1 : 0;
  }
  // Each built op's merged index (a run's members take its last op's) and each run's first op.
  std::vector<std::int32_t> index(n, kNone), first(n, kNone);
  std::int32_t kept = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (first[i] == kNone) first[i] = static_cast<std::int32_t>(i);
    if (merges[i]) {
      first[static_cast<std::size_t>(next[i])] = first[i];
    } else {
      index[i] = kept++;
    }
  }
  for (std::size_t i = n; i-- > 0;) {
    if (merges[i]) index[i] = index[static_cast<std::size_t>(next[i])];
  }
  std::vector<Op> out;
  out.reserve(static_cast<std::size_t>(kept));
  runs.assign(static_cast<std::size_t>(kept), 0);
  merged_slot.clear();
  std::vector<std::int32_t> kernel_slot(n, kNone);  // merged kernel slot of each kept kernel
  std::int32_t kernels = 0;
  for (std::size_t i = 0; i < n; ++i) {
    ++runs[static_cast<std::size_t>(index[i])];
    if (merges[i]) continue;
    Op m = ops[i];
    m.deps.clear();
    for (auto d : ops[static_cast<std::size_t>(first[i])].deps)
      m.deps.push_back(index[static_cast<std::size_t>(d)]);
    if (m.kind == OpKind::kKernel) kernel_slot[i] = kernels++;
    out.push_back(std::move(m));
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (ops[i].kind != OpKind::kKernel) continue;
    auto j = i;
    while (merges[j]) j = static_cast<std::size_t>(next[j]);
    merged_slot.push_back(kernel_slot[j]);
  }
  return out;
}

}  // namespace

ReplayGraph::ReplayGraph(network::NetworkMode mode, bool merge_kernel_runs)
    : mode_(mode), merge_(merge_kernel_runs) {
  if (merge_ && mode_ != network::NetworkMode::kAnalytical)
    throw Error("replay graph: kernel runs are merged for the analytical replay only");
}

bool OpShape::matches(const std::vector<Op>& ops, const std::vector<std::int32_t>& calls) const {
  if (ops.size() != kind.size()) return false;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const Op& op = ops[i];
    if (op.kind != kind[i] || op.name != name[i] || op.stream != stream[i] || op.step != step[i])
      return false;
    const auto d0 = static_cast<std::size_t>(dep_offsets[i]);
    const auto d1 = static_cast<std::size_t>(dep_offsets[i + 1]);
    if (op.deps.size() != d1 - d0) return false;
    for (std::size_t k = 0; k < op.deps.size(); ++k) {
      if (op.deps[k] != deps[d0 + k]) return false;
    }
    if (op.kind == OpKind::kCollective) {
      const auto& c = op.collective;
      const auto& cs = collectives[static_cast<std::size_t>(slot[i])];
      if (c.op != cs.op || c.algorithm != cs.algorithm || c.comm_class != cs.comm_class ||
          c.priority != cs.priority || c.sm_free != cs.sm_free || calls[i] != cs.call)
        return false;
    }
  }
  return true;
}

void ReplayGraph::finish(const workload::OpGraph& header) {
  names_ = header.names;
  streams_ = header.streams;
  groups_ = header.groups;
  steps_ = header.steps;
  if (ranks_.size() < header.ranks.size()) ranks_.resize(header.ranks.size());
  for (std::size_t r = 0; r < header.ranks.size(); ++r) {
    if (ranks_[r].shape >= 0) continue;
    ranks_[r].gpu = header.ranks[r].gpu;
    ranks_[r].samples = header.ranks[r].samples;
    ranks_[r].op_base = static_cast<std::int64_t>(replay_ops_);
    ranks_[r].kernel_base = kernels_;
    ranks_[r].collective_base = collectives_;
    ranks_[r].row_base = static_cast<std::int64_t>(rows_.size());
  }
}

void ReplayGraph::reserve(std::size_t ranks, std::size_t per_rank) {
  // Kernels and collectives split as in the first shape (all ops kernels before there is
  // one), whose replay ops (fewer than `per_rank` when kernel runs are merged) are counted.
  // An eighth more for ranks of larger roles: reserved pages cost no memory until used,
  // while one regrowth would copy the arrays at twice their size.
  const OpShape* first = !shapes_.empty() && shapes_.front().ops() > 0 ? &shapes_.front() : nullptr;
  if (first) per_rank = first->ops();
  const std::size_t ops = ranks * per_rank + ranks * per_rank / 8;
  std::size_t kernels = ops, collectives = 0;
  if (first) {
    kernels = ops * static_cast<std::size_t>(first->kernels) / first->ops();
    collectives = ops - kernels;
  }
  if (mode_ == network::NetworkMode::kAnalytical) {
    timed_.reserve(timed_.size() + kernels);
  } else {
    flow_.reserve(flow_.size() + kernels);
  }
  bytes_.reserve(bytes_.size() + collectives);
  group_.reserve(group_.size() + collectives);
}

std::int32_t ReplayGraph::shape_of(const std::vector<Op>& ops) {
  const auto& built = merge_ ? built_ : shapes_;
  const auto calls = workload::call_numbers(ops);
  // Ranks come in order and most are of the previous rank's role: try its shape first.
  if (last_shape_ >= 0 && built[static_cast<std::size_t>(last_shape_)].matches(ops, calls))
    return last_shape_;
  const std::size_t h = shape_hash(ops);
  const auto [lo, hi] = shape_index_.equal_range(h);
  for (auto it = lo; it != hi; ++it) {
    if (built[static_cast<std::size_t>(it->second)].matches(ops, calls))
      return last_shape_ = it->second;
  }
  const auto id = static_cast<std::int32_t>(shapes_.size());
  if (merge_) {
    built_.push_back(make_shape(ops, h));
    std::vector<std::int32_t> runs;
    merged_slot_.emplace_back();
    shapes_.push_back(
        make_shape(merge_kernel_runs(built_.back(), ops, runs, merged_slot_.back()), h));
    shapes_.back().runs = std::move(runs);
  } else {
    shapes_.push_back(make_shape(ops, h));
  }
  shape_index_.emplace(h, id);
  return last_shape_ = id;
}

namespace {

// Every dependency of rank `rank`'s ops names an earlier op.
void check_dependencies(int rank, const std::vector<Op>& ops) {
  for (std::size_t i = 0; i < ops.size(); ++i) {
    for (auto d : ops[i].deps) {
      if (d < 0 || static_cast<std::size_t>(d) >= i) {
        throw Error(fmt::format(
            "op graph: rank {} op {} depends on op {}, which is not an earlier op", rank, i, d));
      }
    }
  }
}

// Whether the kernels of `ops` are `work`, in order: then they share its costs.
bool same_kernels(const std::vector<workload::Kernel>& work, const std::vector<Op>& ops) {
  std::size_t built_kernel = 0;
  for (const Op& op : ops) {
    if (op.kind != OpKind::kKernel) continue;
    if (built_kernel >= work.size() || !(work[built_kernel] == op.kernel)) return false;
    ++built_kernel;
  }
  return built_kernel == work.size();
}

// The cost of `kernel` in built kernel slot k: the slot's when it last costed the same
// kernel, else costed now and kept there.
const cost::KernelCost& slot_cost(std::vector<workload::Kernel>& work,
                                  std::vector<cost::KernelCost>& costs, std::size_t k,
                                  const workload::Kernel& kernel,
                                  const cost::CalibrationProfile& profile) {
  if (k == work.size()) {
    costs.push_back(cost::CostModel::cost(kernel, profile));
    work.push_back(kernel);
  } else if (!(work[k] == kernel)) {
    costs[k] = cost::CostModel::cost(kernel, profile);
    work[k] = kernel;
  }
  return costs[k];
}

}  // namespace

void ReplayGraph::add_rank(int rank, const workload::RankOps& ro,
                           const cost::CalibrationProfile& profile, bool keep_ops) {
  const auto& ops = ro.ops;
  check_dependencies(rank, ops);
  if (rank < 0) throw Error(fmt::format("op graph: rank {} is negative", rank));
  if (static_cast<std::size_t>(rank) >= ranks_.size())
    ranks_.resize(static_cast<std::size_t>(rank) + 1);
  ReplayRank& r = ranks_[static_cast<std::size_t>(rank)];
  r.gpu = ro.gpu;
  r.samples = ro.samples;
  r.op_base = static_cast<std::int64_t>(replay_ops_);
  r.kernel_base = kernels_;
  r.collective_base = collectives_;
  r.row_base = static_cast<std::int64_t>(rows_.size());
  r.shape = shape_of(ops);
  total_ops_ += ops.size();
  const OpShape& shape = shapes_[static_cast<std::size_t>(r.shape)];
  replay_ops_ += shape.ops();
  if (costs_.size() <= static_cast<std::size_t>(r.shape)) costs_.resize(shapes_.size());
  CostMemo& memo = costs_[static_cast<std::size_t>(r.shape)];
  if (memo.profile != &profile) {
    memo.profile = &profile;
    memo.work.clear();
    memo.cost.clear();
    memo.kernel_base = -1;
  }
  // Kernels all equal to the last rank of this shape's: its costs are this rank's too.
  const bool shared = memo.kernel_base >= 0 && same_kernels(memo.work, ops);
  if (shared) r.kernel_base = memo.kernel_base;
  // Merged: each kernel's duration adds to its run's.
  const std::int32_t* merged_slot =
      merge_ ? merged_slot_[static_cast<std::size_t>(r.shape)].data() : nullptr;
  if (merge_ && !shared) timed_.resize(timed_.size() + static_cast<std::size_t>(shape.kernels));
  std::size_t built_kernel = 0;
  for (const Op& op : ops) {
    if (op.kind == OpKind::kKernel && shared) {
      r.flops += op.kernel.flops;
    } else if (op.kind == OpKind::kKernel) {
      const std::size_t k = built_kernel++;
      const cost::KernelCost& c = slot_cost(memo.work, memo.cost, k, op.kernel, profile);
      if (merged_slot) {
        timed_[static_cast<std::size_t>(r.kernel_base + merged_slot[k])] += c.duration();
      } else if (mode_ == network::NetworkMode::kAnalytical) {
        timed_.push_back(c.duration());
      } else {
        flow_.push_back(cost::flow_kernel(c));
      }
      r.flops += op.kernel.flops;
    } else {
      bytes_.push_back(op.collective.bytes);
      group_.push_back(op.collective.group);
      if (op.collective.op == network::CollectiveOp::kAllToAllV)
        rows_.push_back(op.collective.send_row);
      ++collectives_;
    }
  }
  if (!shared) {
    kernels_ += shape.kernels;
    memo.kernel_base = r.kernel_base;
  }
  if (keep_ops) kept_[rank] = ops;
}

const std::vector<Op>* ReplayGraph::kept_ops(int r) const {
  const auto it = kept_.find(r);
  return it == kept_.end() ? nullptr : &it->second;
}

// The replay options' side of the graph (op_replay.hpp): which ranks keep their ops for a
// trace, and whether kernel runs merge for the dataflow order.

bool traced_rank(const ReplayOptions& options, int rank) {
  if (!options.timeline) return false;
  if (options.trace_ranks.empty()) return true;
  return std::find(options.trace_ranks.begin(), options.trace_ranks.end(), rank) !=
         options.trace_ranks.end();
}

std::int32_t ReplayGraph::stream_index(const std::string& name) const {
  const auto it = std::find(streams_.begin(), streams_.end(), name);
  return it == streams_.end() ? -1 : static_cast<std::int32_t>(it - streams_.begin());
}

bool runs_in_dataflow_order(const ReplayOptions& options) {
  return options.mode == network::NetworkMode::kAnalytical && !options.timeline &&
         !options.host_progress;
}

ReplayOptions with_host_progress(ReplayOptions options, const topology::Cluster& cluster,
                                 const cost::CostModel& cost) {
  const auto profiled = cost.gpu_types();
  for (const auto& type : cluster.gpu_types()) {
    if (std::binary_search(profiled.begin(), profiled.end(), type) &&
        cost.device(type).collective_progress == cost::CollectiveProgress::kHost)
      options.host_progress = true;
  }
  return options;
}

ReplayGraph replay_graph(const workload::OpGraph& graph, const topology::Cluster& cluster,
                         const cost::CostModel& cost, const ReplayOptions& options) {
  ReplayGraph out(options.mode, runs_in_dataflow_order(with_host_progress(options, cluster, cost)));
  for (std::size_t r = 0; r < graph.ranks.size(); ++r) {
    const auto& ro = graph.ranks[r];
    const auto rank = static_cast<int>(r);
    out.add_rank(rank, ro, cost.profile(cluster.gpu(ro.gpu).type), traced_rank(options, rank));
  }
  out.finish(graph);
  return out;
}

}  // namespace strait::sim::run
