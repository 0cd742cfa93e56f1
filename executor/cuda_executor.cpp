// Over 400 lines: the CUDA executor's streams, events and NCCL calls around one op loop; its
// families are in cuda_kernels.cpp.
// The CUDA executor on NCCL and MPI (see cuda_executor.hpp).

#include "executor/cuda_executor.hpp"

#include <cuda_runtime_api.h>
#include <mpi.h>
#include <nccl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include <fmt/format.h>

#include "calibration/device_kernels.hpp"
#include "calibration/nccl_check.hpp"
#include "executor/collective_calls.hpp"
#include "executor/cuda_kernels.hpp"
#include "executor/detail/rank_job.hpp"
#include "executor/op_scheduler.hpp"
#include "kernels/cuda_check.hpp"
#include "kernels/device.hpp"
#include "sim/core/error.hpp"

namespace strait::executor {
namespace {

using Clock = std::chrono::steady_clock;
using kernels::DeviceBuffer;
using sim::network::CollectiveOp;
using sim::workload::Op;
using sim::workload::OpGraph;
using sim::workload::OpKind;

constexpr double kGateUs = 1000;         // the host's head start on the GPU at the origin
constexpr std::size_t kMaxQueued = 256;  // ops queued ahead of the GPU
constexpr auto kScanEvery = std::chrono::milliseconds(1);  // collectives' watchdog while queueing

// This process's index among the node's ranks: Open MPI's OMPI_COMM_WORLD_LOCAL_RANK,
// else its rank in MPI's shared-memory split (collective: every rank calls it).
int local_rank(int world_rank) {
  MPI_Comm node = MPI_COMM_NULL;
  detail::check_mpi(
      MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, world_rank, MPI_INFO_NULL, &node),
      "MPI_Comm_split_type");
  int node_rank = 0;
  MPI_Comm_rank(node, &node_rank);
  MPI_Comm_free(&node);
  if (const char* env = std::getenv("OMPI_COMM_WORLD_LOCAL_RANK"); env != nullptr) {
    try {
      return std::stoi(env);
    } catch (const std::exception&) {
    }
  }
  return node_rank;
}

// Selects GPU local_rank % devices on every rank, or throws on every rank when any has none
// (a rank alone in NCCL's bootstrap would wait for ever). The first waits for the peers
// after MPI_Init: under the start-up watchdog (`startup_timeout_s`).
int select_device(int world_rank, double startup_timeout_s) {
  // MPI_Comm_split_type waits for every rank and has no non-blocking form: first make sure
  // that all are here.
  detail::wait_for_ranks("start-up (device selection)", world_rank, startup_timeout_s);
  const int local = local_rank(world_rank);
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();  // clear the "no device / no driver" error
    count = 0;
  }
  int mine = count > 0 ? 1 : 0, all = 0;
  MPI_Request request = MPI_REQUEST_NULL;
  detail::check_mpi(MPI_Iallreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD, &request),
                    "MPI_Iallreduce");
  detail::wait_for_job(request, "start-up (device selection)", world_rank, startup_timeout_s);
  if (count == 0)
    throw Error(fmt::format(
        "strait exec --backend cuda: no CUDA device found on rank {} (cudaGetDeviceCount)",
        world_rank));
  if (all == 0) throw Error("strait exec --backend cuda: another rank found no CUDA device");
  const int device = local % count;
  STRAIT_CUDA_CHECK(cudaSetDevice(device));
  return device;
}

bool event_done(cudaEvent_t e) {
  const cudaError_t status = cudaEventQuery(e);
  if (status == cudaErrorNotReady) return false;
  STRAIT_CUDA_CHECK(status);
  return true;
}

// Owners of CUDA streams, CUDA events, MPI communicators and NCCL communicators.
struct Streams {
  std::vector<cudaStream_t> list;
  ~Streams() {
    for (auto s : list) (void)cudaStreamDestroy(s);
  }
};
struct Events {
  std::vector<cudaEvent_t> list;
  cudaEvent_t make() {
    cudaEvent_t e = nullptr;
    STRAIT_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDefault));
    list.push_back(e);
    return e;
  }
  ~Events() {
    for (auto e : list) (void)cudaEventDestroy(e);
  }
};
struct Groups {
  std::vector<MPI_Comm> mpi;
  std::vector<ncclComm_t> nccl;
  ~Groups() {
    for (auto c : nccl) {
      if (c != nullptr) (void)ncclCommDestroy(c);
    }
    for (auto& c : mpi) {
      if (c != MPI_COMM_NULL) MPI_Comm_free(&c);
    }
  }
};

