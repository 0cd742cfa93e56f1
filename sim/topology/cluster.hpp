#pragma once
// Cluster: the physical system a job runs on, as a directed graph of GPUs, NVSwitches,
// NICs, switches and datacenter gateways joined by links (one Link per direction).
//
// Built from a cluster file in one of two forms (see README.md and configs/clusters/):
//   - hierarchy: datacenters of hosts (GPUs on an NVLink/NVSwitch domain, NICs, optional
//     rail optimization), a leaf/spine scale-out network with oversubscription per
//     datacenter, and cross-datacenter links; datacenters may differ in size and GPU type;
//   - graph: explicit nodes and links (bandwidth, latency), optional explicit routes, for
//     topologies the hierarchy cannot express.
// GPUs are numbered 0..gpu_count()-1 in file order (datacenter, host, local index); a
// job's rank r runs on GPU r unless a plan says otherwise. Every GPU reaches every other
// one (checked at load); GPUs are endpoints, never transit, for the router.
// Node names in hierarchy form: "dc/host3/gpu5", "dc/host3/nvswitch", "dc/host3/nic5",
// "dc/rail5/leaf2" (rail-optimized) or "dc/leaf2", "dc/spine7", "dc/gw".

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/core/config_node.hpp"
#include "sim/core/enum_names.hpp"
#include "sim/core/units.hpp"
#include "sim/topology/comm_parameters.hpp"

namespace strait::sim::topology {

using NodeIndex = std::uint32_t;
using LinkIndex = std::uint32_t;

enum class NodeKind { kGpu, kNvSwitch, kNic, kSwitch, kGateway };
/// The names cluster files use (sim/core/enum_names.hpp).
constexpr auto enum_names(NodeKind) {
  return std::to_array<EnumName<NodeKind>>({{NodeKind::kGpu, "gpu"},
                                            {NodeKind::kNvSwitch, "nvswitch"},
                                            {NodeKind::kNic, "nic"},
                                            {NodeKind::kSwitch, "switch"},
                                            {NodeKind::kGateway, "gateway"}});
}
inline const char* to_string(NodeKind k) { return name_of(k); }

/// What a link is, for traffic accounting and for algorithm choices.
enum class LinkClass { kNvlink, kPcie, kScaleOut, kCrossDc };
inline constexpr int kLinkClassCount = 4;
/// The names cluster files and reports use, in LinkClass order.
constexpr auto enum_names(LinkClass) {
  return std::to_array<EnumName<LinkClass>>({{LinkClass::kNvlink, "nvlink"},
                                             {LinkClass::kPcie, "pcie"},
                                             {LinkClass::kScaleOut, "scale_out"},
                                             {LinkClass::kCrossDc, "cross_dc"}});
}
inline const char* to_string(LinkClass c) { return name_of(c); }

struct Node {
  std::string name;  // unique, e.g. "dc0/host3/gpu5", "dc0/leaf2", "dc1/gw"
  NodeKind kind = NodeKind::kSwitch;
  int datacenter = -1;  // -1 for nodes outside any datacenter
  int host = -1;        // global host index, -1 if not inside a host
};

struct Link {
  NodeIndex src = 0;
  NodeIndex dst = 0;
  BytesPerSec bandwidth = 0;  // per direction, > 0
  Time latency;               // propagation + switching, >= 0
  LinkClass link_class = LinkClass::kScaleOut;
};

struct Gpu {
  NodeIndex node = 0;
  int host = 0;  // global host index
  int datacenter = 0;
  int local_index = 0;  // index inside its host
  int rail = 0;         // NIC rail it uses (local_index % nics in rail-optimized hosts)
  std::string type;     // e.g. "H100-SXM"; the cost layer maps it to device specs
};

struct Host {
  std::string name;  // e.g. "dc0/host3"
  int datacenter = 0;
  int nics = 0;                 // scale-out NICs (0 in graph-form clusters)
  bool rail_optimized = false;  // NIC r of each host goes to rail r's leaf
  std::vector<int> gpus;        // global GPU indices
};

struct Datacenter {
  std::string name;
  std::vector<int> hosts;  // global host indices
};

class Cluster {
 public:
  /// Loads a cluster file (hierarchy or graph form). Throws ConfigError/IoError.
  static Cluster load(const std::string& path);
  /// Builds from an already-parsed config (e.g. inline in a scenario).
  static Cluster from_config(const ConfigNode& config);

