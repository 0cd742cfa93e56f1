#include "sim/run/op_replay.hpp"

#include "sim/run/calibrated_cluster.hpp"

#include <algorithm>
#include <limits>

#include <boost/container/small_vector.hpp>

#include <fmt/format.h>

#include "sim/core/error.hpp"
#include "sim/core/huge_pages.hpp"
#include "sim/engine/simulator.hpp"
#include "sim/network/analytical_network.hpp"

namespace strait::sim::run {

Time RankAccount::exposed_comm_total() const {
  Time sum = Time::zero();
  for (const auto& t : exposed_comm) sum += t;
  return sum;
}

namespace {

using workload::Op;
using workload::OpKind;

constexpr std::int32_t kNone = -1;
// Flow mode: the capacity of a rank's SMs and of its HBM, each one fluid resource. A
// kernel's coefficients on them are its seconds alone (FlowKernel), so it takes them whole.
constexpr double kGpuShare = 1.0;

// A rank's op times as the wait chain reads them (account_wait): the public OpTimes, or a
// rank of a ReplayGraph during the replay. Both have, per op i: whether it is a collective,
// its class, when it was issued, started and ended, its stream predecessor, its deps.
template <class Times>
void account_wait_chain(RankAccount& a, Time idle_since, Time now, std::int32_t blocker,
                        const Times& times) {
  if (now <= idle_since) return;
  const auto live_collective = [&](std::int32_t i) {
    return i >= 0 && times.collective(i) && times.ended(i) > idle_since;
  };
  if (!live_collective(blocker)) {
    a.bubble += now - idle_since;
    return;
  }
  Time hi = now;
  for (std::int32_t b = blocker; live_collective(b) && hi > idle_since;) {
    const Time started = std::clamp(times.started(b), idle_since, hi);
    a.exposed_comm[static_cast<std::size_t>(times.comm_class(b))] += hi - started;
    const Time issued = std::clamp(times.issued(b), idle_since, started);
    a.straggler_wait += started - issued;
    hi = issued;
    std::int32_t next = times.stream_prev(b);
    times.for_each_dep(b, [&](std::int32_t d) {
      if (next == kNone || times.ended(d) > times.ended(next)) next = d;
    });
    b = next;
  }
  a.straggler_wait += hi - idle_since;
}

// OpTimes (whole ops, times per op) in the shape account_wait_chain reads.
struct WholeOpTimes {
  const OpTimes& t;
  static std::size_t u(std::int32_t i) { return static_cast<std::size_t>(i); }
  bool collective(std::int32_t i) const { return t.ops[u(i)].kind == OpKind::kCollective; }
  workload::CommClass comm_class(std::int32_t i) const { return t.ops[u(i)].collective.comm_class; }
  Time issued(std::int32_t i) const { return t.issued[u(i)]; }
  Time started(std::int32_t i) const { return t.started[u(i)]; }
  Time ended(std::int32_t i) const { return t.ended[u(i)]; }
  std::int32_t stream_prev(std::int32_t i) const {
    // The previous op on i's stream (its ops are in increasing index).
    const auto& on_stream = t.stream_ops[static_cast<std::size_t>(t.ops[u(i)].stream)];
    const auto at = std::lower_bound(on_stream.begin(), on_stream.end(), i);
    return at == on_stream.begin() ? kNone : *(at - 1);
  }
  template <class F>
  void for_each_dep(std::int32_t i, F f) const {
    for (auto d : t.ops[u(i)].deps) f(d);
  }
};

// Per op, the replay keeps only when it ended (infinite until then): whether an op may
// start and which dependency it waited for are read off its dependencies' ends when its
// stream reaches it, and so is when it started (was issued, for a collective): ops start
// as soon as their stream and dependencies are done. A collective also keeps when it
// started on the network (every member had issued it).
constexpr Time kNotEnded = Time::infinite();
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
  Time* ends = nullptr;                 // by op index
  Time* started = nullptr;              // by collective slot: when it started
  const Time* durations = nullptr;      // analytical mode: kernels by slot
  const FlowKernel* kernels = nullptr;  // flow mode: kernels by slot
  Time compute_idle_since;
  std::uint32_t ops_left = 0;
  engine::ResourceId sm, hbm;
  bool traced = false;
  // Its solo run, if one is going (see Replayer::begin_solo): the stream, the run's first
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
    std::int32_t group, position, calls;  // calls: collectives issued on the group so far
  };
  // A rank is in a handful of groups: kept inline and searched linearly (a heap vector per
  // rank was a cache miss on every collective a rank issued).
  boost::container::small_vector<Membership, 8> groups;
  const std::string* gpu_type = nullptr;
};

