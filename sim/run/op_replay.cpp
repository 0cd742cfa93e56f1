#include "sim/run/op_replay.hpp"

#include <algorithm>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "sim/core/error.hpp"
#include "sim/cost/gpu_model.hpp"
#include "sim/engine/simulator.hpp"
#include "sim/network/analytical_network.hpp"
#include "sim/run/calibrated_cluster.hpp"
#include "sim/run/detail/collective_rendezvous.hpp"
#include "sim/run/detail/host_progress.hpp"
#include "sim/run/detail/rank_state.hpp"
#include "sim/run/detail/replay_ranks.hpp"
#include "sim/run/detail/replay_trace.hpp"
#include "sim/run/detail/solo_runs.hpp"

namespace strait::sim::run {

namespace {

using detail::kNone;
using detail::kNotEnded;
using detail::RankState;
using detail::StreamState;
using detail::u;
using workload::OpKind;

// The replay of a ReplayGraph: each rank's ops in stream order as their dependencies end,
// kernels on the GPU model, collectives met per group (detail/collective_rendezvous.hpp)
// and run on the network, each op's end booked to its rank's account (detail/rank_state.hpp).
class Replayer {
 public:
  Replayer(const ReplayGraph& graph, const topology::Cluster& cluster, const cost::CostModel& cost,
           const ReplayOptions& options)
      : graph_(graph),
        cost_(cost),
        options_(options),
        net_(calibrated_network(sim_, cluster, cost, options.mode)),
        trace_(options.timeline ? std::make_optional<detail::ReplayTrace>(*options.timeline, graph)
                                : std::nullopt),
        ranks_(graph, cluster, options, gpus_, trace_ ? &*trace_ : nullptr),
        rendezvous_(graph),
        host_(ranks_.host_progressed(cost)) {  // replay() set options.host_progress to match
    // Analytical mode without a trace runs in dataflow order (see run()).
    if (runs_in_dataflow_order(options))
      dataflow_net_ = static_cast<network::AnalyticalNetwork*>(net_.get());
    compute_stream_ = graph.stream_index("compute");
    streams_ = graph.streams().size();
    result_.ranks.resize(graph.ranks().size());
    result_.step_end.assign(static_cast<std::size_t>(std::max(1, graph.steps())), Time::zero());
  }

  // Flow mode, and analytical mode with a trace, run on the engine in time order.
  // Analytical mode otherwise runs in dataflow order, without the engine: an op's times
  // follow from its dependencies' and its stream predecessor's alone (a kernel's duration
  // is fixed, a collective starts when its last member issues it and takes what its spec
  // takes on an idle network), so ops are finished from a stack as soon as their times are
  // known, each rank running on until it waits for a peer. The times, accounts and traffic
  // are those of the time-ordered run (OpReplay.DataflowOrderMatchesTimeOrder), without an
  // event queue, and a rank's ops are finished in a row while its state is in cache.
  ReplayResult run() {
    for (std::size_t r = 0; r < ranks_.size(); ++r) {
      for (std::size_t s = 0; s < streams_; ++s)
        try_start(static_cast<std::int32_t>(r), static_cast<std::int32_t>(s));
      drain();
    }
    sim_.run();
    Time makespan = Time::zero();
    for (const auto& t : result_.step_end) makespan = std::max(makespan, t);
    ranks_.close_accounts(makespan, result_.ranks);
    result_.traffic = net_->traffic();
    for (int c = 0; c < workload::kCommClassCount; ++c)
      result_.class_traffic[static_cast<std::size_t>(c)] = net_->tagged(c);
    // In dataflow order, the events the time-ordered run would have taken (one per kernel,
    // one or two per collective); with solo runs, those of their kernels, not the runs'.
    result_.events = dataflow_net_ ? result_.kernels + collective_events_
                                   : sim_.events() - solo_end_events_ + solo_kernel_events_;
    return std::move(result_);
  }

 private:
  void try_start(std::int32_t r, std::int32_t s) {
    auto& rank = ranks_[u(r)];
    if (u(s) >= rank.shape->stream_ops.size()) return;
    const auto& on_stream = rank.shape->stream_ops[u(s)];
    const StreamState& st = rank.streams[u(s)];
    if (st.busy || u(st.head) >= on_stream.size()) return;
    const auto op = on_stream[u(st.head)];
    // It may start once every dependency has ended; it waited for the one that ended last
    // (on equal ends the higher index, so that the choice does not depend on the order in
    // which equal times are finished), and starts when that one and its stream are done
    // (in time order: now).
    const auto& shape = *rank.shape;
    std::int32_t last = kNone;
    for (auto k = shape.dep_offsets[u(op)]; k < shape.dep_offsets[u(op) + 1]; ++k) {
      const auto d = shape.deps[u(k)];
      if (rank.ends[d] == kNotEnded) return;
      if (last == kNone || rank.ends[d] > rank.ends[last] ||
          (rank.ends[d] == rank.ends[last] && d > last))
        last = d;
    }
    Time at = st.free_at;
    if (last != kNone) at = std::max(at, rank.ends[last]);
    start_op(r, op, at, last);
  }

