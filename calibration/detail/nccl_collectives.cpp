// The NCCL collectives backend: one NCCL communicator over the job's ranks (bootstrapped
// through the MPI communicator), one GPU per rank, timed like nccl-tests.
// Sizes follow nccl-tests (sim/network/collective.hpp): S is all-reduce's and
// reduce-scatter's input, all-gather's output, all-to-all(v)'s per-rank send buffer, the
// buffer of broadcast, reduce and send/recv. Reductions sum f32 (S / 4 elements); the other
// collectives move bytes. all-to-all sends S / n bytes to every rank (itself included);
// all-to-all-v sends the suite's uneven matrix (all_to_allv_matrix); send/recv goes from rank 0
// to rank 1 while the others idle.
// A sample is a barrier, then the collective between two events on the rank's stream; its
// time is the slowest rank's. After the samples, the output is cleared, the collective runs
// once more and every rank compares its output on the host with what the rank-dependent
// inputs must give (exact: small integers in f32).

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nccl.h>

#include "calibration/detail/backends.hpp"
#include "calibration/detail/communicator.hpp"
#include "calibration/detail/cuda_support.hpp"
#include "calibration/nccl_check.hpp"
#include "kernels/cuda_check.hpp"
#include "kernels/device.hpp"
#include "sim/core/error.hpp"

namespace strait::calibration::detail {
namespace {

using kernels::DeviceBuffer;
using sim::network::CollectiveOp;

// A byte that depends on who sent it to whom and where it sits.
unsigned char pattern(int from, int to, std::size_t i) {
  return static_cast<unsigned char>(
      (static_cast<std::size_t>(from) * 37 + static_cast<std::size_t>(to) * 11 + i * 7 + 1) &
      0xffu);
}
// Rank r's f32 input of the reductions at element i; the sum over n ranks is
// n (n + 1) / 2 + n (i mod 7), exact in f32.
float reduction_input(int rank, std::size_t i) { return static_cast<float>(rank + 1 + i % 7); }
float reduction_sum(int n, std::size_t i) {
  const auto triangle = static_cast<std::size_t>(n * (n + 1) / 2);  // exact: n (n + 1) is even
  return static_cast<float>(triangle + static_cast<std::size_t>(n) * (i % 7));
}

bool is_reduction(CollectiveOp op) {
  return op == CollectiveOp::kAllReduce || op == CollectiveOp::kReduceScatter ||
         op == CollectiveOp::kReduce;
}

// One peer's part of a point-to-point exchange (bytes at an offset of the buffer).
struct Block {
  int peer = 0;
  std::size_t offset = 0;
  std::size_t bytes = 0;
};

// What one rank sends and receives in a collective of nccl-tests size S.
struct Exchange {
  CollectiveOp op = CollectiveOp::kAllReduce;
  std::size_t send_bytes = 0;
  std::size_t recv_bytes = 0;
  std::size_t count = 0;            // elements of the NCCL call (f32 or bytes)
  std::vector<Block> sends, recvs;  // all-to-all(v), send/recv
};

Exchange plan_exchange(CollectiveOp op, std::size_t bytes, int rank, int n) {
  Exchange x;
  x.op = op;
  const auto un = static_cast<std::size_t>(n);
  switch (op) {
    case CollectiveOp::kAllReduce:
    case CollectiveOp::kReduce:
      x.count = bytes / 4;
      x.send_bytes = x.recv_bytes = x.count * 4;
      break;
    case CollectiveOp::kReduceScatter:
      x.count = bytes / 4 / un;  // per rank
      x.send_bytes = x.count * 4 * un;
      x.recv_bytes = x.count * 4;
      break;
    case CollectiveOp::kAllGather:
      x.count = bytes / un;  // per rank
      x.send_bytes = x.count;
      x.recv_bytes = x.count * un;
      break;
    case CollectiveOp::kBroadcast:
      x.count = x.send_bytes = x.recv_bytes = bytes;
      break;
    case CollectiveOp::kAllToAll:
    case CollectiveOp::kAllToAllV: {
      // all-to-all: S / n to every peer; all-to-all-v: the suite's matrix (kernel_case.hpp),
      // the same sizes the MPI backend sends and the fit simulates.
      const auto matrix =
          op == CollectiveOp::kAllToAllV
              ? all_to_allv_matrix(n, static_cast<std::int64_t>(bytes))
              : std::vector<std::int64_t>(un * un, static_cast<std::int64_t>(bytes / un));
      const auto r = static_cast<std::size_t>(rank);
      for (int p = 0; p < n; ++p) {
        const auto up = static_cast<std::size_t>(p);
        const auto out = static_cast<std::size_t>(matrix[r * un + up]);
        const auto in = static_cast<std::size_t>(matrix[up * un + r]);
        x.sends.push_back({p, x.send_bytes, out});
        x.send_bytes += out;
        x.recvs.push_back({p, x.recv_bytes, in});
        x.recv_bytes += in;
      }
      break;
    }
    case CollectiveOp::kSendRecv:
      if (rank == 0) x.sends.push_back({1, 0, bytes});
      if (rank == 1) x.recvs.push_back({0, 0, bytes});
      x.send_bytes = x.recv_bytes = bytes;
      break;
  }
  return x;
}

std::vector<unsigned char> make_input(const Exchange& x, int rank) {
  std::vector<unsigned char> in(x.send_bytes);
  if (is_reduction(x.op)) {
    for (std::size_t i = 0; i < in.size() / 4; ++i) {
      const float v = reduction_input(rank, i);
      std::memcpy(&in[i * 4], &v, 4);
    }
  } else if (x.op == CollectiveOp::kAllGather || x.op == CollectiveOp::kBroadcast) {
    for (std::size_t i = 0; i < in.size(); ++i) in[i] = pattern(rank, 0, i);
  } else {
    for (const Block& b : x.sends)
      for (std::size_t i = 0; i < b.bytes; ++i) in[b.offset + i] = pattern(rank, b.peer, i);
  }
  return in;
}

bool output_is_expected(const Exchange& x, int rank, int n, const std::vector<unsigned char>& out) {
  const auto un = static_cast<std::size_t>(n);
  const auto f32_at = [&](std::size_t i) {
    float v = 0;
    std::memcpy(&v, &out[i * 4], 4);
    return v;
  };
  switch (x.op) {
    case CollectiveOp::kAllReduce:
    case CollectiveOp::kReduce:
      if (x.op == CollectiveOp::kReduce && rank != 0) return true;
      for (std::size_t i = 0; i < x.count; ++i)
        if (f32_at(i) != reduction_sum(n, i)) return false;
      return true;
    case CollectiveOp::kReduceScatter: {
      const std::size_t first = static_cast<std::size_t>(rank) * x.count;
      for (std::size_t i = 0; i < x.count; ++i)
        if (f32_at(i) != reduction_sum(n, first + i)) return false;
      return true;
    }
    case CollectiveOp::kAllGather:
      for (std::size_t j = 0; j < un; ++j)
        for (std::size_t i = 0; i < x.count; ++i)
          if (out[j * x.count + i] != pattern(static_cast<int>(j), 0, i)) return false;
      return true;
    case CollectiveOp::kBroadcast:
      for (std::size_t i = 0; i < x.count; ++i)
        if (out[i] != pattern(0, 0, i)) return false;
      return true;
    case CollectiveOp::kAllToAll:
    case CollectiveOp::kAllToAllV:
    case CollectiveOp::kSendRecv:
      for (const Block& b : x.recvs)
        for (std::size_t i = 0; i < b.bytes; ++i)
          if (out[b.offset + i] != pattern(b.peer, rank, i)) return false;
      return true;
  }
  return false;
}

// NCCL's version code: 10000 major + 100 minor + patch (1000 major before 2.9).
std::string nccl_version() {
  int code = 0;
  STRAIT_NCCL_CHECK(ncclGetVersion(&code));
  if (code >= 10000) return fmt::format("{}.{}.{}", code / 10000, code % 10000 / 100, code % 100);
  return fmt::format("{}.{}.{}", code / 1000, code % 1000 / 100, code % 100);
}

class NcclCollectives final : public CollectiveBackend {
 public:
  NcclCollectives(Communicator& comm, int device);
  NcclCollectives(const NcclCollectives&) = delete;
  NcclCollectives& operator=(const NcclCollectives&) = delete;
  ~NcclCollectives() override {
    if (nccl_ != nullptr) (void)ncclCommDestroy(nccl_);
  }

