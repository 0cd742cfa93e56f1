// A direct all-to-all in analytical mode on a hierarchy-form cluster is timed in O(n) from
// its spec (per level: NVLink, NIC, each datacenter pair) instead of from its n^2
// transfers. Here the closed form must give exactly what the per-pair estimate gives for
// the same collective (its schedule built transfer by transfer and summed per GPU and
// per datacenter pair), and on non-blocking fabrics what routing every transfer gives,
// on small clusters of several shapes: 2 DCs x 4 hosts x 4 GPUs with rails or one leaf
// per group, 2:1 oversubscribed leaves, 3 datacenters joined by links of different latency and
// count (the closed form once took the latency of one datacenter pair only), and uneven sizes. Hand
// check, rails, 1 DC of 4 hosts x 4 GPUs, 16 MiB per rank: each rank sends 1 MiB to each of 12 GPUs
// on other hosts through its 400 Gb/s NIC: 12 MiB / 50 GB/s = 251.66 us.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "sim/core/config_node.hpp"
#include "sim/network/analytical_network.hpp"
#include "sim/network/detail/schedule_estimator.hpp"

namespace strait::sim::network {
namespace {

struct Shape {
  const char* name;
  int datacenters;
  bool rails;
  double oversubscription;
  bool uneven;       // per-rank send sizes instead of one size
  bool pxn = false;  // NCCL's PXN on, every other library cost 0
};

// The "nccl" section of the test clusters: the bare link model, or only PXN on.
nlohmann::json nccl_section(bool pxn) {
  if (!pxn) return "none";
  nlohmann::json zero = {{"bandwidth_fraction", 1.0},
                         {"base_latency", "0 us"},
                         {"nvlink_step_latency", "0 us"},
                         {"net_step_latency", "0 us"}};
  return {{"pxn", true},
          {"protocols", {{"ll", zero}, {"ll128", zero}, {"simple", zero}}},
          {"proxy_latency", "0 us"},
          {"rdma_round_trip", "0 us"},
          {"per_peer_latency", "0 us"},
          {"nvlink_efficiency", 1.0},
          {"net_efficiency", 1.0}};
}

topology::Cluster make(const Shape& s) {
  nlohmann::json doc = {{"name", s.name},
                        {"nccl", nccl_section(s.pxn)},
                        {"defaults",
                         {{"host",
                           {{"gpus", 4},
                            {"gpu_type", "H100-SXM"},
                            {"nvlink", {{"bandwidth", "450 GB/s"}, {"latency", "0.1 us"}}},
                            {"nics", 4},
                            {"nic", {{"bandwidth", "400 Gb/s"}, {"latency", "1 us"}}},
                            {"rail_optimized", s.rails}}},
                          {"network",
                           {{"hosts_per_leaf", 2},
                            {"oversubscription", s.oversubscription},
                            {"link_latency", "1 us"}}}}}};
  std::vector<std::string> names = {"east", "west", "south"};
  nlohmann::json dcs = nlohmann::json::array(), cross = nlohmann::json::array();
  for (int d = 0; d < s.datacenters; ++d) {
    dcs.push_back({{"name", names[static_cast<std::size_t>(d)]}, {"hosts", 4}});
    for (int e = d + 1; e < s.datacenters; ++e) {
      cross.push_back(
          {{"between", {names[static_cast<std::size_t>(d)], names[static_cast<std::size_t>(e)]}},
           {"bandwidth", "100 Gb/s"},
           {"latency", std::to_string(5 * (d + e)) + " ms"},  // 5, 10, 15 ms
           {"count", 2 + d}});
    }
  }
  doc["datacenters"] = dcs;
  if (!cross.empty()) doc["cross_dc"] = cross;
  return topology::Cluster::from_config(ConfigNode(doc, std::string(s.name) + ".json"));
}

CollectiveSpec spec_on(const topology::Cluster& c, bool uneven) {
  CollectiveSpec spec;
  spec.op = CollectiveOp::kAllToAll;
  spec.algorithm = Algorithm::kDirect;
  spec.protocol = Protocol::kSimple;
  spec.bytes = 16 * kMiB;
  for (int g = 0; g < c.gpu_count(); ++g) {
    spec.gpus.push_back(g);
    if (uneven) spec.send_bytes.push_back((g % 5 + 1) * 3 * kMiB + g * 4099);
  }
  return spec;
}

class AllToAllClosedForm : public ::testing::TestWithParam<Shape> {};

// A direct all-to-all(v) timed two ways in analytical mode: by the closed form
// (simulate_collective does not build the n^2 transfers) and per pair, its schedule with
// every transfer stored and estimated one by one per level.
struct TwoWays {
  CollectiveResult closed;
  Schedule schedule;
  Time per_pair = Time::infinite();
  TrafficStats per_pair_traffic;
};
TwoWays two_ways(const topology::Cluster& cluster, const CollectiveSpec& spec) {
  NetworkOptions options;
  options.mode = NetworkMode::kAnalytical;
  TwoWays out;
  out.closed = simulate_collective(cluster, spec, options);
  engine::Simulator sim;
  auto net = make_network(sim, cluster, options);
  EXPECT_TRUE(net->in_closed_form(spec));
  out.schedule = build_schedule(spec, cluster);
  apply_protocol(out.schedule, cluster, Protocol::kSimple);
  expand_all_pairs(out.schedule);  // stored transfers, estimated one by one
  EXPECT_EQ(out.schedule.phases.size(), 1U);
  net->start_schedule(out.schedule, 0, 1.0, [&] { out.per_pair = sim.now(); });
  sim.run();
  out.per_pair_traffic = net->traffic();
  return out;
}

TEST_P(AllToAllClosedForm, EqualsThePerPairEstimate) {
  const Shape& s = GetParam();
  const auto cluster = make(s);
  const auto spec = spec_on(cluster, s.uneven);
  NetworkOptions options;
  options.mode = NetworkMode::kAnalytical;
  const auto [closed, schedule, per_pair, per_pair_traffic] = two_ways(cluster, spec);
  EXPECT_EQ(closed.time, per_pair) << s.name;
  for (std::size_t c = 0; c < topology::kLinkClassCount; ++c) {
    const double b = per_pair_traffic.link_bytes[c];
    EXPECT_NEAR(closed.traffic.link_bytes[c], b, 1e-9 * b) << s.name << " class " << c;
  }
  // Under PXN the cross-rail messages add an NVLink hop each: more NVLink bytes than the
  // same all-to-all without it.
  if (s.pxn) {
    Shape off = s;
    off.pxn = false;
    const auto plain = simulate_collective(make(off), spec, options);
    const auto nv = static_cast<std::size_t>(topology::LinkClass::kNvlink);
    EXPECT_GT(closed.traffic.link_bytes[nv], 1.5 * plain.traffic.link_bytes[nv]) << s.name;
  }
  // Routed, transfer by transfer over the links: the same where leaf uplinks cannot be the
  // bottleneck (the level form does not see oversubscription; graph-form clusters are routed).
  if (s.oversubscription == 1.0) {
    topology::Router router(cluster, topology::EcmpPolicy::kDestinationModK);
    detail::ScheduleEstimator routed(cluster, router);
    EXPECT_EQ(closed.time, schedule.start_latency + routed.estimate(schedule, nullptr)) << s.name;
  }
}

// all_to_allv: a sender's row is summed per receiver, relay and level (level_estimator.cpp)
// instead of pair by pair; the same time and traffic as the schedule's transfers estimated
// one by one and, in one datacenter where leaf uplinks cannot be the bottleneck, routed
// link by link. Rows with empty entries and sizes unlike each other. (Across datacenters
// the level form pools a pair's cross-datacenter links, and routing spreads an irregular
// matrix's pairs over them unevenly by destination: the two differ there.)
// Also with runs of equal rows (members 0-9 send one row, 10-20 another, as embedding
// output dists do), which the closed form sums once per run.
TEST_P(AllToAllClosedForm, AllToAllvEqualsThePerPairEstimate) {
  for (const bool runs : {false, true}) {
    const Shape& s = GetParam();
    const auto cluster = make(s);
    CollectiveSpec spec = spec_on(cluster, false);
    spec.op = CollectiveOp::kAllToAllV;
    const auto n = spec.gpus.size();
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t row = !runs ? i : i < 10 ? 0 : i < 21 ? 1 : i;
      for (std::size_t j = 0; j < n; ++j) {
        const auto k = static_cast<Bytes>(row * 31 + j * 17);
        spec.send_matrix.push_back(k % 7 == 0 ? 0 : (k % 13 + 1) * kMiB + k * 4099);
      }
      if (!runs) spec.send_matrix[i * n + i] = 0;
    }
    const auto [closed, schedule, per_pair, per_pair_traffic] = two_ways(cluster, spec);
    EXPECT_EQ(closed.time, per_pair) << s.name;
    for (std::size_t c = 0; c < topology::kLinkClassCount; ++c)
      EXPECT_EQ(closed.traffic.link_bytes[c], per_pair_traffic.link_bytes[c]) << s.name << " " << c;
    if (s.oversubscription == 1.0 && s.datacenters == 1) {
      topology::Router router(cluster, topology::EcmpPolicy::kDestinationModK);
      detail::ScheduleEstimator routed(cluster, router);
      EXPECT_EQ(closed.time, schedule.start_latency + routed.estimate(schedule, nullptr)) << s.name;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, AllToAllClosedForm,
                         ::testing::Values(Shape{"rails_1dc", 1, true, 1.0, false},
                                           Shape{"one_leaf_per_group_1dc", 1, false, 1.0, false},
                                           Shape{"oversubscribed_2to1", 1, true, 2.0, false},
                                           Shape{"rails_2dc", 2, true, 1.0, false},
                                           Shape{"no_rails_3dc", 3, false, 1.0, false},
                                           Shape{"uneven_sizes_3dc", 3, true, 1.0, true},
                                           Shape{"oversubscribed_uneven_2dc", 2, false, 2.0, true},
                                           Shape{"pxn_uneven_rails_1dc", 1, true, 1.0, true, true},
                                           Shape{"pxn_uneven_rails_3dc", 3, true, 1.0, true, true}),
                         [](const auto& param_info) { return std::string(param_info.param.name); });

TEST(AllToAllClosedForm, OneDatacenterOfRailsMatchesTheHandComputation) {
  const auto cluster = make(Shape{"hand", 1, true, 1.0, false});
  NetworkOptions options;
  options.mode = NetworkMode::kAnalytical;
  const auto r = simulate_collective(cluster, spec_on(cluster, false), options);
  // 12 MiB through a 50 GB/s NIC, then the longest path, between rails (through a
  // spine): PCIe 0.5 us, NIC-leaf 1 us, leaf-spine 1 us, spine-leaf 1 us, leaf-NIC 1 us,
  // PCIe 0.5 us = 5 us.
  const Time expected = Time::for_work(12.0 * kMiB, 50e9) + Time::from_us(5);
  EXPECT_EQ(r.time, expected);
}

// One network times two groups' all-to-alls in turn (all 32 GPUs of 2 datacenters under
// PXN; the first 16, one datacenter), three rounds with other sizes each: each call takes
// the time and traffic a fresh network gives it. The closed form keeps what depends on a
// group's GPUs alone from one call of the group to the next (uniform_group), never sizes.
TEST(AllToAllClosedForm, AGroupTimedAgainWithOtherSizesTakesWhatAFreshNetworkGives) {
  const auto cluster = make(Shape{"pxn_repeats", 2, true, 1.0, true, true});
  NetworkOptions options;
  options.mode = NetworkMode::kAnalytical;
  engine::Simulator sim;
  const auto net = make_network(sim, cluster, options);
  auto& analytical = dynamic_cast<AnalyticalNetwork&>(*net);
  CollectiveSpec whole = spec_on(cluster, true);
  CollectiveSpec half = whole;
  half.gpus.resize(16);
  half.send_bytes.resize(16);
  for (int round = 0; round < 3; ++round) {
    for (CollectiveSpec* spec : {&whole, &half}) {
      for (auto& b : spec->send_bytes) b = b * (round + 3) / (round + 2) + round * 4099;
      const auto fresh = simulate_collective(cluster, *spec, options);
      const TrafficStats before = net->traffic();
      EXPECT_EQ(analytical.time_collective(*spec).time, fresh.time) << round;
      for (std::size_t c = 0; c < topology::kLinkClassCount; ++c) {
        const double b = fresh.traffic.link_bytes[c];
        EXPECT_NEAR(net->traffic().link_bytes[c] - before.link_bytes[c], b, 1e-9 * b) << c;
      }
    }
  }
}

// PXN by hand on 4 hosts x 4 GPUs, rails, 2 hosts per leaf, every library cost 0: 8 MiB
// from GPU 0 (host 0, rail 0) to GPU 5 (host 1, rail 1), hosts under one leaf group.
//   PXN: NVLink to GPU 1 (2 x 0.1 us), its PCIe 0.5, NIC-leaf 1 (rail 1's leaf), leaf-NIC 1,
//        PCIe 0.5: 3.2 us; links: 2 NVLink, 2 PCIe, 2 scale-out.
//   without: PCIe 0.5, NIC-leaf (rail 0) 1, leaf-spine 1, spine-leaf (rail 1) 1, leaf-NIC 1,
//        PCIe 0.5: 5 us; links: 2 PCIe, 4 scale-out.
// Both: 8 MiB through a 50 GB/s NIC first. Flow and analytical mode alike.
TEST(Pxn, AMessageToAnotherRailLeavesByTheRelaysNic) {
  for (bool pxn : {true, false}) {
    const auto cluster = make(Shape{"pxn_hand", 1, true, 1.0, false, pxn});
    CollectiveSpec spec;
    spec.op = CollectiveOp::kSendRecv;
    spec.algorithm = Algorithm::kDirect;
    spec.protocol = Protocol::kSimple;
    spec.bytes = 8 * kMiB;
    spec.gpus = {0, 5};
    spec.root = 0;
    spec.peer = 1;
    for (auto mode : {NetworkMode::kFlow, NetworkMode::kAnalytical}) {
      NetworkOptions options;
      options.mode = mode;
      const auto r = simulate_collective(cluster, spec, options);
      const double b = 8.0 * kMiB;
      EXPECT_EQ(r.time, Time::for_work(b, 50e9) + Time::from_ns(pxn ? 3200 : 5000)) << pxn;
      const auto& t = r.traffic.link_bytes;
      EXPECT_DOUBLE_EQ(t[static_cast<std::size_t>(topology::LinkClass::kNvlink)], pxn ? 2 * b : 0);
      EXPECT_DOUBLE_EQ(t[static_cast<std::size_t>(topology::LinkClass::kPcie)], 2 * b);
      EXPECT_DOUBLE_EQ(t[static_cast<std::size_t>(topology::LinkClass::kScaleOut)],
                       pxn ? 2 * b : 4 * b);
    }
  }
}

}  // namespace
}  // namespace strait::sim::network