  // The stack of ops whose end is known, in dataflow order (analytical mode untraced).
  void drain() {
    while (!finished_.empty()) {
      const Finished f = finished_.back();
      finished_.pop_back();
      finish_op(f.rank, f.op, f.end);
    }
  }

  void start_op(std::int32_t r, std::int32_t index, Time now, std::int32_t waited_for) {
    auto& rank = ranks_[u(r)];
    const auto& shape = *rank.shape;
    const auto stream = shape.stream[u(index)];
    rank.streams[u(stream)].busy = true;
    rank.streams[u(stream)].start = now;
    if (stream == compute_stream_) detail::account_gap(rank, now, waited_for);
    if (shape.kind[u(index)] == OpKind::kCollective) {
      arrive(r, index, now);
      return;
    }
    const auto slot = shape.slot[u(index)];
    result_.kernels += static_cast<std::uint64_t>(shape.run(u(index)));
    if (host_.on(r)) host_.kernel_started(r);
    if (dataflow_net_) {
      finished_.push_back({r, index, now + rank.durations[slot]});
      return;
    }
    if (options_.mode == network::NetworkMode::kAnalytical) {  // traced or host: time order
      sim_.after(rank.durations[slot], [this, r, index] { finish_op(r, index, sim_.now()); });
      return;
    }
    if (options_.solo_runs && !(rank.traced && trace_) && rank.solo.stream == kNone &&
        !host_.on(r) && gpus_.idle(rank.gpu)) {
      begin_solo(r, index, now);
      return;
    }
    launch_kernel(r, index, rank.kernel(index).launch_overhead);
  }

  // Kernel `index` of rank r joins the engine's SMs and HBM after `delay` (what is left of
  // its launch overhead), cutting short a solo run of another stream it would share them
  // with.
  void launch_kernel(std::int32_t r, std::int32_t index, Time delay) {
    auto& rank = ranks_[u(r)];
    if (delay > Time::zero()) {
      // Captures fit std::function's inline buffer (16 bytes): no allocation per kernel.
      sim_.after(delay,
                 [this, r, index] {
                   cut_solo(r);
                   start_kernel(r, index, sim_.now());
                 },
                 {&rank, &rank.kernel(index)});
    } else {
      cut_solo(r);
      start_kernel(r, index, sim_.now());
    }
  }

  // Kernel `index` of rank r as an engine activity on its SMs and HBM, started now, or
  // (`since` before now) one that has run alone there since then: a solo run cut short.
  void start_kernel(std::int32_t r, std::int32_t index, Time since) {
    const auto& st = ranks_[u(r)];
    // A solo run's times hold only while nothing shares its SMs (cut_solo comes first).
    if (st.solo.stream != kNone) throw Error("replay: a kernel joined a solo run that went on");
    gpus_.prefetch(st.gpu);  // overlaps their misses with the kernel's
    const auto at = st.shape->slot[u(index)];
    // Its end reads the rank's state and starts what follows, most often the next kernel.
    const engine::Touches touches = {&st,
                                     at + 1 < st.shape->kernels ? &st.kernels[at + 1] : nullptr};
    gpus_.start_kernel(
        st.gpu, st.kernel(index), [this, r, index] { finish_op(r, index, sim_.now()); }, touches,
        since, sim_.now());
  }

  // Solo runs (detail/solo_runs.hpp): kernel `index` of rank r, reached by its stream at
  // `now`, finds its GPU unused and starts a run; one event at the run's end.
  void begin_solo(std::int32_t r, std::int32_t index, Time now) {
    auto& rank = ranks_[u(r)];
    const auto generation = rank.solo.generation + 1;
    rank.solo = {rank.shape->stream[u(index)], index, now, generation};
    ++result_.solo_kernels;
    const Time end = detail::solo_run_end(rank, index, now);
    sim_.after(end - now, [this, r, generation] { end_solo(r, generation); }, {&rank, nullptr});
  }

  // The run's end event: finishes its kernels, the last as any op ends.
  void end_solo(std::int32_t r, std::uint32_t generation) {
    ++solo_end_events_;
    auto& rank = ranks_[u(r)];
    if (rank.solo.stream == kNone || rank.solo.generation != generation) return;  // cut short
    const auto last = detail::advance_solo(
        rank, Time::infinite(), [&](std::int32_t op, Time t) { hand_over(rank, op, t); });
    solo_kernel_events_ += 1 + detail::launch_events(rank, last.op);
    rank.solo.stream = kNone;
    finish_op(r, last.op, last.end);
  }