  std::string device() const override { return description_; }
  std::map<std::string, std::string> versions() const override { return versions_; }
  std::vector<double> time(const CollectiveCase& c, int warmup, int repetitions,
                           bool* check_ok) override;

 private:
  void launch(const Exchange& x, const void* send, void* recv);

  Communicator& comm_;
  int device_;  // before timer_: the stream is created on it
  StreamTimer timer_;
  ncclComm_t nccl_ = nullptr;
  std::string description_;
  std::map<std::string, std::string> versions_;
};

NcclCollectives::NcclCollectives(Communicator& comm, int device) : comm_(comm), device_(device) {
  // Rank 0's unique id, and whether it got one, reach every rank in one broadcast (a rank
  // that threw alone would leave the others waiting in it).
  struct Bootstrap {
    ncclUniqueId id;
    ncclResult_t result;
  } boot{};
  if (comm_.rank() == 0) boot.result = ncclGetUniqueId(&boot.id);
  comm_.broadcast(&boot, sizeof boot);
  if (boot.result != ncclSuccess) {
    if (comm_.rank() == 0)
      throw_nccl_error(boot.result, "ncclGetUniqueId(&boot.id)", __FILE__, __LINE__);
    throw Error("strait calibrate --backend cuda: rank 0 could not create the NCCL unique id");
  }
  STRAIT_NCCL_CHECK(ncclCommInitRank(&nccl_, comm_.size(), boot.id, comm_.rank()));
  const std::string version = nccl_version();
  description_ = fmt::format("{}, NCCL {}", cuda_device_description(device_), version);
  versions_ = cuda_versions();
  versions_["nccl"] = version;
}

void NcclCollectives::launch(const Exchange& x, const void* send, void* recv) {
  const cudaStream_t st = timer_.stream();
  switch (x.op) {
    case CollectiveOp::kAllReduce:
      STRAIT_NCCL_CHECK(ncclAllReduce(send, recv, x.count, ncclFloat32, ncclSum, nccl_, st));
      return;
    case CollectiveOp::kReduce:
      STRAIT_NCCL_CHECK(ncclReduce(send, recv, x.count, ncclFloat32, ncclSum, 0, nccl_, st));
      return;
    case CollectiveOp::kReduceScatter:
      STRAIT_NCCL_CHECK(ncclReduceScatter(send, recv, x.count, ncclFloat32, ncclSum, nccl_, st));
      return;
    case CollectiveOp::kAllGather:
      STRAIT_NCCL_CHECK(ncclAllGather(send, recv, x.count, ncclUint8, nccl_, st));
      return;
    case CollectiveOp::kBroadcast:
      STRAIT_NCCL_CHECK(ncclBroadcast(send, recv, x.count, ncclUint8, 0, nccl_, st));
      return;
    case CollectiveOp::kAllToAll:
    case CollectiveOp::kAllToAllV:
    case CollectiveOp::kSendRecv: {
      const auto* in = static_cast<const unsigned char*>(send);
      auto* out = static_cast<unsigned char*>(recv);
      STRAIT_NCCL_CHECK(ncclGroupStart());
      for (const Block& b : x.sends)
        STRAIT_NCCL_CHECK(ncclSend(in + b.offset, b.bytes, ncclUint8, b.peer, nccl_, st));
      for (const Block& b : x.recvs)
        STRAIT_NCCL_CHECK(ncclRecv(out + b.offset, b.bytes, ncclUint8, b.peer, nccl_, st));
      STRAIT_NCCL_CHECK(ncclGroupEnd());
      return;
    }
  }
}

std::vector<double> NcclCollectives::time(const CollectiveCase& c, int warmup, int repetitions,
                                          bool* check_ok) {
  STRAIT_CUDA_CHECK(cudaSetDevice(device_));
  const int rank = comm_.rank(), n = comm_.size();
  const Exchange x =
      plan_exchange(c.op, static_cast<std::size_t>(std::max<std::int64_t>(c.bytes, 0)), rank, n);
  // At least a few bytes each, so no buffer pointer is null.
  DeviceBuffer send(std::max<std::size_t>(x.send_bytes, 16)),
      recv(std::max<std::size_t>(x.recv_bytes, 16));
  const std::vector<unsigned char> input = make_input(x, rank);
  if (!input.empty()) send.upload(input.data(), input.size());

  for (int i = 0; i < warmup; ++i) launch(x, send.data(), recv.data());
  timer_.synchronize();
  std::vector<double> samples_us;
  for (int i = 0; i < repetitions; ++i) {
    comm_.barrier();
    timer_.start();
    launch(x, send.data(), recv.data());
    samples_us.push_back(timer_.stop_us());
  }
  comm_.max_all(samples_us);

  // The check: a cleared output, one more run, the expected values on every rank.
  STRAIT_CUDA_CHECK(cudaMemsetAsync(recv.data(), 0xff, recv.bytes(), timer_.stream()));
  timer_.synchronize();
  comm_.barrier();
  launch(x, send.data(), recv.data());
  timer_.synchronize();
  std::vector<unsigned char> output(x.recv_bytes);
  if (!output.empty()) recv.download(output.data(), output.size());
  std::vector<double> wrong{output_is_expected(x, rank, n, output) ? 0.0 : 1.0};
  comm_.max_all(wrong);
  if (check_ok != nullptr) *check_ok = wrong.front() == 0.0;
  return samples_us;
}

}  // namespace

std::unique_ptr<CollectiveBackend> make_nccl_collectives(Communicator& comm, int local_rank) {
  if (comm.size() < 2) {
    throw Error(fmt::format(
        "strait calibrate --backend cuda: NCCL collectives need at least 2 ranks, got {} "
        "(start with mpirun -np N, or leave out the collectives)",
        comm.size()));
  }
  // Every rank learns whether all found a GPU before any of them waits in NCCL's bootstrap.
  int device = -1;
  std::string why;
  try {
    device = select_cuda_device(local_rank);
  } catch (const Error& e) {
    why = e.what();
  }
  std::vector<double> failed{device < 0 ? 1.0 : 0.0};
  comm.max_all(failed);
  if (device < 0) throw Error(why);
  if (failed.front() != 0.0)
    throw Error("strait calibrate --backend cuda: another rank found no CUDA device");
  return std::make_unique<NcclCollectives>(comm, device);
}

}  // namespace strait::calibration::detail
