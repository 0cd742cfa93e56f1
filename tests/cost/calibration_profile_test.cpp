#include "sim/cost/calibration_profile.hpp"

#include <cmath>
#include <functional>
#include <tuple>

#include <gtest/gtest.h>

#include "sim/core/error.hpp"
#include "sim/cost/cost_model.hpp"
#include "sim/cost/profile_set.hpp"

namespace strait::sim::cost {
namespace {

const std::string kProfileDir = std::string(STRAIT_SOURCE_DIR) + "/configs/profiles";

// A small valid profile; tests break one thing at a time.
Json valid_profile() {
  return Json::parse(R"({
    "gpu_type": "TEST-GPU",
    "provenance": {"status": "estimated", "summary": "test", "sources": ["made up"]},
    "device": {
      "peak_tflops": {"fp32": 50, "tf32": 400, "bf16": 800, "fp16": 800},
      "hbm_bandwidth": "2000 GB/s", "hbm_capacity": "64 GiB", "sm_count": 100,
      "launch_overhead": "2 us", "nccl_sms": 20
    },
    "kernels": {
      "gemm": {"compute_efficiency": {"key": "mnk_cube_root", "points": [[256, 0.2], [1024, 0.6]]},
               "memory_efficiency": 0.8},
      "jagged_attention": {"compute_efficiency": 0.4, "memory_efficiency": 0.8},
      "padded_attention": {"compute_efficiency": 0.5, "memory_efficiency": 0.8},
      "embedding_lookup": {"compute_efficiency": 0.5, "memory_efficiency": 0.7,
                           "repeat_hit_rate": 0.5},
      "embedding_update": {"compute_efficiency": 0.5, "memory_efficiency": 0.6,
                           "repeat_hit_rate": 0.5},
      "elementwise": {"compute_efficiency": 0.5, "memory_efficiency": 0.9},
      "optimizer": {"compute_efficiency": 0.5, "memory_efficiency": 0.9}
    }
  })");
}

CalibrationProfile parse(Json j) {
  return CalibrationProfile::from_config(ConfigNode(std::move(j), "test.json"));
}

std::string message_of(Json j) {
  try {
    parse(std::move(j));
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

TEST(CalibrationProfile, ReadsAValidProfile) {
  const CalibrationProfile p = parse(valid_profile());
  EXPECT_EQ(p.device.gpu_type, "TEST-GPU");
  EXPECT_DOUBLE_EQ(*p.device.peak(Precision::kBf16), 800e12);
  EXPECT_FALSE(p.device.peak(Precision::kFp8).has_value());
  EXPECT_DOUBLE_EQ(p.device.hbm_bandwidth, 2000e9);
  EXPECT_EQ(p.device.hbm_capacity, 64 * kGiB);
  EXPECT_EQ(p.device.launch_overhead, Time::from_us(2));
  EXPECT_DOUBLE_EQ(p.device.comm_sm_fraction(), 0.2);
  EXPECT_EQ(p.device.memory_reserved, 0);
  EXPECT_DOUBLE_EQ(p.kernel(KernelKind::kGemm).compute.at(512), 0.4);
  EXPECT_DOUBLE_EQ(p.kernel(KernelKind::kEmbeddingLookup).repeat_hit_rate, 0.5);
  EXPECT_EQ(p.provenance.sources.size(), 1u);
}

TEST(CalibrationProfile, RejectsAnEfficiencyOfZero) {
  Json j = valid_profile();
  j["kernels"]["gemm"]["compute_efficiency"]["points"][1][1] = 0;
  EXPECT_EQ(message_of(j),
            "test.json: /kernels/gemm/compute_efficiency/points/1/1: expected an efficiency in "
            "(0, 1], got 0");
}

TEST(CalibrationProfile, RejectsAnEfficiencyAboveOne) {
  Json j = valid_profile();
  j["kernels"]["elementwise"]["memory_efficiency"] = 1.2;
  EXPECT_EQ(message_of(j),
            "test.json: /kernels/elementwise/memory_efficiency: expected an efficiency in (0, 1], "
            "got 1.2");
}

TEST(CalibrationProfile, RejectsKeysThatDoNotIncrease) {
  Json j = valid_profile();
  j["kernels"]["gemm"]["compute_efficiency"]["points"][1][0] = 256;
  EXPECT_EQ(message_of(j),
            "test.json: /kernels/gemm/compute_efficiency/points/1/0: expected keys in strictly "
            "increasing order, got 256 after 256");
}

TEST(CalibrationProfile, RejectsUnknownKeysWithASuggestion) {
  Json j = valid_profile();
  j["device"]["hbm_bandwith"] = "1 GB/s";
  EXPECT_EQ(message_of(j),
            "test.json: /device/hbm_bandwith: unknown key; did you mean \"hbm_bandwidth\"?");
  j = valid_profile();
  j["kernels"]["gemm"]["repeat_hit_rate"] = 0.5;  // embedding kinds only
  EXPECT_EQ(message_of(j),
            "test.json: /kernels/gemm/repeat_hit_rate: unknown key (known keys: "
            "implementation, provenance, compute_efficiency, memory_efficiency)");
  j = valid_profile();
  j["kernels"]["matmul"] = 0.5;
  EXPECT_EQ(message_of(j),
            "test.json: /kernels/matmul: unknown key (known keys: gemm, jagged_attention, "
            "padded_attention, embedding_lookup, embedding_update, elementwise, optimizer, "
            "jagged_attention_backward, padded_attention_backward, gemm_backward)");
}

TEST(CalibrationProfile, RequiresEveryPeakButFp8) {
  Json j = valid_profile();
  j["device"]["peak_tflops"].erase("bf16");
  EXPECT_EQ(message_of(j), "test.json: /device/peak_tflops/bf16: missing required key");
  j = valid_profile();
  j["device"]["peak_tflops"]["fp16"] = -1;
  EXPECT_EQ(message_of(j),
            "test.json: /device/peak_tflops/fp16: expected a positive number, got -1");
}

TEST(CalibrationProfile, RejectsOtherBadDeviceAndKernelValues) {
  Json j = valid_profile();
  j["device"]["nccl_sms"] = 200;
  EXPECT_EQ(message_of(j),
            "test.json: /device/nccl_sms: expected an SM count in [0, sm_count = 100], got 200");
  j = valid_profile();
  j["device"]["hbm_bandwidth"] = 2000;
  EXPECT_EQ(message_of(j),
            "test.json: /device/hbm_bandwidth: expected a bandwidth with its unit such as "
            "\"400 Gb/s\" or \"450 GB/s\", got the number 2000");
  j = valid_profile();
  j["kernels"].erase("optimizer");
  EXPECT_EQ(message_of(j), "test.json: /kernels/optimizer: missing required key");
  j = valid_profile();
  j["kernels"]["embedding_update"]["repeat_hit_rate"] = 1.5;
  EXPECT_EQ(message_of(j),
            "test.json: /kernels/embedding_update/repeat_hit_rate: expected a number in [-1, 1], "
            "got 1.5");
  j = valid_profile();
  j["provenance"]["sources"] = Json::array();
  EXPECT_EQ(message_of(j), "test.json: /provenance/sources: expected at least one source");
}

// A family may list several implementations, each named, with a default: the default is in
// use, the others wait as alternatives; choose() swaps one in, the file round-trips, and
// every mistake names its place.
TEST(CalibrationProfile, AFamilyHoldsSeveralImplementationsAndADefault) {
  Json j = valid_profile();
  j["kernels"]["gemm"] = Json::parse(R"({"default": "fast", "implementations": [
      {"implementation": "slow", "provenance": "a bench", "compute_efficiency": 0.25,
       "memory_efficiency": 0.5},
      {"implementation": "fast", "compute_efficiency": 0.75, "memory_efficiency": 0.5}]})");
  CalibrationProfile p = parse(j);
  EXPECT_EQ(p.kernel(KernelKind::kGemm).implementation, "fast");
  EXPECT_DOUBLE_EQ(p.kernel(KernelKind::kGemm).compute.at(1024), 0.75);
  EXPECT_EQ(p.implementations(KernelKind::kGemm), (std::vector<std::string>{"fast", "slow"}));
  EXPECT_EQ(parse(to_json(p)).implementations(KernelKind::kGemm),
            (std::vector<std::string>{"fast", "slow"}));
  EXPECT_EQ(to_json(p)["kernels"]["gemm"]["default"], "fast");

  p.choose(KernelKind::kGemm, "slow");
  EXPECT_DOUBLE_EQ(p.kernel(KernelKind::kGemm).compute.at(1024), 0.25);
  EXPECT_EQ(p.kernel(KernelKind::kGemm).provenance, "a bench");
  EXPECT_EQ(p.implementations(KernelKind::kGemm), (std::vector<std::string>{"slow", "fast"}));
  try {
    p.choose(KernelKind::kGemm, "tuned");
    ADD_FAILURE() << "no error";
  } catch (const CostError& e) {
    EXPECT_STREQ(e.what(),
                 "the TEST-GPU profile (test.json) has no gemm implementation \"tuned\" (it has "
                 "\"slow\", \"fast\")");
  }

  j["kernels"]["gemm"]["default"] = "tuned";
  EXPECT_EQ(message_of(j),
            "test.json: /kernels/gemm/default: expected one of the listed implementations "
            "(slow, fast), got \"tuned\"");
  j["kernels"]["gemm"]["default"] = "fast";
  j["kernels"]["gemm"]["implementations"][0]["implementation"] = "fast";
  EXPECT_EQ(message_of(j),
            "test.json: /kernels/gemm/implementations/1/implementation: implementation "
            "\"fast\" is listed twice");
  j["kernels"]["gemm"]["implementations"][0].erase("implementation");
  EXPECT_EQ(message_of(j),
            "test.json: /kernels/gemm/implementations/0: missing required key "
            "\"implementation\" (every one of a family's implementations is named)");
}

// Attention tables per head dimension: each dimension reads its own table, between two
// the efficiency goes linearly in log2(head_dim) (96 sits 0.585 of the way from 64 to 128),
// outside them it is clamped; one family cannot carry both forms.
TEST(CalibrationProfile, AttentionEfficiencyFollowsTheHeadDimension) {
  Json j = valid_profile();
  j["kernels"]["jagged_attention"] = Json::parse(R"({"memory_efficiency": 0.8,
      "compute_efficiency_by_head_dim": {
        "128": {"key": "mean_length", "points": [[512, 0.3], [2048, 0.5]]},
        "64": {"key": "mean_length", "points": [[512, 0.1], [2048, 0.3]]}}})");
  const CalibrationProfile p = parse(j);
  const KernelEfficiency& e = p.kernel(KernelKind::kJaggedAttention);
  EXPECT_DOUBLE_EQ(e.compute_efficiency(std::log2(2048.0), 64), 0.3);
  EXPECT_DOUBLE_EQ(e.compute_efficiency(std::log2(2048.0), 128), 0.5);
  EXPECT_DOUBLE_EQ(e.compute_efficiency(std::log2(1024.0), 128), 0.4);
  EXPECT_DOUBLE_EQ(e.compute_efficiency(std::log2(2048.0), 32), 0.3);
  EXPECT_DOUBLE_EQ(e.compute_efficiency(std::log2(2048.0), 256), 0.5);
  EXPECT_NEAR(e.compute_efficiency(std::log2(2048.0), 96), 0.3 + 0.2 * (std::log2(1.5)), 1e-12);
  EXPECT_EQ(to_json(p)["kernels"]["jagged_attention"]["compute_efficiency_by_head_dim"].size(), 2u);
  EXPECT_DOUBLE_EQ(parse(to_json(p))
                       .kernel(KernelKind::kJaggedAttention)
                       .compute_efficiency(std::log2(2048.0), 64),
                   0.3);

