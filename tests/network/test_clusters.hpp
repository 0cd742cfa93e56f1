#pragma once
// Small clusters built in code for network tests, so each expectation can be worked out
// by hand. Every link is duplex with the given bandwidth (bytes/s) and latency.

#include <string>
#include <vector>

#include <fmt/format.h>

#include "sim/topology/cluster.hpp"

namespace strait::sim::network::testing {

using topology::Cluster;
using topology::LinkClass;
using topology::Node;
using topology::NodeKind;

struct Fabric {
  double nvlink = 450e9;   // GPU <-> host NVSwitch
  double pcie = 1e15;      // GPU <-> its NIC (never a bottleneck)
  double nic = 50e9;       // NIC <-> datacenter core switch
  double cross_dc = 10e9;  // core switch <-> core switch of another datacenter
  Time link_latency = Time::zero();
  Time cross_dc_latency = Time::zero();
  bool host_nics = false;           // hosts list their NICs: a hierarchy-form cluster
  std::vector<double> host_nvlink;  // by host in creation order, where set: its NVLink
};

/// `datacenters` x `hosts` x `gpus`: GPUs on a host NVSwitch, one NIC per GPU on a
/// non-blocking core switch per datacenter, core switches joined pairwise by one cross-DC
/// link each.
inline Cluster make_cluster(int datacenters, int hosts, int gpus, const Fabric& f = {}) {
  Cluster c;
  c.set_name(fmt::format("test-{}x{}x{}", datacenters, hosts, gpus));
  std::vector<topology::NodeIndex> cores;
  for (int d = 0; d < datacenters; ++d) {
    const int dc = c.add_datacenter(fmt::format("dc{}", d));
    const auto core = c.add_node(Node{fmt::format("dc{}/core", d), NodeKind::kSwitch, dc, -1});
    cores.push_back(core);
    for (int h = 0; h < hosts; ++h) {
      topology::Host spec;
      spec.name = fmt::format("dc{}/host{}", d, h);
      spec.datacenter = dc;
      spec.nics = f.host_nics ? gpus : 0;
      spec.rail_optimized = f.host_nics;
      const int host = c.add_host(std::move(spec));
      const double nvlink = static_cast<std::size_t>(host) < f.host_nvlink.size()
                                ? f.host_nvlink[static_cast<std::size_t>(host)]
                                : f.nvlink;
      const auto nvswitch = c.add_node(
          Node{fmt::format("dc{}/host{}/nvswitch", d, h), NodeKind::kNvSwitch, dc, host});
      for (int g = 0; g < gpus; ++g) {
        const auto gpu =
            c.add_node(Node{fmt::format("dc{}/host{}/gpu{}", d, h, g), NodeKind::kGpu, dc, host});
        const auto nic =
            c.add_node(Node{fmt::format("dc{}/host{}/nic{}", d, h, g), NodeKind::kNic, dc, host});
        c.add_gpu(topology::Gpu{gpu, host, dc, g, g, "H100-SXM"});
        c.add_duplex(gpu, nvswitch, nvlink, f.link_latency, LinkClass::kNvlink);
        c.add_duplex(gpu, nic, f.pcie, Time::zero(), LinkClass::kPcie);
        c.add_duplex(nic, core, f.nic, f.link_latency, LinkClass::kScaleOut);
      }
    }
  }
  for (int a = 0; a < datacenters; ++a) {
    for (int b = a + 1; b < datacenters; ++b) {
      c.add_duplex(cores[static_cast<std::size_t>(a)], cores[static_cast<std::size_t>(b)],
                   f.cross_dc, f.cross_dc_latency, LinkClass::kCrossDc);
    }
  }
  c.finalize();
  return c;
}

inline std::vector<int> all_gpus(const Cluster& c) {
  std::vector<int> v(static_cast<std::size_t>(c.gpu_count()));
  for (int i = 0; i < c.gpu_count(); ++i) v[static_cast<std::size_t>(i)] = i;
  return v;
}

}  // namespace strait::sim::network::testing
