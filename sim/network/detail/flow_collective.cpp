#include "sim/network/detail/flow_collective.hpp"

#include "sim/core/error.hpp"
#include "sim/network/flow_network.hpp"

namespace strait::sim::network::detail {
namespace {

// A finished transfer is identified by (expanded phase, lane, transfer index in its
// pattern), packed so the completion callback stays small enough for std::function's
// inline storage.
constexpr int kLaneBits = 8;
constexpr int kTransferBits = 32;
std::uint64_t pack(int phase, int lane, int transfer) {
  return (static_cast<std::uint64_t>(phase) << (kLaneBits + kTransferBits)) |
         (static_cast<std::uint64_t>(lane) << kTransferBits) | static_cast<std::uint32_t>(transfer);
}

}  // namespace

FlowCollective::FlowCollective(FlowNetwork& network, Schedule schedule, int priority, double weight,
                               std::function<void()> on_done)
    : network_(network),
      schedule_(std::move(schedule)),
      priority_(priority),
      weight_(weight),
      on_done_(std::move(on_done)),
      ranks_(static_cast<int>(schedule_.gpus.size())),
      lanes_(schedule_.chunks),
      phases_(schedule_.expanded_phase_count()) {
  if (lanes_ < 1 || lanes_ >= (1 << kLaneBits)) throw Error("collective: chunk lanes must be in 1..255");
  if (phases_ >= (1 << (64 - kLaneBits - kTransferBits - 1))) throw Error("collective: too many phases");
  pattern_.reserve(static_cast<std::size_t>(phases_));
  const auto n = static_cast<std::size_t>(ranks_);
  for (std::size_t i = 0; i < schedule_.phases.size(); ++i) {
    const auto& phase = schedule_.phases[i];
    for (int k = 0; k < phase.repeat; ++k) pattern_.push_back(static_cast<std::int32_t>(i));
    std::vector<std::int32_t> offsets(n + 1, 0), involvement(n, 0);
    for (const auto& t : phase.transfers) {
      ++offsets[static_cast<std::size_t>(t.src) + 1];
      ++involvement[static_cast<std::size_t>(t.src)];
      ++involvement[static_cast<std::size_t>(t.dst)];
    }
    for (std::size_t r = 0; r < n; ++r) offsets[r + 1] += offsets[r];
    std::vector<std::int32_t> list(phase.transfers.size()), fill(offsets.begin(), offsets.end() - 1);
    for (std::size_t t = 0; t < phase.transfers.size(); ++t) {
      list[static_cast<std::size_t>(fill[static_cast<std::size_t>(phase.transfers[t].src)]++)] =
          static_cast<std::int32_t>(t);
    }
    send_offsets_.push_back(std::move(offsets));
    send_list_.push_back(std::move(list));
    involvement_.push_back(std::move(involvement));
  }
  position_.assign(n * static_cast<std::size_t>(lanes_), 0);
  launched_.assign(n * static_cast<std::size_t>(lanes_), 0);
  done_.assign(static_cast<std::size_t>(phases_) * n * static_cast<std::size_t>(lanes_), 0);
  lanes_left_ = static_cast<std::int64_t>(n) * lanes_;
}

void FlowCollective::start() {
  if (phases_ == 0) {
    lanes_left_ = 0;
    network_.collective_done(this);
    return;
  }
  for (int r = 0; r < ranks_ && lanes_left_ > 0; ++r) advance(r, 0);
}

void FlowCollective::notify_done() {
  if (on_done_) {
    auto callback = std::move(on_done_);
    on_done_ = nullptr;
    callback();
  }
}

void FlowCollective::advance(int rank, int lane) {
  // Iterative over lanes: finishing a phase in lane c may release lane c+1 of this rank.
  for (; lane < lanes_; ++lane) {
    auto& pos = position_[lane_index(rank, lane)];
    bool moved = false;
    while (pos < phases_) {
      if (lane > 0 && position_[lane_index(rank, lane - 1)] <= pos) break;
      if (launched_[lane_index(rank, lane)] <= pos) launch(rank, lane, pos);
      const auto& involvement = involvement_[static_cast<std::size_t>(pattern_[static_cast<std::size_t>(pos)])];
      if (done_[done_index(pos, rank, lane)] < involvement[static_cast<std::size_t>(rank)]) break;
      ++pos;
      moved = true;
      if (pos == phases_ && --lanes_left_ == 0) {
        network_.collective_done(this);
        return;
      }
    }
    if (!moved) return;
  }
}

void FlowCollective::launch(int rank, int lane, int phase) {
  launched_[lane_index(rank, lane)] = phase + 1;
  const auto p = static_cast<std::size_t>(pattern_[static_cast<std::size_t>(phase)]);
  const auto& offsets = send_offsets_[p];
  const auto& transfers = schedule_.phases[p].transfers;
  for (auto i = offsets[static_cast<std::size_t>(rank)]; i < offsets[static_cast<std::size_t>(rank) + 1]; ++i) {
    const int t = send_list_[p][static_cast<std::size_t>(i)];
    const auto& transfer = transfers[static_cast<std::size_t>(t)];
    const Bytes lane_bytes = (transfer.bytes + lanes_ - 1) / lanes_;
    const std::uint64_t tag = pack(phase, lane, t);
    network_.start_transfer(schedule_.gpus[static_cast<std::size_t>(transfer.src)],
                            schedule_.gpus[static_cast<std::size_t>(transfer.dst)], lane_bytes,
                            priority_, weight_, [this, tag] { transfer_done(tag); });
  }
}

void FlowCollective::transfer_done(std::uint64_t tag) {
  const int phase = static_cast<int>(tag >> (kLaneBits + kTransferBits));
  const int lane = static_cast<int>((tag >> kTransferBits) & ((1u << kLaneBits) - 1));
  const int t = static_cast<int>(tag & 0xFFFFFFFFu);
  const auto& transfer =
      schedule_.phases[static_cast<std::size_t>(pattern_[static_cast<std::size_t>(phase)])].transfers[static_cast<std::size_t>(t)];
  ++done_[done_index(phase, transfer.src, lane)];
  ++done_[done_index(phase, transfer.dst, lane)];
  advance(transfer.src, lane);
  if (lanes_left_ > 0) advance(transfer.dst, lane);
}

}  // namespace strait::sim::network::detail
