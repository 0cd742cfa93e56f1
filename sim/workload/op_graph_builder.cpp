#include "sim/workload/op_graph_builder.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "sim/core/rng.hpp"
#include "sim/cost/kernel_shapes.hpp"
#include "sim/workload/batch.hpp"
#include "sim/workload/detail/dense_stack.hpp"
#include "sim/workload/detail/rank_memory.hpp"
#include "sim/workload/detail/sparse_traffic.hpp"
#include "sim/workload/work_estimate.hpp"

namespace strait::sim::workload {
namespace {

using detail::CommGroup;
using detail::DenseStack;
using detail::SparseTraffic;
using network::Algorithm;
using network::CollectiveOp;

struct Streams {
  std::int32_t compute, sparse_compute, embedding_comm, dense_comm, cp_comm, xdc_comm;
  std::int32_t host_comm;  // host-reduced embedding dists (their own process groups)
  std::vector<std::int32_t> replica_comm;  // one stream per sync that may be in flight
};

struct Names {
  std::int32_t input_dist, lookup, output_dist, grad_dist, update, replica_sync, optimizer;
  std::int32_t output_dist_host, output_dist_cross, grad_dist_cross, grad_dist_host;
  std::int32_t expert_sync, dp_tables_sync;
  std::vector<std::int32_t> stack;             // DenseStack name -> graph name
  std::vector<std::int32_t> ddp, rs, xdc, ag;  // per bucket
  std::vector<std::int32_t> fsdp_ag_fwd, fsdp_ag_bwd, fsdp_rs, fsdp_ar;  // per layer
};

/// Everything shared by all ranks.
struct Shared {
  Shared(const TrainingScenario& scenario, int host_size)
      : sc(scenario),
        layout(scenario.layout),
        sched(scenario.plan.schedule),
        stack(scenario.model, scenario.plan),
        map(ShardMap::build(scenario.model, scenario.plan, scenario.layout.sparse.size,
                            host_size)) {}

  const TrainingScenario& sc;
  const Layout& layout;
  const Schedule& sched;
  DenseStack stack;
  ShardMap map;
  Streams st{};
  Names nm;
  int steps = 1;
  int lookahead = 0;
  int dcs = 1;                                     // datacenters among the ranks
  std::vector<std::vector<ReplicaBatch>> sampled;  // [step][replica], when sampled here
  // The steps' batches ([step][replica]): `sampled` or the caller's (OpGraphOptions).
  const std::vector<std::vector<ReplicaBatch>>* batches = &sampled;
  mutable std::vector<detail::LayerWorkMemo> layer_work;  // [step]: the last shape's layers
  std::vector<double> slowdown;                           // per rank
  bool flat_output = true;    // some sharded table's output takes the group-wide dist
  bool host_reduced = false;  // some table's output is reduced inside host blocks first
};

/// Gradient bytes of the data-parallel tables and of the hybrid tables' hot rows, at
/// `bytes_per_element` each: what joins the dense gradients' sync.
double data_parallel_bytes(const ShardMap& map, const ModelConfig& model,
                           double bytes_per_element) {
  double bytes = 0;
  for (int table : map.data_parallel_tables) {
    const auto& tb = model.tables[static_cast<std::size_t>(table)];
    bytes += static_cast<double>(tb.rows) * tb.dim * bytes_per_element;
  }
  for (std::size_t table = 0; table < map.hot_rows.size(); ++table) {
    bytes += static_cast<double>(map.hot_rows[table]) * model.tables[table].dim * bytes_per_element;
  }
  return bytes;
}

class RankBuilder {
 public:
  RankBuilder(const Shared& sh, RankOps& out, const std::vector<const SparseTraffic*>& traffic,
              int member)
      : sh_(sh), out_(out), traffic_(traffic), member_(member), rank_(out.rank) {}

  void build() {
    std::vector<std::int32_t> sparse_ready(static_cast<std::size_t>(sh_.steps), -1);
    if (sh_.host_reduced) host_ready_.assign(static_cast<std::size_t>(sh_.steps), -1);
    // Input dists issued ahead (pipelined "input_dist"): the lookup of their step comes later.
    std::vector<std::int32_t> input_ready(static_cast<std::size_t>(sh_.steps), kNotIssued);
    const bool ahead_input_only = sh_.sc.plan.schedule.pipelined == Pipelined::kInputDist;
    auto run_ahead = [&](int step) {
      if (ahead_input_only) {
        input_ready[static_cast<std::size_t>(step)] = input_dist(step, -1);
      } else {
        sparse_ready[static_cast<std::size_t>(step)] = sparse_forward(step);
      }
    };
    for (int s = 0; s < std::min(sh_.lookahead, sh_.steps); ++s) run_ahead(s);
    std::vector<std::int32_t> pending_xdc;  // overlapped sync: waited on by the next optimizer
    std::int32_t prev_opt = -1;
    for (int s = 0; s < sh_.steps; ++s) {
      noise_ = Rng(sh_.sc.seed)
                   .fork(0x5EEDULL)
                   .fork(static_cast<std::uint64_t>(rank_))
                   .fork(static_cast<std::uint64_t>(s));
      const int ahead = s + sh_.lookahead;
      if (sh_.lookahead == 0) {
        sparse_ready[static_cast<std::size_t>(s)] = sparse_forward(s, prev_opt);
      } else {
        if (ahead < sh_.steps) run_ahead(ahead);
        if (ahead_input_only) {
          sparse_ready[static_cast<std::size_t>(s)] =
              sparse_forward(s, prev_opt, input_ready[static_cast<std::size_t>(s)]);
        }
      }
      prev_opt = dense_step(s, sparse_ready[static_cast<std::size_t>(s)], prev_opt, pending_xdc);
    }
  }

