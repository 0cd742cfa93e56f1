#pragma once
// HostProgress: the collectives of ranks whose device progresses them on the host
// (DeviceSpec::collective_progress "host"): MPI on a CPU rank, whose one thread moves a
// collective's data only when it calls into MPI between two kernels, never during one
// (strait exec's CPU ranks call MPI_Testsome after each kernel, executor/cpu_executor.cpp).
//
// The network times a call's data as it would on a device that moves it alone, from the
// instant the last member issued it. The call then completes on all its members once each
// has been outside a kernel since: at that instant for members that were waiting for it
// or idle, at the end of the kernel a member was running (its next call into MPI). So a
// call whose members are all busy ends with the last of their kernels, and a rank that
// finished its work first waits there for the other's kernel. Members on a device that
// progresses collectives itself never hold a call back.
//
// In closed form, for a call whose data is done at T, on members m with kernel k_m running
// at T (ending at e_m; none: e_m = T):  end = max over m of e_m.

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include <boost/container/small_vector.hpp>

#include "sim/core/units.hpp"
#include "sim/run/detail/collective_rendezvous.hpp"

namespace strait::sim::run::detail {

class HostProgress {
 public:
  /// `host[r]`: rank r's collectives progress on the host.
  explicit HostProgress(std::vector<std::uint8_t> host)
      : host_(std::move(host)), running_(host_.size(), 0), due_(host_.size()) {
    for (const auto h : host_) active_ = active_ || h != 0;
  }

  /// Whether any rank progresses its collectives on the host.
  bool active() const { return active_; }
  bool on(std::int32_t r) const { return active_ && host_[u(r)] != 0; }

  /// Rank r started / ended a kernel (calls only for ranks `on`).
  void kernel_started(std::int32_t r) { ++running_[u(r)]; }
  /// Rank r ended a kernel: its calls into MPI now complete every call that waited only for
  /// this rank; `complete(call)` for each, in the order they became due.
  template <class Complete>
  void kernel_ended(std::int32_t r, Complete&& complete) {
    if (--running_[u(r)] > 0 || due_[u(r)].empty()) return;
    auto due = std::move(due_[u(r)]);
    due_[u(r)].clear();
    for (const auto slot : due) {
      Pending& p = pending_[u(slot)];
      if (--p.waiting > 0) continue;
      auto call = std::move(p.call);
      free_.push_back(slot);
      complete(*call);
    }
  }

  /// The data of `call` is done: returns true when it completes now (no member runs a
  /// kernel), else keeps it until the members running kernels have ended them.
  bool data_done(const std::shared_ptr<GroupCall>& call) {
    int busy = 0;
    for (const auto& [rank, op] : call->members) busy += on(rank) && running_[u(rank)] > 0;
    if (busy == 0) return true;
    std::int32_t slot;
    if (free_.empty()) {
      slot = static_cast<std::int32_t>(pending_.size());
      pending_.emplace_back();
    } else {
      slot = free_.back();
      free_.pop_back();
    }
    pending_[u(slot)] = {call, busy};
    for (const auto& [rank, op] : call->members) {
      if (on(rank) && running_[u(rank)] > 0) due_[u(rank)].push_back(slot);
    }
    return false;
  }

 private:
  struct Pending {
    std::shared_ptr<GroupCall> call;
    int waiting = 0;  // members still inside the kernel they were running
  };

  bool active_ = false;
  std::vector<std::uint8_t> host_;                                    // by rank
  std::vector<std::int32_t> running_;                                 // kernels running, by rank
  std::vector<boost::container::small_vector<std::int32_t, 2>> due_;  // pending slots, by rank
  std::vector<Pending> pending_;
  std::vector<std::int32_t> free_;  // slots of pending_ to reuse
};

}  // namespace strait::sim::run::detail
