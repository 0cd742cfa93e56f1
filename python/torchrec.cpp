// read_torchrec_file(): a TorchRec sharding plan file read and checked on its own, as
// `strait simulate --torchrec` reads it before it checks the file against the model
// (planner/torchrec_plan.hpp), as dicts and lists; strait.torchrec.load_plan builds
// TorchRec's ShardingPlan from them. The read releases the GIL.

#include "planner/torchrec_plan.hpp"
#include "python/bindings.hpp"
#include "python/json_value.hpp"

namespace strait::python {
namespace {

Json optional_json(const std::optional<bool>& flag) { return flag ? Json(*flag) : Json(nullptr); }

// {"module", "table", "sharding_type", "compute_kernel", "enforce_hbm", "stochastic_rounding",
// "ranks" (null when the file lists none), "shards": [{"shard_offsets", "shard_sizes",
// "placement", "rank"}]}
Json entry_json(const planner::TorchRecEntry& e) {
  Json ranks = nullptr;
  if (e.ranks) {
    ranks = Json::array();
    for (const auto& r : *e.ranks) ranks.push_back(r.rank);
  }
  Json shards = Json::array();
  for (const auto& s : e.shards) {
    shards.push_back({{"shard_offsets", {s.row_offset, s.column_offset}},
                      {"shard_sizes", {s.rows, s.columns}},
                      {"placement", s.placement},
                      {"rank", s.rank}});
  }
  return {{"module", e.module},
          {"table", e.table},
          {"sharding_type", e.sharding_type},
          {"compute_kernel", e.compute_kernel},
          {"enforce_hbm", optional_json(e.enforce_hbm)},
          {"stochastic_rounding", optional_json(e.stochastic_rounding)},
          {"ranks", std::move(ranks)},
          {"shards", std::move(shards)}};
}

// {"group_size" (0: the whole world), "modules": [path], "entries": [entry]}, in the order
// read_torchrec_file gives them.
Json file_json(const planner::TorchRecFile& file) {
  Json entries = Json::array();
  for (const auto& e : file.entries) entries.push_back(entry_json(e));
  return {
      {"group_size", file.group_size}, {"modules", file.modules}, {"entries", std::move(entries)}};
}

}  // namespace

void bind_torchrec(py::module_& m) {
  m.def(
      "read_torchrec_file",
      [](const std::string& path) {
        Json file;
        {
          py::gil_scoped_release release;
          file = file_json(planner::read_torchrec_file(path));
        }
        return to_python(file);
      },
      py::arg("path"));
}

}  // namespace strait::python
