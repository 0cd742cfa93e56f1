// The CPU executor on MPI (see cpu_executor.hpp).

#include "executor/cpu_executor.hpp"

#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "executor/collective_calls.hpp"
#include "executor/cpu_kernels.hpp"
#include "executor/detail/rank_job.hpp"
#include "executor/op_scheduler.hpp"
#include "sim/core/error.hpp"

namespace strait::executor {
namespace {

using Clock = std::chrono::steady_clock;
using sim::network::CollectiveOp;
using sim::workload::Op;
using sim::workload::OpGraph;
using sim::workload::OpKind;

int as_count(std::int64_t n, const Op& op) {
  if (n < 0 || n > INT_MAX)
    throw Error(fmt::format("strait exec: collective of {} bytes is beyond MPI's int counts",
                            op.collective.bytes));
  return static_cast<int>(n);
}

// One communicator per process group (MPI_COMM_NULL where this rank is no member).
struct Groups {
  std::vector<MPI_Comm> comms;
  ~Groups() {
    for (auto& c : comms) {
      if (c != MPI_COMM_NULL) MPI_Comm_free(&c);
    }
  }
};

// A collective op's MPI call with its buffers and counts, made once before the first run
// (a framework reuses its communication buffers; filling them is no part of a
// collective's time).
struct PreparedCollective {
  std::function<int(MPI_Request*)> start;
  std::vector<char> send, recv;
  std::vector<int> send_counts, send_displs, recv_counts, recv_displs;
};

// `size` bytes (at least 1, so no buffer pointer is null) of ones in `buffer`.
void fill(std::vector<char>& buffer, std::int64_t size) {
  buffer.assign(static_cast<std::size_t>(std::max<std::int64_t>(size, 1)), 1);
}

// The prepare_* below size `p`'s buffers for one collective kind and set its MPI call,
// which reads them through `p` (n: the group's members).
void prepare_all_reduce(PreparedCollective& p, const Op& op, MPI_Comm comm) {
  const std::int64_t bytes = op.collective.bytes;
  const int count = as_count(bytes / 4, op);
  fill(p.send, bytes);
  fill(p.recv, bytes);
  p.start = [c = &p, count, comm](MPI_Request* r) {
    return MPI_Iallreduce(c->send.data(), c->recv.data(), count, MPI_FLOAT, MPI_SUM, comm, r);
  };
}

void prepare_all_gather(PreparedCollective& p, const Op& op, std::int64_t n, MPI_Comm comm) {
  const int chunk = as_count(op.collective.bytes / n, op);
  fill(p.send, chunk);
  fill(p.recv, chunk * n);
  p.start = [c = &p, chunk, comm](MPI_Request* r) {
    return MPI_Iallgather(c->send.data(), chunk, MPI_BYTE, c->recv.data(), chunk, MPI_BYTE, comm,
                          r);
  };
}

void prepare_reduce_scatter(PreparedCollective& p, const Op& op, std::int64_t n, MPI_Comm comm) {
  const int block = as_count(op.collective.bytes / n / 4, op);
  fill(p.send, std::int64_t{block} * n * 4);
  fill(p.recv, std::int64_t{block} * 4);
  p.start = [c = &p, block, comm](MPI_Request* r) {
    return MPI_Ireduce_scatter_block(c->send.data(), c->recv.data(), block, MPI_FLOAT, MPI_SUM,
                                     comm, r);
  };
}

// all_to_all: every member sends its buffer / n to each (members may differ); all_to_allv:
// send_row[j] to member j. `peers`: the bytes to and from each member. MPI_Ialltoall when
// every count is the same, else MPI_Ialltoallv.
void prepare_all_to_all(PreparedCollective& p, const Op& op,
                        const CollectiveCalls::PeerBytes& peers, MPI_Comm comm) {
  bool uniform = true;
  for (std::size_t j = 0; j < peers.send.size(); ++j) {
    p.send_counts.push_back(as_count(peers.send[j], op));
    p.recv_counts.push_back(as_count(peers.recv[j], op));
    uniform =
        uniform && p.recv_counts[j] == p.send_counts[0] && p.send_counts[j] == p.send_counts[0];
  }
  std::int64_t sent = 0, received = 0;
  for (std::size_t j = 0; j < peers.send.size(); ++j) {
    p.send_displs.push_back(static_cast<int>(sent));
    p.recv_displs.push_back(static_cast<int>(received));
    sent += p.send_counts[j];
    received += p.recv_counts[j];
  }
  as_count(sent, op);
  as_count(received, op);
  fill(p.send, sent);
  fill(p.recv, received);
  if (uniform) {
    p.start = [c = &p, comm](MPI_Request* r) {
      return MPI_Ialltoall(c->send.data(), c->send_counts[0], MPI_BYTE, c->recv.data(),
                           c->send_counts[0], MPI_BYTE, comm, r);
    };
  } else {
    p.start = [c = &p, comm](MPI_Request* r) {
      return MPI_Ialltoallv(c->send.data(), c->send_counts.data(), c->send_displs.data(), MPI_BYTE,
                            c->recv.data(), c->recv_counts.data(), c->recv_displs.data(), MPI_BYTE,
                            comm, r);
    };
  }
}

class RankRunner {
 public:
  RankRunner(const OpGraph& graph, int rank, std::int64_t table_rows, double collective_timeout_s,
             double startup_timeout_s)
      : graph_(graph),
        rank_(rank),
        collective_timeout_s_(collective_timeout_s),
        startup_timeout_s_(startup_timeout_s),
        hooks_(rank),
        ops_(graph.ranks[static_cast<std::size_t>(rank)].ops),
        kernels_(table_rows),
        handles_(ops_.size(), -1),
        times_{std::vector<Time>(ops_.size()), std::vector<Time>(ops_.size())},
        calls_(graph, rank) {
    make_groups();
    collectives_.resize(ops_.size());
    for (std::size_t i = 0; i < ops_.size(); ++i) {
      if (ops_[i].kind == OpKind::kKernel)
        handles_[i] = kernels_.prepare(ops_[i].kernel, ops_[i].step);
      if (ops_[i].kind == OpKind::kCollective)
        collectives_[i] = prepare_collective(static_cast<std::int32_t>(i));
    }
  }

