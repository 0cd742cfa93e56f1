#include "calibration/kernel_names.hpp"

#include <cctype>
#include <map>
#include <string>
#include <utility>

namespace strait::calibration {
namespace {

using sim::network::CollectiveOp;

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool contains(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}

}  // namespace

KernelNameFamily kernel_family_of_name(std::string_view kernel_name) {
  const std::string n = lower(kernel_name);
  if (contains(n, "ncclkernel_") || contains(n, "nccldevkernel_")) return KernelNameFamily::kNccl;
  if (contains(n, "multi_tensor_apply") || contains(n, "adam")) {
    return KernelNameFamily::kOptimizer;
  }
  if (contains(n, "embedding_backward") ||
      (contains(n, "embedding") && contains(n, "codegen_backward"))) {
    return KernelNameFamily::kEmbeddingUpdate;
  }
  if (contains(n, "embedding_forward") || contains(n, "embeddingbag_updateoutput") ||
      (contains(n, "split_embedding") && contains(n, "codegen_forward"))) {
    return KernelNameFamily::kEmbeddingLookup;
  }
  if (contains(n, "hstu") || contains(n, "attention") || contains(n, "flash")) {
    return contains(n, "bwd") || contains(n, "backward") ? KernelNameFamily::kAttentionBackward
                                                         : KernelNameFamily::kAttentionForward;
  }
  if (contains(n, "gemm") || contains(n, "cutlass") || contains(n, "xmma") ||
      contains(n, "cublaslt") || contains(n, "nvjet")) {
    return KernelNameFamily::kGemm;
  }
  if (contains(n, "elementwise_kernel") || contains(n, "reduce_kernel") ||
      contains(n, "layer_norm")) {
    return KernelNameFamily::kElementwise;
  }
  return KernelNameFamily::kUnknown;
}

std::optional<CollectiveOp> nccl_kernel_op(std::string_view kernel_name) {
  std::string_view rest;
  for (std::string_view prefix : {"ncclKernel_", "ncclDevKernel_"}) {
    if (const auto at = kernel_name.find(prefix); at != std::string_view::npos) {
      rest = kernel_name.substr(at + prefix.size());
    }
  }
  const std::string_view op = rest.substr(0, rest.find_first_of("_("));
  static const std::map<std::string_view, CollectiveOp> kOps = {
      {"AllReduce", CollectiveOp::kAllReduce},         {"AllGather", CollectiveOp::kAllGather},
      {"ReduceScatter", CollectiveOp::kReduceScatter}, {"SendRecv", CollectiveOp::kSendRecv},
      {"Broadcast", CollectiveOp::kBroadcast},         {"Reduce", CollectiveOp::kReduce}};
  const auto it = kOps.find(op);
  return it == kOps.end() ? std::nullopt : std::optional(it->second);
}

std::optional<CollectiveOp> collective_name_op(std::string_view c10d_name) {
  std::string n;
  for (char c : lower(c10d_name)) {
    if (c != '_') n += c;
  }
  const std::pair<std::string_view, CollectiveOp> kPrefixes[] = {
      {"allreduce", CollectiveOp::kAllReduce},
      {"allgather", CollectiveOp::kAllGather},
      {"reducescatter", CollectiveOp::kReduceScatter},
      {"alltoallv", CollectiveOp::kAllToAllV},
      {"alltoall", CollectiveOp::kAllToAll},
      {"broadcast", CollectiveOp::kBroadcast},
      {"reduce", CollectiveOp::kReduce},
      {"send", CollectiveOp::kSendRecv},
      {"recv", CollectiveOp::kSendRecv}};
  for (const auto& [prefix, op] : kPrefixes) {
    if (n.starts_with(prefix)) return op;
  }
  return std::nullopt;
}

}  // namespace strait::calibration