struct Instance {
  int arrived = 0;
  Time latest;  // when the last member so far issued it
  std::vector<std::pair<std::int32_t, std::int32_t>> members;  // (rank, op) by group position
};

// A group's collectives that some member has issued and not every member: calls first,
// first + 1, ... They launch in call order (a member issues call k + 1 only after call k,
// so the arrival completing k + 1 comes after every arrival at k): the first one pending
// is the next to launch, and a vector (no allocation while empty) serves as the queue.
struct PendingCalls {
  std::int32_t first = 0;
  std::vector<Instance> calls;
  // The members of the last call launched in dataflow order, kept for the next call's
  // (no allocation per collective).
  std::vector<std::pair<std::int32_t, std::int32_t>> spare;
};

class Replayer {
 public:
  Replayer(const ReplayGraph& graph, const topology::Cluster& cluster, const cost::CostModel& cost,
           const ReplayOptions& options)
      : graph_(graph), cluster_(cluster), cost_(cost), options_(options) {
    network::NetworkOptions net;
    net.mode = options.mode;
    net.calibration = collective_calibration(cluster, cost);
    if (graph.merges_kernel_runs() && !runs_in_dataflow_order(options))
      throw Error("replay: a graph with merged kernel runs replays in dataflow order, untraced");
    net_ = network::make_network(sim_, cluster, net);
    // Analytical mode without a trace runs in dataflow order (see run()).
    if (runs_in_dataflow_order(options))
      dataflow_net_ = static_cast<network::AnalyticalNetwork*>(net_.get());
    compute_stream_ = kNone;
    for (std::size_t s = 0; s < graph.streams().size(); ++s) {
      if (graph.streams()[s] == "compute") compute_stream_ = static_cast<std::int32_t>(s);
    }
    streams_ = graph.streams().size();
    const auto n = graph.ranks().size();
    instances_.resize(graph.groups().size());
    ranks_.resize(n);
    for (std::size_t g = 0; g < graph.groups().size(); ++g) {
      const auto& members = graph.groups()[g].ranks;
      for (std::size_t i = 0; i < members.size(); ++i) {
        const auto m = static_cast<std::size_t>(members[i]);
        if (m >= ranks_.size()) continue;  // not a rank of the graph: never calls
        ranks_[m].groups.push_back({static_cast<std::int32_t>(g), static_cast<std::int32_t>(i), 0});
      }
    }
    op_ends_.assign(graph.replay_ops(), kNotEnded);  // one pass over it (tens of MB at 16k)
    std::size_t collectives = 0;
    for (const auto& r : graph.ranks()) {
      if (r.shape >= 0) collectives += graph.shape(r).collectives.size();
    }
    collective_starts_.resize(collectives);
    result_.ranks.resize(n);
    result_.step_end.assign(static_cast<std::size_t>(std::max(1, graph.steps())), Time::zero());
    std::vector<char> traced(n, options.trace_ranks.empty());
    for (int r : options.trace_ranks) {
      if (r >= 0 && static_cast<std::size_t>(r) < traced.size())
        traced[static_cast<std::size_t>(r)] = 1;
    }
    for (std::size_t r = 0; r < n; ++r) init_rank(static_cast<std::int32_t>(r), traced[r] != 0);
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
    for (std::size_t r = 0; r < ranks_.size(); ++r) {
      auto& rank = ranks_[r];
      if (rank.ops_left > 0) {
        throw Error(
            fmt::format("simulation deadlocked: rank {} has {} ops that never ran (a collective "
                        "some group member never reached?)",
                        r, rank.ops_left));
      }
      account_tail(rank, makespan);
      result_.ranks[r] = rank.account;
    }
    result_.traffic = net_->traffic();
    for (int c = 0; c < workload::kCommClassCount; ++c)
      result_.class_traffic[static_cast<std::size_t>(c)] = net_->tagged(c);
    // In dataflow order, the events the time-ordered run would have taken: one per kernel
    // and one or two per collective.
    // With solo runs, the events the engine would have taken for their kernels instead of
    // the runs' own end events.
    result_.events = dataflow_net_ ? result_.kernels + collective_events_
                                   : sim_.events() - solo_end_events_ + solo_kernel_events_;
    return std::move(result_);
  }