 private:
  // A new op at the end of the rank's ops (built in place: 36 million at 131,072 ranks).
  Op& add(OpKind kind, std::int32_t name, std::int32_t stream, int step, StepPhase phase,
          std::initializer_list<std::int32_t> deps) {
    Op& op = out_.ops.emplace_back();
    op.kind = kind;
    op.name = name;
    op.stream = stream;
    op.step = step;
    op.phase = phase;
    for (auto d : deps) {
      if (d >= 0) op.deps.push_back(d);
    }
    return op;
  }
  std::int32_t last_index() const { return static_cast<std::int32_t>(out_.ops.size()) - 1; }

  std::int32_t kernel(const Kernel& k, std::int32_t name, std::int32_t stream, int step,
                      StepPhase phase, std::initializer_list<std::int32_t> deps) {
    double m = sh_.slowdown[static_cast<std::size_t>(rank_)];
    const double sigma = sh_.sc.hardware.kernel_sigma;
    if (sigma > 0) m *= noise_.lognormal(-sigma * sigma / 2, sigma);
    Kernel& work = add(OpKind::kKernel, name, stream, step, phase, deps).kernel;
    work = k;
    // Scaled from `k`, not from the copy just stored (a load straddling two fresh stores
    // stalls store forwarding: a fifth of this function's time at 131,072 ranks).
    work.flops = k.flops * m;
    work.hbm_bytes = k.hbm_bytes * m;
    return last_index();
  }

  std::int32_t collective(CollectiveOp cop, int group, Bytes bytes, CommClass cls,
                          std::int32_t name, std::int32_t stream, int step, StepPhase phase,
                          std::initializer_list<std::int32_t> deps,
                          Algorithm algo = Algorithm::kAuto, SendRow row = {}) {
    CollectiveCall& c = add(OpKind::kCollective, name, stream, step, phase, deps).collective;
    c.op = cop;
    c.algorithm = algo;
    c.group = group;
    c.bytes = bytes;
    c.comm_class = cls;
    c.priority = sh_.sched.priority[static_cast<std::size_t>(cls)];
    c.sm_free = sh_.sched.sm_free;
    if (!row.empty()) {
      bool uniform = true;
      for (auto b : row) uniform &= b == row.front();
      Bytes total = 0;
      for (auto b : row) total += b;
      c.bytes = total;
      if (uniform) {
        c.op = CollectiveOp::kAllToAll;
      } else {
        c.op = CollectiveOp::kAllToAllV;
        c.send_row = std::move(row);  // shared with the group's members that send the same
      }
    }
    return last_index();
  }

  int sparse_group() const { return sh_.layout.sparse.block[static_cast<std::size_t>(rank_)]; }
  bool sparse_comm() const { return sh_.layout.sparse.size > 1 && sh_.map.has_sharded(); }

  static constexpr std::int32_t kNotIssued = -2;

  /// The ids' all-to-all of `step` after `after`; -1 when there is none.
  std::int32_t input_dist(int step, std::int32_t after) {
    if (!sparse_comm()) return -1;
    const SparseTraffic& t = *traffic_[static_cast<std::size_t>(step)];
    if (const auto each = t.uniform_input(member_)) {
      return collective(CollectiveOp::kAllToAll, sparse_group(), *each * sh_.layout.sparse.size,
                        CommClass::kInputDist, sh_.nm.input_dist, sh_.st.embedding_comm, step,
                        StepPhase::kInput, {after});
    }
    return collective(CollectiveOp::kAllToAllV, sparse_group(), 0, CommClass::kInputDist,
                      sh_.nm.input_dist, sh_.st.embedding_comm, step, StepPhase::kInput, {after},
                      Algorithm::kAuto, t.input_row(member_));
  }

