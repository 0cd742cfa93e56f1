// Fitted per-operation factors (network::OpCalibration) against closed forms.
// Setup: one host of 2 GPUs on an NVSwitch, NVLink 100 GB/s per direction, 1 us per link
// (a GPU-to-GPU transfer crosses 2 links). A send/recv of S bytes takes S / B + 2 us.
// With a start-up latency a and a bandwidth scale s it takes a + S / (s B) + 2 us; with a
// scale table, s is interpolated in log2 of the size between its points.

#include <cmath>

#include <gtest/gtest.h>

#include "sim/network/network.hpp"
#include "test_clusters.hpp"

namespace strait::sim::network {
namespace {

using testing::Fabric;
using testing::make_cluster;

double sendrecv_us(Bytes bytes, const OpCalibration& c, NetworkMode mode) {
  Fabric f;
  f.nvlink = 100e9;
  f.link_latency = Time::from_us(1);
  const auto cluster = make_cluster(1, 1, 2, f);
  CollectiveSpec spec;
  spec.op = CollectiveOp::kSendRecv;
  spec.bytes = bytes;
  spec.gpus = {0, 1};
  NetworkOptions options;
  options.mode = mode;
  options.calibration[static_cast<std::size_t>(CollectiveOp::kSendRecv)] = c;
  return simulate_collective(cluster, spec, options).time.to_us();
}

TEST(CollectiveCalibration, NeutralFactorsLeaveTheLinkModel) {
  // 1 MB / 100 GB/s = 10 us, + 2 us.
  EXPECT_NEAR(sendrecv_us(1'000'000, {}, NetworkMode::kAnalytical), 12.0, 1e-6);
}

TEST(CollectiveCalibration, StartUpLatencyAndScaleAddUpInBothModes) {
  // a = 3 us, s = 0.5: 3 + 1 MB / 50 GB/s (20 us) + 2 = 25 us.
  OpCalibration c;
  c.base_latency = Time::from_us(3);
  c.log2_bytes = {0};
  c.scales = {0.5};
  for (auto mode : {NetworkMode::kAnalytical, NetworkMode::kFlow}) {
    EXPECT_NEAR(sendrecv_us(1'000'000, c, mode), 25.0, 1e-6) << to_string(mode);
  }
}

TEST(CollectiveCalibration, ScaleIsInterpolatedInLog2OfTheSize) {
  // Points (2^20 B, 0.25) and (2^22 B, 0.75): at 2^21 B, s = 0.5, so 2^21 / 50e9 s + 2 us.
  // Outside the points the end values hold: at 2^23 B, s = 0.75.
  OpCalibration c;
  c.log2_bytes = {20, 22};
  c.scales = {0.25, 0.75};
  const double mid = std::exp2(21) / 50e9 * 1e6 + 2;
  const double high = std::exp2(23) / 75e9 * 1e6 + 2;
  EXPECT_NEAR(sendrecv_us(Bytes{1} << 21, c, NetworkMode::kAnalytical), mid, 1e-6);
  // (transfers carry whole bytes: 2^23 / 0.75 rounds to the next byte)
  EXPECT_NEAR(sendrecv_us(Bytes{1} << 23, c, NetworkMode::kAnalytical), high, 1e-5);
}

// Traffic counts the payload, not the bytes a calibrated transfer is timed for: a 1 MB
// send/recv crosses 2 NVLink links (2 MB of link traffic) whatever the scale, and a direct
// all-to-all of 1 MB per rank on 4 GPUs moves 4 x 3/4 MB over 2 links each (6 MB), in both
// modes, while the scale 0.5 doubles the bandwidth part of its time.
TEST(CollectiveCalibration, TrafficStaysThePayloadInBothModes) {
  Fabric f;
  f.nvlink = 100e9;
  const auto cluster = make_cluster(1, 1, 4, f);
  OpCalibration half;
  half.log2_bytes = {0};
  half.scales = {0.5};
  for (auto mode : {NetworkMode::kAnalytical, NetworkMode::kFlow}) {
    NetworkOptions options;
    options.mode = mode;
    for (auto& c : options.calibration) c = half;
    CollectiveSpec s;
    s.op = CollectiveOp::kSendRecv;
    s.bytes = 1'000'000;
    s.gpus = {0, 1};
    EXPECT_NEAR(
        simulate_collective(cluster, s, options).traffic.bytes(topology::LinkClass::kNvlink), 2e6,
        1)
        << to_string(mode);
    CollectiveSpec a;
    a.op = CollectiveOp::kAllToAll;
    a.algorithm = Algorithm::kDirect;
    a.bytes = 1'000'000;
    a.gpus = {0, 1, 2, 3};
    const auto r = simulate_collective(cluster, a, options);
    EXPECT_NEAR(r.traffic.bytes(topology::LinkClass::kNvlink), 6e6, 4) << to_string(mode);
    // 750 KB leave each GPU over its 100 GB/s link at half speed: 15 us.
    EXPECT_NEAR(r.time.to_us(), 15.0, 1e-3) << to_string(mode);
  }
}

TEST(CollectiveCalibration, AllToAllVIsKeyedOnTheMeanBytesARankSends) {
  CollectiveSpec spec;
  spec.op = CollectiveOp::kAllToAllV;
  spec.gpus = {0, 1};
  spec.send_matrix = {10, 30, 50, 70};  // rows send 40 and 120 bytes: mean 80
  EXPECT_DOUBLE_EQ(calibration_bytes(spec), 80.0);
  spec.op = CollectiveOp::kAllReduce;
  spec.bytes = 64;
  EXPECT_DOUBLE_EQ(calibration_bytes(spec), 64.0);
}

}  // namespace
}  // namespace strait::sim::network