  // Kernel `op` of a solo run ends at t and the next on its stream starts: what finish_op
  // and start_op do for it, none of which anyone else reads.
  void hand_over(RankState& rank, std::int32_t op, Time t) {
    solo_kernel_events_ += 1 + detail::launch_events(rank, op);
    StreamState& st = close_op(rank, op, t);
    count_finished(1);
    st.start = t;
    ++result_.kernels;
    ++result_.solo_kernels;
    rank.solo.op = rank.shape->hands_over[u(op)];
    rank.solo.launched = t;
  }

  // Something is about to start on rank r's SMs or HBM now: its solo run, if any, goes back
  // to the engine (detail/solo_runs.hpp).
  void cut_solo(std::int32_t r) {
    auto& rank = ranks_[u(r)];
    if (rank.solo.stream == kNone) return;
    const Time now = sim_.now();
    const auto op =
        detail::advance_solo(rank, now, [&](std::int32_t o, Time t) { hand_over(rank, o, t); }).op;
    // The kernel running or launching (the last one may end this very instant: as an
    // activity it then completes in this instant, before any rate is set).
    rank.solo.stream = kNone;
    ++rank.solo.generation;  // its end event goes stale
    ++result_.solo_cuts;
    // Launched by now (this instant too: as the engine would, unless its launch event ran
    // already), it becomes an activity from its start; else it gets its launch event.
    const Time start = rank.solo.launched + rank.kernel(op).launch_overhead;
    if (start <= now) {
      solo_kernel_events_ += detail::launch_events(rank, op);
      start_kernel(r, op, start);
    } else {
      launch_kernel(r, op, start - now);
    }
  }

  void count_finished(std::uint64_t ops) {
    finished_ops_ += ops;
    if (options_.progress && finished_ops_ >= next_progress_) {
      options_.progress(result_.drain_end, finished_ops_);
      next_progress_ = (finished_ops_ / kProgressOps + 1) * kProgressOps;
    }
  }

  void arrive(std::int32_t r, std::int32_t index, Time now) {
    auto& rank = ranks_[u(r)];
    const auto g = graph_.collective_group(*rank.info, rank.shape->slot[u(index)]);
    const auto k = rendezvous_.arrive(rank, r, index, g, now);
    if (k != kNone) launch_collective(g, k, r);
  }

  // Group g's call k, completed by rank `last`'s arrival, starts on the network.
  void launch_collective(std::int32_t g, std::int32_t k, std::int32_t last) {
    detail::GroupCall launched = rendezvous_.launch(g, k);
    const Time now = launched.latest;
    const auto& members = launched.members;
    // In dataflow order one spec, its buffers kept from call to call (an all_to_allv's
    // matrix at 512 ranks is 2 MiB); in time order the network may call back before
    // start_collective returns, so a spec of its own.
    network::CollectiveSpec own;
    network::CollectiveSpec& spec = dataflow_net_ ? spec_ : own;
    detail::collective_spec(spec, members, ranks_.data(), graph_, g);
    std::vector<engine::ActivityId> holds;
    if (options_.mode == network::NetworkMode::kFlow &&
        !ranks_[u(members[0].first)].call(members[0].second).sm_free) {
      for (const auto& [rank, op] : members) {
        const double fraction = cost_.comm_sm_fraction(*ranks_[u(rank)].gpu_type);
        if (fraction <= 0) continue;
        cut_solo(rank);
        holds.push_back(gpus_.hold_sms(ranks_[u(rank)].gpu, fraction));
      }
    }
    for (const auto& [rank, op] : members) ranks_[u(rank)].started(op) = now;
    if (trace_ && ranks_[u(last)].traced) trace_->record_waits(members, last, ranks_.data(), now);
    ++result_.collectives;
    if (dataflow_net_) {
      const auto timed = dataflow_net_->time_collective(spec);
      collective_events_ += timed.delay > Time::zero() ? 2 : 1;
      for (auto m = members.rbegin(); m != members.rend(); ++m)
        finished_.push_back({m->first, m->second, now + timed.time});
      rendezvous_.recycle(g, std::move(launched.members));
      return;
    }
    auto call = std::make_shared<detail::GroupCall>(std::move(launched));
    net_->start_collective(spec, [this, call, holds = std::move(holds)] {
      for (auto h : holds) gpus_.release(h);
      if (!host_.active() || host_.data_done(call)) complete(*call);
    });
  }