  // Runs every op (again, when called again); returns the wall time in seconds.
  double run() {
    if (runs_ > 0) kernels_.redraw(runs_);
    ++runs_;
    scheduler_.emplace(graph_.ranks[static_cast<std::size_t>(rank_)], graph_.streams.size(),
                       graph_.groups.size());
    // The first run's barrier is the last wait of the start-up (the peers' preparation).
    detail::wait_for_ranks(
        "the start barrier", rank_,
        runs_ == 1 ? startup_timeout_s_ : job_wait_limit_s(collective_timeout_s_));
    start_ = Clock::now();
    while (!scheduler_->done()) {
      bool progressed = false;
      std::optional<std::int32_t> kernel;
      for (auto index : scheduler_->ready()) {
        if (ops_[static_cast<std::size_t>(index)].kind == OpKind::kCollective) {
          detail::set_current_op(index);
          hooks_.at(index);
          start_collective(index);
          set_current();
          progressed = true;
        } else if (!kernel) {
          kernel = index;
        }
      }
      if (kernel) {
        const auto i = static_cast<std::size_t>(*kernel);
        detail::set_current_op(*kernel);
        hooks_.at(*kernel);
        scheduler_->start(*kernel);
        times_.start[i] = now();
        kernels_.run(handles_[i]);
        times_.end[i] = now();
        scheduler_->finish(*kernel);
        set_current();
        progressed = true;
      }
      if (!requests_.empty()) progressed = test_some() || progressed;
      if (!progressed) {
        if (requests_.empty())
          throw Error(fmt::format("strait exec: rank {} has ops left but none can start", rank_));
        wait_any();
      }
    }
    detail::set_current_op(-1);
    return std::chrono::duration<double>(Clock::now() - start_).count();
  }

  const OpTimes& times() const { return times_; }

 private:
  // The op this rank is in for the SIGTERM handler: the oldest collective in flight.
  void set_current() { detail::set_current_op(in_flight_.empty() ? -1 : in_flight_.front()); }

  // The watchdog: the oldest collective in flight past the timeout aborts the job.
  void check_timeout() const {
    if (in_flight_.empty() || collective_timeout_s_ <= 0) return;
    if (std::chrono::duration<double>(Clock::now() - posted_.front()).count() <=
        collective_timeout_s_)
      return;
    const Op& op = ops_[static_cast<std::size_t>(in_flight_.front())];
    detail::end_job(fmt::format(
        "strait exec: rank {}: collective '{}' (group {}, step {}) did not complete in {:g} s\n",
        rank_, graph_.names[static_cast<std::size_t>(op.name)],
        graph_.groups[static_cast<std::size_t>(op.collective.group)].name, op.step,
        collective_timeout_s_));
  }

  // Records that the collectives in `slots` (of requests_) completed now.
  void finish_collectives(std::vector<int> slots) {
    const Time end = now();
    std::sort(slots.rbegin(), slots.rend());
    for (int s : slots) {
      const auto k = static_cast<std::size_t>(s);
      times_.end[static_cast<std::size_t>(in_flight_[k])] = end;
      scheduler_->finish(in_flight_[k]);
      requests_.erase(requests_.begin() + s);
      in_flight_.erase(in_flight_.begin() + s);
      posted_.erase(posted_.begin() + s);
    }
    set_current();
  }

  bool test_some() {
    std::vector<int> done(requests_.size());
    int count = 0;
    detail::check_mpi(MPI_Testsome(static_cast<int>(requests_.size()), requests_.data(), &count,
                                   done.data(), MPI_STATUSES_IGNORE),
                      "MPI_Testsome");
    if (count <= 0 || count == MPI_UNDEFINED) return false;
    done.resize(static_cast<std::size_t>(count));
    finish_collectives(std::move(done));
    return true;
  }

