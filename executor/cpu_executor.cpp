// The CPU executor on MPI (see cpu_executor.hpp).

#include "executor/cpu_executor.hpp"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "executor/cpu_kernels.hpp"
#include "executor/op_scheduler.hpp"
#include "sim/core/error.hpp"

namespace strait::executor {
namespace {

using sim::network::CollectiveOp;
using sim::workload::Op;
using sim::workload::OpGraph;
using sim::workload::OpKind;
using Clock = std::chrono::steady_clock;

void check(int code, const char* what) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw Error(fmt::format("strait exec: {} failed: {}", what, std::string(text, length)));
}

int as_count(std::int64_t n, const Op& op) {
  if (n < 0 || n > INT_MAX)
    throw Error(fmt::format("strait exec: collective of {} bytes is beyond MPI's int counts",
                            op.collective.bytes));
  return static_cast<int>(n);
}

// One communicator per process group, and where this rank sits in each.
struct Groups {
  std::vector<MPI_Comm> comms;
  std::vector<int> position;  // -1: not a member
  ~Groups() {
    for (auto& c : comms) {
      if (c != MPI_COMM_NULL) MPI_Comm_free(&c);
    }
  }
};

// A started collective: its buffers live until it completes.
struct Pending {
  std::int32_t op = 0;
  std::vector<char> send, recv;
  std::vector<int> send_counts, send_displs, recv_counts, recv_displs;
};

class RankRunner {
 public:
  RankRunner(const OpGraph& graph, int rank, std::int64_t table_rows)
      : graph_(graph),
        rank_(rank),
        ops_(graph.ranks[static_cast<std::size_t>(rank)].ops),
        kernels_(table_rows),
        handles_(ops_.size(), -1),
        times_{std::vector<Time>(ops_.size()), std::vector<Time>(ops_.size())} {
    make_groups();
    index_collectives();
    for (std::size_t i = 0; i < ops_.size(); ++i) {
      if (ops_[i].kind == OpKind::kKernel) handles_[i] = kernels_.prepare(ops_[i].kernel);
    }
  }

  // Runs every op (again, when called again); returns the wall time in seconds.
  double run() {
    scheduler_.emplace(graph_.ranks[static_cast<std::size_t>(rank_)], graph_.streams.size(),
                       graph_.groups.size());
    check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
    start_ = Clock::now();
    while (!scheduler_->done()) {
      bool progressed = false;
      std::optional<std::int32_t> kernel;
      for (auto index : scheduler_->ready()) {
        if (ops_[static_cast<std::size_t>(index)].kind == OpKind::kCollective) {
          start_collective(index);
          progressed = true;
        } else if (!kernel) {
          kernel = index;
        }
      }
      if (kernel) {
        const auto i = static_cast<std::size_t>(*kernel);
        scheduler_->start(*kernel);
        times_.start[i] = now();
        kernels_.run(handles_[i]);
        times_.end[i] = now();
        scheduler_->finish(*kernel);
        progressed = true;
      }
      if (!requests_.empty()) progressed = test_some() || progressed;
      if (!progressed) {
        if (requests_.empty())
          throw Error(fmt::format("strait exec: rank {} has ops left but none can start", rank_));
        wait_any();
      }
    }
    return std::chrono::duration<double>(Clock::now() - start_).count();
  }

  const OpTimes& times() const { return times_; }

 private:
  Time now() const {
    return Time::from_ns(std::chrono::duration<double, std::nano>(Clock::now() - start_).count());
  }

  void make_groups() {
    groups_.comms.assign(graph_.groups.size(), MPI_COMM_NULL);
    groups_.position.assign(graph_.groups.size(), -1);
    for (std::size_t g = 0; g < graph_.groups.size(); ++g) {
      const auto& members = graph_.groups[g].ranks;
      const auto it = std::find(members.begin(), members.end(), rank_);
      const int position = it == members.end() ? -1 : static_cast<int>(it - members.begin());
      groups_.position[g] = position;
      check(MPI_Comm_split(MPI_COMM_WORLD, position < 0 ? MPI_UNDEFINED : 0, std::max(position, 0),
                           &groups_.comms[g]),
            "MPI_Comm_split");
    }
  }

  // Per group and member: that member's collective ops on the group, in issue order, so
  // this rank knows what each peer sends it in the k-th call.
  void index_collectives() {
    calls_.assign(graph_.groups.size(), {});
    call_number_.assign(ops_.size(), -1);
    for (std::size_t g = 0; g < graph_.groups.size(); ++g) {
      if (groups_.position[g] < 0) continue;
      for (int member : graph_.groups[g].ranks) {
        std::vector<const Op*> list;
        for (const auto& op : graph_.ranks[static_cast<std::size_t>(member)].ops) {
          if (op.kind == OpKind::kCollective && op.collective.group == static_cast<int>(g))
            list.push_back(&op);
        }
        calls_[g].push_back(std::move(list));
      }
    }
    std::vector<int> seen(graph_.groups.size(), 0);
    for (std::size_t i = 0; i < ops_.size(); ++i) {
      if (ops_[i].kind != OpKind::kCollective) continue;
      call_number_[i] = seen[static_cast<std::size_t>(ops_[i].collective.group)]++;
    }
  }