 private:
  static std::size_t u(std::int64_t i) { return static_cast<std::size_t>(i); }
  static Time& started_of(const RankState& rank, std::int32_t i) {
    return rank.started[rank.shape->slot[u(i)]];
  }
  // When op i was issued: its stream's previous op and its dependencies had ended.
  static Time issued_of(const RankState& rank, std::int32_t i) {
    const auto& s = *rank.shape;
    Time at = Time::zero();
    if (const auto prev = s.stream_prev[u(i)]; prev >= 0) at = rank.ends[prev];
    for (auto k = s.dep_offsets[u(i)]; k < s.dep_offsets[u(i) + 1]; ++k)
      at = std::max(at, rank.ends[s.deps[u(k)]]);
    return at;
  }

  // One rank's op times for account_wait_chain.
  struct RankTimes {
    const RankState& rank;
    bool collective(std::int32_t i) const { return rank.shape->kind[u(i)] == OpKind::kCollective; }
    workload::CommClass comm_class(std::int32_t i) const {
      return rank.shape->collectives[u(rank.shape->slot[u(i)])].comm_class;
    }
    Time issued(std::int32_t i) const { return issued_of(rank, i); }
    Time started(std::int32_t i) const { return started_of(rank, i); }
    Time ended(std::int32_t i) const { return rank.ends[i]; }
    std::int32_t stream_prev(std::int32_t i) const { return rank.shape->stream_prev[u(i)]; }
    template <class F>
    void for_each_dep(std::int32_t i, F f) const {
      const auto& s = *rank.shape;
      for (auto k = s.dep_offsets[u(i)]; k < s.dep_offsets[u(i) + 1]; ++k) f(s.deps[u(k)]);
    }
  };

