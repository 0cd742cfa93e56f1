#include "sim/topology/cluster.hpp"

#include <algorithm>
#include <stdexcept>

#include "sim/topology/detail/graph_loader.hpp"
#include "sim/topology/detail/hierarchy_loader.hpp"

namespace strait::sim::topology {

Cluster Cluster::load(const std::string& path) { return from_config(load_config(path)); }

Cluster Cluster::from_config(const ConfigNode& config) {
  if (!config.is_object()) config.fail("expected a cluster object");
  if (config.has("nodes") || config.has("links")) return detail::load_graph_form(config);
  if (config.has("datacenters")) return detail::load_hierarchy_form(config);
  config.fail(
      "expected a cluster in hierarchy form (key \"datacenters\") or in graph form (keys "
      "\"nodes\" and \"links\")");
}

std::optional<NodeIndex> Cluster::find_node(std::string_view name) const {
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    if (nodes_[i].name == name) return static_cast<NodeIndex>(i);
  }
  return std::nullopt;
}

std::span<const LinkIndex> Cluster::out_links(NodeIndex n) const {
  if (out_offsets_.size() != nodes_.size() + 1) {
    throw std::logic_error("Cluster::out_links called before finalize()");
  }
  return {out_links_.data() + out_offsets_[n], out_links_.data() + out_offsets_[n + 1]};
}

void Cluster::reserve(std::size_t nodes, std::size_t links, std::size_t gpus, std::size_t hosts) {
  nodes_.reserve(nodes_.size() + nodes);
  links_.reserve(links_.size() + links);
  gpus_.reserve(gpus_.size() + gpus);
  hosts_.reserve(hosts_.size() + hosts);
}

NodeIndex Cluster::add_node(Node node) {
  nodes_.push_back(std::move(node));
  return static_cast<NodeIndex>(nodes_.size() - 1);
}

LinkIndex Cluster::add_link(Link link) {
  if (link.src >= nodes_.size() || link.dst >= nodes_.size()) {
    throw std::out_of_range("Cluster::add_link: node index out of range");
  }
  links_.push_back(link);
  return static_cast<LinkIndex>(links_.size() - 1);
}

void Cluster::add_duplex(NodeIndex a, NodeIndex b, BytesPerSec bandwidth, Time latency,
                         LinkClass c) {
  add_link({a, b, bandwidth, latency, c});
  add_link({b, a, bandwidth, latency, c});
}

int Cluster::add_gpu(Gpu gpu) {
  if (gpu.node >= nodes_.size() || nodes_[gpu.node].kind != NodeKind::kGpu) {
    throw std::logic_error("Cluster::add_gpu: node is not a GPU node");
  }
  const int index = static_cast<int>(gpus_.size());
  hosts_.at(static_cast<std::size_t>(gpu.host)).gpus.push_back(index);
  gpus_.push_back(std::move(gpu));
  return index;
}

int Cluster::add_datacenter(std::string name) {
  datacenters_.push_back({std::move(name), {}});
  return static_cast<int>(datacenters_.size() - 1);
}

int Cluster::add_host(int datacenter) {
  Host host;
  host.name = "host" + std::to_string(hosts_.size());
  host.datacenter = datacenter;
  return add_host(std::move(host));
}

int Cluster::add_host(Host host) {
  const int index = static_cast<int>(hosts_.size());
  datacenters_.at(static_cast<std::size_t>(host.datacenter)).hosts.push_back(index);
  host.gpus.clear();
  hosts_.push_back(std::move(host));
  return index;
}

void Cluster::add_explicit_route(NodeIndex src, NodeIndex dst, std::vector<LinkIndex> links) {
  explicit_routes_.emplace_back(std::make_pair(src, dst), std::move(links));
}

void Cluster::finalize() {
  // Counting sort by source keeps each node's links in increasing link index, which the
  // router relies on for a deterministic order of equal-cost next hops.
  out_offsets_.assign(nodes_.size() + 1, 0);
  for (const Link& l : links_) ++out_offsets_[l.src + 1];
  for (std::size_t i = 1; i < out_offsets_.size(); ++i) out_offsets_[i] += out_offsets_[i - 1];
  out_links_.assign(links_.size(), 0);
  std::vector<std::uint32_t> next(out_offsets_.begin(), out_offsets_.end() - 1);
  for (std::size_t i = 0; i < links_.size(); ++i) {
    out_links_[next[links_[i].src]++] = static_cast<LinkIndex>(i);
  }
}

std::vector<std::string> Cluster::gpu_types() const {
  std::vector<std::string> types;
  for (const auto& gpu : gpus_) {
    if (std::find(types.begin(), types.end(), gpu.type) == types.end()) types.push_back(gpu.type);
  }
  return types;
}

}  // namespace strait::sim::topology
