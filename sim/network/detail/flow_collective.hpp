#pragma once
// FlowCollective: one collective's Schedule running on a FlowNetwork.
//
// State per (rank, lane): the next phase to complete and the next to launch; per
// (phase, rank, lane): transfers of that rank finished. A rank's lane moves to phase p+1
// when it has finished all its transfers of p and its previous lane has passed p.

#include <cstdint>
#include <functional>
#include <vector>

#include "sim/network/schedule.hpp"

namespace strait::sim::network {
class FlowNetwork;
}

namespace strait::sim::network::detail {

class FlowCollective {
 public:
  FlowCollective(FlowNetwork& network, Schedule schedule, int priority, double weight,
                 std::function<void()> on_done);
  /// Launches every rank's first phase.
  void start();
  bool finished() const { return lanes_left_ == 0; }
  /// Runs the user's completion callback (called once by the network).
  void notify_done();

 private:
  void transfer_done(std::uint64_t tag);
  void advance(int rank, int lane);
  void launch(int rank, int lane, int phase);
  std::size_t lane_index(int rank, int lane) const {
    return static_cast<std::size_t>(rank) * static_cast<std::size_t>(lanes_) + static_cast<std::size_t>(lane);
  }
  std::size_t done_index(int phase, int rank, int lane) const {
    return (static_cast<std::size_t>(phase) * static_cast<std::size_t>(ranks_) + static_cast<std::size_t>(rank)) *
               static_cast<std::size_t>(lanes_) +
           static_cast<std::size_t>(lane);
  }

  FlowNetwork& network_;
  Schedule schedule_;
  int priority_;
  double weight_;
  std::function<void()> on_done_;
  int ranks_;
  int lanes_;
  int phases_;                          // expanded
  std::vector<std::int32_t> pattern_;   // expanded phase -> index in schedule_.phases
  // Per pattern: CSR of the transfers each rank sends, and how many it takes part in.
  std::vector<std::vector<std::int32_t>> send_offsets_, send_list_, involvement_;
  std::vector<std::int32_t> position_;  // per (rank, lane): next phase to complete
  std::vector<std::int32_t> launched_;  // per (rank, lane): phases launched so far
  std::vector<std::int32_t> done_;      // per (phase, rank, lane)
  std::int64_t lanes_left_;
};

}  // namespace strait::sim::network::detail