  /// Input dist (unless `input` was issued ahead), lookup, output dist of `step`; returns
  /// the op the dense forward waits on.
  std::int32_t sparse_forward(int step, std::int32_t after = -1, std::int32_t input = kNotIssued) {
    const SparseTraffic& t = *traffic_[static_cast<std::size_t>(step)];
    const auto& nm = sh_.nm;
    const std::int32_t in = input == kNotIssued ? input_dist(step, after) : input;
    const bool ahead = sh_.lookahead > 0 && input == kNotIssued;
    const std::int32_t stream = ahead ? sh_.st.sparse_compute : sh_.st.compute;
    const std::int32_t look =
        kernel(t.lookup(member_), nm.lookup, stream, step, StepPhase::kInput, {in, after});
    if (!sparse_comm()) return look;
    if (sh_.host_reduced) {
      // Host-reduced tables: their own process groups, so their own stream (TorchRec's TwRw
      // dist runs on the intra- and cross-node groups' communicators beside the world's). A
      // block without such tables (all its members alike) skips the reduce-scatter.
      const auto r = static_cast<std::size_t>(rank_);
      std::int32_t host = look;
      if (const Bytes b = t.host_reduce_bytes(member_, false); b > 0) {
        host = collective(CollectiveOp::kReduceScatter, sh_.layout.sparse_host.block[r], b,
                          CommClass::kOutputDist, nm.output_dist_host, sh_.st.host_comm, step,
                          StepPhase::kForward, {look});
      }
      if (sh_.layout.sparse_host.replica[r] >= 0) {
        host =
            collective(CollectiveOp::kAllToAllV, sh_.layout.sparse_host.replica[r], 0,
                       CommClass::kOutputDist, nm.output_dist_cross, sh_.st.host_comm, step,
                       StepPhase::kForward, {host}, Algorithm::kAuto, t.cross_output_row(member_));
      }
      host_ready_[static_cast<std::size_t>(step)] = host;
    }
    if (!sh_.flat_output) return look;
    return collective(CollectiveOp::kAllToAllV, sparse_group(), 0, CommClass::kOutputDist,
                      nm.output_dist, sh_.st.embedding_comm, step, StepPhase::kForward, {look},
                      Algorithm::kAuto, t.output_row(member_));
  }

  /// Gradient dists of `step` after `last`: the group-wide one and the host-reduced
  /// tables' (cross-host all-to-all, then all-gather in the host), each -1 when absent.
  std::pair<std::int32_t, std::int32_t> grad_dist(int step, std::int32_t last) {
    const SparseTraffic& t = *traffic_[static_cast<std::size_t>(step)];
    if (!sparse_comm()) return {-1, -1};
    std::int32_t flat = -1, host = last;
    if (sh_.flat_output) {
      if (const auto each = t.uniform_grad(member_)) {
        flat = collective(CollectiveOp::kAllToAll, sparse_group(), *each * sh_.layout.sparse.size,
                          CommClass::kGradDist, sh_.nm.grad_dist, sh_.st.embedding_comm, step,
                          StepPhase::kBackward, {last});
      } else {
        flat = collective(CollectiveOp::kAllToAllV, sparse_group(), 0, CommClass::kGradDist,
                          sh_.nm.grad_dist, sh_.st.embedding_comm, step, StepPhase::kBackward,
                          {last}, Algorithm::kAuto, t.grad_row(member_));
      }
    }
    if (!sh_.host_reduced) return {flat, -1};
    const auto r = static_cast<std::size_t>(rank_);
    if (sh_.layout.sparse_host.replica[r] >= 0) {
      host = collective(CollectiveOp::kAllToAllV, sh_.layout.sparse_host.replica[r], 0,
                        CommClass::kGradDist, sh_.nm.grad_dist_cross, sh_.st.host_comm, step,
                        StepPhase::kBackward, {host}, Algorithm::kAuto, t.cross_grad_row(member_));
    }
    if (const Bytes b = t.host_reduce_bytes(member_, true); b > 0) {
      host = collective(CollectiveOp::kAllGather, sh_.layout.sparse_host.block[r], b,
                        CommClass::kGradDist, sh_.nm.grad_dist_host, sh_.st.host_comm, step,
                        StepPhase::kBackward, {host});
    }
    return {flat, host == last ? -1 : host};
  }

  /// Emits one layer's work items chained after `last`; returns the new last op.
  std::int32_t emit_items(const std::vector<detail::WorkItem>& items, std::int32_t last, int step,
                          StepPhase phase, std::int32_t extra_dep, std::int32_t extra_dep2 = -1,
                          std::int32_t extra_dep3 = -1) {
    for (const auto& w : items) {
      const std::int32_t name = sh_.nm.stack[static_cast<std::size_t>(w.name)];
      if (w.is_comm) {
        const auto& dim =
            w.group == CommGroup::kContextParallel ? sh_.layout.cp : sh_.layout.expert;
        last = collective(w.op, dim.block[static_cast<std::size_t>(rank_)], w.bytes, w.comm_class,
                          name, sh_.st.cp_comm, step, phase,
                          {last, extra_dep, extra_dep2, extra_dep3});
      } else {
        last = kernel(w.kernel, name, sh_.st.compute, step, phase,
                      {last, extra_dep, extra_dep2, extra_dep3});
      }
      extra_dep = extra_dep2 = extra_dep3 = -1;
    }
    return last;
  }

