#include "sim/workload/detail/rank_builder.hpp"

#include <algorithm>
#include <cmath>

#include "sim/cost/kernel_shapes.hpp"
#include "sim/workload/work_estimate.hpp"

namespace strait::sim::workload::detail {

/// The ids' all-to-all of `step` after `after`; -1 when there is none.
std::int32_t RankBuilder::input_dist(int step, std::int32_t after) {
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
std::int32_t RankBuilder::sparse_forward(int step, std::int32_t after, std::int32_t input) {
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
      host = collective(CollectiveOp::kAllToAllV, sh_.layout.sparse_host.replica[r], 0,
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
std::pair<std::int32_t, std::int32_t> RankBuilder::grad_dist(int step, std::int32_t last) {
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
                        sh_.nm.grad_dist, sh_.st.embedding_comm, step, StepPhase::kBackward, {last},
                        Algorithm::kAuto, t.grad_row(member_));
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

/// The embedding backward of step `s` after the dense backward's `last`: gradient dists,
/// then the update, which also waits for the replica sync due; returns the update.
std::int32_t RankBuilder::embedding_backward(int s, std::int32_t last) {
  const SparseTraffic& t = *traffic_[static_cast<std::size_t>(s)];
  const auto [flat_grads, host_grads] = grad_dist(s, last);
  return kernel(t.update(member_), sh_.nm.update, sh_.st.compute, s, StepPhase::kBackward,
                {last, flat_grads, host_grads, replica_due(s)});
}

/// Replica sync every K steps is spread over the steps: each step all-reduces a
/// rotating 1/K slice of the shard (weights and optimizer state) on its own stream,
/// overlapped with the next step, whose embedding update waits for it (one step of
/// staleness, as streaming synchronization across datacenters does). Every step thus
/// carries the time-averaged cost and a short simulation still sees it.
void RankBuilder::replica_sync(int s, std::int32_t update) {
  const auto& sc = sh_.sc;
  const auto& L = sh_.layout;
  const auto r = static_cast<std::size_t>(rank_);
  if (L.sparse.replica[r] < 0 || !sh_.map.has_sharded()) return;
  const int m = member_;
  const double elems = sh_.map.weight_elements(sc.model, m),
               rows = std::max(1.0, sh_.map.rows(sc.model, m));
  const double bytes = elems * bytes_per_element(sc.model.embedding_dtype) +
                       optimizer_state_bytes(sc.model.embedding_optimizer, rows, elems / rows,
                                             bytes_per_element(sc.model.embedding_optimizer_dtype));
  replica_syncs_[static_cast<std::size_t>(s)] =
      collective(CollectiveOp::kAllReduce, L.sparse.replica[r],
                 static_cast<Bytes>(bytes / sc.plan.replica_sync_every), CommClass::kReplicaSync,
                 sh_.nm.replica_sync,
                 sh_.st.replica_comm[static_cast<std::size_t>(s % sc.plan.replica_sync_staleness)],
                 s, StepPhase::kOptimizer, {update});
}

std::int32_t RankBuilder::replica_due(int s) {
  const int from = s - sh_.sc.plan.replica_sync_staleness;
  if (static_cast<std::size_t>(s) >= replica_syncs_.size())
    replica_syncs_.resize(static_cast<std::size_t>(s) + 1, -1);
  return from >= 0 ? replica_syncs_[static_cast<std::size_t>(from)] : -1;
}

}  // namespace strait::sim::workload::detail
