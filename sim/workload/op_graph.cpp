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

std::int32_t OpGraph::intern(std::string_view name) {
  return intern_into(names, name_index_, name);
}

std::int32_t OpGraph::stream(std::string_view name) {
  return intern_into(streams, stream_index_, name);
}

}  // namespace strait::sim::workload