// A collective op's NCCL call with its device buffers, made once before the first run.
struct PreparedCollective {
  std::function<void(cudaStream_t)> launch;
  DeviceBuffer send, recv;
  std::vector<std::size_t> send_bytes, recv_bytes, send_at, recv_at;  // by group member
};

// A zeroed device buffer of `size` bytes, at least a few so that no buffer pointer is null.
void allocate(DeviceBuffer& buffer, std::size_t size) {
  buffer = DeviceBuffer(std::max<std::size_t>(size, 16));
  buffer.zero();
}

// The prepare_* below size `p`'s device buffers for one collective kind of `bytes` and set
// its NCCL call, which reads them through `p` (n: the group's members).
void prepare_all_reduce(PreparedCollective& p, std::size_t bytes, ncclComm_t comm) {
  const std::size_t count = bytes / 4;
  allocate(p.send, count * 4);
  allocate(p.recv, count * 4);
  p.launch = [c = &p, count, comm](cudaStream_t s) {
    STRAIT_NCCL_CHECK(
        ncclAllReduce(c->send.data(), c->recv.data(), count, ncclFloat32, ncclSum, comm, s));
  };
}

void prepare_all_gather(PreparedCollective& p, std::size_t bytes, std::size_t n, ncclComm_t comm) {
  const std::size_t chunk = bytes / n;
  allocate(p.send, chunk);
  allocate(p.recv, chunk * n);
  p.launch = [c = &p, chunk, comm](cudaStream_t s) {
    STRAIT_NCCL_CHECK(ncclAllGather(c->send.data(), c->recv.data(), chunk, ncclUint8, comm, s));
  };
}

void prepare_reduce_scatter(PreparedCollective& p, std::size_t bytes, std::size_t n,
                            ncclComm_t comm) {
  const std::size_t block = bytes / n / 4;
  allocate(p.send, block * n * 4);
  allocate(p.recv, block * 4);
  p.launch = [c = &p, block, comm](cudaStream_t s) {
    STRAIT_NCCL_CHECK(
        ncclReduceScatter(c->send.data(), c->recv.data(), block, ncclFloat32, ncclSum, comm, s));
  };
}

// all_to_all: every member sends its buffer / n to each (members may differ); all_to_allv:
// send_row[j] to member j; `peers` holds both. Each pair's two sides agree on the size: one
// NCCL group of a send and a receive per member.
void prepare_all_to_all(PreparedCollective& p, const CollectiveCalls::PeerBytes& peers,
                        ncclComm_t comm) {
  const auto size = [](std::int64_t b) {
    return static_cast<std::size_t>(std::max<std::int64_t>(b, 0));
  };
  std::size_t sent = 0, received = 0;
  for (std::size_t j = 0; j < peers.send.size(); ++j) {
    p.send_bytes.push_back(size(peers.send[j]));
    p.recv_bytes.push_back(size(peers.recv[j]));
    p.send_at.push_back(sent);
    p.recv_at.push_back(received);
    sent += p.send_bytes.back();
    received += p.recv_bytes.back();
  }
  allocate(p.send, sent);
  allocate(p.recv, received);
  p.launch = [c = &p, comm](cudaStream_t s) {
    auto* in = static_cast<unsigned char*>(c->send.data());
    auto* out = static_cast<unsigned char*>(c->recv.data());
    STRAIT_NCCL_CHECK(ncclGroupStart());
    for (std::size_t j = 0; j < c->send_bytes.size(); ++j) {
      if (c->send_bytes[j] > 0)
        STRAIT_NCCL_CHECK(ncclSend(in + c->send_at[j], c->send_bytes[j], ncclUint8,
                                   static_cast<int>(j), comm, s));
      if (c->recv_bytes[j] > 0)
        STRAIT_NCCL_CHECK(ncclRecv(out + c->recv_at[j], c->recv_bytes[j], ncclUint8,
                                   static_cast<int>(j), comm, s));
    }
    STRAIT_NCCL_CHECK(ncclGroupEnd());
  };
}