  // One all-reduce across datacenters for the shards of every bucket of this step.
  void flush_cross_dc(int step, std::vector<std::int32_t>& xdc) {
    if (xdc_after_.empty()) return;
    const auto r = static_cast<std::size_t>(rank_);
    const std::int32_t op = collective(CollectiveOp::kAllReduce, sh_.layout.dc_replica[r],
                                       xdc_bytes_, CommClass::kDenseSync, sh_.nm.xdc[0],
                                       sh_.st.xdc_comm, step, StepPhase::kBackward, {});
    out_.ops[static_cast<std::size_t>(op)].deps.assign(xdc_after_.begin(), xdc_after_.end());
    xdc.push_back(op);
    xdc_after_.clear();
    xdc_bytes_ = 0;
  }

  /// Dense sync of one DDP bucket; appends the ops the optimizer waits on.
  void sync_bucket(int b, Bytes bytes, std::int32_t ready, int step,
                   std::vector<std::int32_t>& waits, std::vector<std::int32_t>& xdc) {
    const auto& nm = sh_.nm;
    const auto& L = sh_.layout;
    const auto r = static_cast<std::size_t>(rank_);
    const std::int32_t stream = sh_.st.dense_comm;
    if (L.world == 1) {
      waits.push_back(ready);
      return;
    }
    if (sh_.sched.cross_dc == CrossDcSync::kOverlapped && sh_.dcs > 1) {
      const std::int32_t rs = collective(CollectiveOp::kReduceScatter, L.dc_block[r], bytes,
                                         CommClass::kDenseSync, nm.rs[static_cast<std::size_t>(b)],
                                         stream, step, StepPhase::kBackward, {ready});
      const Bytes shard =
          bytes /
          static_cast<Bytes>(L.groups[static_cast<std::size_t>(L.dc_block[r])].ranks.size());
      // The cross-datacenter part of every bucket goes out as one all-reduce per step
      // (flush_cross_dc): each WAN collective pays the WAN latency once.
      (void)xdc;
      xdc_bytes_ += shard;
      xdc_after_.push_back(rs);
      waits.push_back(collective(CollectiveOp::kAllGather, L.dc_block[r], bytes,
                                 CommClass::kDenseSync, nm.ag[static_cast<std::size_t>(b)], stream,
                                 step, StepPhase::kBackward, {rs}));
      return;
    }
    const Algorithm algo = sh_.sched.cross_dc == CrossDcSync::kHierarchical
                               ? Algorithm::kHierarchical
                               : Algorithm::kAuto;
    waits.push_back(collective(CollectiveOp::kAllReduce, L.all, bytes, CommClass::kDenseSync,
                               nm.ddp[static_cast<std::size_t>(b)], stream, step,
                               StepPhase::kBackward, {ready}, algo));
  }

  /// What a step's gradient syncs leave for its optimizer.
  struct GradientSyncs {
    std::vector<std::int32_t> waits;  // what the optimizer waits on
    std::vector<std::int32_t> xdc;    // this step's cross-datacenter syncs
    double bucket = 0;                // gradient bytes of the DDP bucket being filled
    int buckets = 0;                  // DDP buckets synced so far
  };

  /// The forward, backward, embedding update, gradient syncs and optimizer of step `s`;
  /// returns the optimizer op. `pending_xdc`: the overlapped cross-datacenter syncs of the
  /// step before, waited on by this step's optimizer, then this step's.
  std::int32_t dense_step(int s, std::int32_t sparse_ready, std::int32_t prev_opt,
                          std::vector<std::int32_t>& pending_xdc) {
    const auto& sc = sh_.sc;
    const auto& L = sh_.layout;
    const int replica = rank_ / L.cp.size;
    const auto shape = detail::shape_of(
        (*sh_.batches)[static_cast<std::size_t>(s)][static_cast<std::size_t>(replica)], L.cp.size);
    const auto& work = sh_.layer_work[static_cast<std::size_t>(s)].of(sh_.stack, shape);
    const double e_param = bytes_per_element(sc.model.param_dtype);
    const auto& comm = sc.plan.grad_comm_precision;
    const double e_grad = comm ? bytes_per_element(*comm) : e_param;
    const double e_tables = comm ? e_grad : bytes_per_element(sc.model.embedding_dtype);

    const std::int32_t forward = dense_forward(s, work, sparse_ready, prev_opt, e_param);
    GradientSyncs sync;
    const std::int32_t last = dense_backward(s, work, forward, e_param, e_grad, sync);
    const std::int32_t update = embedding_backward(s, last);
    sync_last_bucket(s, update, last, e_tables, sync);
    flush_cross_dc(s, sync.xdc);
    replica_sync(s, update);
    return dense_optimizer(s, update, last, e_param, sync, pending_xdc);
  }

  /// True when the dense parameters are sharded (FSDP), not replicated (DDP).
  bool fsdp() const { return sh_.sc.plan.dense == DenseParallelism::kFsdp; }

