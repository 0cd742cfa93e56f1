#include "planner/search_space.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "sim/workload/layout.hpp"

namespace strait::planner {
namespace {

using Pointer = Json::json_pointer;
using sim::workload::PlacementLevel;
using sim::workload::ShardingType;

Choice one(std::string label, const std::string& pointer, Json value) {
  return {std::move(label), {{pointer, std::move(value)}}};
}

/// Size of the smallest domain at `level` holding ranks 0.. (contiguous blocks of it).
int domain_size(const sim::topology::Cluster& cluster, int world, PlacementLevel level) {
  const auto d = sim::workload::domains(cluster, world, level);
  std::map<int, int> count;
  for (int x : d) ++count[x];
  int smallest = world;
  for (const auto& [id, n] : count) smallest = std::min(smallest, n);
  return smallest;
}

Json value_at(const Json& doc, const std::string& pointer) {
  if (doc.is_null()) return nullptr;
  const Pointer p(pointer);
  return doc.contains(p) ? doc.at(p) : Json(nullptr);
}

// Sizes of the smallest domain of each level holding ranks 0.., and the level of a group.
struct Domains {
  int host, rack, dc, world;
  bool multi_dc() const { return dc < world; }
  PlacementLevel level_of(int size) const {
    if (size <= host) return PlacementLevel::kHost;
    if (size <= rack) return PlacementLevel::kRack;
    if (size <= dc) return PlacementLevel::kDatacenter;
    return PlacementLevel::kCluster;
  }
};

// Sparse model-parallel group: each level's size and the powers of two between.
Dimension sparse_group_dimension(const Domains& at, const Constraints& constraints) {
  Dimension d{"sparse_group", {}, 0};
  std::vector<int> sizes;
  for (int g = at.host; g <= at.world; g *= 2) sizes.push_back(g);
  for (int g : {at.host, at.rack, at.dc, at.world}) sizes.push_back(g);
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  for (int g : sizes) {
    if (at.world % g != 0) continue;
    if (at.multi_dc() && g > at.dc && !constraints.span_sparse) continue;
    const char* level = name_of(at.level_of(g));
    d.choices.push_back({fmt::format("{}@{}", g, level),
                         {{"/sparse/group_size", g}, {"/sparse/placement", level}}});
  }
  return d;
}

// Whether some choice of the sparse group is smaller than the world (2D sparse).
bool two_dimensional(const Dimension& sparse_group, int world) {
  return std::any_of(sparse_group.choices.begin(), sparse_group.choices.end(),
                     [&](const Choice& c) {
                       for (const auto& [ptr, v] : c.values) {
                         if (ptr == "/sparse/group_size" && v.is_number() && v.get<int>() < world)
                           return true;
                       }
                       return false;
                     });
}

Dimension replica_sync_dimension() {
  Dimension d{"replica_sync", {}, 0};
  for (int every : {1, 10, 100, 1000}) {
    for (int stale : {1, 4}) {
      if (every == 1 && stale > 1) continue;
      d.choices.push_back(
          {fmt::format("every {} staleness {}", every, stale),
           {{"/sparse/replica_sync_every", every}, {"/sparse/replica_sync_staleness", stale}}});
    }
  }
  return d;
}

Dimension table_dimension(const sim::workload::EmbeddingTable& table, int t,
                          const Constraints& constraints) {
  Dimension d{"table:" + table.name, {}, 0};
  const std::string ptr = "/sparse/tables/" + table.name;
  auto allowed = [&](ShardingType type) { return !constraints.forbids(t, type); };
  for (auto type : {ShardingType::kRowWise, ShardingType::kTableWise, ShardingType::kTableRowWise,
                    ShardingType::kDataParallel}) {
    if (allowed(type)) d.choices.push_back(one(name_of(type), ptr, name_of(type)));
  }
  for (int shards : {2, 4}) {
    if (table.dim % shards != 0 || table.dim / shards < 32) continue;
    if (allowed(ShardingType::kColumnWise)) {
      d.choices.push_back(
          one(fmt::format("column_wise x{}", shards), ptr,
              {{"type", name_of(ShardingType::kColumnWise)}, {"column_shards", shards}}));
    }
    if (shards == 2 && allowed(ShardingType::kGrid)) {
      d.choices.push_back(
          one("grid x2", ptr, {{"type", name_of(ShardingType::kGrid)}, {"column_shards", shards}}));
    }
  }
  return d;
}

Dimension context_parallel_dimension(int host) {
  Dimension d{"context_parallel", {}, 0};
  d.choices.push_back(one("none", "/context_parallel", nullptr));
  for (int degree = 2; degree <= std::min(8, host); degree *= 2) {
    for (const auto mode : {sim::workload::CpMode::kAllGather, sim::workload::CpMode::kAllToAll}) {
      d.choices.push_back(one(fmt::format("{} {}", degree, name_of(mode)), "/context_parallel",
                              {{"degree", degree},
                               {"mode", name_of(mode)},
                               {"placement", name_of(PlacementLevel::kHost)}}));
    }
  }
  return d;
}

Dimension dense_dimension(const Domains& at, const Constraints& constraints) {
  Dimension d{"dense", {}, 0};
  const char* ddp = name_of(sim::workload::DenseParallelism::kDdp);
  const char* fsdp = name_of(sim::workload::DenseParallelism::kFsdp);
  for (const char* bucket : {"25 MiB", "100 MiB"}) {
    d.choices.push_back(one(fmt::format("ddp {}", bucket), "/dense",
                            {{"parallelism", ddp}, {"bucket_size", bucket}}));
  }
  if (at.host > 1 && at.host < at.world) {
    d.choices.push_back(one(fmt::format("hsdp {}@host", at.host), "/dense",
                            {{"parallelism", fsdp},
                             {"group_size", at.host},
                             {"placement", name_of(PlacementLevel::kHost)}}));
  }
  if (at.multi_dc() && !constraints.span_fsdp) {
    d.choices.push_back(one(fmt::format("hsdp {}@datacenter", at.dc), "/dense",
                            {{"parallelism", fsdp},
                             {"group_size", at.dc},
                             {"placement", name_of(PlacementLevel::kDatacenter)}}));
  } else {
    d.choices.push_back(one("fsdp world", "/dense", {{"parallelism", fsdp}}));
  }
  return d;
}

Dimension moe_dimension(const sim::workload::ModelConfig& model, int host) {
  Dimension d{"moe", {}, 0};
  for (int ep = 1; ep <= std::min(host, model.moe.experts); ep *= 2) {
    if (model.moe.experts % ep != 0) continue;
    d.choices.push_back(one(
        fmt::format("ep {}", ep), "/moe",
        ep == 1 ? Json(nullptr)
                : Json{{"expert_parallel", ep}, {"placement", name_of(PlacementLevel::kHost)}}));
  }
  return d;
}

// Pipeline depth, priorities, SM-free communication, and across datacenters the sync
// mode; with HSTU the sample balancing.
std::vector<Dimension> schedule_dimensions(const Domains& at, bool hstu) {
  std::vector<Dimension> out;
  Dimension& depth = out.emplace_back(Dimension{"pipeline_depth", {}, 0});
  for (int n : {1, 2, 3})
    depth.choices.push_back(one(fmt::format("{}", n), "/schedule/pipeline_depth", n));
  Dimension& priorities = out.emplace_back(Dimension{"priorities", {}, 0});
  priorities.choices.push_back(one("equal", "/schedule/priorities", nullptr));
  priorities.choices.push_back(one(
      "embedding first", "/schedule/priorities",
      {{"embedding", 0}, {"context_parallel", 0}, {"moe", 0}, {"dense", 1}, {"replica_sync", 2}}));
  priorities.choices.push_back(
      one("dense first", "/schedule/priorities", {{"dense", 0}, {"embedding", 1}}));
  Dimension& sm_free = out.emplace_back(Dimension{"sm_free_comm", {}, 0});
  sm_free.choices.push_back(one("off", "/schedule/sm_free_comm", false));
  sm_free.choices.push_back(one("on", "/schedule/sm_free_comm", true));
  if (at.multi_dc()) {
    using sim::workload::CrossDcSync;
    Dimension& sync = out.emplace_back(Dimension{"cross_dc_sync", {}, 0});
    for (auto mode : {CrossDcSync::kFlat, CrossDcSync::kHierarchical, CrossDcSync::kOverlapped})
      sync.choices.push_back(one(name_of(mode), "/schedule/cross_dc_sync", name_of(mode)));
  }
  if (hstu) {
    using sim::workload::LoadBalance;
    Dimension& balance = out.emplace_back(Dimension{"load_balance", {}, 0});
    balance.choices.push_back(one("none", "/schedule/load_balance", name_of(LoadBalance::kNone)));
    for (const auto method : {LoadBalance::kGreedy, LoadBalance::kKarmarkarKarp}) {
      balance.choices.push_back(one(name_of(method), "/schedule/load_balance", name_of(method)));
      if (at.multi_dc()) {
        balance.choices.push_back(
            one(fmt::format("{} in datacenter", name_of(method)), "/schedule/load_balance",
                {{"method", name_of(method)}, {"scope", name_of(PlacementLevel::kDatacenter)}}));
      }
    }
  }
  return out;
}

}  // namespace

SearchSpace::SearchSpace(const sim::topology::Cluster& cluster, int world,
                         const sim::workload::ModelConfig& model, const Constraints& constraints,
                         const Json& baseline)
    : fixed_(constraints.fix ? constraints.fix->json() : Json::object()) {
  const Domains at{domain_size(cluster, world, PlacementLevel::kHost),
                   domain_size(cluster, world, PlacementLevel::kRack),
                   domain_size(cluster, world, PlacementLevel::kDatacenter), world};
  add(sparse_group_dimension(at, constraints), baseline, constraints);
  // Replica sync only matters where some group is smaller than the world (2D sparse).
  if (two_dimensional(dims_.back(), world)) add(replica_sync_dimension(), baseline, constraints);
  for (std::size_t t = 0; t < model.tables.size(); ++t)
    add(table_dimension(model.tables[t], static_cast<int>(t), constraints), baseline, constraints);
  if (model.has_hstu()) add(context_parallel_dimension(at.host), baseline, constraints);
  add(dense_dimension(at, constraints), baseline, constraints);
  if (model.moe.layers > 0) add(moe_dimension(model, at.host), baseline, constraints);
  for (auto& d : schedule_dimensions(at, model.has_hstu()))
    add(std::move(d), baseline, constraints);
}

void SearchSpace::add(Dimension d, const Json& baseline, const Constraints& /*constraints*/) {
  const auto pointers = d.choices.front().values;  // a copy: choices are replaced below
  const bool table = d.name.rfind("table:", 0) == 0;
  // Fixed by the constraints: keep the choices that agree with every fixed pointer.
  std::vector<std::pair<std::string, Json>> fixed;
  for (const auto& [ptr, v] : pointers) {
    Json f = value_at(fixed_, ptr);
    if (f.is_null() && table) f = value_at(fixed_, "/sparse/default");
    if (!f.is_null()) fixed.emplace_back(ptr, f);
  }
  if (!fixed.empty()) {
    std::vector<Choice> kept;
    for (const auto& c : d.choices) {
      bool agree = true;
      for (const auto& [ptr, f] : fixed) {
        for (const auto& [p, v] : c.values) agree = agree && (p != ptr || v == f);
      }
      if (agree) kept.push_back(c);
    }
    if (kept.empty()) {
      Choice c{"fixed", {}};
      for (const auto& [ptr, v] : pointers) {
        Json f = nullptr;
        for (const auto& [p, x] : fixed) {
          if (p == ptr) f = x;
        }
        c.values.emplace_back(ptr, f);
      }
      kept.push_back(std::move(c));
    }
    d.choices = std::move(kept);
  }
  // The baseline's value: an existing choice, or a new one.
  Choice base{"baseline", {}};
  bool any = false;
  for (const auto& [ptr, v] : pointers) {
    Json b = value_at(baseline, ptr);
    if (b.is_null() && table) b = value_at(baseline, "/sparse/default");
    if (b.is_object() && b.contains("ranks")) b.erase("ranks");
    if (b.is_object() && b.size() == 1 && b.contains("type")) b = b["type"];
    if (b == name_of(ShardingType::kColumnWise) || b == name_of(ShardingType::kGrid))
      b = {{"type", b}, {"column_shards", 2}};
    any = any || !b.is_null();
    base.values.emplace_back(ptr, b);
  }
  d.start = 0;
  if (any && fixed.empty()) {
    const auto it = std::find_if(d.choices.begin(), d.choices.end(),
                                 [&](const Choice& c) { return c.values == base.values; });
    if (it == d.choices.end() && table) {
      d.start = 0;  // a sharding outside the menu may be forbidden: start from the first
    } else if (it == d.choices.end()) {
      d.choices.push_back(std::move(base));
      d.start = static_cast<int>(d.choices.size()) - 1;
    } else {
      d.start = static_cast<int>(it - d.choices.begin());
    }
  }
  dims_.push_back(std::move(d));
}

std::vector<int> SearchSpace::start() const {
  std::vector<int> p;
  for (const auto& d : dims_) p.push_back(d.start);
  return p;
}

double SearchSpace::size() const {
  double n = 1;
  for (const auto& d : dims_) n = std::min(n * static_cast<double>(d.choices.size()), 4.6e18);
  return n;
}

Json SearchSpace::compose(const std::vector<int>& point) const {
  Json doc = {{"name", "strait-plan"}};
  if (fixed_.contains("ranks")) doc["ranks"] = fixed_["ranks"];
  for (std::size_t i = 0; i < dims_.size(); ++i) {
    const auto& c = dims_[i].choices[static_cast<std::size_t>(point[i])];
    for (const auto& [ptr, v] : c.values) {
      if (!v.is_null()) doc[Pointer(ptr)] = v;
    }
  }
  return doc;
}

std::vector<Neighbour> SearchSpace::neighbours(const Json& document) const {
  std::vector<Neighbour> out;
  for (std::size_t k = 0; k < dims_.size(); ++k) {
    const auto& d = dims_[k];
    const bool replace = d.name == "sparse_group" || d.name == "context_parallel";
    for (const auto& choice : d.choices) {
      Json doc = document;
      for (const auto& [ptr, v] : choice.values) {
        const Pointer p(ptr);
        if (!v.is_null()) {
          doc[p] = v;
        } else if (doc.contains(p)) {
          doc.at(p.parent_pointer()).erase(p.back());
        }
      }
      if (replace && doc.contains("sparse") && doc["sparse"].contains("tables")) {
        for (auto& [name, t] : doc["sparse"]["tables"].items()) {
          if (t.is_object()) t.erase("ranks");
        }
      }
      out.push_back({std::move(doc), k, d.name + "=" + choice.label});
    }
  }
  return out;
}

std::string SearchSpace::describe(const std::vector<int>& point) const {
  std::string out;
  for (std::size_t i = 0; i < dims_.size(); ++i) {
    if (point[i] == dims_[i].start) continue;
    if (!out.empty()) out += ", ";
    out += dims_[i].name + "=" + dims_[i].choices[static_cast<std::size_t>(point[i])].label;
  }
  return out.empty() ? "start point" : out;
}

}  // namespace strait::planner