class CudaRankRunner {
 public:
  CudaRankRunner(const OpGraph& graph, int rank, std::int64_t table_rows,
                 double collective_timeout_s, double startup_timeout_s)
      : graph_(graph),
        rank_(rank),
        collective_timeout_s_(collective_timeout_s),
        startup_timeout_s_(startup_timeout_s),
        hooks_(rank),
        ops_(graph.ranks[static_cast<std::size_t>(rank)].ops),
        calls_(graph, rank),
        handles_(ops_.size(), -1),
        times_{std::vector<Time>(ops_.size()), std::vector<Time>(ops_.size())} {
    for (std::size_t s = 0; s < std::max<std::size_t>(1, graph_.streams.size()); ++s) {
      cudaStream_t stream = nullptr;
      STRAIT_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
      streams_.list.push_back(stream);
    }
    origin_ = events_.make();
    for (std::size_t i = 0; i < ops_.size(); ++i) {
      start_.push_back(events_.make());
      end_.push_back(events_.make());
    }
    make_groups();
    kernels_.emplace(table_rows, ops_, streams_.list);
    collectives_.resize(ops_.size());
    for (std::size_t i = 0; i < ops_.size(); ++i) {
      if (ops_[i].kind == OpKind::kKernel)
        handles_[i] = kernels_->prepare(ops_[i].kernel, ops_[i].step, ops_[i].stream);
      if (ops_[i].kind == OpKind::kCollective)
        collectives_[i] = prepare_collective(static_cast<std::int32_t>(i));
    }
    STRAIT_CUDA_CHECK(cudaDeviceSynchronize());
  }

  ~CudaRankRunner() { (void)cudaDeviceSynchronize(); }
  CudaRankRunner(const CudaRankRunner&) = delete;
  CudaRankRunner& operator=(const CudaRankRunner&) = delete;

  // Runs every op (again, when called again); returns the GPU time from the origin to the
  // last op's end in seconds.
  double run() {
    if (runs_ > 0) kernels_->redraw(runs_);
    ++runs_;
    scheduler_.emplace(graph_.ranks[static_cast<std::size_t>(rank_)], graph_.streams.size(),
                       graph_.groups.size());
    STRAIT_CUDA_CHECK(cudaDeviceSynchronize());
    // The first run's barrier is the last wait of the start-up (the peers' preparation).
    detail::wait_for_ranks(
        "the start barrier", rank_,
        runs_ == 1 ? startup_timeout_s_ : job_wait_limit_s(collective_timeout_s_));
    calibration::launch_gate(kGateUs, streams_.list.front());
    STRAIT_CUDA_CHECK(cudaEventRecord(origin_, streams_.list.front()));
    for (std::size_t s = 1; s < streams_.list.size(); ++s)
      STRAIT_CUDA_CHECK(cudaStreamWaitEvent(streams_.list[s], origin_, 0));
    while (!scheduler_->done()) {
      const auto ready = scheduler_->ready();
      if (ready.empty())
        throw Error(fmt::format("strait exec: rank {} has ops left but none can start", rank_));
      for (auto index : ready) enqueue(index);
    }
    // Everything is queued: wait for the collectives under the watchdog, then the rest.
    while (!pending_.empty()) {
      poll(true);
      std::this_thread::yield();
    }
    STRAIT_CUDA_CHECK(cudaDeviceSynchronize());
    queued_.clear();
    detail::set_current_op(-1);
    double last_ms = 0;
    for (std::size_t i = 0; i < ops_.size(); ++i) {
      float start_ms = 0, end_ms = 0;
      STRAIT_CUDA_CHECK(cudaEventElapsedTime(&start_ms, origin_, start_[i]));
      STRAIT_CUDA_CHECK(cudaEventElapsedTime(&end_ms, origin_, end_[i]));
      times_.start[i] = Time::from_ms(static_cast<double>(start_ms));
      times_.end[i] = Time::from_ms(static_cast<double>(end_ms));
      last_ms = std::max(last_ms, static_cast<double>(end_ms));
    }
    return last_ms / 1e3;
  }

  const OpTimes& times() const { return times_; }

