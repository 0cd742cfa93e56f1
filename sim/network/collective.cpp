#include "sim/network/collective.hpp"

namespace strait::sim::network {

std::optional<CollectiveOp> parse_collective_op(std::string_view text) {
  // nccl-tests and NCCL spell them allreduce, alltoall, ...: accept those too.
  static constexpr auto kSpellings = std::to_array<EnumName<CollectiveOp>>({
      {CollectiveOp::kAllReduce, "allreduce"},
      {CollectiveOp::kAllGather, "allgather"},
      {CollectiveOp::kReduceScatter, "reducescatter"},
      {CollectiveOp::kAllToAll, "alltoall"},
      {CollectiveOp::kAllToAllV, "alltoallv"},
      {CollectiveOp::kBroadcast, "bcast"},
      {CollectiveOp::kSendRecv, "send_recv"},
  });
  if (const auto op = parse_enum<CollectiveOp>(text)) return op;
  return parse_enum(text, kSpellings);
}

std::string collective_op_names() { return enum_name_list<CollectiveOp>(); }

double busbw_factor(CollectiveOp op, int n) {
  const double nn = n;
  switch (op) {
    case CollectiveOp::kAllReduce:
      return n > 1 ? 2.0 * (nn - 1) / nn : 1.0;
    case CollectiveOp::kAllGather:
    case CollectiveOp::kReduceScatter:
    case CollectiveOp::kAllToAll:
    case CollectiveOp::kAllToAllV:
      return n > 1 ? (nn - 1) / nn : 1.0;
    case CollectiveOp::kBroadcast:
    case CollectiveOp::kReduce:
    case CollectiveOp::kSendRecv:
      return 1.0;
  }
  return 1.0;
}

}  // namespace strait::sim::network
