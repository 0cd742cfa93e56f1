#include "sim/topology/detail/hierarchy_loader.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "sim/core/error.hpp"
#include "sim/topology/detail/config_checks.hpp"
#include "sim/topology/detail/reachability.hpp"

namespace strait::sim::topology::detail {
namespace {

// Default latencies (a user expects them); every bandwidth and count is required.
constexpr double kNvlinkLatencyUs = 1.0;
constexpr double kPcieLatencyUs = 0.5;
constexpr double kNicLatencyUs = 1.0;
constexpr double kNetworkLatencyUs = 1.0;
// PCIe Gen5 x16, per direction; raised to the NIC bandwidth if that is higher, so a
// default PCIe link is never the bottleneck of the GPU's scale-out path.
constexpr double kDefaultPcieGBps = 64.0;
// Far above any cluster strait models; guards against a typo allocating without bound.
constexpr std::int64_t kMaxGpus = 1 << 20;

// Keys of one config section looked up in the most specific layer first (a
// datacenter's "host"), then in the defaults ("/defaults/host"), key by key.
class Layers {
 public:
  Layers(std::vector<ConfigNode> layers, std::string file, std::string home, std::string fallback)
      : layers_(std::move(layers)),
        file_(std::move(file)),
        home_(std::move(home)),
        fallback_(std::move(fallback)) {}

  /// The layer holding `key`, if any.
  std::optional<ConfigNode> owner(std::string_view key) const {
    for (const ConfigNode& layer : layers_) {
      if (layer.find(key)) return layer;
    }
    return std::nullopt;
  }

  /// The layer holding `key`; fails "missing required key" where the key belongs.
  ConfigNode require(std::string_view key) const {
    if (auto layer = owner(key)) return *layer;
    throw ConfigError(
        file_, fmt::format("{}/{}", home_, key),
        fmt::format("missing required key (set it here or at {}/{})", fallback_, key));
  }

  Layers section(std::string_view key) const {
    std::vector<ConfigNode> inner;
    for (const ConfigNode& layer : layers_) {
      if (auto child = layer.find(key)) inner.push_back(*child);
    }
    return Layers(std::move(inner), file_, fmt::format("{}/{}", home_, key),
                  fmt::format("{}/{}", fallback_, key));
  }

  void allow_only(std::initializer_list<std::string_view> keys) const {
    for (const ConfigNode& layer : layers_) layer.allow_only(keys);
  }

