// Each bad cluster file gives one ConfigError naming the file, the JSON pointer and what
// was expected.

#include <gtest/gtest.h>

#include "sim/topology/cluster.hpp"
#include "test_support.hpp"

namespace strait::sim::topology {
namespace {

using testing_support::config_error_of;

// A valid two-datacenter hierarchy; each test breaks one thing in it.
Json base() {
  return Json::parse(R"({
    "name": "t",
    "defaults": {
      "host": {"gpus": 2, "gpu_type": "H100-SXM", "nvlink": {"bandwidth": "450 GB/s"},
               "nics": 2, "nic": {"bandwidth": "400 Gb/s"}},
      "network": {"hosts_per_leaf": 2}},
    "datacenters": [{"name": "a", "hosts": 4}, {"name": "b", "hosts": 2}],
    "cross_dc": [{"between": ["a", "b"], "bandwidth": "400 Gb/s", "latency": "5 ms"}]})");
}

std::string error_of(const Json& doc) {
  return config_error_of([&] { Cluster::from_config(ConfigNode(doc, "cluster.json")); });
}

Json with(const std::string& pointer, Json value) {
  Json doc = base();
  doc[Json::json_pointer(pointer)] = std::move(value);
  return doc;
}

Json without(const std::string& pointer) {
  Json doc = base();
  const Json::json_pointer p(pointer);
  doc[p.parent_pointer()].erase(p.back());
  return doc;
}

TEST(ClusterErrors, BaseConfigIsValid) { EXPECT_EQ(error_of(base()), "no error"); }

TEST(ClusterErrors, UnknownKeySuggestsTheClosestOne) {
  EXPECT_EQ(error_of(with("/defaults/host/nvlink/bandwith", "1 GB/s")),
            "cluster.json: /defaults/host/nvlink/bandwith: unknown key; did you mean "
            "\"bandwidth\"?");
  EXPECT_EQ(error_of(with("/datacenters/1/hots", 3)),
            "cluster.json: /datacenters/1/hots: unknown key; did you mean \"hosts\"?");
  EXPECT_EQ(error_of(with("/defaults/network/hosts_per_lef", 3)),
            "cluster.json: /defaults/network/hosts_per_lef: unknown key; did you mean "
            "\"hosts_per_leaf\"?");
}

TEST(ClusterErrors, NcclSectionChecksItsKeysAndRanges) {
  EXPECT_EQ(
      error_of(with("/nccl", Json::parse(R"({"protocols": {"ll": {"bandwidth_fraction": 1.5}}})"))),
      "cluster.json: /nccl/protocols/ll/bandwidth_fraction: expected a number in (0, 1]");
  EXPECT_EQ(error_of(with("/nccl", Json::parse(R"({"proxy_latency": "-1 us"})"))),
            "cluster.json: /nccl/proxy_latency: expected a duration with its unit such as \"2 us\" "
            "or \"5 ms\" (at most 1e6 s), got the string \"-1 us\"");
  EXPECT_EQ(error_of(with("/nccl", "off")), "cluster.json: /nccl: expected an object or \"none\"");
  EXPECT_EQ(error_of(with("/nccl/protocols/ll129", Json::object())),
            "cluster.json: /nccl/protocols/ll129: unknown key; did you mean \"ll128\"?");
  EXPECT_EQ(error_of(with("/nccl/protocols/ll",
                          Json::parse(R"({"tree": {"net_step_latency": "-2 us"}})"))),
            "cluster.json: /nccl/protocols/ll/tree/net_step_latency: expected a duration with its "
            "unit such as \"2 us\" or \"5 ms\" (at most 1e6 s), got the string \"-2 us\"");
  EXPECT_EQ(
      error_of(with("/nccl/protocols/ll", Json::parse(R"({"tree": {"hw_latency": "1 us"}})"))),
      "cluster.json: /nccl/protocols/ll/tree/hw_latency: unknown key (known keys: "
      "base_latency, nvlink_step_latency, net_step_latency)");
}

TEST(ClusterErrors, BusbwCeilingsNameTheirHostCounts) {
  EXPECT_EQ(error_of(with(
                "/nccl", Json::parse(R"({"nvls_tree_channel_busbw": {"three_hosts": "1 GB/s"}})"))),
            "cluster.json: /nccl/nvls_tree_channel_busbw/three_hosts: unknown key; did you mean "
            "\"more_hosts\"?");
  EXPECT_EQ(
      error_of(with("/nccl/protocols/ll", Json::parse(R"({"max_busbw": {"one_host": 141}})"))),
      "cluster.json: /nccl/protocols/ll/max_busbw/one_host: expected a bandwidth with its unit "
      "such as \"400 Gb/s\" or \"450 GB/s\", got the number 141");
}

TEST(ClusterErrors, WrongTypeSaysWhatWasFound) {
  EXPECT_EQ(error_of(with("/defaults/host/gpus", "eight")),
            "cluster.json: /defaults/host/gpus: expected an integer, got the string \"eight\"");
  EXPECT_EQ(error_of(with("/defaults/host/nic/bandwidth", 400)),
            "cluster.json: /defaults/host/nic/bandwidth: expected a bandwidth with its unit such "
            "as \"400 Gb/s\" or \"450 GB/s\", got the number 400");
  EXPECT_EQ(error_of(with("/defaults/host/rail_optimized", "yes")),
            "cluster.json: /defaults/host/rail_optimized: expected true or false, got the string "
            "\"yes\"");
}

TEST(ClusterErrors, BandwidthMustBePositive) {
  EXPECT_EQ(error_of(with("/cross_dc/0/bandwidth", "0 Gb/s")),
            "cluster.json: /cross_dc/0/bandwidth: expected a positive bandwidth, got \"0 Gb/s\"");
  EXPECT_EQ(error_of(with("/datacenters/1/host", {{"nvlink", {{"bandwidth", "-300 GB/s"}}}})),
            "cluster.json: /datacenters/1/host/nvlink/bandwidth: expected a positive bandwidth, "
            "got \"-300 GB/s\"");
}

TEST(ClusterErrors, MissingRequiredKeyNamesWhereItBelongs) {
  EXPECT_EQ(error_of(without("/defaults/host/nic/bandwidth")),
            "cluster.json: /datacenters/0/host/nic/bandwidth: missing required key (set it here "
            "or at /defaults/host/nic/bandwidth)");
  EXPECT_EQ(error_of(without("/cross_dc/0/latency")),
            "cluster.json: /cross_dc/0/latency: missing required key");
  EXPECT_EQ(error_of(without("/name")), "cluster.json: /name: missing required key");
}

TEST(ClusterErrors, CountsMustBePositive) {
  EXPECT_EQ(error_of(with("/defaults/network/hosts_per_leaf", 0)),
            "cluster.json: /defaults/network/hosts_per_leaf: expected a positive integer, got 0");
  EXPECT_EQ(error_of(with("/datacenters/1/host", {{"nics", -1}})),
            "cluster.json: /datacenters/1/host/nics: expected a positive integer, got -1");
  EXPECT_EQ(error_of(with("/defaults/host/gpus", 0)),
            "cluster.json: /defaults/host/gpus: expected a positive integer, got 0");
  EXPECT_EQ(error_of(with("/datacenters/0/hosts", 0)),
            "cluster.json: /datacenters/0/hosts: expected a positive integer, got 0");
}

TEST(ClusterErrors, TooManyGpusIsRefusedBeforeBuilding) {
  EXPECT_EQ(error_of(with("/datacenters/1/hosts", 1000000)),
            "cluster.json: /datacenters/1/hosts: expected at most 1048576 GPUs in a cluster, got "
            "2000008 so far");
}

TEST(ClusterErrors, CrossDcMustNameKnownDatacenters) {
  EXPECT_EQ(error_of(with("/cross_dc/0/between/1", "c")),
            "cluster.json: /cross_dc/0/between/1: unknown datacenter \"c\" (known: a, b)");
  EXPECT_EQ(error_of(with("/cross_dc/0/between/1", "a")),
            "cluster.json: /cross_dc/0/between: expected two different datacenters");
}

TEST(ClusterErrors, DuplicateDatacenterNames) {
  EXPECT_EQ(error_of(with("/datacenters/1/name", "a")),
            "cluster.json: /datacenters/1/name: duplicate datacenter name \"a\"");
}

TEST(ClusterErrors, DatacentersWithoutLinksLeaveGpusUnreachable) {
  EXPECT_EQ(error_of(without("/cross_dc")),
            "cluster.json: /cross_dc: GPU \"b/host0/gpu0\" cannot reach GPU \"a/host0/gpu0\" "
            "(every GPU must reach every other GPU)");
}

TEST(ClusterErrors, NeitherFormIsRecognized) {
  EXPECT_EQ(error_of(Json::parse(R"({"name": "t"})")),
            "cluster.json: /: expected a cluster in hierarchy form (key \"datacenters\") or in "
            "graph form (keys \"nodes\" and \"links\")");
}

TEST(ClusterErrors, MissingFileIsAnIoError) {
  EXPECT_THROW(Cluster::load("/nonexistent/cluster.json"), IoError);
}

}  // namespace
}  // namespace strait::sim::topology