  // Every member's op of `call` ends now.
  void complete(const detail::GroupCall& call) {
    for (const auto& [rank, op] : call.members) finish_op(rank, op, sim_.now());
  }

  void finish_op(std::int32_t r, std::int32_t index, Time now) {
    auto& rank = ranks_[u(r)];
    const auto& shape = *rank.shape;
    const auto i = u(index);
    StreamState& st = close_op(rank, index, now);
    st.busy = false;
    if (rank.traced && trace_) trace_->record_op(r, rank, index, st.start);
    // Between two kernels a host-progressed rank calls into MPI: the calls it held back
    // complete first, as its next kernel starts after that call.
    if (host_.on(r) && shape.kind[i] != OpKind::kCollective)
      host_.kernel_ended(r, [this](const detail::GroupCall& call) { complete(call); });
    for (auto k = shape.succ_offsets[i]; k < shape.succ_offsets[i + 1]; ++k)
      try_start(r, shape.stream[u(shape.succ[u(k)])]);
    try_start(r, shape.stream[i]);
    count_finished(static_cast<std::uint64_t>(shape.run(i)));
  }

  // What op `index` ending at `now` changes (finish_op's, and a solo run's hand_over's):
  // its rank's state (RankState::close), and the step ends. A step ends with its last op on
  // the compute stream: communication left running in the background (overlapped syncs)
  // belongs to the time of the steps it overlaps. Returns the op's stream.
  StreamState& close_op(RankState& rank, std::int32_t index, Time now) {
    StreamState& st = rank.close(index, now, compute_stream_);
    const auto i = u(index);
    if (rank.shape->stream[i] == compute_stream_ || compute_stream_ == kNone) {
      auto& step_end = result_.step_end[u(
          std::clamp(rank.shape->step[i], 0, static_cast<int>(result_.step_end.size()) - 1))];
      step_end = std::max(step_end, now);
    }
    result_.drain_end = std::max(result_.drain_end, now);
    return st;
  }

  const ReplayGraph& graph_;
  const cost::CostModel& cost_;
  const ReplayOptions& options_;
  engine::Simulator sim_;
  cost::GpuModel gpus_{sim_.fluid()};
  std::unique_ptr<network::Network> net_;
  std::optional<detail::ReplayTrace> trace_;  // when the options ask for a timeline
  detail::ReplayRanks ranks_;
  detail::CollectiveRendezvous rendezvous_;
  detail::HostProgress host_;  // collectives of ranks that move them between kernels
  std::int32_t compute_stream_ = kNone;
  std::size_t streams_ = 0;
  network::CollectiveSpec spec_;  // the collective being launched
  ReplayResult result_;
  static constexpr std::uint64_t kProgressOps = 1u << 16;  // ops between progress calls
  std::uint64_t finished_ops_ = 0, next_progress_ = kProgressOps;
  // Dataflow order (analytical mode, untraced; set only then): the network, the ops whose
  // end is known and not yet finished, and the events collectives would have taken in time
  // order.
  network::AnalyticalNetwork* dataflow_net_ = nullptr;
  struct Finished {
    std::int32_t rank, op;
    Time end;
  };
  std::vector<Finished> finished_;
  std::uint64_t collective_events_ = 0;
  // Solo runs' end events, and the events the engine would have taken for their kernels.
  std::uint64_t solo_end_events_ = 0, solo_kernel_events_ = 0;
};

}  // namespace

ReplayResult replay(const workload::OpGraph& graph, const topology::Cluster& cluster,
                    const cost::CostModel& cost, const ReplayOptions& options) {
  if (graph.ranks.empty()) throw Error("op graph: no ranks");
  return replay(replay_graph(graph, cluster, cost, options), cluster, cost, options);
}

ReplayResult replay(const ReplayGraph& graph, const topology::Cluster& cluster,
                    const cost::CostModel& cost, const ReplayOptions& options) {
  if (graph.ranks().empty()) throw Error("op graph: no ranks");
  if (graph.mode() != options.mode)
    throw Error("replay: the graph's kernels were costed for the other network mode");
  const auto run_options = with_host_progress(options, cluster, cost);
  if (graph.merges_kernel_runs() && !runs_in_dataflow_order(run_options))
    throw Error(
        "replay: a graph with merged kernel runs replays in dataflow order (analytical, "
        "untraced, no ranks that progress collectives on the host)");
  if (has_link_factors(cluster, cost)) {
    const topology::Cluster calibrated = calibrated_cluster(cluster, cost);
    Replayer replayer(graph, calibrated, cost, run_options);
    return replayer.run();
  }
  Replayer replayer(graph, cluster, cost, run_options);
  return replayer.run();
}

}  // namespace strait::sim::run