  /// FSDP's all-gather of layer i's parameters after `after`.
  std::int32_t fsdp_all_gather(int s, int i, std::int32_t name, StepPhase phase, std::int32_t after,
                               double e_param) {
    const auto& L = sh_.layout;
    return collective(CollectiveOp::kAllGather, L.fsdp.block[static_cast<std::size_t>(rank_)],
                      static_cast<Bytes>(sh_.stack.layer_params(i) * e_param),
                      CommClass::kDenseSync, name, sh_.st.dense_comm, s, phase, {after});
  }

  /// The dense layers' forward of step `s` (under FSDP each after its all-gather); the
  /// first layer waits on the sparse forward, the host-reduced output dist and `prev_opt`.
  /// Returns the forward's last op.
  std::int32_t dense_forward(int s, const std::vector<detail::LayerWork>& work,
                             std::int32_t sparse_ready, std::int32_t prev_opt, double e_param) {
    const bool fsdp_layers = fsdp();
    const int n = sh_.stack.layers();
    std::int32_t last = -1;
    std::int32_t first_dep = sparse_ready;
    std::int32_t host_dep = host_ready_.empty() ? -1 : host_ready_[static_cast<std::size_t>(s)];
    for (int i = 0; i < n; ++i) {
      std::int32_t gather = -1;
      if (fsdp_layers) {
        gather = fsdp_all_gather(s, i, sh_.nm.fsdp_ag_fwd[static_cast<std::size_t>(i)],
                                 StepPhase::kForward, prev_opt, e_param);
      }
      if (last < 0) last = prev_opt;
      last = emit_items(work[static_cast<std::size_t>(i)].forward, last, s, StepPhase::kForward,
                        first_dep, gather, host_dep);
      first_dep = host_dep = -1;
    }
    return last;
  }

  /// The dense layers' backward of step `s` after `last`, last layer first, each layer's
  /// gradients synced as they are ready: FSDP per layer, experts over their replicas, the
  /// others in DDP buckets (but the last, sync_last_bucket). Returns the backward's last op.
  std::int32_t dense_backward(int s, const std::vector<detail::LayerWork>& work, std::int32_t last,
                              double e_param, double e_grad, GradientSyncs& sync) {
    const auto& L = sh_.layout;
    const auto r = static_cast<std::size_t>(rank_);
    const bool fsdp_layers = fsdp();
    const bool grouped = sh_.sc.plan.grad_sync == GradSync::kGrouped;
    for (int i = sh_.stack.layers() - 1; i >= 0; --i) {
      std::int32_t gather = -1;
      if (fsdp_layers) {
        gather = fsdp_all_gather(s, i, sh_.nm.fsdp_ag_bwd[static_cast<std::size_t>(i)],
                                 StepPhase::kBackward, last, e_param);
      }
      last = emit_items(work[static_cast<std::size_t>(i)].backward, last, s, StepPhase::kBackward,
                        gather);
      const double grad = sh_.stack.layer_params(i) * e_grad;
      if (grad <= 0) continue;
      if (fsdp_layers) {
        sync.waits.push_back(fsdp_grad_sync(s, i, grad, last));
      } else if (sh_.stack.expert_layer(i)) {
        if (L.expert.replica[r] >= 0) {
          sync.waits.push_back(collective(CollectiveOp::kAllReduce, L.expert.replica[r],
                                          static_cast<Bytes>(grad), CommClass::kDenseSync,
                                          sh_.nm.expert_sync, sh_.st.dense_comm, s,
                                          StepPhase::kBackward, {last}));
        }
      } else {
        sync.bucket += grad;
        if (!grouped && sync.bucket >= static_cast<double>(sh_.sc.plan.bucket_size)) {
          sync_bucket(sync.buckets++, static_cast<Bytes>(sync.bucket), last, s, sync.waits,
                      sync.xdc);
          sync.bucket = 0;
        }
      }
    }
    return last;
  }

  /// FSDP's sync of layer i's `grad` bytes after `last`: reduce-scatter in the FSDP group,
  /// then all-reduce of the shard across its replicas; returns the op the optimizer waits on.
  std::int32_t fsdp_grad_sync(int s, int i, double grad, std::int32_t last) {
    const auto& L = sh_.layout;
    const auto r = static_cast<std::size_t>(rank_);
    const std::int32_t rs =
        collective(CollectiveOp::kReduceScatter, L.fsdp.block[r], static_cast<Bytes>(grad),
                   CommClass::kDenseSync, sh_.nm.fsdp_rs[static_cast<std::size_t>(i)],
                   sh_.st.dense_comm, s, StepPhase::kBackward, {last});
    if (L.fsdp.replica[r] < 0) return rs;
    return collective(CollectiveOp::kAllReduce, L.fsdp.replica[r],
                      static_cast<Bytes>(grad / L.fsdp.size), CommClass::kDenseSync,
                      sh_.nm.fsdp_ar[static_cast<std::size_t>(i)], sh_.st.dense_comm, s,
                      StepPhase::kBackward, {rs});
  }