 private:
  std::vector<ConfigNode> layers_;
  std::string file_, home_, fallback_;
};

struct HostSpec {
  int gpus = 0;
  std::string gpu_type;
  BytesPerSec nvlink_bandwidth = 0;
  Time nvlink_latency;
  int nics = 0;
  BytesPerSec nic_bandwidth = 0;
  Time nic_latency;
  BytesPerSec pcie_bandwidth = 0;
  Time pcie_latency;
  bool rail_optimized = true;
};

struct NetworkSpec {
  int hosts_per_leaf = 0;
  double oversubscription = 1.0;
  Time link_latency;
  int spines = 0;  // 0: as many as non-blocking sizing asks for
};

struct DatacenterSpec {
  std::string name;
  int hosts = 0;
  HostSpec host;
  NetworkSpec network;
};

struct CrossDcSpec {
  int a = 0, b = 0;
  BytesPerSec bandwidth = 0;
  Time latency;
  int count = 1;
};

int positive_int(const ConfigNode& owner, std::string_view key) {
  const std::int64_t v = owner.positive_integer(key);
  if (v > 1'000'000) owner.at(key).fail(fmt::format("expected at most 1000000, got {}", v));
  return static_cast<int>(v);
}

Time duration_or(const Layers& layers, std::string_view key, double fallback_us) {
  auto owner = layers.owner(key);
  return owner ? owner->duration(key) : Time::from_us(fallback_us);
}

HostSpec parse_host(const Layers& host) {
  host.allow_only({"gpus", "gpu_type", "nvlink", "nics", "nic", "pcie", "rail_optimized"});
  HostSpec spec;
  spec.gpus = positive_int(host.require("gpus"), "gpus");
  spec.gpu_type = host.require("gpu_type").string("gpu_type");
  const Layers nvlink = host.section("nvlink");
  nvlink.allow_only({"bandwidth", "latency"});
  spec.nvlink_bandwidth = positive_bandwidth(nvlink.require("bandwidth"), "bandwidth");
  spec.nvlink_latency = duration_or(nvlink, "latency", kNvlinkLatencyUs);
  spec.nics = positive_int(host.require("nics"), "nics");
  const Layers nic = host.section("nic");
  nic.allow_only({"bandwidth", "latency"});
  spec.nic_bandwidth = positive_bandwidth(nic.require("bandwidth"), "bandwidth");
  spec.nic_latency = duration_or(nic, "latency", kNicLatencyUs);
  const Layers pcie = host.section("pcie");
  pcie.allow_only({"bandwidth", "latency"});
  auto pcie_owner = pcie.owner("bandwidth");
  spec.pcie_bandwidth = pcie_owner ? positive_bandwidth(*pcie_owner, "bandwidth")
                                   : std::max(gbyte_per_s(kDefaultPcieGBps), spec.nic_bandwidth);
  spec.pcie_latency = duration_or(pcie, "latency", kPcieLatencyUs);
  auto rail_owner = host.owner("rail_optimized");
  spec.rail_optimized = rail_owner ? rail_owner->at("rail_optimized").as_bool() : true;
  return spec;
}

NetworkSpec parse_network(const Layers& network) {
  network.allow_only({"hosts_per_leaf", "oversubscription", "link_latency", "spines"});
  NetworkSpec spec;
  spec.hosts_per_leaf = positive_int(network.require("hosts_per_leaf"), "hosts_per_leaf");
  if (auto owner = network.owner("oversubscription")) {
    spec.oversubscription = owner->positive_number("oversubscription");
  }
  spec.link_latency = duration_or(network, "link_latency", kNetworkLatencyUs);
  if (auto owner = network.owner("spines")) spec.spines = positive_int(*owner, "spines");
  return spec;
}

std::vector<DatacenterSpec> parse_datacenters(const ConfigNode& root) {
  std::vector<ConfigNode> host_defaults, network_defaults;
  if (auto defaults = root.find("defaults")) {
    defaults->allow_only({"host", "network"});
    if (auto h = defaults->find("host")) host_defaults.push_back(*h);
    if (auto n = defaults->find("network")) network_defaults.push_back(*n);
  }
  const ConfigNode list = root.at("datacenters");
  if (list.size() == 0) list.fail("expected at least one datacenter");
  std::vector<DatacenterSpec> out;
  std::int64_t total_gpus = 0;
  for (const ConfigNode& dc : list.elements()) {
    dc.allow_only({"name", "hosts", "host", "network"});
    DatacenterSpec spec;
    spec.name = dc.string("name");
    for (const DatacenterSpec& other : out) {
      if (other.name == spec.name) {
        dc.at("name").fail(fmt::format("duplicate datacenter name \"{}\"", spec.name));
      }
    }
    spec.hosts = positive_int(dc, "hosts");
    auto layered = [&](std::string_view key, const std::vector<ConfigNode>& defaults) {
      std::vector<ConfigNode> layers;
      if (auto own = dc.find(key)) layers.push_back(*own);
      layers.insert(layers.end(), defaults.begin(), defaults.end());
      return Layers(std::move(layers), root.file(), fmt::format("{}/{}", dc.pointer(), key),
                    fmt::format("/defaults/{}", key));
    };
    spec.host = parse_host(layered("host", host_defaults));
    spec.network = parse_network(layered("network", network_defaults));
    total_gpus += static_cast<std::int64_t>(spec.hosts) * spec.host.gpus;
    if (total_gpus > kMaxGpus) {
      dc.at("hosts").fail(fmt::format("expected at most {} GPUs in a cluster, got {} so far",
                                      kMaxGpus, total_gpus));
    }
    out.push_back(std::move(spec));
  }
  return out;
}

std::vector<CrossDcSpec> parse_cross_dc(const ConfigNode& root,
                                        const std::vector<DatacenterSpec>& dcs) {
  std::vector<CrossDcSpec> out;
  auto list = root.find("cross_dc");
  if (!list) return out;
  auto index_of = [&](const ConfigNode& name_node) {
    const std::string name = name_node.as_string();
    std::string known;
    for (std::size_t i = 0; i < dcs.size(); ++i) {
      if (dcs[i].name == name) return static_cast<int>(i);
      known += (known.empty() ? "" : ", ") + dcs[i].name;
    }
    name_node.fail(fmt::format("unknown datacenter \"{}\" (known: {})", name, known));
  };
  for (const ConfigNode& entry : list->elements()) {
    entry.allow_only({"between", "bandwidth", "latency", "count"});
    const ConfigNode between = entry.at("between");
    if (between.size() != 2) between.fail("expected two datacenter names");
    CrossDcSpec spec;
    spec.a = index_of(between.at(std::size_t{0}));
    spec.b = index_of(between.at(std::size_t{1}));
    if (spec.a == spec.b) between.fail("expected two different datacenters");
    spec.bandwidth = positive_bandwidth(entry, "bandwidth");
    spec.latency = entry.duration("latency");
    spec.count = entry.has("count") ? positive_int(entry, "count") : 1;
    out.push_back(spec);
  }
  return out;
}

// Builds one datacenter's hosts and leaf/spine network; returns the node a gateway
// attaches to: every spine, or the only leaf.
std::vector<NodeIndex> build_datacenter(Cluster& cluster, int dc, const DatacenterSpec& spec) {
  const HostSpec& h = spec.host;
  const NetworkSpec& net = spec.network;
  std::vector<std::vector<NodeIndex>> nics_of_host;
  for (int local = 0; local < spec.hosts; ++local) {
    Host host;
    host.name = fmt::format("{}/host{}", spec.name, local);
    host.datacenter = dc;
    host.nics = h.nics;
    host.rail_optimized = h.rail_optimized;
    const int host_index = cluster.add_host(host);
    const NodeIndex nvswitch = cluster.add_node(
        {fmt::format("{}/nvswitch", host.name), NodeKind::kNvSwitch, dc, host_index});
    std::vector<NodeIndex> gpus, nics;
    for (int g = 0; g < h.gpus; ++g) {
      gpus.push_back(cluster.add_node(
          {fmt::format("{}/gpu{}", host.name, g), NodeKind::kGpu, dc, host_index}));
    }
    for (int n = 0; n < h.nics; ++n) {
      nics.push_back(cluster.add_node(
          {fmt::format("{}/nic{}", host.name, n), NodeKind::kNic, dc, host_index}));
    }
    for (int g = 0; g < h.gpus; ++g) {
      const int rail = g % h.nics;
      cluster.add_duplex(gpus[g], nvswitch, h.nvlink_bandwidth, h.nvlink_latency,
                         LinkClass::kNvlink);
      cluster.add_duplex(gpus[g], nics[rail], h.pcie_bandwidth, h.pcie_latency, LinkClass::kPcie);
      cluster.add_gpu({gpus[g], host_index, dc, g, rail, h.gpu_type});
    }
    nics_of_host.push_back(std::move(nics));
  }

  const int groups = (spec.hosts + net.hosts_per_leaf - 1) / net.hosts_per_leaf;
  const int leaves_per_group = h.rail_optimized ? h.nics : 1;
  std::vector<NodeIndex> leaves;
  for (int g = 0; g < groups; ++g) {
    for (int r = 0; r < leaves_per_group; ++r) {
      const std::string name = h.rail_optimized ? fmt::format("{}/rail{}/leaf{}", spec.name, r, g)
                                                : fmt::format("{}/leaf{}", spec.name, g);
      const NodeIndex leaf = cluster.add_node({name, NodeKind::kSwitch, dc, -1});
      leaves.push_back(leaf);
      const int first = g * net.hosts_per_leaf;
      const int last = std::min(spec.hosts, first + net.hosts_per_leaf);
      for (int host = first; host < last; ++host) {
        for (int n = 0; n < h.nics; ++n) {
          if (h.rail_optimized && n != r) continue;
          cluster.add_duplex(nics_of_host[host][n], leaf, h.nic_bandwidth, h.nic_latency,
                             LinkClass::kScaleOut);
        }
      }
    }
  }
  if (leaves.size() == 1) return leaves;

  // Leaf uplink capacity = downlink capacity / oversubscription, spread over the spines.
  const int downlinks = std::min(spec.hosts, net.hosts_per_leaf) * (h.rail_optimized ? 1 : h.nics);
  const int spines =
      net.spines > 0 ? net.spines
                     : std::max(1, static_cast<int>(std::ceil(downlinks / net.oversubscription)));
  const BytesPerSec uplink = downlinks * h.nic_bandwidth / net.oversubscription / spines;
  std::vector<NodeIndex> spine_nodes;
  spine_nodes.reserve(static_cast<std::size_t>(std::max(0, spines)));
  for (int s = 0; s < spines; ++s) {
    spine_nodes.push_back(
        cluster.add_node({fmt::format("{}/spine{}", spec.name, s), NodeKind::kSwitch, dc, -1}));
  }
  for (NodeIndex leaf : leaves) {
    for (NodeIndex spine : spine_nodes) {
      cluster.add_duplex(leaf, spine, uplink, net.link_latency, LinkClass::kScaleOut);
    }
  }
  return spine_nodes;
}

}  // namespace

Cluster load_hierarchy_form(const ConfigNode& root) {
  root.allow_only({"name", "description", "defaults", "datacenters", "cross_dc", "nccl"});
  Cluster cluster;
  cluster.set_name(root.string("name"));
  auto nccl = root.find("nccl");
  cluster.set_comm(nccl ? parse_comm_parameters(*nccl) : CommParameters::published_defaults());
  if (root.has("description")) root.string("description");
  const std::vector<DatacenterSpec> dcs = parse_datacenters(root);
  const std::vector<CrossDcSpec> cross = parse_cross_dc(root, dcs);

  // Hosts dominate: an NVSwitch, GPUs and NICs each, two links per GPU and one per NIC, both
  // directions (switches and cross-datacenter links are a few more).
  std::size_t nodes = 0, links = 0, gpus = 0, hosts = 0;
  for (const DatacenterSpec& d : dcs) {
    const auto n = static_cast<std::size_t>(d.hosts);
    nodes += n * static_cast<std::size_t>(1 + d.host.gpus + d.host.nics);
    links += n * static_cast<std::size_t>(4 * d.host.gpus + 2 * d.host.nics);
    gpus += n * static_cast<std::size_t>(d.host.gpus);
    hosts += n;
  }
  cluster.reserve(nodes, links, gpus, hosts);
  std::vector<std::vector<NodeIndex>> border_of(dcs.size());
  for (std::size_t d = 0; d < dcs.size(); ++d) {
    const int dc = cluster.add_datacenter(dcs[d].name);
    border_of[d] = build_datacenter(cluster, dc, dcs[d]);
  }
  // One gateway per datacenter with cross-datacenter links. Its attachment to each
  // spine carries the datacenter's whole cross-datacenter capacity, so only the
  // cross-datacenter links themselves can limit traffic between datacenters.
  std::vector<BytesPerSec> cross_capacity(dcs.size(), 0);
  for (const CrossDcSpec& c : cross) {
    cross_capacity[static_cast<std::size_t>(c.a)] += c.count * c.bandwidth;
    cross_capacity[static_cast<std::size_t>(c.b)] += c.count * c.bandwidth;
  }
  std::vector<NodeIndex> gateway(dcs.size());
  for (std::size_t d = 0; d < dcs.size(); ++d) {
    if (cross_capacity[d] == 0) continue;
    const int dc = static_cast<int>(d);
    gateway[d] = cluster.add_node({dcs[d].name + "/gw", NodeKind::kGateway, dc, -1});
    for (NodeIndex border : border_of[d]) {
      cluster.add_duplex(border, gateway[d], cross_capacity[d], dcs[d].network.link_latency,
                         LinkClass::kScaleOut);
    }
  }
  for (const CrossDcSpec& c : cross) {
    for (int i = 0; i < c.count; ++i) {
      cluster.add_duplex(gateway[static_cast<std::size_t>(c.a)],
                         gateway[static_cast<std::size_t>(c.b)], c.bandwidth, c.latency,
                         LinkClass::kCrossDc);
    }
  }
  cluster.finalize();
  check_all_gpus_connected(cluster, root.file(), "/cross_dc");
  return cluster;
}

}  // namespace strait::sim::topology::detail
