// Graph-form cluster files: explicit nodes, links and routes.

#include <gtest/gtest.h>

#include "sim/topology/cluster.hpp"
#include "sim/topology/router.hpp"
#include "test_support.hpp"

namespace strait::sim::topology {
namespace {

using testing_support::config_error_of;

// Two hosts of two GPUs each; each host has an NVSwitch and one NIC; two switches s0, s1
// join the NICs (a square: nic0 - s0 - nic1 and nic0 - s1 - nic1).
Json base() {
  return Json::parse(R"({
    "name": "square",
    "nodes": [
      {"name": "g0", "kind": "gpu", "gpu_type": "H100-SXM", "host": "h0"},
      {"name": "g1", "kind": "gpu", "gpu_type": "H100-SXM", "host": "h0"},
      {"name": "g2", "kind": "gpu", "gpu_type": "A100-SXM", "host": "h1", "datacenter": "x"},
      {"name": "g3", "kind": "gpu", "gpu_type": "A100-SXM", "host": "h1", "datacenter": "x"},
      {"name": "nv0", "kind": "nvswitch", "host": "h0"},
      {"name": "nv1", "kind": "nvswitch", "host": "h1"},
      {"name": "nic0", "kind": "nic", "host": "h0"},
      {"name": "nic1", "kind": "nic", "host": "h1"},
      {"name": "s0", "kind": "switch"},
      {"name": "s1", "kind": "switch"}
    ],
    "links": [
      {"between": ["g0", "nv0"], "bandwidth": "450 GB/s", "latency": "1 us", "class": "nvlink"},
      {"between": ["g1", "nv0"], "bandwidth": "450 GB/s", "latency": "1 us", "class": "nvlink"},
      {"between": ["g2", "nv1"], "bandwidth": "300 GB/s", "latency": "1 us", "class": "nvlink"},
      {"between": ["g3", "nv1"], "bandwidth": "300 GB/s", "latency": "1 us", "class": "nvlink"},
      {"between": ["g0", "nic0"], "bandwidth": "64 GB/s", "class": "pcie"},
      {"between": ["g1", "nic0"], "bandwidth": "64 GB/s", "class": "pcie"},
      {"between": ["g2", "nic1"], "bandwidth": "64 GB/s", "class": "pcie"},
      {"between": ["g3", "nic1"], "bandwidth": "64 GB/s", "class": "pcie"},
      {"between": ["nic0", "s0"], "bandwidth": "400 Gb/s"},
      {"between": ["nic1", "s0"], "bandwidth": "400 Gb/s"},
      {"between": ["nic0", "s1"], "bandwidth": "200 Gb/s", "latency": "3 us"},
      {"between": ["nic1", "s1"], "bandwidth": "200 Gb/s", "latency": "3 us"}
    ],
    "routes": [{"from": "g0", "to": "g2", "via": ["nic0", "s1", "nic1"]}]})");
}

Cluster load(const Json& doc) { return Cluster::from_config(ConfigNode(doc, "cluster.json")); }

std::string error_of(const Json& doc) {
  return config_error_of([&] { load(doc); });
}

Json with(const std::string& pointer, Json value) {
  Json doc = base();
  doc[Json::json_pointer(pointer)] = std::move(value);
  return doc;
}

TEST(GraphForm, LoadsNodesLinksHostsAndDatacenters) {
  // 4 GPUs on 2 hosts in datacenters "dc0" (default) and "x"; 12 duplex links = 24.
  const Cluster c = load(base());
  EXPECT_EQ(c.name(), "square");
  EXPECT_EQ(c.gpu_count(), 4);
  EXPECT_EQ(c.links().size(), 24U);
  ASSERT_EQ(c.datacenters().size(), 2U);
  EXPECT_EQ(c.datacenters()[0].name, "dc0");
  EXPECT_EQ(c.datacenters()[1].name, "x");
  ASSERT_EQ(c.hosts().size(), 2U);
  EXPECT_EQ(c.hosts()[1].gpus, (std::vector<int>{2, 3}));
  EXPECT_EQ(c.gpu(3).local_index, 1);
  EXPECT_EQ(c.gpu(3).type, "A100-SXM");
  EXPECT_EQ(c.nodes()[*c.find_node("nic1")].host, 1);
  EXPECT_EQ(c.nodes()[*c.find_node("s0")].datacenter, -1);
  EXPECT_EQ(c.link(8).link_class, LinkClass::kPcie);
  EXPECT_EQ(c.link(8).latency, Time::from_us(1));  // default latency
}

TEST(GraphForm, ExplicitRoutesOverrideShortestPaths) {
  // g0 -> g2 is routed via s1 (3 us, 200 Gb/s links): 0.5... no: PCIe 1 us (default) +
  // 3 + 3 + PCIe 1 us = 8 us, bottleneck 25 GB/s. The reverse g2 -> g0 has no explicit
  // route and takes s0 (lower link index among the equal-cost next hops for d-mod-k key 0).
  const Cluster c = load(base());
  Router router(c);
  std::vector<LinkIndex> path;
  router.gpu_path(0, 2, path);
  ASSERT_EQ(path.size(), 4U);
  EXPECT_EQ(c.nodes()[c.link(path[1]).dst].name, "s1");
  EXPECT_EQ(router.gpu_path_latency(0, 2), Time::from_us(8));
  EXPECT_DOUBLE_EQ(router.gpu_path_bandwidth(0, 2), 25e9);
  router.gpu_path(2, 0, path);
  ASSERT_EQ(path.size(), 4U);
  EXPECT_EQ(c.nodes()[c.link(path[1]).dst].name, "s0");
  router.gpu_path(0, 1, path);
  EXPECT_EQ(path.size(), 2U);
}

TEST(GraphForm, OneWayLinksAreDirected) {
  // With "duplex": false the pair g0 -> sw exists but not sw -> g0, so nothing reaches g0.
  Json doc = Json::parse(R"({"name": "t",
    "nodes": [{"name": "g0", "kind": "gpu", "gpu_type": "X"},
              {"name": "g1", "kind": "gpu", "gpu_type": "X"},
              {"name": "sw", "kind": "switch"}],
    "links": [{"between": ["g0", "sw"], "bandwidth": "1 GB/s", "duplex": false},
              {"between": ["g1", "sw"], "bandwidth": "1 GB/s"}]})");
  EXPECT_EQ(error_of(doc),
            "cluster.json: /links: GPU \"g1\" cannot reach GPU \"g0\" (every GPU must reach "
            "every other GPU)");
  doc["links"][0]["duplex"] = true;
  EXPECT_EQ(load(doc).links().size(), 4U);
}