  /// The embedding backward of step `s` after the dense backward's `last`: gradient dists,
  /// then the update, which also waits for the replica sync due; returns the update.
  std::int32_t embedding_backward(int s, std::int32_t last) {
    const SparseTraffic& t = *traffic_[static_cast<std::size_t>(s)];
    const auto [flat_grads, host_grads] = grad_dist(s, last);
    return kernel(t.update(member_), sh_.nm.update, sh_.st.compute, s, StepPhase::kBackward,
                  {last, flat_grads, host_grads, replica_due(s)});
  }

  /// The last DDP bucket's sync, which the data-parallel tables' gradients and the hot
  /// rows' join (under FSDP they sync alone).
  void sync_last_bucket(int s, std::int32_t update, std::int32_t last, double e_tables,
                        GradientSyncs& sync) {
    const double dp_tables = data_parallel_bytes(sh_.map, sh_.sc.model, e_tables);
    if (fsdp()) {
      if (dp_tables > 0) {
        sync.waits.push_back(collective(CollectiveOp::kAllReduce, sh_.layout.all,
                                        static_cast<Bytes>(dp_tables), CommClass::kDenseSync,
                                        sh_.nm.dp_tables_sync, sh_.st.dense_comm, s,
                                        StepPhase::kBackward, {update}));
      }
    } else if (sync.bucket + dp_tables > 0) {
      // Grouped: one all-reduce once the dense backward is done; the tables' local reduce
      // ran beside the backward, and their update (in `update`) does not hold it back.
      const bool grouped = sh_.sc.plan.grad_sync == GradSync::kGrouped;
      sync_bucket(sync.buckets++, static_cast<Bytes>(sync.bucket + dp_tables),
                  dp_tables > 0 && !grouped ? update : last, s, sync.waits, sync.xdc);
    }
  }

  /// Replica sync every K steps is spread over the steps: each step all-reduces a
  /// rotating 1/K slice of the shard (weights and optimizer state) on its own stream,
  /// overlapped with the next step, whose embedding update waits for it (one step of
  /// staleness, as streaming synchronization across datacenters does). Every step thus
  /// carries the time-averaged cost and a short simulation still sees it.
  void replica_sync(int s, std::int32_t update) {
    const auto& sc = sh_.sc;
    const auto& L = sh_.layout;
    const auto r = static_cast<std::size_t>(rank_);
    if (L.sparse.replica[r] < 0 || !sh_.map.has_sharded()) return;
    const int m = member_;
    const double elems = sh_.map.weight_elements(sc.model, m),
                 rows = std::max(1.0, sh_.map.rows(sc.model, m));
    const double bytes =
        elems * bytes_per_element(sc.model.embedding_dtype) +
        optimizer_state_bytes(sc.model.embedding_optimizer, rows, elems / rows,
                              bytes_per_element(sc.model.embedding_optimizer_dtype));
    replica_syncs_[static_cast<std::size_t>(s)] = collective(
        CollectiveOp::kAllReduce, L.sparse.replica[r],
        static_cast<Bytes>(bytes / sc.plan.replica_sync_every), CommClass::kReplicaSync,
        sh_.nm.replica_sync,
        sh_.st.replica_comm[static_cast<std::size_t>(s % sc.plan.replica_sync_staleness)], s,
        StepPhase::kOptimizer, {update});
  }

  /// Dense optimizer: reads parameters, gradients and state, writes parameters and state
  /// (Adam in fp32: 7 x 4 bytes per parameter). It waits on the embedding update, the
  /// step's gradient syncs, the step before's overlapped cross-datacenter syncs (this
  /// step's become pending) and the backward's `last` op.
  std::int32_t dense_optimizer(int s, std::int32_t update, std::int32_t last, double e_param,
                               GradientSyncs& sync, std::vector<std::int32_t>& pending_xdc) {
    const auto& sc = sh_.sc;
    double params = sh_.stack.total_params();
    if (fsdp()) params /= sh_.layout.fsdp.size;
    const Kernel opt = cost::optimizer_work(
        params, e_param, optimizer_state_bytes(sc.model.dense_optimizer, 1, 1, 4));
    auto& waits = sync.waits;
    waits.push_back(update);
    for (auto x : pending_xdc) waits.push_back(x);
    pending_xdc = std::move(sync.xdc);
    const std::int32_t o =
        kernel(opt, sh_.nm.optimizer, sh_.st.compute, s, StepPhase::kOptimizer, {});
    auto& deps = out_.ops[static_cast<std::size_t>(o)].deps;
    deps.assign(waits.begin(), waits.end());
    deps.push_back(last);
    return o;
  }