  const std::string& name() const { return name_; }
  int gpu_count() const { return static_cast<int>(gpus_.size()); }
  const Gpu& gpu(int index) const { return gpus_.at(static_cast<std::size_t>(index)); }
  const std::vector<Gpu>& gpus() const { return gpus_; }
  /// The GPU types of the cluster, each once, in the order they first appear.
  std::vector<std::string> gpu_types() const;
  const std::vector<Host>& hosts() const { return hosts_; }
  const std::vector<Datacenter>& datacenters() const { return datacenters_; }
  const std::vector<Node>& nodes() const { return nodes_; }
  const std::vector<Link>& links() const { return links_; }
  const Link& link(LinkIndex i) const { return links_[i]; }
  /// The node named `name` (linear search; for tests and tools), or nullopt.
  std::optional<NodeIndex> find_node(std::string_view name) const;
  /// Outgoing links of a node, in increasing link index.
  std::span<const LinkIndex> out_links(NodeIndex n) const;
  /// Explicit routes from a graph-form file, keyed by (src node, dst node); empty otherwise.
  const std::vector<std::pair<std::pair<NodeIndex, NodeIndex>, std::vector<LinkIndex>>>&
  explicit_routes() const {
    return explicit_routes_;
  }

  // Construction (used by the loaders and by tests that build clusters in code).
  /// Room for this many more nodes, links, GPUs and hosts (a loader that knows its sizes
  /// saves the regrowth copies and their page faults: 131,072 GPUs are ~1 M links).
  void reserve(std::size_t nodes, std::size_t links, std::size_t gpus, std::size_t hosts);
  NodeIndex add_node(Node node);
  LinkIndex add_link(Link link);
  /// Adds links a->b and b->a with the same bandwidth and latency.
  void add_duplex(NodeIndex a, NodeIndex b, BytesPerSec bandwidth, Time latency, LinkClass c);
  /// Registers a GPU node (must be a kGpu node). Host/datacenter lists are kept in step.
  int add_gpu(Gpu gpu);
  void set_name(std::string name) { name_ = std::move(name); }
  int add_datacenter(std::string name);
  int add_host(int datacenter);
  /// Adds a host with its name and NIC layout; `host.gpus` must be empty (add_gpu fills it).
  int add_host(Host host);
  void add_explicit_route(NodeIndex src, NodeIndex dst, std::vector<LinkIndex> links);
  /// Replaces a link's bandwidth (> 0) and latency (calibration of a loaded cluster).
  void set_link_parameters(LinkIndex i, BytesPerSec bandwidth, Time latency) {
    links_[i].bandwidth = bandwidth;
    links_[i].latency = latency;
  }
  /// The collective library's protocols and overheads (neutral unless a file or a test sets them).
  const CommParameters& comm() const { return comm_; }
  void set_comm(const CommParameters& comm) { comm_ = comm; }
  /// Builds adjacency; call after the last add_*.
  void finalize();

 private:
  std::string name_;
  CommParameters comm_;
  std::vector<Node> nodes_;
  std::vector<Link> links_;
  std::vector<Gpu> gpus_;
  std::vector<Host> hosts_;
  std::vector<Datacenter> datacenters_;
  std::vector<std::uint32_t> out_offsets_;  // CSR adjacency over links_
  std::vector<LinkIndex> out_links_;
  std::vector<std::pair<std::pair<NodeIndex, NodeIndex>, std::vector<LinkIndex>>> explicit_routes_;
};

}  // namespace strait::sim::topology
