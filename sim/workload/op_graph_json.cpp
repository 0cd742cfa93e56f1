#include "sim/workload/op_graph_json.hpp"

#include <fmt/format.h>

#include "sim/core/error.hpp"

namespace strait::sim::workload {

nlohmann::json to_json(const OpGraph& graph, int rank) {
  if (rank < 0 || rank >= static_cast<int>(graph.ranks.size())) {
    throw Error(fmt::format("rank {} is out of range: the graph has ranks 0..{}", rank,
                            static_cast<int>(graph.ranks.size()) - 1));
  }
  const RankOps& ro = graph.ranks[static_cast<std::size_t>(rank)];
  nlohmann::json ops = nlohmann::json::array();
  for (std::size_t i = 0; i < ro.ops.size(); ++i) {
    const Op& op = ro.ops[i];
    nlohmann::json j;
    j["id"] = i;
    j["name"] = graph.names[static_cast<std::size_t>(op.name)];
    j["stream"] = graph.streams[static_cast<std::size_t>(op.stream)];
    j["step"] = op.step;
    j["phase"] = to_string(op.phase);
    j["deps"] = std::vector<std::int32_t>(op.deps.begin(), op.deps.end());
    if (op.kind == OpKind::kKernel) {
      const Kernel& k = op.kernel;
      j["kind"] = "kernel";
      j["kernel"] = {{"kind", to_string(k.kind)},
                     {"precision", to_string(k.precision)},
                     {"flops", k.flops},
                     {"hbm_bytes", k.hbm_bytes},
                     {"m", k.m},
                     {"n", k.n},
                     {"k", k.k},
                     {"mean_length", k.mean_length},
                     {"heads", k.heads},
                     {"head_dim", k.head_dim},
                     {"embedding_dim", k.embedding_dim},
                     {"unique_fraction", k.unique_fraction}};
    } else {
      const CollectiveCall& c = op.collective;
      const ProcessGroup& g = graph.groups[static_cast<std::size_t>(c.group)];
      j["kind"] = "collective";
      j["collective"] = {{"op", network::to_string(c.op)},
                         {"algorithm", network::to_string(c.algorithm)},
                         {"group", g.name},
                         {"group_ranks", g.ranks},
                         {"bytes", c.bytes},
                         {"send_row", c.send_row.bytes()},
                         {"class", to_string(c.comm_class)},
                         {"priority", c.priority},
                         {"sm_free", c.sm_free}};
    }
    ops.push_back(std::move(j));
  }
  return {{"rank", ro.rank},          {"gpu", ro.gpu},
          {"samples", ro.samples},    {"steps", graph.steps},
          {"streams", graph.streams}, {"ops", std::move(ops)}};
}

}  // namespace strait::sim::workload