 private:
  // Queues op `index` on its stream behind its cross-stream dependencies, between its two
  // events; it counts as finished for the scheduler (its stream orders what follows).
  void enqueue(std::int32_t index) {
    const auto i = static_cast<std::size_t>(index);
    const Op& op = ops_[i];
    detail::set_current_op(index);
    hooks_.at(index);
    scheduler_->start(index);
    const cudaStream_t stream = streams_.list[static_cast<std::size_t>(op.stream)];
    for (auto d : op.deps) {
      if (ops_[static_cast<std::size_t>(d)].stream != op.stream)
        STRAIT_CUDA_CHECK(cudaStreamWaitEvent(stream, end_[static_cast<std::size_t>(d)], 0));
    }
    STRAIT_CUDA_CHECK(cudaEventRecord(start_[i], stream));
    if (op.kind == OpKind::kKernel) {
      kernels_->run(handles_[i]);
    } else {
      collectives_[i]->launch(stream);
      pending_.push_back({index, std::nullopt});
    }
    STRAIT_CUDA_CHECK(cudaEventRecord(end_[i], stream));
    scheduler_->finish(index);
    queued_.push_back(index);
    // Keep at most kMaxQueued ops ahead of the GPU (a full launch queue would block the
    // host inside a launch, out of the watchdog's reach).
    set_current();
    poll(false);
    while (queued_.size() > kMaxQueued) {
      std::this_thread::yield();
      poll(true);
    }
  }

  // Retires completed ops; with `scan` (else at most every kScanEvery) also the collectives:
  // the watchdog and NCCL's asynchronous errors.
  void poll(bool scan) {
    while (!queued_.empty() && event_done(end_[static_cast<std::size_t>(queued_.front())]))
      queued_.pop_front();
    const auto now = Clock::now();
    if (!scan && now - last_scan_ < kScanEvery) return;
    last_scan_ = now;
    for (auto it = pending_.begin(); it != pending_.end();) {
      const auto i = static_cast<std::size_t>(it->index);
      if (event_done(end_[i])) {
        it = pending_.erase(it);
        continue;
      }
      const auto g = static_cast<std::size_t>(ops_[i].collective.group);
      ncclResult_t async = ncclSuccess;
      STRAIT_NCCL_CHECK(ncclCommGetAsyncError(groups_.nccl[g], &async));
      if (async != ncclSuccess && async != ncclInProgress) {
        detail::set_current_op(it->index);
        calibration::throw_nccl_error(async, "ncclCommGetAsyncError", __FILE__, __LINE__);
      }
      if (!it->started && event_done(start_[i])) it->started = now;
      if (it->started && collective_timeout_s_ > 0 &&
          std::chrono::duration<double>(now - *it->started).count() > collective_timeout_s_)
        abort_on_timeout(it->index);
      ++it;
    }
    set_current();
  }

  [[noreturn]] void abort_on_timeout(std::int32_t index) const {
    const Op& op = ops_[static_cast<std::size_t>(index)];
    const auto g = static_cast<std::size_t>(op.collective.group);
    const auto line = fmt::format(
        "strait exec: rank {}: collective '{}' (group {}, step {}) did not complete in {:g} s\n",
        rank_, graph_.names[static_cast<std::size_t>(op.name)], graph_.groups[g].name, op.step,
        collective_timeout_s_);
    (void)ncclCommAbort(groups_.nccl[g]);
    detail::end_job(line);
  }

  // The op this rank is in for the SIGTERM handler: the oldest collective not complete.
  void set_current() { detail::set_current_op(pending_.empty() ? -1 : pending_.front().index); }

