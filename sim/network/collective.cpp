#include "sim/network/collective.hpp"

#include <array>
#include <utility>

namespace strait::sim::network {
namespace {

constexpr std::array<std::pair<CollectiveOp, std::string_view>, 8> kOps = {{
    {CollectiveOp::kAllReduce, "all_reduce"},
    {CollectiveOp::kAllGather, "all_gather"},
    {CollectiveOp::kReduceScatter, "reduce_scatter"},
    {CollectiveOp::kAllToAll, "all_to_all"},
    {CollectiveOp::kAllToAllV, "all_to_allv"},
    {CollectiveOp::kBroadcast, "broadcast"},
    {CollectiveOp::kReduce, "reduce"},
    {CollectiveOp::kSendRecv, "sendrecv"},
}};

constexpr std::array<std::pair<Protocol, std::string_view>, 4> kProtocols = {{
    {Protocol::kAuto, "auto"},
    {Protocol::kLL, "ll"},
    {Protocol::kLL128, "ll128"},
    {Protocol::kSimple, "simple"},
}};

constexpr std::array<std::pair<Algorithm, std::string_view>, 9> kAlgorithms = {{
    {Algorithm::kAuto, "auto"},
    {Algorithm::kRing, "ring"},
    {Algorithm::kTree, "tree"},
    {Algorithm::kHierarchical, "hierarchical"},
    {Algorithm::kDirect, "direct"},
    {Algorithm::kPairwise, "pairwise"},
    {Algorithm::kNvls, "nvls"},
    {Algorithm::kNvlsTree, "nvls_tree"},
    {Algorithm::kCollNet, "collnet"},
}};

template <typename Table>
std::string join_names(const Table& table) {
  std::string out;
  for (const auto& [value, name] : table) out += (out.empty() ? "" : ", ") + std::string(name);
  return out;
}

}  // namespace

const char* to_string(CollectiveOp op) {
  for (const auto& [value, name] : kOps) {
    if (value == op) return name.data();
  }
  return "?";
}

const char* to_string(Algorithm algo) {
  for (const auto& [value, name] : kAlgorithms) {
    if (value == algo) return name.data();
  }
  return "?";
}

const char* to_string(Protocol protocol) {
  for (const auto& [value, name] : kProtocols) {
    if (value == protocol) return name.data();
  }
  return "?";
}

std::optional<Protocol> parse_protocol(std::string_view text) {
  for (const auto& [value, name] : kProtocols) {
    if (name == text) return value;
  }
  return std::nullopt;
}

std::string protocol_names() { return join_names(kProtocols); }

std::optional<CollectiveOp> parse_collective_op(std::string_view text) {
  // nccl-tests and NCCL spell them allreduce, alltoall, ...: accept those too.
  static constexpr std::array<std::pair<std::string_view, CollectiveOp>, 7> kAliases = {{
      {"allreduce", CollectiveOp::kAllReduce},
      {"allgather", CollectiveOp::kAllGather},
      {"reducescatter", CollectiveOp::kReduceScatter},
      {"alltoall", CollectiveOp::kAllToAll},
      {"alltoallv", CollectiveOp::kAllToAllV},
      {"bcast", CollectiveOp::kBroadcast},
      {"send_recv", CollectiveOp::kSendRecv},
  }};
  for (const auto& [value, name] : kOps) {
    if (name == text) return value;
  }
  for (const auto& [name, value] : kAliases) {
    if (name == text) return value;
  }
  return std::nullopt;
}

std::optional<Algorithm> parse_algorithm(std::string_view text) {
  for (const auto& [value, name] : kAlgorithms) {
    if (name == text) return value;
  }
  return std::nullopt;
}

std::string collective_op_names() { return join_names(kOps); }
std::string algorithm_names() { return join_names(kAlgorithms); }

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