  void init_rank(std::int32_t r, bool traced) {
    auto& rank = ranks_[u(r)];
    rank.info = &graph_.ranks()[u(r)];
    rank.shape = rank.info->shape >= 0 ? &graph_.shape(*rank.info) : &empty_shape_;
    const auto n = rank.shape->ops();
    rank.ends = op_ends_.data() + rank.info->op_base;
    rank.started = collective_starts_.data() + rank.info->collective_base;
    rank.streams.resize(streams_);
    if (graph_.mode() == network::NetworkMode::kAnalytical)
      rank.durations = graph_.kernel_durations(*rank.info);
    else if (n > 0)
      rank.kernels = graph_.flow_kernels(*rank.info);
    rank.account.flops = rank.info->flops;
    rank.ops_left = static_cast<std::uint32_t>(n);
    rank.traced = traced;
    if (traced && options_.timeline && !graph_.kept_ops(r) && n > 0) {
      throw Error(fmt::format("replay: rank {} is traced but its ops were not kept", r));
    }
    const auto& gpu = cluster_.gpu(rank.info->gpu);
    rank.gpu_type = &gpu.type;
    if (options_.mode == network::NetworkMode::kFlow) {
      rank.sm = sim_.fluid().add_resource(kGpuShare);
      rank.hbm = sim_.fluid().add_resource(kGpuShare);
    }
    if (traced && options_.timeline) {
      options_.timeline->set_rank_name(
          r, fmt::format("rank {} ({})", r, cluster_.nodes()[gpu.node].name));
    }
  }

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
    if (stream == compute_stream_) account_gap(rank, now, waited_for);
    if (shape.kind[u(index)] == OpKind::kCollective) {
      arrive(r, index, now);
      return;
    }
    const auto slot = shape.slot[u(index)];
    result_.kernels += static_cast<std::uint64_t>(shape.run(u(index)));
    if (dataflow_net_) {
      finished_.push_back({r, index, now + rank.durations[slot]});
      return;
    }
    if (options_.mode == network::NetworkMode::kAnalytical) {  // traced: in time order
      sim_.after(rank.durations[slot], [this, r, index] { finish_op(r, index, sim_.now()); });
      return;
    }
    if (options_.solo_runs && !(rank.traced && options_.timeline) && rank.solo.stream == kNone &&
        sim_.fluid().users(rank.sm) == 0 && sim_.fluid().users(rank.hbm) == 0) {
      begin_solo(r, index, now);
      return;
    }
    launch_kernel(r, index, flow_kernel(rank, index).launch_overhead);
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
                 {&rank, &flow_kernel(rank, index)});
    } else {
      cut_solo(r);
      start_kernel(r, index, sim_.now());
    }
  }
  static const FlowKernel& flow_kernel(const RankState& rank, std::int32_t op) {
    return rank.kernels[rank.shape->slot[u(op)]];
  }

  // Kernel `index` of rank r as an engine activity on its SMs and HBM, started now, or
  // (`since` before now) one that has run alone there since then: a solo run cut short.
  void start_kernel(std::int32_t r, std::int32_t index, Time since) {
    const auto& st = ranks_[u(r)];
    // A solo run's times hold only while nothing shares its SMs (cut_solo comes first).
    if (st.solo.stream != kNone) throw Error("replay: a kernel joined a solo run that went on");
    sim_.fluid().prefetch(st.sm);  // overlaps their misses with the kernel's
    sim_.fluid().prefetch(st.hbm);
    const auto at = st.shape->slot[u(index)];
    const FlowKernel& k = flow_kernel(st, index);
    const engine::ResourceUse uses[] = {{st.sm, k.compute_seconds}, {st.hbm, k.memory_seconds}};
    engine::ActivitySpec spec;
    spec.work = 1.0;
    spec.priority = 1;
    spec.on_done = [this, r, index] { finish_op(r, index, sim_.now()); };
    // Its end reads the rank's state and starts what follows, most often the next kernel.
    spec.touches = {&st, at + 1 < st.shape->kernels ? &st.kernels[at + 1] : nullptr};
    if (since < sim_.now()) {
      sim_.fluid().start_since(std::move(spec), uses, since);
    } else {
      sim_.fluid().start(std::move(spec), uses);
    }
  }

  // Solo runs (flow mode). A kernel that finds its rank's SMs and HBM unused runs at its
  // bound, the rate the engine gives it alone, and so does every kernel it hands over to
  // (OpShape::hands_over: the next on its stream, waiting on nothing else, seen by nobody
  // else) while they stay alone. Such a run is advanced here instead of in the engine: the
  // kernels' launches and ends follow from their costs, and one event at the run's end
  // finishes them all, while the rank's state is in cache, instead of a launch event and an
  // activity per kernel. Before anything else starts on the SMs or HBM (a collective's
  // hold, a kernel of another stream), cut_solo() hands the run back to the engine at that
  // instant: kernels ended by then are finished, the one running becomes an activity that
  // has run alone since it started (FluidModel::start_since: the rate and predicted end it
  // had), the one launching gets its launch event. So every time is what the engine gives
  // kernel by kernel (tests/run: SoloRunsOf, OpReplay.SoloRunsMatchKernelByKernel...);
  // only equal-time callbacks may run in another order. Kernels' launches and ends were
  // about 90% of a flow run's events, each a cache miss on the rank's state and the heaps.
  //
  // When kernel `op` of rank r, reached by its stream at `launched`, ends alone.
  // (The engine's arithmetic on the capacities init_rank gave the SMs and HBM: their
  // resources are not read, only the kernel's costs.)
  static Time solo_end(const RankState& rank, std::int32_t op, Time launched) {
    const FlowKernel& k = flow_kernel(rank, op);
    const engine::FluidModel::CapacityUse uses[] = {{kGpuShare, k.compute_seconds},
                                                    {kGpuShare, k.memory_seconds}};
    return engine::FluidModel::finish_alone(1.0, uses, launched + k.launch_overhead);
  }
  // Events the engine takes for a kernel: its launch (after an overhead) and its end.
  std::uint64_t launch_events(const RankState& rank, std::int32_t op) const {
    return flow_kernel(rank, op).launch_overhead > Time::zero() ? 1 : 0;
  }

  void begin_solo(std::int32_t r, std::int32_t index, Time now) {
    auto& rank = ranks_[u(r)];
    const auto generation = rank.solo.generation + 1;
    rank.solo = {rank.shape->stream[u(index)], index, now, generation};
    ++result_.solo_kernels;
    Time end = now;
    for (std::int32_t op = index; op != kNone; op = rank.shape->hands_over[u(op)])
      end = solo_end(rank, op, end);
    sim_.after(end - now, [this, r, generation] { end_solo(r, generation); }, {&rank, nullptr});
  }

  // The run's end event: finishes its kernels, the last as any op ends.
  void end_solo(std::int32_t r, std::uint32_t generation) {
    ++solo_end_events_;
    auto& rank = ranks_[u(r)];
    if (rank.solo.stream == kNone || rank.solo.generation != generation) return;  // cut short
    Time at = rank.solo.launched;
    for (std::int32_t op = rank.solo.op;;) {
      const Time end = solo_end(rank, op, at);
      solo_kernel_events_ += 1 + launch_events(rank, op);
      const auto next = rank.shape->hands_over[u(op)];
      if (next == kNone) {
        rank.solo.stream = kNone;
        finish_op(r, op, end);
        return;
      }
      hand_over(rank, op, end);
      at = end;
    }
  }

  // Kernel `op` of a solo run ends at t and the next on its stream starts: what finish_op
  // and start_op do for it, none of which anyone else reads.
  void hand_over(RankState& rank, std::int32_t& op, Time t) {
    const auto i = u(op);
    StreamState& st = close_op(rank, op, t);
    count_finished(1);
    st.start = t;
    ++result_.kernels;
    ++result_.solo_kernels;
    op = rank.shape->hands_over[i];
    rank.solo.op = op;
    rank.solo.launched = t;
  }

  // Something is about to start on rank r's SMs or HBM now: its solo run, if any, goes back
  // to the engine (see above).
  void cut_solo(std::int32_t r) {
    auto& rank = ranks_[u(r)];
    if (rank.solo.stream == kNone) return;
    const Time now = sim_.now();
    for (std::int32_t op = rank.solo.op;;) {
      const Time launched = rank.solo.launched;
      const Time end = solo_end(rank, op, launched);
      if (end <= now && rank.shape->hands_over[u(op)] != kNone) {
        solo_kernel_events_ += 1 + launch_events(rank, op);
        hand_over(rank, op, end);
        continue;
      }
      // The kernel running or launching (the last one may end this very instant: as an
      // activity it then completes in this instant, before any rate is set).
      rank.solo.stream = kNone;
      ++rank.solo.generation;  // its end event goes stale
      ++result_.solo_cuts;
      // Launched by now (this instant too: as the engine would, unless its launch event ran
      // already), it becomes an activity from its start; else it gets its launch event.
      const Time start = launched + flow_kernel(rank, op).launch_overhead;
      if (start <= now) {
        solo_kernel_events_ += launch_events(rank, op);
        start_kernel(r, op, start);
      } else {
        launch_kernel(r, op, start - now);
      }
      return;
    }
  }

  void count_finished(std::uint64_t ops) {
    finished_ops_ += ops;
    if (options_.progress && finished_ops_ >= next_progress_) {
      options_.progress(result_.drain_end, finished_ops_);
      next_progress_ = (finished_ops_ / kProgressOps + 1) * kProgressOps;
    }
  }

  // What the end of op i at t adds to the rank's and the run's times. A step ends with its
  // last op on the compute stream: communication left running in the background
  // (overlapped syncs) belongs to the time of the steps it overlaps.
  void book_end(RankState& rank, std::size_t i, Time t) {
    const auto& shape = *rank.shape;
    const auto stream = shape.stream[i];
    if (stream == compute_stream_ || compute_stream_ == kNone) {
      auto& step_end = result_.step_end[u(
          std::clamp(shape.step[i], 0, static_cast<int>(result_.step_end.size()) - 1))];
      step_end = std::max(step_end, t);
    }
    rank.account.end = std::max(rank.account.end, t);
    result_.drain_end = std::max(result_.drain_end, t);
    --rank.ops_left;
  }

  // After its last compute op a rank may still wait for its own collectives (e.g. a
  // replica sync), then for the slowest rank (see run::account_tail).
  void account_tail(RankState& rank, Time makespan) {
    const Time t = std::min(rank.compute_idle_since, makespan);
    const auto& shape = *rank.shape;
    std::vector<CollectiveSpan> spans;
    for (std::size_t i = 0; i < shape.ops(); ++i) {
      const auto op = static_cast<std::int32_t>(i);
      if (shape.kind[i] == OpKind::kCollective && rank.ends[op] > t) {
        spans.push_back(
            {started_of(rank, op), rank.ends[op], shape.collectives[u(shape.slot[i])].comm_class});
      }
    }
    run::account_tail(rank.account, t, makespan, std::move(spans));
  }

  // The compute stream was idle from compute_idle_since until now: say why.
  void account_gap(RankState& rank, Time now, std::int32_t waited_for) {
    const Time gap_start = rank.compute_idle_since;
    if (now <= gap_start) return;
    account_wait_chain(rank.account, gap_start, now, waited_for, RankTimes{rank});
  }

  void arrive(std::int32_t r, std::int32_t index, Time now) {
    auto& rank = ranks_[u(r)];
    const auto g = graph_.collective_group(*rank.info, rank.shape->slot[u(index)]);
    if (g < 0 || u(g) >= graph_.groups().size()) {
      throw Error(fmt::format(
          "op graph: rank {} calls a collective on group {}, which does not exist", r, g));
    }
    RankState::Membership* member = nullptr;
    for (auto& m : rank.groups) {
      if (m.group == g) member = &m;
    }
    if (!member) {
      throw Error(
          fmt::format("op graph: rank {} calls a collective on group '{}' it is not a "
                      "member of",
                      r, graph_.groups()[u(g)].name));
    }
    const auto k = member->calls++;
    const auto& members = graph_.groups()[u(g)].ranks;
    auto& pending = instances_[u(g)];
    const auto at = u(k - pending.first);
    if (at >= pending.calls.size()) pending.calls.resize(at + 1);
    auto& inst = pending.calls[at];
    if (inst.members.empty()) {
      inst.members.swap(pending.spare);
      inst.members.assign(members.size(), {kNone, kNone});
    }
    inst.members[u(member->position)] = {r, index};
    inst.latest = std::max(inst.latest, now);
    if (++inst.arrived < static_cast<int>(members.size())) return;
    launch_collective(g, k, r, inst.latest);
  }

  const CollectiveShape& call_of(std::int32_t rank, std::int32_t op) const {
    const auto& st = ranks_[u(rank)];
    return st.shape->collectives[u(st.shape->slot[u(op)])];
  }
  Bytes bytes_of(std::int32_t rank, std::int32_t op) const {
    const auto& st = ranks_[u(rank)];
    return graph_.collective_bytes(*st.info, st.shape->slot[u(op)]);
  }

  // `last` is the member whose arrival completed the group: in traces an arrow goes from it
  // to every other traced member, showing whom they waited for.
  void launch_collective(std::int32_t g, std::int32_t k, std::int32_t last, Time now) {
    auto& pending = instances_[u(g)];
    if (k != pending.first) throw Error("replay: collectives of a group launched out of order");
    Instance launched = std::move(pending.calls.front());
    pending.calls.erase(pending.calls.begin());
    ++pending.first;
    const auto& members = launched.members;
    const auto [first_rank, first_op] = members[0];
    const CollectiveShape& call = call_of(first_rank, first_op);
    const Bytes bytes = bytes_of(first_rank, first_op);
    // In dataflow order one spec, its buffers kept from call to call (an all_to_allv's
    // matrix at 512 ranks is 2 MiB); in time order the network may call back before
    // start_collective returns, so a spec of its own.
    network::CollectiveSpec own;
    network::CollectiveSpec& spec = dataflow_net_ ? spec_ : own;
    spec.gpus.clear();
    spec.send_bytes.clear();
    spec.send_matrix.clear();
    spec.op = call.op;
    spec.algorithm = call.algorithm;
    spec.bytes = bytes;
    spec.priority = call.priority;
    spec.traffic_tag = static_cast<int>(call.comm_class);
    const auto n = members.size();
    spec.gpus.reserve(n);
    for (const auto& [rank, op] : members) spec.gpus.push_back(ranks_[u(rank)].info->gpu);
    if (call.op == network::CollectiveOp::kAllToAll) {
      // Compact all-to-all: members may each send a different (uniform) buffer.
      bool differ = false;
      for (const auto& [rank, op] : members) differ = differ || bytes_of(rank, op) != bytes;
      if (differ) {
        spec.send_bytes.reserve(n);
        for (const auto& [rank, op] : members) spec.send_bytes.push_back(bytes_of(rank, op));
      }
    }
    if (call.op == network::CollectiveOp::kAllToAllV) {
      spec.send_matrix.reserve(n * n);
      for (const auto& [rank, op] : members) {
        const auto& st = ranks_[u(rank)];
        const auto& row = graph_.send_row(*st.info, call_of(rank, op).row);
        if (row.size() != n) {
          throw Error(fmt::format(
              "op graph: all_to_allv on group '{}' has a send row of {} entries for {} members",
              graph_.groups()[u(g)].name, row.size(), n));
        }
        spec.send_matrix.insert(spec.send_matrix.end(), row.begin(), row.end());
      }
    }
    std::vector<engine::ActivityId> holds;
    if (options_.mode == network::NetworkMode::kFlow && !call.sm_free) {
      for (const auto& [rank, op] : members) {
        const auto& st = ranks_[u(rank)];
        const double fraction = cost_.comm_sm_fraction(*st.gpu_type);
        if (fraction <= 0) continue;
        engine::ActivitySpec hold;
        hold.work = std::numeric_limits<double>::infinity();
        hold.priority = 0;
        hold.max_rate = fraction;
        const engine::ResourceUse use[] = {{st.sm, 1.0}};
        cut_solo(rank);
        holds.push_back(sim_.fluid().start(std::move(hold), use));
      }
    }
    for (const auto& [rank, op] : members) started_of(ranks_[u(rank)], op) = now;
    if (options_.timeline && ranks_[u(last)].traced) {
      auto& tl = *options_.timeline;
      const auto& last_state = ranks_[u(last)];
      std::int32_t last_op = kNone;
      for (const auto& [rank, op] : members) {
        if (rank == last) last_op = op;
      }
      const auto from_track = tl.track(graph_.streams()[u(last_state.shape->stream[u(last_op)])]);
      for (const auto& [rank, op] : members) {
        const auto& st = ranks_[u(rank)];
        if (rank == last || !st.traced) continue;
        const auto to_track = tl.track(graph_.streams()[u(st.shape->stream[u(op)])]);
        tl.add_flow(next_flow_++, TraceFlowEnd{last, from_track, now},
                    TraceFlowEnd{rank, to_track, now}, "waited for", "collective");
      }
    }
    ++result_.collectives;
    if (dataflow_net_) {
      const auto timed = dataflow_net_->time_collective(spec);
      collective_events_ += timed.delay > Time::zero() ? 2 : 1;
      for (auto m = members.rbegin(); m != members.rend(); ++m)
        finished_.push_back({m->first, m->second, now + timed.time});
      pending.spare = std::move(launched.members);
      return;
    }
    auto inst = std::make_shared<Instance>(std::move(launched));
    net_->start_collective(spec, [this, inst, holds = std::move(holds)] {
      for (auto h : holds) sim_.fluid().cancel(h);
      for (const auto& [rank, op] : inst->members) finish_op(rank, op, sim_.now());
    });
  }

  void finish_op(std::int32_t r, std::int32_t index, Time now) {
    auto& rank = ranks_[u(r)];
    const auto& shape = *rank.shape;
    const auto i = u(index);
    StreamState& st = close_op(rank, index, now);
    st.busy = false;
    if (rank.traced && options_.timeline) record(r, rank, index, st.start);
    for (auto k = shape.succ_offsets[i]; k < shape.succ_offsets[i + 1]; ++k)
      try_start(r, shape.stream[u(shape.succ[u(k)])]);
    try_start(r, shape.stream[i]);
    count_finished(static_cast<std::uint64_t>(shape.run(i)));
  }

  // What op `index` ending at `now` changes on its rank (finish_op's, and a solo run's
  // hand_over's): its end, its stream's position, the compute stream's account, the step
  // ends. Returns its stream.
  StreamState& close_op(RankState& rank, std::int32_t index, Time now) {
    const auto& shape = *rank.shape;
    const auto i = u(index);
    const auto stream = shape.stream[i];
    const bool collective = shape.kind[i] == OpKind::kCollective;
    rank.ends[index] = now;
    StreamState& st = rank.streams[u(stream)];
    ++st.head;
    st.free_at = now;
    if (stream == compute_stream_) {
      if (!collective) {
        rank.account.compute += now - st.start;
      } else {
        // A collective on the compute stream itself: its wait and transfer are exposed.
        // Issued when the stream started it.
        const Time started = started_of(rank, index);
        rank.account.straggler_wait += started - st.start;
        rank.account
            .exposed_comm[u(static_cast<int>(shape.collectives[u(shape.slot[i])].comm_class))] +=
            now - started;
      }
      rank.compute_idle_since = now;
    }
    book_end(rank, i, now);
    return st;
  }

  void record(std::int32_t r, const RankState& rank, std::int32_t index, Time op_start) {
    auto& tl = *options_.timeline;
    const auto i = u(index);
    const Op& op = (*graph_.kept_ops(r))[i];
    const Time op_end = rank.ends[index];
    const auto track = tl.track(graph_.streams()[u(op.stream)]);
    const auto name = tl.name(graph_.names()[u(op.name)]);
    if (op.kind == OpKind::kKernel) {
      tl.add_span(r, track, name, tl.name(cost::to_string(op.kernel.kind)), op_start, op_end,
                  {TraceArg("step", op.step), TraceArg("flops", op.kernel.flops),
                   TraceArg("hbm_bytes", op.kernel.hbm_bytes)});
    } else {
      const auto category = tl.name(workload::to_string(op.collective.comm_class));
      const Time started = started_of(rank, index);
      if (started > op_start) {
        tl.add_span(r, track, tl.name("wait for peers"), category, op_start, started);
      }
      const auto& group = graph_.groups()[u(op.collective.group)];
      tl.add_span(r, track, name, category, started, op_end,
                  {TraceArg("step", op.step), TraceArg("bytes", op.collective.bytes),
                   TraceArg("op", network::to_string(op.collective.op)),
                   TraceArg("group", group.name), TraceArg("group_size", group.ranks.size())});
    }
  }

  const ReplayGraph& graph_;
  const topology::Cluster& cluster_;
  const cost::CostModel& cost_;
  const ReplayOptions& options_;
  engine::Simulator sim_;
  std::unique_ptr<network::Network> net_;
  std::int32_t compute_stream_ = kNone;
  std::size_t streams_ = 0;
  OpShape empty_shape_;
  HugeVector<RankState> ranks_;
  // Every rank's slice at its ReplayRank offsets (op_base, collective_base); sized once, so
  // RankState's pointers stay valid.
  HugeVector<Time> op_ends_;
  HugeVector<Time> collective_starts_;
  std::vector<PendingCalls> instances_;  // by group
  network::CollectiveSpec spec_;         // the collective being launched
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
  std::uint64_t next_flow_ = 0;
  // Solo runs' end events, and the events the engine would have taken for their kernels.
  std::uint64_t solo_end_events_ = 0, solo_kernel_events_ = 0;
};

}  // namespace