  // What member `j` of the op's group sends in the same call.
  const Op& peer_call(std::size_t i, std::size_t j) const {
    const auto g = static_cast<std::size_t>(ops_[i].collective.group);
    const auto& list = calls_[g][j];
    const auto k = static_cast<std::size_t>(call_number_[i]);
    if (k >= list.size())
      throw Error(fmt::format(
          "op graph: rank {} makes {} or more calls on group '{}' but rank {} makes only {}", rank_,
          k + 1, graph_.groups[g].name, graph_.groups[g].ranks[j], list.size()));
    return *list[k];
  }

  void start_collective(std::int32_t index) {
    const auto i = static_cast<std::size_t>(index);
    const Op& op = ops_[i];
    const auto g = static_cast<std::size_t>(op.collective.group);
    const int me = groups_.position[g];
    if (me < 0)
      throw Error(fmt::format("op graph: rank {} calls a collective on group '{}', not its own",
                              rank_, graph_.groups[g].name));
    const MPI_Comm comm = groups_.comms[g];
    const auto n = static_cast<std::int64_t>(graph_.groups[g].ranks.size());
    const std::int64_t bytes = op.collective.bytes;
    auto p = std::make_unique<Pending>();
    p->op = index;
    MPI_Request request = MPI_REQUEST_NULL;
    auto alloc = [](std::vector<char>& v, std::int64_t size) {
      v.assign(static_cast<std::size_t>(std::max<std::int64_t>(size, 1)), 1);
    };
    scheduler_->start(index);
    times_.start[i] = now();
    switch (op.collective.op) {
      case CollectiveOp::kAllReduce: {
        const int count = as_count(bytes / 4, op);
        alloc(p->send, bytes);
        alloc(p->recv, bytes);
        check(MPI_Iallreduce(p->send.data(), p->recv.data(), count, MPI_FLOAT, MPI_SUM, comm,
                             &request),
              "MPI_Iallreduce");
        break;
      }
      case CollectiveOp::kAllGather: {
        const int chunk = as_count(bytes / n, op);
        alloc(p->send, chunk);
        alloc(p->recv, chunk * n);
        check(MPI_Iallgather(p->send.data(), chunk, MPI_BYTE, p->recv.data(), chunk, MPI_BYTE, comm,
                             &request),
              "MPI_Iallgather");
        break;
      }
      case CollectiveOp::kReduceScatter: {
        const int block = as_count(bytes / n / 4, op);
        alloc(p->send, std::int64_t{block} * n * 4);
        alloc(p->recv, std::int64_t{block} * 4);
        check(MPI_Ireduce_scatter_block(p->send.data(), p->recv.data(), block, MPI_FLOAT, MPI_SUM,
                                        comm, &request),
              "MPI_Ireduce_scatter_block");
        break;
      }
      case CollectiveOp::kAllToAll:
      case CollectiveOp::kAllToAllV: {
        // all_to_all: every member sends its buffer / n to each (members may differ);
        // all_to_allv: send_row[j] to member j.
        const bool v = op.collective.op == CollectiveOp::kAllToAllV;
        p->send_counts.resize(static_cast<std::size_t>(n));
        p->recv_counts.resize(static_cast<std::size_t>(n));
        bool uniform = true;
        for (std::size_t j = 0; j < static_cast<std::size_t>(n); ++j) {
          const Op& peer = j == static_cast<std::size_t>(me) ? op : peer_call(i, j);
          p->send_counts[j] = as_count(v ? op.collective.send_row.at(j) : bytes / n, op);
          p->recv_counts[j] = as_count(v ? peer.collective.send_row.at(static_cast<std::size_t>(me))
                                         : peer.collective.bytes / n,
                                       op);
          uniform = uniform && p->recv_counts[j] == p->send_counts[0] &&
                    p->send_counts[j] == p->send_counts[0];
        }
        std::int64_t sent = 0, received = 0;
        for (std::size_t j = 0; j < static_cast<std::size_t>(n); ++j) {
          p->send_displs.push_back(static_cast<int>(sent));
          p->recv_displs.push_back(static_cast<int>(received));
          sent += p->send_counts[j];
          received += p->recv_counts[j];
        }
        as_count(sent, op);
        as_count(received, op);
        alloc(p->send, sent);
        alloc(p->recv, received);
        if (uniform) {
          check(MPI_Ialltoall(p->send.data(), p->send_counts[0], MPI_BYTE, p->recv.data(),
                              p->send_counts[0], MPI_BYTE, comm, &request),
                "MPI_Ialltoall");
        } else {
          check(MPI_Ialltoallv(p->send.data(), p->send_counts.data(), p->send_displs.data(),
                               MPI_BYTE, p->recv.data(), p->recv_counts.data(),
                               p->recv_displs.data(), MPI_BYTE, comm, &request),
                "MPI_Ialltoallv");
        }
        break;
      }
      default:
        throw Error(fmt::format("strait exec: {} collectives are not supported yet (op '{}')",
                                sim::network::to_string(op.collective.op),
                                graph_.names[static_cast<std::size_t>(op.name)]));
    }
    requests_.push_back(request);
    pending_.push_back(std::move(p));
  }

