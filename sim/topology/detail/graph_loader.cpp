#include "sim/topology/detail/graph_loader.hpp"

#include <optional>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "sim/core/error.hpp"
#include "sim/topology/detail/config_checks.hpp"
#include "sim/topology/detail/reachability.hpp"

namespace strait::sim::topology::detail {
namespace {

constexpr double kDefaultLinkLatencyUs = 1.0;
constexpr const char* kDefaultDatacenter = "dc0";

class GraphLoader {
 public:
  explicit GraphLoader(const ConfigNode& root) : root_(root) {}

  Cluster load() {
    root_.allow_only({"name", "description", "nodes", "links", "routes", "nccl"});
    cluster_.set_name(root_.string("name"));
    auto nccl = root_.find("nccl");
    cluster_.set_comm(nccl ? parse_comm_parameters(*nccl) : CommParameters::published_defaults());
    if (root_.has("description")) root_.string("description");
    load_nodes(root_.at("nodes"));
    load_links(root_.at("links"));
    cluster_.finalize();
    if (auto routes = root_.find("routes")) load_routes(*routes);
    check_all_gpus_connected(cluster_, root_.file(), "/links");
    return std::move(cluster_);
  }

 private:
  int datacenter_index(const std::string& name) {
    auto [it, added] = datacenters_.try_emplace(name, 0);
    if (added) it->second = cluster_.add_datacenter(name);
    return it->second;
  }

  struct ParsedNode {
    ConfigNode where;
    Node node;
    std::string gpu_type;  // GPUs only
    int rail = 0;          // GPUs only
  };

  // Two passes: hosts are made from the GPUs that name them, then every node, in file
  // order, so other nodes may name a host whose GPUs come later in the file.
  void load_nodes(const ConfigNode& list) {
    std::unordered_map<std::string, int> host_of_name;
    std::vector<ParsedNode> parsed;
    for (const ConfigNode& n : list.elements()) {
      const NodeKind kind = read_enum<NodeKind>(n, "kind");
      const bool is_gpu = kind == NodeKind::kGpu;
      if (is_gpu) {
        n.allow_only({"name", "kind", "gpu_type", "host", "datacenter", "rail"});
      } else {
        n.allow_only({"name", "kind", "host", "datacenter"});
      }
      ParsedNode p{n, {}, {}, 0};
      p.node.name = n.string("name");
      p.node.kind = kind;
      if (!names_.insert(p.node.name).second) {
        n.at("name").fail(fmt::format("duplicate node name \"{}\"", p.node.name));
      }
      if (is_gpu || n.has("datacenter")) {
        p.node.datacenter = datacenter_index(n.string_or("datacenter", kDefaultDatacenter));
      }
      if (is_gpu) {
        p.gpu_type = n.string("gpu_type");
        p.rail = n.int_or("rail", 0, 0, 65535);
        if (p.rail < 0) n.at("rail").fail(fmt::format("expected a rail >= 0, got {}", p.rail));
        const std::string host_name = n.string_or("host", p.node.name);
        auto [it, added] = host_of_name.try_emplace(host_name, 0);
        if (added) {
          Host host;
          host.name = host_name;
          host.datacenter = p.node.datacenter;
          it->second = cluster_.add_host(host);
        }
        const Host& host = cluster_.hosts()[static_cast<std::size_t>(it->second)];
        if (host.datacenter != p.node.datacenter) {
          n.at("datacenter")
              .fail(fmt::format(
                  "host \"{}\" is in datacenter \"{}\" already", host_name,
                  cluster_.datacenters()[static_cast<std::size_t>(host.datacenter)].name));
        }
        p.node.host = it->second;
      }
      parsed.push_back(std::move(p));
    }
    std::vector<int> gpus_in_host(cluster_.hosts().size(), 0);
    for (ParsedNode& p : parsed) {
      const bool is_gpu = p.node.kind == NodeKind::kGpu;
      if (!is_gpu && p.where.has("host")) {
        const ConfigNode host = p.where.at("host");
        auto it = host_of_name.find(host.as_string());
        if (it == host_of_name.end()) {
          host.fail(fmt::format("unknown host \"{}\" (no GPU names it)", host.as_string()));
        }
        p.node.host = it->second;
      }
      const int dc = p.node.datacenter;
      const int host = p.node.host;
      const NodeIndex index = add_node(std::move(p.node));
      if (is_gpu) {
        const int local = gpus_in_host[static_cast<std::size_t>(host)]++;
        cluster_.add_gpu({index, host, dc, local, p.rail, p.gpu_type});
      }
    }
    if (cluster_.gpu_count() == 0) list.fail("expected at least one node of kind \"gpu\"");
  }

