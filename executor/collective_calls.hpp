#pragma once
// CollectiveCalls: what each member of a rank's process groups sends in the k-th collective
// call on that group. MPI and NCCL match collective calls by their order on a communicator,
// so both backends of `strait exec` size a call's receive side from the peers' k-th calls,
// numbered and matched as the simulator does (sim/workload/collective_calls.hpp).
// No MPI, no CUDA: unit-tested.

#include <cstdint>
#include <vector>

#include "sim/workload/collective_calls.hpp"
#include "sim/workload/op_graph.hpp"

namespace strait::executor {

class CollectiveCalls {
 public:
  /// Indexes the collective calls of every member of `rank`'s groups in `graph`.
  CollectiveCalls(const sim::workload::OpGraph& graph, int rank);

  /// `rank`'s index in group `group` (-1: not a member).
  int position(std::size_t group) const { return position_[group]; }

  /// The group collective op `index` of this rank runs on; throws strait::Error when this
  /// rank is no member of it.
  std::size_t group_of(std::size_t index) const;

  /// Bytes op `index` (a collective of this rank's) sends to and receives from each member
  /// of its group, by member index: all_to_all: every member sends its bytes / n to each
  /// (members' bytes may differ); all_to_allv: send_row[j] to member j. Throws
  /// strait::Error as group_of does or when a peer makes fewer calls on the group.
  struct PeerBytes {
    std::vector<std::int64_t> send, recv;
  };
  PeerBytes all_to_all_bytes(std::size_t index) const;

 private:
  const sim::workload::Op& peer_call(std::size_t index, std::size_t member) const;

  const sim::workload::OpGraph& graph_;
  int rank_;
  std::vector<int> position_;              // by group
  sim::workload::GroupCalls calls_;        // of this rank's groups
  std::vector<std::int32_t> call_number_;  // of each of this rank's ops
};

}  // namespace strait::executor