  j["kernels"]["jagged_attention"]["compute_efficiency"] = 0.5;
  EXPECT_EQ(message_of(j),
            "test.json: /kernels/jagged_attention: expected one of \"compute_efficiency\" or "
            "\"compute_efficiency_by_head_dim\"");
  j["kernels"]["jagged_attention"].erase("compute_efficiency");
  j["kernels"]["jagged_attention"]["compute_efficiency_by_head_dim"]["wide"] = 0.5;
  EXPECT_EQ(message_of(j),
            "test.json: /kernels/jagged_attention/compute_efficiency_by_head_dim/wide: expected "
            "a head dimension 1..4096 as the key, got \"wide\"");
}

// A family may name its kernel implementation; a backward family without tables of its
// own takes the forward's, name included. A name outside a-z, 0-9, '-', '_', '.' is refused.
TEST(CalibrationProfile, ReadsEachFamilysImplementation) {
  Json j = valid_profile();
  j["kernels"]["gemm"]["implementation"] = "cublaslt";
  j["kernels"]["jagged_attention"]["implementation"] = "cutlass-hstu";
  const CalibrationProfile p = parse(j);
  EXPECT_EQ(p.kernel(KernelKind::kGemm).implementation, "cublaslt");
  EXPECT_EQ(p.kernel(KernelKind::kGemmBackward).implementation, "cublaslt");
  EXPECT_EQ(p.kernel(KernelKind::kJaggedAttention).implementation, "cutlass-hstu");
  EXPECT_EQ(p.kernel(KernelKind::kOptimizer).implementation, "");
  EXPECT_EQ(to_json(p)["kernels"]["gemm_backward"]["implementation"], "cublaslt");
  j["kernels"]["gemm"]["implementation"] = "cuBLAS Lt";
  EXPECT_EQ(message_of(j),
            "test.json: /kernels/gemm/implementation: expected an implementation name of a-z, "
            "0-9, '-', '_' and '.', got \"cuBLAS Lt\"");
}