  NodeIndex add_node(Node node) {
    std::string name = node.name;
    const NodeIndex index = cluster_.add_node(std::move(node));
    index_.emplace(std::move(name), index);
    return index;
  }

  NodeIndex node_named(const ConfigNode& name) const {
    auto it = index_.find(name.as_string());
    if (it == index_.end()) name.fail(fmt::format("unknown node \"{}\"", name.as_string()));
    return it->second;
  }

  void load_links(const ConfigNode& list) {
    for (const ConfigNode& l : list.elements()) {
      l.allow_only({"between", "bandwidth", "latency", "class", "duplex"});
      const ConfigNode between = l.at("between");
      if (between.size() != 2) between.fail("expected two node names");
      const NodeIndex a = node_named(between.at(std::size_t{0}));
      const NodeIndex b = node_named(between.at(std::size_t{1}));
      if (a == b) between.fail("expected two different nodes");
      const BytesPerSec bandwidth = positive_bandwidth(l, "bandwidth");
      const Time latency = l.duration_or("latency", Time::from_us(kDefaultLinkLatencyUs));
      const LinkClass c = read_enum_or(l, "class", LinkClass::kScaleOut);
      if (l.bool_or("duplex", true)) {
        cluster_.add_duplex(a, b, bandwidth, latency, c);
      } else {
        cluster_.add_link({a, b, bandwidth, latency, c});
      }
    }
  }

  // The lowest-index link u -> v, if any.
  std::optional<LinkIndex> link_between(NodeIndex u, NodeIndex v) const {
    for (LinkIndex l : cluster_.out_links(u)) {
      if (cluster_.link(l).dst == v) return l;
    }
    return std::nullopt;
  }

  void load_routes(const ConfigNode& list) {
    for (const ConfigNode& r : list.elements()) {
      r.allow_only({"from", "to", "via"});
      const NodeIndex from = node_named(r.at("from"));
      const NodeIndex to = node_named(r.at("to"));
      if (from == to) r.at("to").fail("expected a node other than \"from\"");
      if (!routed_pairs_.insert({from, to}).second) {
        r.fail(
            fmt::format("duplicate route from \"{}\" to \"{}\"", r.string("from"), r.string("to")));
      }
      std::vector<std::pair<NodeIndex, ConfigNode>> hops;
      if (auto via = r.find("via")) {
        for (const ConfigNode& v : via->elements()) hops.emplace_back(node_named(v), v);
      }
      hops.emplace_back(to, r.at("to"));
      std::vector<LinkIndex> links;
      NodeIndex u = from;
      // A route is a path: one that passes a node twice loops (traffic would cross the
      // same switch, and maybe the same link, twice).
      std::unordered_set<NodeIndex> passed{from};
      for (const auto& [v, where] : hops) {
        if (!passed.insert(v).second) {
          where.fail(fmt::format("route passes \"{}\" twice (expected a path without loops)",
                                 cluster_.nodes()[v].name));
        }
        auto l = link_between(u, v);
        if (!l) {
          where.fail(fmt::format("no link from \"{}\" to \"{}\"", cluster_.nodes()[u].name,
                                 cluster_.nodes()[v].name));
        }
        links.push_back(*l);
        u = v;
      }
      cluster_.add_explicit_route(from, to, std::move(links));
    }
  }

  const ConfigNode& root_;
  Cluster cluster_;
  std::unordered_set<std::string> names_;
  std::unordered_map<std::string, NodeIndex> index_;
  std::unordered_map<std::string, int> datacenters_;
  std::set<std::pair<NodeIndex, NodeIndex>> routed_pairs_;
};

}  // namespace

Cluster load_graph_form(const ConfigNode& root) { return GraphLoader(root).load(); }

}  // namespace strait::sim::topology::detail