bool traced_rank(const ReplayOptions& options, int rank) {
  if (!options.timeline) return false;
  if (options.trace_ranks.empty()) return true;
  return std::find(options.trace_ranks.begin(), options.trace_ranks.end(), rank) !=
         options.trace_ranks.end();
}

bool runs_in_dataflow_order(const ReplayOptions& options) {
  return options.mode == network::NetworkMode::kAnalytical && !options.timeline;
}

ReplayGraph replay_graph(const workload::OpGraph& graph, const topology::Cluster& cluster,
                         const cost::CostModel& cost, const ReplayOptions& options) {
  ReplayGraph out(options.mode, runs_in_dataflow_order(options));
  for (std::size_t r = 0; r < graph.ranks.size(); ++r) {
    const auto& ro = graph.ranks[r];
    const auto rank = static_cast<int>(r);
    out.add_rank(rank, ro, cost.profile(cluster.gpu(ro.gpu).type), traced_rank(options, rank));
  }
  out.finish(graph);
  return out;
}

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
  if (has_link_factors(cluster, cost)) {
    const topology::Cluster calibrated = calibrated_cluster(cluster, cost);
    Replayer replayer(graph, calibrated, cost, options);
    return replayer.run();
  }
  Replayer replayer(graph, cluster, cost, options);
  return replayer.run();
}