  // MPI_Waitany with the watchdog: polls (as Open MPI's Waitany does) until one completes.
  void wait_any() {
    int slot = MPI_UNDEFINED;
    int flag = 0;
    while (true) {
      detail::check_mpi(MPI_Testany(static_cast<int>(requests_.size()), requests_.data(), &slot,
                                    &flag, MPI_STATUS_IGNORE),
                        "MPI_Testany");
      if (flag) break;
      check_timeout();
    }
    if (slot != MPI_UNDEFINED) finish_collectives({slot});
  }

  Time now() const {
    return Time::from_ns(std::chrono::duration<double, std::nano>(Clock::now() - start_).count());
  }

  void make_groups() {
    // MPI_Comm_split waits for every rank and has no non-blocking form: first make sure
    // that all are here (right after MPI_Init; nothing in between waits for a peer).
    detail::wait_for_ranks("start-up (communicators)", rank_, startup_timeout_s_);
    groups_.comms.assign(graph_.groups.size(), MPI_COMM_NULL);
    for (std::size_t g = 0; g < graph_.groups.size(); ++g) {
      const int position = calls_.position(g);
      detail::check_mpi(MPI_Comm_split(MPI_COMM_WORLD, position < 0 ? MPI_UNDEFINED : 0,
                                       std::max(position, 0), &groups_.comms[g]),
                        "MPI_Comm_split");
    }
  }

  // Starts collective `index`: its prepared MPI call.
  void start_collective(std::int32_t index) {
    const auto i = static_cast<std::size_t>(index);
    scheduler_->start(index);
    times_.start[i] = now();
    MPI_Request request = MPI_REQUEST_NULL;
    detail::check_mpi(collectives_[i]->start(&request), "starting a collective");
    requests_.push_back(request);
    in_flight_.push_back(index);
    posted_.push_back(Clock::now());
  }

  // Collective op `index`'s MPI call, buffers and counts.
  std::unique_ptr<PreparedCollective> prepare_collective(std::int32_t index) {
    const auto i = static_cast<std::size_t>(index);
    const Op& op = ops_[i];
    const auto g = calls_.group_of(i);
    const MPI_Comm comm = groups_.comms[g];
    const auto n = static_cast<std::int64_t>(graph_.groups[g].ranks.size());
    auto p = std::make_unique<PreparedCollective>();
    switch (op.collective.op) {
      case CollectiveOp::kAllReduce:
        prepare_all_reduce(*p, op, comm);
        break;
      case CollectiveOp::kAllGather:
        prepare_all_gather(*p, op, n, comm);
        break;
      case CollectiveOp::kReduceScatter:
        prepare_reduce_scatter(*p, op, n, comm);
        break;
      case CollectiveOp::kAllToAll:
      case CollectiveOp::kAllToAllV:
        prepare_all_to_all(*p, op, calls_.all_to_all_bytes(i), comm);
        break;
      default:
        detail::unsupported_collective(graph_, op);
    }
    return p;
  }

  const OpGraph& graph_;
  int rank_;
  double collective_timeout_s_;
  double startup_timeout_s_;
  detail::FaultHooks hooks_;
  const std::vector<Op>& ops_;
  std::optional<OpScheduler> scheduler_;  // fresh for every run
  CpuKernels kernels_;
  std::vector<int> handles_;
  OpTimes times_;
  Groups groups_;
  CollectiveCalls calls_;
  std::vector<std::unique_ptr<PreparedCollective>> collectives_;  // by op index
  // Collectives in flight, oldest first: request, op index, when posted.
  std::vector<MPI_Request> requests_;
  std::vector<std::int32_t> in_flight_;
  std::vector<Clock::time_point> posted_;
  Clock::time_point start_;
  int runs_ = 0;
};

}  // namespace

MpiSession::MpiSession(double startup_timeout_s) : startup_timeout_s_(startup_timeout_s) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    const int launched_as = detail::launcher_rank();
    detail::stall_if_hooked("init", launched_as);
    // Open MPI's MPI_Init waits for every process of the job: one that stopped or stalls
    // before it (loading its files, say) would keep the others here for ever.
    const detail::ProcessDeadline deadline(
        fmt::format("strait exec: {}start-up (MPI_Init) did not complete in {:g} s: a peer did "
                    "not arrive (stopped or stalled before it)\n",
                    launched_as >= 0 ? fmt::format("rank {}: ", launched_as) : std::string(),
                    startup_timeout_s),
        startup_timeout_s);
    int provided = 0;
    detail::check_mpi(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SINGLE, &provided),
                      "MPI_Init_thread");
    owns_ = true;
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  detail::stall_if_hooked("setup", rank_);
}

MpiSession::~MpiSession() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (owns_ && !finalized) MPI_Finalize();
}

bool mpi_available() { return true; }

MeasuredRun run_cpu_ranks(const OpGraph& graph, const MpiSession& session, std::int64_t table_rows,
                          int warmup_runs, double collective_timeout_s) {
  return detail::run_rank_job(graph, session, "cpu", warmup_runs, collective_timeout_s, [&] {
    RankRunner runner(graph, session.rank(), table_rows, collective_timeout_s,
                      session.startup_timeout_s());
    return detail::warm_up_and_measure(runner, warmup_runs);
  });
}

}  // namespace strait::executor