  void finish_collective(std::size_t slot) {
    const auto index = pending_[slot]->op;
    times_.end[static_cast<std::size_t>(index)] = now();
    scheduler_->finish(index);
  }

  // Removes the completed slots (ascending) from requests_ and pending_.
  void remove(std::vector<int> slots) {
    std::sort(slots.rbegin(), slots.rend());
    for (int s : slots) {
      requests_.erase(requests_.begin() + s);
      pending_.erase(pending_.begin() + s);
    }
  }

  bool test_some() {
    std::vector<int> done(requests_.size());
    int count = 0;
    check(MPI_Testsome(static_cast<int>(requests_.size()), requests_.data(), &count, done.data(),
                       MPI_STATUSES_IGNORE),
          "MPI_Testsome");
    if (count <= 0 || count == MPI_UNDEFINED) return false;
    done.resize(static_cast<std::size_t>(count));
    for (int s : done) finish_collective(static_cast<std::size_t>(s));
    remove(std::move(done));
    return true;
  }

  void wait_any() {
    int slot = MPI_UNDEFINED;
    check(
        MPI_Waitany(static_cast<int>(requests_.size()), requests_.data(), &slot, MPI_STATUS_IGNORE),
        "MPI_Waitany");
    if (slot == MPI_UNDEFINED) return;
    finish_collective(static_cast<std::size_t>(slot));
    remove({slot});
  }

  const OpGraph& graph_;
  int rank_;
  const std::vector<Op>& ops_;
  std::optional<OpScheduler> scheduler_;  // fresh for every run
  CpuKernels kernels_;
  std::vector<int> handles_;
  OpTimes times_;
  Groups groups_;
  std::vector<std::vector<std::vector<const Op*>>> calls_;  // [group][member][k]
  std::vector<int> call_number_;                            // k of each collective op
  std::vector<MPI_Request> requests_;
  std::vector<std::unique_ptr<Pending>> pending_;
  Clock::time_point start_;
};

}  // namespace

MpiSession::MpiSession() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    int provided = 0;
    check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SINGLE, &provided), "MPI_Init_thread");
    owns_ = true;
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

MpiSession::~MpiSession() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (owns_ && !finalized) MPI_Finalize();
}

bool mpi_available() { return true; }

MeasuredRun run_cpu_ranks(const OpGraph& graph, const MpiSession& session, std::int64_t table_rows,
                          int warmup_runs) {
  const auto ranks = static_cast<int>(graph.ranks.size());
  if (session.size() != ranks) {
    throw Error(fmt::format(
        "strait exec: the op graph has {} ranks but MPI started {} processes (run mpirun -np {})",
        ranks, session.size(), ranks));
  }
  MeasuredRun run;
  run.graph = &graph;
  run.warmup_runs = warmup_runs;
  std::vector<std::int64_t> mine;
  {
    RankRunner runner(graph, session.rank(), table_rows);
    for (int w = 0; w < warmup_runs; ++w) runner.run();
    run.wall_s = runner.run();
    for (std::size_t i = 0; i < runner.times().start.size(); ++i) {
      mine.push_back(runner.times().start[i].ps());
      mine.push_back(runner.times().end[i].ps());
    }
  }
  // Every rank's (start, end) pairs to rank 0, in rank order.
  const int count = static_cast<int>(mine.size());
  std::vector<int> counts(static_cast<std::size_t>(ranks)), displs;
  check(MPI_Gather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD), "MPI_Gather");
  std::vector<std::int64_t> all;
  if (session.rank() == 0) {
    int total = 0;
    for (int c : counts) {
      displs.push_back(total);
      total += c;
    }
    all.resize(static_cast<std::size_t>(total));
  }
  check(MPI_Gatherv(mine.data(), count, MPI_INT64_T, all.data(), counts.data(), displs.data(),
                    MPI_INT64_T, 0, MPI_COMM_WORLD),
        "MPI_Gatherv");
  double wall = run.wall_s;
  check(MPI_Reduce(&run.wall_s, &wall, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD), "MPI_Reduce");
  run.wall_s = wall;
  if (session.rank() != 0) return run;
  for (int r = 0; r < ranks; ++r) {
    OpTimes t;
    const auto base = static_cast<std::size_t>(displs[static_cast<std::size_t>(r)]);
    for (int k = 0; k < counts[static_cast<std::size_t>(r)]; k += 2) {
      t.start.push_back(Time::from_ps(all[base + static_cast<std::size_t>(k)]));
      t.end.push_back(Time::from_ps(all[base + static_cast<std::size_t>(k) + 1]));
    }
    run.ranks.push_back(std::move(t));
  }
  return run;
}

}  // namespace strait::executor
