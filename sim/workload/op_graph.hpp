#pragma once
// OpGraph: what each rank does in a training step, as ops with dependencies on streams.
// The contract shared by the simulator (sim/run replays it on engine, network and cost)
// and the future executor (runs the same ops with real kernels and NCCL).
//
// Semantics
//   - Each rank has streams (compute, embedding communication, dense communication, ...).
//     Ops on one stream run in order; an op starts when its stream is free and all its
//     dependencies (ops of the same rank) have finished.
//   - A kernel op runs on its GPU: the cost model turns its Kernel into time and into
//     SM and HBM use, so concurrent kernels share the GPU.
//   - A collective op is one rank's part of a collective on a process group. The k-th
//     collective issued on a group by each member is the same collective (NCCL's rule);
//     it starts when every member has reached it, so waiting there is straggler time.
//   - Ops of several steps can be in one graph (train pipelines overlap step s+1's input
//     distribution and embedding lookup with step s's dense compute); `step` says which.
// Names are interned in the graph's string table to keep millions of ops small.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <boost/container/small_vector.hpp>

#include "sim/core/enum_names.hpp"
#include "sim/core/units.hpp"
#include "sim/cost/kernel_work.hpp"
#include "sim/network/collective.hpp"

namespace strait::sim::workload {

// Kernels are described in the cost layer's terms (sim/cost/kernel_work.hpp).
using cost::bytes_per_element;
using cost::KernelKind;
using cost::Precision;
using Kernel = cost::KernelWork;

/// What a communication op is for: the report's breakdown classes and priority hints.
enum class CommClass {
  kInputDist,        // all-to-all of sparse ids (and lengths) to embedding shards
  kOutputDist,       // all-to-all(-v) of pooled or sequence embeddings back
  kGradDist,         // all-to-all of embedding gradients to shards (backward)
  kDenseSync,        // DDP gradient buckets / FSDP gather and reduce-scatter
  kContextParallel,  // HSTU context parallelism (K/V all-gather or all-to-all)
  kReplicaSync,      // 2D sparse parallelism: embedding replicas across groups
  kMoe,              // expert all-to-all
};
inline constexpr int kCommClassCount = 7;
/// The names reports and traces use, in CommClass order (sim/core/enum_names.hpp).
constexpr auto enum_names(CommClass) {
  return std::to_array<EnumName<CommClass>>({{CommClass::kInputDist, "input_dist"},
                                             {CommClass::kOutputDist, "output_dist"},
                                             {CommClass::kGradDist, "grad_dist"},
                                             {CommClass::kDenseSync, "dense_sync"},
                                             {CommClass::kContextParallel, "context_parallel"},
                                             {CommClass::kReplicaSync, "replica_sync"},
                                             {CommClass::kMoe, "moe"}});
}
inline const char* to_string(CommClass c) { return name_of(c); }

/// An all_to_allv send row (bytes to each group member), immutable and shared: members of
/// a group holding the same shards send the same row, kept once per group, not per rank
/// (4 KiB per rank and step in groups of 512). Reads like a const std::vector<Bytes>.
class SendRow {
 public:
  SendRow() = default;
  explicit SendRow(std::vector<Bytes> row)
      : row_(row.empty() ? nullptr : std::make_shared<const std::vector<Bytes>>(std::move(row))) {}
  const std::vector<Bytes>& bytes() const { return row_ ? *row_ : empty_row(); }
  operator const std::vector<Bytes>&() const { return bytes(); }  // NOLINT: reads as a vector
  std::size_t size() const { return bytes().size(); }
  bool empty() const { return bytes().empty(); }
  Bytes at(std::size_t i) const { return bytes().at(i); }
  Bytes operator[](std::size_t i) const { return bytes()[i]; }
  Bytes front() const { return bytes().front(); }
  auto begin() const { return bytes().begin(); }
  auto end() const { return bytes().end(); }

 private:
  static const std::vector<Bytes>& empty_row();
  std::shared_ptr<const std::vector<Bytes>> row_;
};

struct CollectiveCall {
  network::CollectiveOp op = network::CollectiveOp::kAllReduce;
  network::Algorithm algorithm = network::Algorithm::kAuto;
  int group = 0;     // index into OpGraph::groups
  Bytes bytes = 0;   // nccl-tests convention (see network/collective.hpp)
  SendRow send_row;  // all_to_allv: bytes this rank sends to each group member
                     // (all_to_all: `bytes` is this rank's buffer; members may differ)
  CommClass comm_class = CommClass::kDenseSync;
  int priority = 0;      // engine priority class (0 first)
  bool sm_free = false;  // runs on copy engines: takes no SMs from compute
};

enum class OpKind { kKernel, kCollective };

/// An op's dependencies: up to 4 inline (nearly every op), more on the heap; at 131,072
/// ranks a heap vector per op cost a malloc and ~32 bytes for each of 28 million ops.
using OpDeps = boost::container::small_vector<std::int32_t, 4>;

/// Which part of the step an op belongs to (for traces and the bubble/straggler report).
enum class StepPhase { kInput, kForward, kBackward, kOptimizer };
constexpr auto enum_names(StepPhase) {
  return std::to_array<EnumName<StepPhase>>({{StepPhase::kInput, "input"},
                                             {StepPhase::kForward, "forward"},
                                             {StepPhase::kBackward, "backward"},
                                             {StepPhase::kOptimizer, "optimizer"}});
}
inline const char* to_string(StepPhase p) { return name_of(p); }

struct Op {
  // User-provided, so that a value-initialized Op (ops.emplace_back()) is not zero-filled
  // first (240 bytes, 44 million ops at 131,072 ranks): every member has its initializer.
  Op() {}  // NOLINT(modernize-use-equals-default)
  OpKind kind = OpKind::kKernel;
  std::int32_t name = 0;    // index into OpGraph::names
  std::int32_t stream = 0;  // index into OpGraph::streams
  std::int32_t step = 0;
  StepPhase phase = StepPhase::kForward;
  OpDeps deps;                // indices of earlier ops of the same rank
  Kernel kernel;              // when kind == kKernel
  CollectiveCall collective;  // when kind == kCollective
};

struct RankOps {
  int rank = 0;
  int gpu = 0;               // cluster GPU this rank runs on
  std::vector<Op> ops;       // topologically ordered: deps point backwards
  std::int64_t samples = 0;  // samples this rank trains on per step
};

struct ProcessGroup {
  std::string name;        // e.g. "dp", "sparse_mp/3", "cp/12"
  std::vector<int> ranks;  // global ranks; rank i of the group is ranks[i]
};

struct OpGraph {
  std::vector<std::string> names;    // interned op names
  std::vector<std::string> streams;  // e.g. "compute", "embedding_comm", "dense_comm"
  std::vector<ProcessGroup> groups;
  std::vector<RankOps> ranks;
  int steps = 1;

  /// Interns `name`; returns its index in names.
  std::int32_t intern(std::string_view name);
  /// Index of stream `name`, adding it if new.
  std::int32_t stream(std::string_view name);

  // Hash indexes behind intern() and stream(); not part of the contract.
  struct StringHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, std::int32_t, StringHash, std::equal_to<>> name_index_;
  std::unordered_map<std::string, std::int32_t, StringHash, std::equal_to<>> stream_index_;
};

}  // namespace strait::sim::workload