TEST(GraphFormErrors, LinkToAMissingNode) {
  EXPECT_EQ(error_of(with("/links/9/between/1", "s7")),
            "cluster.json: /links/9/between/1: unknown node \"s7\"");
}

TEST(GraphFormErrors, DuplicateNodeNames) {
  EXPECT_EQ(error_of(with("/nodes/9/name", "s0")),
            "cluster.json: /nodes/9/name: duplicate node name \"s0\"");
}

TEST(GraphFormErrors, RouteViaAMissingNode) {
  EXPECT_EQ(error_of(with("/routes/0/via/1", "s9")),
            "cluster.json: /routes/0/via/1: unknown node \"s9\"");
}

TEST(GraphFormErrors, RouteAlongAMissingLink) {
  EXPECT_EQ(error_of(with("/routes/0/via", {"nic0", "s1", "s0"})),
            "cluster.json: /routes/0/via/2: no link from \"s1\" to \"s0\"");
  EXPECT_EQ(error_of(with("/routes/0/via", {"nic0", "s1"})),
            "cluster.json: /routes/0/to: no link from \"s1\" to \"g2\"");
}

TEST(GraphFormErrors, RouteThroughASwitchTwiceIsALoop) {
  // g0 -> nic0 -> s1 -> nic1 -> s0 -> nic1 -> g2: every hop has a link, but the route
  // passes nic1 twice.
  EXPECT_EQ(error_of(with("/routes/0/via", {"nic0", "s1", "nic1", "s0", "nic1"})),
            "cluster.json: /routes/0/via/4: route passes \"nic1\" twice (expected a path "
            "without loops)");
  EXPECT_EQ(error_of(with("/routes/0/via", {"nic0", "g0", "nic0"})),
            "cluster.json: /routes/0/via/1: route passes \"g0\" twice (expected a path without "
            "loops)");
}

TEST(GraphFormErrors, UnreachableGpuIsNamed) {
  // Remove g3's NVLink and PCIe links: g3 reaches nothing (and nothing reaches it).
  Json doc = base();
  auto& links = doc["links"];
  links.erase(7);
  links.erase(3);
  EXPECT_EQ(error_of(doc),
            "cluster.json: /links: GPU \"g3\" cannot reach GPU \"g0\" (every GPU must reach "
            "every other GPU)");
}

TEST(GraphFormErrors, BadValues) {
  EXPECT_EQ(error_of(with("/links/0/bandwidth", "-1 GB/s")),
            "cluster.json: /links/0/bandwidth: expected a positive bandwidth, got \"-1 GB/s\"");
  EXPECT_EQ(error_of(with("/links/0/clas", "nvlink")),
            "cluster.json: /links/0/clas: unknown key; did you mean \"class\"?");
  EXPECT_EQ(error_of(with("/links/0/class", "infiniband")),
            "cluster.json: /links/0/class: expected one of \"nvlink\", \"pcie\", \"scale_out\", "
            "\"cross_dc\", got \"infiniband\"");
  EXPECT_EQ(error_of(with("/nodes/8/kind", "router")),
            "cluster.json: /nodes/8/kind: expected one of \"gpu\", \"nvswitch\", \"nic\", "
            "\"switch\", \"gateway\", got \"router\"");
  Json doc = base();
  doc["nodes"][0].erase("gpu_type");
  EXPECT_EQ(error_of(doc), "cluster.json: /nodes/0/gpu_type: missing required key");
  EXPECT_EQ(error_of(with("/nodes/4/host", "h5")),
            "cluster.json: /nodes/4/host: unknown host \"h5\" (no GPU names it)");
}

}  // namespace
}  // namespace strait::sim::topology