  void make_groups() {
    // MPI_Comm_split waits for every rank and has no non-blocking form: first make sure
    // that all are here (nothing since the device selection waits for a peer).
    detail::wait_for_ranks("start-up (communicators)", rank_, startup_timeout_s_);
    const auto count = graph_.groups.size();
    groups_.mpi.assign(count, MPI_COMM_NULL);
    groups_.nccl.assign(count, nullptr);
    for (std::size_t g = 0; g < count; ++g) {
      const int position = calls_.position(g);
      detail::check_mpi(MPI_Comm_split(MPI_COMM_WORLD, position < 0 ? MPI_UNDEFINED : 0,
                                       std::max(position, 0), &groups_.mpi[g]),
                        "MPI_Comm_split");
    }
    // Groups in index order on every rank: the lowest group not yet initialised has all its
    // members at it, so the blocking ncclCommInitRank calls never wait in a cycle.
    for (std::size_t g = 0; g < count; ++g) {
      if (calls_.position(g) < 0) continue;
      // The first member's unique id, and whether it got one, reach every member in one
      // broadcast (a member that threw alone would leave the others waiting in it).
      struct Bootstrap {
        ncclUniqueId id;
        ncclResult_t result;
      } boot{};
      if (calls_.position(g) == 0) boot.result = ncclGetUniqueId(&boot.id);
      MPI_Request request = MPI_REQUEST_NULL;
      detail::check_mpi(MPI_Ibcast(&boot, sizeof boot, MPI_BYTE, 0, groups_.mpi[g], &request),
                        "MPI_Ibcast");
      detail::wait_for_job(request, "start-up (NCCL's unique id)", rank_, startup_timeout_s_);
      if (boot.result != ncclSuccess)
        calibration::throw_nccl_error(boot.result, "ncclGetUniqueId", __FILE__, __LINE__);
      STRAIT_NCCL_CHECK(ncclCommInitRank(&groups_.nccl[g],
                                         static_cast<int>(graph_.groups[g].ranks.size()), boot.id,
                                         calls_.position(g)));
    }
  }

  // Collective op `index`'s NCCL call and device buffers (sizes as the CPU backend's).
  std::unique_ptr<PreparedCollective> prepare_collective(std::int32_t index) {
    const auto i = static_cast<std::size_t>(index);
    const Op& op = ops_[i];
    const auto g = calls_.group_of(i);
    const ncclComm_t comm = groups_.nccl[g];
    const auto n = graph_.groups[g].ranks.size();
    const auto bytes = static_cast<std::size_t>(std::max<std::int64_t>(op.collective.bytes, 0));
    auto p = std::make_unique<PreparedCollective>();
    switch (op.collective.op) {
      case CollectiveOp::kAllReduce:
        prepare_all_reduce(*p, bytes, comm);
        break;
      case CollectiveOp::kAllGather:
        prepare_all_gather(*p, bytes, n, comm);
        break;
      case CollectiveOp::kReduceScatter:
        prepare_reduce_scatter(*p, bytes, n, comm);
        break;
      case CollectiveOp::kAllToAll:
      case CollectiveOp::kAllToAllV:
        prepare_all_to_all(*p, calls_.all_to_all_bytes(i), comm);
        break;
      default:
        detail::unsupported_collective(graph_, op);
    }
    return p;
  }

  struct Pending {
    std::int32_t index;
    std::optional<Clock::time_point> started;  // when the host saw its start event complete
  };

  const OpGraph& graph_;
  int rank_;
  double collective_timeout_s_;
  double startup_timeout_s_;
  detail::FaultHooks hooks_;
  const std::vector<Op>& ops_;
  // Destroyed in reverse: the kernels' and collectives' buffers, then the communicators,
  // events and streams they were queued with.
  Streams streams_;  // by op-graph stream
  Events events_;
  cudaEvent_t origin_ = nullptr;
  std::vector<cudaEvent_t> start_, end_;  // by op index
  Groups groups_;
  CollectiveCalls calls_;
  std::optional<CudaKernels> kernels_;
  std::vector<int> handles_;
  std::vector<std::unique_ptr<PreparedCollective>> collectives_;  // by op index
  std::optional<OpScheduler> scheduler_;                          // fresh for every run
  std::deque<std::int32_t> queued_;                               // queued, not seen complete
  std::deque<Pending> pending_;                                   // collectives, oldest first
  Clock::time_point last_scan_;
  OpTimes times_;
  int runs_ = 0;
};

}  // namespace

bool cuda_backend_available() { return true; }

void require_cuda_backend() {}

MeasuredRun run_cuda_ranks(const OpGraph& graph, const MpiSession& session, std::int64_t table_rows,
                           int warmup_runs, double collective_timeout_s) {
  if (session.size() == static_cast<int>(graph.ranks.size()))
    select_device(session.rank(), session.startup_timeout_s());
  return detail::run_rank_job(graph, session, "cuda", warmup_runs, collective_timeout_s, [&] {
    CudaRankRunner runner(graph, session.rank(), table_rows, collective_timeout_s,
                          session.startup_timeout_s());
    return detail::warm_up_and_measure(runner, warmup_runs);
  });
}

}  // namespace strait::executor
