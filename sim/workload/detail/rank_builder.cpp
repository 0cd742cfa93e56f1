#include "sim/workload/detail/rank_builder.hpp"

#include <algorithm>
#include <cmath>

#include "sim/cost/kernel_shapes.hpp"
#include "sim/workload/work_estimate.hpp"

namespace strait::sim::workload::detail {

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

void RankBuilder::build() {
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

/// Emits one layer's work items chained after `last`; returns the new last op.
std::int32_t RankBuilder::emit_items(const std::vector<detail::WorkItem>& items, std::int32_t last,
                                     int step, StepPhase phase, std::int32_t extra_dep,
                                     std::int32_t extra_dep2, std::int32_t extra_dep3) {
  for (const auto& w : items) {
    const std::int32_t name = sh_.nm.stack[static_cast<std::size_t>(w.name)];
    if (w.is_comm) {
      const auto& dim = w.group == CommGroup::kContextParallel ? sh_.layout.cp : sh_.layout.expert;
      last =
          collective(w.op, dim.block[static_cast<std::size_t>(rank_)], w.bytes, w.comm_class, name,
                     sh_.st.cp_comm, step, phase, {last, extra_dep, extra_dep2, extra_dep3});
    } else {
      last = kernel(w.kernel, name, sh_.st.compute, step, phase,
                    {last, extra_dep, extra_dep2, extra_dep3});
    }
    extra_dep = extra_dep2 = extra_dep3 = -1;
  }
  return last;
}

// One all-reduce across datacenters for the shards of every bucket of this step.
void RankBuilder::flush_cross_dc(int step, std::vector<std::int32_t>& xdc) {
  if (xdc_after_.empty()) return;
  const auto r = static_cast<std::size_t>(rank_);
  const std::int32_t op = collective(CollectiveOp::kAllReduce, sh_.layout.dc_replica[r], xdc_bytes_,
                                     CommClass::kDenseSync, sh_.nm.xdc[0], sh_.st.xdc_comm, step,
                                     StepPhase::kBackward, {});
  out_.ops[static_cast<std::size_t>(op)].deps.assign(xdc_after_.begin(), xdc_after_.end());
  xdc.push_back(op);
  xdc_after_.clear();
  xdc_bytes_ = 0;
}

/// Dense sync of one DDP bucket; appends the ops the optimizer waits on.
void RankBuilder::sync_bucket(int b, Bytes bytes, std::int32_t ready, int step,
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
    const std::int32_t rs =
        collective(CollectiveOp::kReduceScatter, L.dc_block[r], bytes, CommClass::kDenseSync,
                   nm.rs[static_cast<std::size_t>(b)], stream, step, StepPhase::kBackward, {ready});
    const Bytes shard =
        bytes / static_cast<Bytes>(L.groups[static_cast<std::size_t>(L.dc_block[r])].ranks.size());
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
  const Algorithm algo = sh_.sched.cross_dc == CrossDcSync::kHierarchical ? Algorithm::kHierarchical
                                                                          : Algorithm::kAuto;
  waits.push_back(collective(CollectiveOp::kAllReduce, L.all, bytes, CommClass::kDenseSync,
                             nm.ddp[static_cast<std::size_t>(b)], stream, step,
                             StepPhase::kBackward, {ready}, algo));
}

/// The forward, backward, embedding update, gradient syncs and optimizer of step `s`;
/// returns the optimizer op. `pending_xdc`: the overlapped cross-datacenter syncs of the
/// step before, waited on by this step's optimizer, then this step's.
std::int32_t RankBuilder::dense_step(int s, std::int32_t sparse_ready, std::int32_t prev_opt,
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

/// FSDP's all-gather of layer i's parameters after `after`.
std::int32_t RankBuilder::fsdp_all_gather(int s, int i, std::int32_t name, StepPhase phase,
                                          std::int32_t after, double e_param) {
  const auto& L = sh_.layout;
  return collective(CollectiveOp::kAllGather, L.fsdp.block[static_cast<std::size_t>(rank_)],
                    static_cast<Bytes>(sh_.stack.layer_params(i) * e_param), CommClass::kDenseSync,
                    name, sh_.st.dense_comm, s, phase, {after});
}

/// The dense layers' forward of step `s` (under FSDP each after its all-gather); the
/// first layer waits on the sparse forward, the host-reduced output dist and `prev_opt`.
/// Returns the forward's last op.
std::int32_t RankBuilder::dense_forward(int s, const std::vector<detail::LayerWork>& work,
                                        std::int32_t sparse_ready, std::int32_t prev_opt,
                                        double e_param) {
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
std::int32_t RankBuilder::dense_backward(int s, const std::vector<detail::LayerWork>& work,
                                         std::int32_t last, double e_param, double e_grad,
                                         GradientSyncs& sync) {
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
        sync_bucket(sync.buckets++, static_cast<Bytes>(sync.bucket), last, s, sync.waits, sync.xdc);
        sync.bucket = 0;
      }
    }
  }
  return last;
}

/// FSDP's sync of layer i's `grad` bytes after `last`: reduce-scatter in the FSDP group,
/// then all-reduce of the shard across its replicas; returns the op the optimizer waits on.
std::int32_t RankBuilder::fsdp_grad_sync(int s, int i, double grad, std::int32_t last) {
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

/// The last DDP bucket's sync, which the data-parallel tables' gradients and the hot
/// rows' join (under FSDP they sync alone).
void RankBuilder::sync_last_bucket(int s, std::int32_t update, std::int32_t last, double e_tables,
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

/// Dense optimizer: reads parameters, gradients and state, writes parameters and state
/// (Adam in fp32: 7 x 4 bytes per parameter). It waits on the embedding update, the
/// step's gradient syncs, the step before's overlapped cross-datacenter syncs (this
/// step's become pending) and the backward's `last` op.
std::int32_t RankBuilder::dense_optimizer(int s, std::int32_t update, std::int32_t last,
                                          double e_param, GradientSyncs& sync,
                                          std::vector<std::int32_t>& pending_xdc) {
  const auto& sc = sh_.sc;
  double params = sh_.stack.total_params();
  if (fsdp()) params /= sh_.layout.fsdp.size;
  const Kernel opt = cost::optimizer_work(params, e_param,
                                          optimizer_state_bytes(sc.model.dense_optimizer, 1, 1, 4));
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

}  // namespace strait::sim::workload::detail
