#pragma once
// RankState: one rank's replay state (its streams, its slices of the per-op arrays, its
// account, its solo run, the groups it calls on), laid out for the replay's hot path, and
// what a rank's own ops read and change of it: when an op was issued and started, how an
// op's end moves its stream and books its compute time, its op times for the wait chain.

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include <boost/container/small_vector.hpp>

#include "sim/core/units.hpp"
#include "sim/cost/gpu_model.hpp"
#include "sim/run/detail/wait_chain.hpp"
#include "sim/run/rank_account.hpp"
#include "sim/run/replay_graph.hpp"

namespace strait::sim::run::detail {

inline std::size_t u(std::int64_t i) { return static_cast<std::size_t>(i); }

// Per op, the replay keeps only when it ended (infinite until then): whether an op may
// start and which dependency it waited for are read off its dependencies' ends when its
// stream reaches it, and so is when it started (was issued, for a collective): ops start
// as soon as their stream and dependencies are done. A collective also keeps when it
// started on the network (every member had issued it).
inline constexpr Time kNotEnded = Time::infinite();

struct StreamState {
  Time start;             // when the stream's current op started
  Time free_at;           // when its previous op ended
  std::int32_t head = 0;  // position of its next op among the stream's ops
  bool busy = false;
};

// Replay state of one rank: pointers to its slices of the Replayer's arrays (they never
// grow), so an op touches the rank's own few cache lines: at 131,072 ranks progressing in
// step, nearly every op event is on another rank than the previous one.
struct alignas(64) RankState {
  // What every op of the rank touches comes first (the first cache line holds what a
  // kernel's start reads, its kernel costs and resources included), then the streams
  // inline and the accounts, so that an op event reads a few adjacent lines of its rank.
  const OpShape* shape = nullptr;
  Time* ends = nullptr;                       // by op index
  Time* started_at = nullptr;                 // by collective slot: when it started
  const Time* durations = nullptr;            // analytical mode: kernels by slot
  const cost::FlowKernel* kernels = nullptr;  // flow mode: kernels by slot
  Time compute_idle_since;
  std::uint32_t ops_left = 0;
  cost::GpuResources gpu;  // flow mode: its GPU's SMs and HBM
  bool traced = false;
  // Its solo run, if one is going (detail/solo_runs.hpp): the stream, the run's first
  // kernel not yet finished and when its stream reached it; the run's end event counts
  // only while `generation` is the one it was scheduled with.
  struct Solo {
    std::int32_t stream = kNone;
    std::int32_t op = kNone;
    Time launched;
    std::uint32_t generation = 0;
  } solo;
  boost::container::small_vector<StreamState, 8> streams;  // by stream
  RankAccount account;
  const ReplayRank* info = nullptr;
  struct Membership {
    std::int32_t group, position;
  };
  // A rank is in a handful of groups: kept inline and searched linearly (a heap vector per
  // rank was a cache miss on every collective a rank issued).
  boost::container::small_vector<Membership, 8> groups;
  const std::string* gpu_type = nullptr;

  /// When collective op i started on the network (every member had issued it).
  Time& started(std::int32_t i) const { return started_at[shape->slot[u(i)]]; }
  /// When op i was issued: its stream's previous op and its dependencies had ended.
  Time issued(std::int32_t i) const {
    const auto& s = *shape;
    Time at = Time::zero();
    if (const auto prev = s.stream_prev[u(i)]; prev >= 0) at = ends[prev];
    for (auto k = s.dep_offsets[u(i)]; k < s.dep_offsets[u(i) + 1]; ++k)
      at = std::max(at, ends[s.deps[u(k)]]);
    return at;
  }
  /// Flow mode: kernel op i's costs.
  const cost::FlowKernel& kernel(std::int32_t i) const { return kernels[shape->slot[u(i)]]; }
  /// Collective op i's shared fields.
  const CollectiveShape& call(std::int32_t i) const {
    return shape->collectives[u(shape->slot[u(i)])];
  }
  /// Its membership of group g, or null.
  Membership* membership(std::int32_t g) {
    Membership* member = nullptr;
    for (auto& m : groups) {
      if (m.group == g) member = &m;
    }
    return member;
  }

  /// Op `index` ends at `now`: its end, its stream's position, the compute stream's account
  /// (compute_stream: that stream's index, or kNone), the rank's end and ops left. Returns
  /// its stream.
  StreamState& close(std::int32_t index, Time now, std::int32_t compute_stream) {
    const auto i = u(index);
    const auto stream = shape->stream[i];
    ends[index] = now;
    StreamState& st = streams[u(stream)];
    ++st.head;
    st.free_at = now;
    if (stream == compute_stream) {
      if (shape->kind[i] != workload::OpKind::kCollective) {
        account.compute += now - st.start;
      } else {
        // A collective on the compute stream itself: its wait and transfer are exposed.
        // Issued when the stream started it.
        const Time at = started(index);
        account.straggler_wait += at - st.start;
        account.exposed_comm[u(static_cast<int>(call(index).comm_class))] += now - at;
      }
      compute_idle_since = now;
    }
    account.end = std::max(account.end, now);
    --ops_left;
    return st;
  }
};

// One rank's op times as account_wait_chain reads them.
struct RankTimes {
  const RankState& rank;
  bool collective(std::int32_t i) const {
    return rank.shape->kind[u(i)] == workload::OpKind::kCollective;
  }
  workload::CommClass comm_class(std::int32_t i) const { return rank.call(i).comm_class; }
  Time issued(std::int32_t i) const { return rank.issued(i); }
  Time started(std::int32_t i) const { return rank.started(i); }
  Time ended(std::int32_t i) const { return rank.ends[i]; }
  std::int32_t stream_prev(std::int32_t i) const { return rank.shape->stream_prev[u(i)]; }
  template <class F>
  void for_each_dep(std::int32_t i, F f) const {
    const auto& s = *rank.shape;
    for (auto k = s.dep_offsets[u(i)]; k < s.dep_offsets[u(i) + 1]; ++k) f(s.deps[u(k)]);
  }
};

/// The compute stream of `rank` was idle from compute_idle_since until `now`, when it
/// started an op that waited for op `waited_for`: books why (account_wait).
inline void account_gap(RankState& rank, Time now, std::int32_t waited_for) {
  const Time gap_start = rank.compute_idle_since;
  if (now <= gap_start) return;
  account_wait_chain(rank.account, gap_start, now, waited_for, RankTimes{rank});
}

/// After its last compute op a rank may still wait for its own collectives (e.g. a
/// replica sync), then for the slowest rank until `makespan` (account_tail).
inline void account_rank_tail(RankState& rank, Time makespan) {
  const Time t = std::min(rank.compute_idle_since, makespan);
  const auto& shape = *rank.shape;
  std::vector<CollectiveSpan> spans;
  for (std::size_t i = 0; i < shape.ops(); ++i) {
    const auto op = static_cast<std::int32_t>(i);
    if (shape.kind[i] == workload::OpKind::kCollective && rank.ends[op] > t)
      spans.push_back({rank.started(op), rank.ends[op], rank.call(op).comm_class});
  }
  run::account_tail(rank.account, t, makespan, std::move(spans));
}

}  // namespace strait::sim::run::detail