void account_tail(RankAccount& a, Time from, Time makespan, std::vector<CollectiveSpan> spans) {
  if (makespan <= from) return;
  std::erase_if(spans, [&](const CollectiveSpan& s) {
    return s.end <= from || s.start >= makespan || s.end <= s.start;
  });
  std::vector<Time> cuts = {from, makespan};
  for (const auto& s : spans) {
    cuts.push_back(std::max(s.start, from));
    cuts.push_back(std::min(s.end, makespan));
  }
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  for (std::size_t k = 0; k + 1 < cuts.size(); ++k) {
    const Time lo = cuts[k], hi = cuts[k + 1];
    const CollectiveSpan* running = nullptr;
    for (const auto& s : spans) {
      if (s.start <= lo && s.end >= hi && (!running || s.end > running->end)) running = &s;
    }
    if (running) {
      a.exposed_comm[static_cast<std::size_t>(running->comm_class)] += hi - lo;
    } else {
      a.straggler_wait += hi - lo;
    }
  }
}

std::vector<std::vector<std::int32_t>> ops_by_stream(const std::vector<workload::Op>& ops) {
  std::vector<std::vector<std::int32_t>> out;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const auto s = static_cast<std::size_t>(ops[i].stream);
    if (s >= out.size()) out.resize(s + 1);
    out[s].push_back(static_cast<std::int32_t>(i));
  }
  return out;
}

void account_wait(RankAccount& a, Time idle_since, Time now, std::int32_t blocker,
                  const OpTimes& times) {
  account_wait_chain(a, idle_since, now, blocker, WholeOpTimes{times});
}

RankAccount per_step(const RankAccount& a, std::int64_t steps) {
  RankAccount out = a;
  const std::int64_t k = std::max<std::int64_t>(1, steps);
  auto div = [k](Time t) { return Time::from_ps(t.ps() / k); };
  out.compute = div(a.compute);
  out.straggler_wait = div(a.straggler_wait);
  out.bubble = div(a.bubble);
  for (auto& t : out.exposed_comm) t = div(t);
  out.flops = a.flops / static_cast<double>(k);
  return out;
}

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const double pos = p * static_cast<double>(values.size() - 1);
  const auto lo = static_cast<std::size_t>(pos);
  const auto hi = std::min(lo + 1, values.size() - 1);
  return values[lo] + (values[hi] - values[lo]) * (pos - static_cast<double>(lo));
}

}  // namespace strait::sim::run