  const Shared& sh_;
  RankOps& out_;
  const std::vector<const SparseTraffic*>& traffic_;
  int member_;
  int rank_;
  std::vector<std::int32_t> host_ready_;  // per step: host-reduced output dist's last op
  Rng noise_{0};
  Bytes xdc_bytes_ = 0;                  // this step's bucket shards still to sync across DCs
  std::vector<std::int32_t> xdc_after_;  // their in-datacenter reduce-scatters
  // Replica syncs by step; step s's embedding update waits for the one of s - staleness.
  std::vector<std::int32_t> replica_syncs_ = std::vector<std::int32_t>(64, -1);
  std::int32_t replica_due(int s) {
    const int from = s - sh_.sc.plan.replica_sync_staleness;
    if (static_cast<std::size_t>(s) >= replica_syncs_.size())
      replica_syncs_.resize(static_cast<std::size_t>(s) + 1, -1);
    return from >= 0 ? replica_syncs_[static_cast<std::size_t>(from)] : -1;
  }
};

Names intern_names(OpGraph& g, const DenseStack& stack, int buckets) {
  Names nm;
  nm.input_dist = g.intern("emb/input_dist");
  nm.lookup = g.intern("emb/lookup");
  nm.output_dist = g.intern("emb/output_dist");
  nm.grad_dist = g.intern("emb/grad_dist");
  nm.output_dist_host = g.intern("emb/output_dist/host_reduce_scatter");
  nm.output_dist_cross = g.intern("emb/output_dist/cross_host");
  nm.grad_dist_cross = g.intern("emb/grad_dist/cross_host");
  nm.grad_dist_host = g.intern("emb/grad_dist/host_all_gather");
  nm.update = g.intern("emb/update");
  nm.replica_sync = g.intern("emb/replica_sync");
  nm.optimizer = g.intern("optimizer");
  nm.expert_sync = g.intern("moe/expert_grad_all_reduce");
  nm.dp_tables_sync = g.intern("emb/data_parallel_grad_all_reduce");
  for (const auto& s : stack.names()) nm.stack.push_back(g.intern(s));
  for (int b = 0; b < buckets; ++b) {
    nm.ddp.push_back(g.intern(fmt::format("ddp/bucket.{}", b)));
    nm.rs.push_back(g.intern(fmt::format("ddp/bucket.{}/dc_reduce_scatter", b)));
    nm.xdc.push_back(g.intern(b == 0 ? std::string("ddp/cross_dc_all_reduce")
                                     : fmt::format("ddp/bucket.{}/cross_dc_all_reduce", b)));
    nm.ag.push_back(g.intern(fmt::format("ddp/bucket.{}/dc_all_gather", b)));
  }
  for (int i = 0; i < stack.layers(); ++i) {
    nm.fsdp_ag_fwd.push_back(g.intern(stack.layer_name(i) + "/fsdp_all_gather"));
    nm.fsdp_ag_bwd.push_back(g.intern(stack.layer_name(i) + "/fsdp_all_gather_bwd"));
    nm.fsdp_rs.push_back(g.intern(stack.layer_name(i) + "/fsdp_reduce_scatter"));
    nm.fsdp_ar.push_back(g.intern(stack.layer_name(i) + "/fsdp_replica_all_reduce"));
  }
  return nm;
}

/// GPUs per host of the scenario's cluster (1 without hosts).
int host_gpus(const TrainingScenario& sc) {
  return sc.cluster.hosts().empty() ? 1 : static_cast<int>(sc.cluster.hosts().front().gpus.size());
}

/// Datacenters among the ranks.
int datacenters_of(const TrainingScenario& sc) {
  std::vector<bool> seen(sc.cluster.datacenters().size(), false);
  int dcs = 0;
  for (int dc : sc.layout.rank_dc) {
    if (!seen[static_cast<std::size_t>(dc)]) ++dcs;
    seen[static_cast<std::size_t>(dc)] = true;
  }
  return dcs;
}

/// Opens the graph's streams: compute, the embedding, dense and context-parallel comm
/// streams, then those the plan needs (host-reduced dists, replica syncs, pipelined sparse
/// forward, overlapped cross-datacenter sync).
Streams open_streams(OpGraph& g, const Shared& sh) {
  const auto& plan = sh.sc.plan;
  Streams st{};
  st.compute = g.stream("compute");
  st.embedding_comm = g.stream("embedding_comm");
  st.dense_comm = g.stream("dense_comm");
  st.cp_comm = g.stream("cp_comm");
  st.host_comm = sh.host_reduced ? g.stream("embedding_host_comm") : st.embedding_comm;
  for (int k = 0; k < plan.replica_sync_staleness; ++k) {
    st.replica_comm.push_back(g.stream(plan.replica_sync_staleness == 1
                                           ? std::string("replica_comm")
                                           : fmt::format("replica_comm/{}", k)));
  }
  st.sparse_compute = sh.lookahead > 0 && plan.schedule.pipelined == Pipelined::kSparseForward
                          ? g.stream("sparse_compute")
                          : st.compute;
  st.xdc_comm =
      plan.schedule.cross_dc == CrossDcSync::kOverlapped ? g.stream("xdc_comm") : st.dense_comm;
  return st;
}

/// How many DDP buckets' names to intern: the fp32 gradients of the dense stack, the
/// data-parallel tables and the hot rows, in buckets, and two more.
double bucket_bound(const Shared& sh) {
  const double grad_bytes = sh.stack.total_params() * 4 + 1;
  const double dp_table_bytes = data_parallel_bytes(sh.map, sh.sc.model, 4);
  return std::floor((grad_bytes + dp_table_bytes) / static_cast<double>(sh.sc.plan.bucket_size)) +
         2;
}

/// Each rank's kernel slowdown (1 but for the scenario's slow ranks).
std::vector<double> rank_slowdowns(const TrainingScenario& sc) {
  std::vector<double> slowdown(static_cast<std::size_t>(sc.layout.world), 1.0);
  for (const auto& s : sc.hardware.slow_ranks)
    slowdown[static_cast<std::size_t>(s.rank)] *= s.slowdown;
  return slowdown;
}

/// The caller's batches when they cover the steps, else the steps sampled here.
void take_batches(Shared& sh, const OpGraphOptions& options) {
  if (options.batches && static_cast<int>(options.batches->size()) >= sh.steps) {
    sh.batches = options.batches;
  } else {
    sh.sampled = sample_steps(sh.sc, sh.steps);
  }
}

/// Every rank's rank, GPU and samples (of its replica's first batch, its 1/cp share).
void name_ranks(OpGraph& g, const Shared& sh) {
  const Layout& L = sh.layout;
  g.ranks.resize(static_cast<std::size_t>(L.world));
  for (int r = 0; r < L.world; ++r) {
    RankOps& ro = g.ranks[static_cast<std::size_t>(r)];
    ro.rank = ro.gpu = r;
    ro.samples = sh.batches->front()[static_cast<std::size_t>(r / L.cp.size)].samples / L.cp.size;
  }
}

/// The ops of every rank of the representative blocks (all blocks by default), block by
/// block, into the graph or, with a sink, to the sink; with options.memory, each rank's
/// memory report as well.
void build_ranks(OpGraph& g, const Shared& sh, const OpGraphOptions& options,
                 const RankSink& sink) {
  const TrainingScenario& sc = sh.sc;
  const Layout& L = sh.layout;
  const int M = L.sparse.size;
  std::size_t reserve = 0;
  RankOps scratch;  // with a sink: every rank is built here in turn
  std::optional<detail::RankMemoryModel> memory;
  if (options.memory) {
    memory.emplace(sc, sh.stack, sh.map, sh.steps);
    options.memory->ranks.assign(static_cast<std::size_t>(L.world), {});
    for (int r = 0; r < L.world; ++r) options.memory->ranks[static_cast<std::size_t>(r)].rank = r;
  }
  for (int block : representative_blocks(sc, sh.batches->front(), options.representative_ranks)) {
    // Embedding traffic of this model-parallel group, per step.
    const auto owned = detail::group_traffic(sc, sh.map, *sh.batches, sh.steps, block);
    std::vector<const SparseTraffic*> traffic;
    for (const auto& t : owned) traffic.push_back(t.get());
    std::vector<double> buffers;
    if (memory) buffers = memory->output_buffers(traffic);
    for (int i = 0; i < M; ++i) {
      const int rank = block * M + i;
      RankOps& whole = g.ranks[static_cast<std::size_t>(rank)];
      if (sink) {
        scratch.rank = whole.rank;
        scratch.gpu = whole.gpu;
        scratch.samples = whole.samples;
        scratch.ops.clear();
      }
      RankOps& ro = sink ? scratch : whole;
      ro.ops.reserve(reserve);
      RankBuilder(sh, ro, traffic, i).build();
      reserve = std::max(reserve, ro.ops.size());
      if (memory) {
        // Right after the rank's ops: its layers' work is still in sh.layer_work.
        options.memory->ranks[static_cast<std::size_t>(rank)] =
            memory->rank(rank, i, buffers[static_cast<std::size_t>(i)], *sh.batches, sh.layer_work);
      }
      if (sink) sink(ro);
    }
  }
}

}  // namespace

OpGraph build_op_graph(const TrainingScenario& sc, const OpGraphOptions& options) {
  return build_op_graph(sc, options, nullptr);
}

OpGraph build_op_graph(const TrainingScenario& sc, const OpGraphOptions& options,
                       const RankSink& sink) {
  const int steps = options.steps > 0 ? options.steps : sc.steps;
  // Refused before the dense stack and the shard map are built.
  check_work(sc, steps);
  Shared sh(sc, host_gpus(sc));
  sh.flat_output = sh.map.any_flat_output(sc.model);
  sh.host_reduced = sh.map.any_host_reduced(sc.model);
  sh.steps = steps;
  sh.lookahead = sc.plan.schedule.pipeline_depth - 1;
  sh.dcs = datacenters_of(sc);
  OpGraph g;
  g.steps = sh.steps;
  g.groups = sc.layout.groups;
  sh.st = open_streams(g, sh);
  const double bucket_count = bucket_bound(sh);
  check_buckets(sc, sh.steps, bucket_count);
  sh.nm = intern_names(g, sh.stack, static_cast<int>(bucket_count));
  sh.slowdown = rank_slowdowns(sc);
  take_batches(sh, options);
  sh.layer_work.resize(static_cast<std::size_t>(sh.steps));
  name_ranks(g, sh);
  build_ranks(g, sh, options, sink);
  return g;
}

}  // namespace strait::sim::workload