TEST(CalibrationProfile, BothBundledProfilesLoad) {
  const CalibrationProfile h100 = load_profile(kProfileDir + "/h100-sxm.json");
  EXPECT_EQ(h100.device.gpu_type, "H100-SXM");
  // Production kernels by default, strait's own kept as an alternative.
  EXPECT_EQ(h100.implementations(KernelKind::kJaggedAttention),
            (std::vector<std::string>{"cutlass-hstu", "strait"}));
  EXPECT_EQ(h100.implementations(KernelKind::kGemmBackward),
            (std::vector<std::string>{"cublaslt", "cublas"}));
  EXPECT_EQ(h100.device.sm_count, 132);
  EXPECT_DOUBLE_EQ(*h100.device.peak(Precision::kFp8), 1978.9e12);
  const CalibrationProfile a100 = load_profile(kProfileDir + "/a100-sxm.json");
  EXPECT_EQ(a100.device.gpu_type, "A100-SXM");
  EXPECT_FALSE(a100.device.peak(Precision::kFp8).has_value());
  EXPECT_FALSE(a100.provenance.sources.empty());
}

// The estimated Blackwell profiles (scripts/estimated_profiles.py): datasheet peaks, and
// the H100's kernel tables unchanged, so a compute-bound 8192^3 bf16 GEMM (cube-root key
// 8192, the same efficiency e on both) takes 2 x 8192^3 / (peak x e): on the B200
// 989.4 / 2,250 of the H100's compute time, on the GB200 989.4 / 2,500.
TEST(CalibrationProfile, BlackwellProfilesAreTheH100TablesAtDatasheetPeaks) {
  const CostModel costs(load_profile_dir(kProfileDir));
  KernelWork w;
  w.kind = KernelKind::kGemm;
  w.precision = Precision::kBf16;
  w.m = w.n = w.k = 8192;
  w.flops = 2.0 * 8192.0 * 8192.0 * 8192.0;
  w.hbm_bytes = 3.0 * 8192.0 * 8192.0 * 2;
  const double h100 = costs.cost(w, "H100-SXM").compute_seconds;
  for (const auto& [type, peak, hbm] :
       {std::tuple{"B200", 2250e12, 7700e9}, std::tuple{"GB200", 2500e12, 8000e9}}) {
    const CalibrationProfile& p = costs.profile(type);
    EXPECT_EQ(p.provenance.status, "estimated") << type;
    EXPECT_DOUBLE_EQ(*p.device.peak(Precision::kBf16), peak) << type;
    EXPECT_DOUBLE_EQ(*p.device.peak(Precision::kFp8), 2 * peak) << type;
    EXPECT_DOUBLE_EQ(p.device.hbm_bandwidth, hbm) << type;
    EXPECT_EQ(p.device.sm_count, 148) << type;
    EXPECT_NEAR(costs.cost(w, type).compute_seconds, h100 * 989.4e12 / peak, h100 * 1e-12) << type;
  }
  EXPECT_EQ(costs.profile("B200").device.hbm_capacity, Bytes{180'000'000'000});
  EXPECT_EQ(costs.profile("GB200").device.hbm_capacity, Bytes{186'000'000'000});
}

TEST(ProfileSet, LoadsEveryProfileOfADirectory) {
  const ProfileSet set = load_profile_dir(kProfileDir);
  EXPECT_EQ(set.gpu_types(),
            (std::vector<std::string>{"A100-SXM", "B200", "CPU", "GB200", "H100-SXM", "H200-SXM"}));
  ASSERT_NE(set.find("H100-SXM"), nullptr);
  EXPECT_EQ(set.find("B300"), nullptr);
}

TEST(ProfileSet, RejectsTwoProfilesOfOneGpuType) {
  const std::string path = kProfileDir + "/h100-sxm.json";
  try {
    load_profiles({path, path});
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(
        std::string(e.what()),
        path + ": /gpu_type: GPU type \"H100-SXM\" already has a profile (from " + path + ")");
  }
}

TEST(ProfileSet, AMissingDirectoryIsAnIoError) {
  EXPECT_THROW(load_profile_dir(kProfileDir + "/no-such-dir"), IoError);
}

// A profile without attention backward families costs the backward with the forward
// tables; one with them keeps its own.
TEST(CalibrationProfile, AttentionBackwardDefaultsToTheForwardTable) {
  const CalibrationProfile p = parse(valid_profile());
  EXPECT_DOUBLE_EQ(p.kernel(KernelKind::kJaggedAttentionBackward).compute.at(512), 0.4);
  Json j = valid_profile();
  j["kernels"]["jagged_attention_backward"] = {{"compute_efficiency", 0.1},
                                               {"memory_efficiency", 0.8}};
  EXPECT_DOUBLE_EQ(parse(j).kernel(KernelKind::kJaggedAttentionBackward).compute.at(512), 0.1);
  EXPECT_DOUBLE_EQ(parse(j).kernel(KernelKind::kJaggedAttention).compute.at(512), 0.4);
}

// tile_rows (attention families only): read, written back, and one of the known tiles.
TEST(CalibrationProfile, AttentionTileRowsAreReadCheckedAndWritten) {
  Json j = valid_profile();
  j["kernels"]["jagged_attention"]["tile_rows"] = 128;
  j["kernels"]["jagged_attention_backward"] = {
      {"compute_efficiency", 0.1}, {"memory_efficiency", 0.8}, {"tile_rows", 64}};
  const CalibrationProfile p = parse(j);
  EXPECT_EQ(p.kernel(KernelKind::kJaggedAttention).tile_rows, 128);
  EXPECT_EQ(p.kernel(KernelKind::kJaggedAttentionBackward).tile_rows, 64);
  EXPECT_EQ(p.kernel(KernelKind::kPaddedAttention).tile_rows, 0);
  EXPECT_EQ(to_json(p)["kernels"]["jagged_attention_backward"]["tile_rows"], 64);
  EXPECT_FALSE(to_json(p)["kernels"]["padded_attention"].contains("tile_rows"));
  j["kernels"]["jagged_attention"]["tile_rows"] = 100;
  EXPECT_EQ(message_of(j),
            "test.json: /kernels/jagged_attention/tile_rows: expected a query tile of 16, 32, "
            "64, 128 or 256 rows, got 100");
  j = valid_profile();
  j["kernels"]["gemm"]["tile_rows"] = 128;
  EXPECT_EQ(message_of(j),
            "test.json: /kernels/gemm/tile_rows: unknown key (known keys: implementation, "
            "provenance, compute_efficiency, memory_efficiency)");
}

TEST(CalibrationProfile, EmbeddingCallLatencyIsReadCheckedAndWritten) {
  Json j = valid_profile();
  j["kernels"]["embedding_update"]["call_latency"] = "58.5 us";
  const CalibrationProfile p = parse(j);
  EXPECT_EQ(p.kernel(KernelKind::kEmbeddingUpdate).call_latency, Time::from_ns(58'500));
  EXPECT_EQ(p.kernel(KernelKind::kEmbeddingLookup).call_latency, Time::zero());
  EXPECT_EQ(to_json(p)["kernels"]["embedding_update"]["call_latency"], "58.5 us");
  EXPECT_FALSE(to_json(p)["kernels"]["embedding_lookup"].contains("call_latency"));
  EXPECT_EQ(parse(to_json(p)).kernel(KernelKind::kEmbeddingUpdate).call_latency,
            Time::from_ns(58'500));
  j["kernels"]["embedding_update"]["call_latency"] = "-1 us";
  EXPECT_EQ(message_of(j),
            "test.json: /kernels/embedding_update/call_latency: expected a duration with its unit "
            "such as \"2 us\" or \"5 ms\" (at most 1e6 s), got the string \"-1 us\"");
  j = valid_profile();
  j["kernels"]["elementwise"]["call_latency"] = "1 us";
  EXPECT_EQ(message_of(j).substr(0, 51), "test.json: /kernels/elementwise/call_latency: unkno");
}

// The bundled GPU profiles carry their own attention backward families, below forward.
TEST(CalibrationProfile, BundledGpuProfilesHaveASlowerAttentionBackward) {
  for (const char* file : {"/h100-sxm.json", "/a100-sxm.json"}) {
    const CalibrationProfile p = load_profile(kProfileDir + file);
    for (double length : {128.0, 1024.0, 8192.0}) {
      EXPECT_LT(p.kernel(KernelKind::kJaggedAttentionBackward).compute.at(length),
                p.kernel(KernelKind::kJaggedAttention).compute.at(length))
          << file << " " << length;
    }
    EXPECT_EQ(p.kernel(KernelKind::kJaggedAttention).tile_rows, 128) << file;
    EXPECT_EQ(p.kernel(KernelKind::kJaggedAttentionBackward).tile_rows, 64) << file;
  }
}

// The "collectives" section: link classes and per-op tables, read, checked and written back.
TEST(CalibrationProfile, CollectivesSectionRoundTrips) {
  Json j = valid_profile();
  j["collectives"] = Json::parse(R"({
    "link_classes": {"nvlink": {"bandwidth_efficiency": 0.5, "latency": "1.5 us"}},
    "ops": {"all_reduce": {"base_latency": "3 us",
                           "bandwidth_scale": {"key": "bytes", "points": [[1024, 0.25], [4096, 0.75]]}}}
  })");
  const CalibrationProfile p = parse(j);
  ASSERT_TRUE(p.collectives.present);
  const auto& nvlink = p.collectives.link_classes[0];
  ASSERT_TRUE(nvlink.has_value());
  EXPECT_DOUBLE_EQ(nvlink->bandwidth_efficiency, 0.5);
  EXPECT_EQ(nvlink->latency, Time::from_ns(1500));
  const auto& ar = p.collectives.ops[0];
  EXPECT_EQ(ar.base_latency, Time::from_us(3));
  EXPECT_DOUBLE_EQ(ar.scale_at(2048), 0.5);  // halfway in log2 between 1024 and 4096
  const CalibrationProfile back = parse(to_json(p));
  EXPECT_EQ(back.collectives.link_classes[0]->latency, nvlink->latency);
  EXPECT_DOUBLE_EQ(back.collectives.ops[0].scale_at(2048), 0.5);
  EXPECT_EQ(to_json(back), to_json(p));
}

TEST(CalibrationProfile, CollectivesSectionErrorsNameTheKey) {
  Json j = valid_profile();
  j["collectives"] = {
      {"ops", {{"all_reduse", {{"base_latency", "1 us"}, {"bandwidth_scale", 1}}}}}};
  EXPECT_NE(message_of(j).find("/collectives/ops/all_reduse: unknown collective"),
            std::string::npos)
      << message_of(j);
  j["collectives"] = {
      {"link_classes", {{"nvlink", {{"bandwidth_efficiency", 1.5}, {"latency", "1 us"}}}}}};
  EXPECT_EQ(message_of(j),
            "test.json: /collectives/link_classes/nvlink/bandwidth_efficiency: expected a fraction "
            "in (0, 1], got 1.5");
}

}  // namespace
}  // namespace strait::sim::cost
