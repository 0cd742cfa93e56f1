#include "sim/workload/op_graph.hpp"

namespace strait::sim::workload {
namespace {

std::int32_t intern_into(
    std::vector<std::string>& table,
    std::unordered_map<std::string, std::int32_t, OpGraph::StringHash, std::equal_to<>>& index,
    std::string_view name) {
  if (auto it = index.find(name); it != index.end()) return it->second;
  const auto id = static_cast<std::int32_t>(table.size());
  table.emplace_back(name);
  index.emplace(std::string(name), id);
  return id;
}

}  // namespace

const std::vector<Bytes>& SendRow::empty_row() {
  static const std::vector<Bytes> kEmpty;
  return kEmpty;
}

const char* to_string(CommClass c) {
  switch (c) {
    case CommClass::kInputDist:
      return "input_dist";
    case CommClass::kOutputDist:
      return "output_dist";
    case CommClass::kGradDist:
      return "grad_dist";
    case CommClass::kDenseSync:
      return "dense_sync";
    case CommClass::kContextParallel:
      return "context_parallel";
    case CommClass::kReplicaSync:
      return "replica_sync";
    case CommClass::kMoe:
      return "moe";
  }
  return "?";
}

const char* to_string(StepPhase p) {
  switch (p) {
    case StepPhase::kInput:
      return "input";
    case StepPhase::kForward:
      return "forward";
    case StepPhase::kBackward:
      return "backward";
    case StepPhase::kOptimizer:
      return "optimizer";
  }
  return "?";
}

std::int32_t OpGraph::intern(std::string_view name) {
  return intern_into(names, name_index_, name);
}

std::int32_t OpGraph::stream(std::string_view name) {
  return intern_into(streams, stream_index_, name);
}

}  // namespace strait::sim::workload
