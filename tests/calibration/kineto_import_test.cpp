#include "calibration/kineto_import.hpp"

#include <algorithm>
#include <fstream>

#include <gtest/gtest.h>

#include "calibration/kernel_case.hpp"
#include "sim/core/error.hpp"

namespace strait::calibration {
namespace {

using sim::cost::Precision;
using Json = nlohmann::json;

const std::string kSmallTrace =
    std::string(STRAIT_SOURCE_DIR) + "/tests/calibration/data/kineto_small.json";

std::string write_text(const std::string& file, const std::string& text) {
  const std::string path = testing::TempDir() + "/" + file;
  std::ofstream(path) << text;
  return path;
}

// A Kineto trace of `events` with the top-level fields of `top`.
std::string write_trace(const std::string& file, const Json& events, Json top = Json::object()) {
  top["traceEvents"] = events;
  return write_text(file, top.dump());
}

// A CPU op on thread 1 and a kernel linked to it by External id.
Json cpu_op(const std::string& name, double ts, double dur, int external_id, Json args = {}) {
  if (args.is_null()) args = Json::object();
  args["External id"] = external_id;
  return {{"ph", "X"}, {"cat", "cpu_op"}, {"name", name}, {"pid", 1},
          {"tid", 1},  {"ts", ts},        {"dur", dur},   {"args", args}};
}
Json shaped_op(const std::string& name, double ts, int external_id, const Json& dims,
               const Json& types) {
  return cpu_op(name, ts, 10, external_id, {{"Input Dims", dims}, {"Input type", types}});
}
Json kernel(const std::string& name, double ts, double dur, Json args = Json::object(),
            const std::string& cat = "kernel") {
  return {{"ph", "X"}, {"cat", cat}, {"name", name}, {"pid", 0},
          {"tid", 7},  {"ts", ts},   {"dur", dur},   {"args", args}};
}

const Measurement& find(const MeasurementSet& set, const std::string& family,
                        const std::string& op = "") {
  const auto it = std::find_if(set.records.begin(), set.records.end(), [&](const Measurement& m) {
    return m.family.name() == family && (op.empty() || m.shape.value("op", "") == op);
  });
  if (it == set.records.end()) throw std::runtime_error("no record " + family + " " + op);
  return *it;
}

// tests/calibration/data/kineto_small.json: 15 GPU events on an H100 (trace of 8 ranks).
//   3 aten::mm [512 x 256] x [256 x 1024] bf16: cutlass kernels of 10 us, 12 us (linked by
//     correlation only) and 8 + 3 us (split-K: a cublasLt reduce under the same op)
//     -> gemm m=512 n=1024 k=256: flops 2*512*1024*256 = 268,435,456,
//        bytes (512*256 + 256*1024 + 512*1024) * 2 = 1,835,008; median 11, IQR 11.5 - 10.5
//   aten::embedding_bag weight [1000, 64] fp32, 4096 ids, 1024 offsets, 25 us
//     -> lookup batch 1024 pooling 4: flops 4096*64 = 262,144,
//        bytes 4096 * (64*4 + 8) + 1024*64*4 = 1,343,488
//   all-reduce of 1,048,576 floats on 8 ranks, old naming (External id -> record_param_comms,
//     100 us) and new naming (correlation -> launch inside nccl:all_reduce inside
//     record_param_comms, 120 us) -> bytes 4 MiB, median 110 us: algbw 4194304 / 110 us,
//     busbw x 2*7/8
//   SendRecv with the args on the kernel: all_to_allv of 262,144 bf16 on 8 ranks, 50 us
//     -> bytes 524,288: algbw 10.48576 GB/s, busbw x 7/8 = 9.17504 GB/s
//   Memcpy DtoD of 1 MiB, 4 us -> elementwise memcpy bytes 2 MiB (read + written)
//   aten::add of two [512, 1024] bf16, 6 us -> bytes 2 * 1 MiB read + 1 MiB written
//   causal flash attention q [2, 4, 128, 64] bf16, 30 us -> jagged_attention forward:
//     pairs 2 * 128*129/2 = 16,512, flops 2*4*(64+64)*16512 = 16,908,288,
//     bytes 256*4*256*2 + 256*4*64*2 = 655,360
//   unrecognised: the TBE kernel (flattened weights), Memcpy HtoD, the HSTU kernel (no
//     lengths), my_custom_kernel.
TEST(KinetoImport, TurnsASmallTraceIntoOneRecordPerKernelShape) {
  const MeasurementSet set = import_kineto(kSmallTrace);
  EXPECT_EQ(set.backend, "kineto");
  ASSERT_EQ(set.records.size(), 7u);
  std::vector<std::string> order;
  for (const Measurement& m : set.records) order.push_back(m.family.name());
  EXPECT_EQ(order,
            (std::vector<std::string>{"all_reduce", "all_to_allv", "elementwise", "elementwise",
                                      "embedding_lookup", "gemm", "jagged_attention"}));

  const Measurement& gemm = find(set, "gemm");
  EXPECT_EQ(gemm.shape, Json({{"m", 512}, {"n", 1024}, {"k", 256}}));
  EXPECT_EQ(gemm.dtype, Precision::kBf16);
  EXPECT_DOUBLE_EQ(gemm.flops, 268435456.0);
  EXPECT_DOUBLE_EQ(gemm.bytes, 1835008.0);
  EXPECT_DOUBLE_EQ(gemm.flops, gemm_case(512, 1024, 256, Precision::kBf16).flops);
  EXPECT_EQ(gemm.repetitions, 3);
  EXPECT_EQ(gemm.warmup, 0);
  EXPECT_DOUBLE_EQ(gemm.median_us, 11.0);
  EXPECT_DOUBLE_EQ(gemm.spread.min_us, 10.0);
  EXPECT_DOUBLE_EQ(gemm.spread.max_us, 12.0);
  EXPECT_DOUBLE_EQ(gemm.spread.iqr_us, 1.0);
  EXPECT_EQ(gemm.set, SampleSet::kFit);

  const Measurement& lookup = find(set, "embedding_lookup");
  EXPECT_EQ(lookup.shape["batch"], 1024);
  EXPECT_EQ(lookup.shape["pooling"], 4);
  EXPECT_EQ(lookup.shape["dim"], 64);
  EXPECT_EQ(lookup.shape["rows"], 1000);
  EXPECT_EQ(lookup.dtype, Precision::kFp32);
  EXPECT_DOUBLE_EQ(lookup.flops, 262144.0);
  EXPECT_DOUBLE_EQ(lookup.bytes, 1343488.0);
  EXPECT_DOUBLE_EQ(lookup.median_us, 25.0);

  const Measurement& all_reduce = find(set, "all_reduce");
  EXPECT_EQ(all_reduce.shape, Json({{"ranks", 8}, {"bytes", 4194304}}));
  EXPECT_EQ(all_reduce.dtype, Precision::kFp32);
  EXPECT_DOUBLE_EQ(all_reduce.bytes, 4194304.0);
  EXPECT_DOUBLE_EQ(all_reduce.flops, 0.0);
  EXPECT_EQ(all_reduce.repetitions, 2);
  EXPECT_DOUBLE_EQ(all_reduce.median_us, 110.0);
  EXPECT_DOUBLE_EQ(all_reduce.spread.min_us, 100.0);
  EXPECT_DOUBLE_EQ(all_reduce.spread.max_us, 120.0);
  EXPECT_DOUBLE_EQ(all_reduce.spread.iqr_us, 10.0);  // 115 - 105
  EXPECT_NEAR(all_reduce.algbw_gbps, 4194304.0 / 110e-6 / 1e9, 1e-9);
  EXPECT_NEAR(all_reduce.busbw_gbps, 4194304.0 / 110e-6 / 1e9 * 1.75, 1e-9);
  EXPECT_EQ(all_reduce.check, "ok");

  const Measurement& a2a = find(set, "all_to_allv");
  EXPECT_EQ(a2a.shape, Json({{"ranks", 8}, {"bytes", 524288}}));
  EXPECT_EQ(a2a.dtype, Precision::kBf16);
  EXPECT_NEAR(a2a.algbw_gbps, 10.48576, 1e-9);
  EXPECT_NEAR(a2a.busbw_gbps, 9.17504, 1e-9);

  const Measurement& memcpy = find(set, "elementwise", "memcpy");
  EXPECT_EQ(memcpy.shape["bytes"], 2097152);
  EXPECT_DOUBLE_EQ(memcpy.bytes, 2097152.0);
  EXPECT_DOUBLE_EQ(memcpy.median_us, 4.0);
  const Measurement& add = find(set, "elementwise", "add");
  EXPECT_DOUBLE_EQ(add.bytes, 3145728.0);
  EXPECT_EQ(add.dtype, Precision::kBf16);
  EXPECT_DOUBLE_EQ(add.median_us, 6.0);

  const Measurement& attention = find(set, "jagged_attention");
  EXPECT_EQ(attention.shape["pass"], "forward");
  EXPECT_EQ(attention.shape["batch"], 2);
  EXPECT_EQ(attention.shape["heads"], 4);
  EXPECT_EQ(attention.shape["head_dim"], 64);
  EXPECT_DOUBLE_EQ(attention.shape["mean_length"].get<double>(), 128.0);
  EXPECT_DOUBLE_EQ(attention.flops, 16908288.0);
  EXPECT_DOUBLE_EQ(attention.bytes, 655360.0);
  EXPECT_DOUBLE_EQ(attention.median_us, 30.0);
}

TEST(KinetoImport, CountsRecognisedAndUnrecognisedKernels) {
  KinetoImportStats stats;
  import_kineto(kSmallTrace, {}, &stats);
  EXPECT_EQ(stats.kernels, 15);
  EXPECT_EQ(stats.recognised, 11);
  ASSERT_EQ(stats.unrecognised_by_name.size(), 4u);
  EXPECT_EQ(stats.unrecognised_by_name.at("Memcpy HtoD (Pageable -> Device)"), 1);
  EXPECT_EQ(stats.unrecognised_by_name.at("void my_custom_kernel<float>(float*, int)"), 1);
  EXPECT_EQ(stats.unrecognised_by_name.at("void hstu::hstu_fwd_kernel<cutlass::bfloat16_t, 64>("
                                          "hstu::Params)"),
            1);
}

TEST(KinetoImport, TakesDeviceVersionsAndDateFromTheTrace) {
  const MeasurementSet set = import_kineto(kSmallTrace);
  for (const Measurement& m : set.records) {
    EXPECT_EQ(m.device, "NVIDIA H100 80GB HBM3");
    EXPECT_EQ(m.date, "2025-04-01T15:33:18Z");  // baseTimeNanoseconds 1743521598 s
    EXPECT_EQ(m.versions, (std::map<std::string, std::string>{{"cuda_driver", "12.4"},
                                                              {"cuda_runtime", "12.6"},
                                                              {"cupti", "24"},
                                                              {"nccl", "2.21.5"}}));
  }
  const MeasurementSet named = import_kineto(kSmallTrace, {.device = "H100 SXM (node 3)"});
  EXPECT_EQ(named.records.front().device, "H100 SXM (node 3)");
}

TEST(KinetoImport, ATraceWithoutMetadataIsAnUnknownGpuOnAnUnknownDate) {
  const std::string path = write_text(
      "bare.json",
      Json::array({kernel("Memset (Device)", 10, 2, {{"bytes", 4096}}, "gpu_memset")}).dump());
  const MeasurementSet set = import_kineto(path);
  ASSERT_EQ(set.records.size(), 1u);
  EXPECT_EQ(set.records[0].device, "unknown GPU");
  EXPECT_EQ(set.records[0].date, "unknown");
  EXPECT_TRUE(set.records[0].versions.empty());
  EXPECT_DOUBLE_EQ(set.records[0].bytes, 4096.0);  // a memset only writes
}

// Memsets of 6, 5, ..., 1 KiB: sorted by bytes, the 5th (5 KiB) is held out.
TEST(KinetoImport, EveryFifthShapeOfAFamilyIsHeldOutForValidation) {
  Json events = Json::array();
  for (int kib = 6; kib >= 1; --kib) {
    events.push_back(
        kernel("Memset (Device)", 100.0 * kib, 1, {{"bytes", kib * 1024}}, "gpu_memset"));
  }
  const MeasurementSet set = import_kineto(write_trace("memsets.json", events));
  ASSERT_EQ(set.records.size(), 6u);
  for (int i = 0; i < 6; ++i) {
    EXPECT_DOUBLE_EQ(set.records[i].bytes, 1024.0 * (i + 1));
    EXPECT_EQ(set.records[i].set, i == 4 ? SampleSet::kValidation : SampleSet::kFit) << i;
  }
}

// bmm [8, 128, 64] x [8, 64, 32] fp16 -> m = 8*128 = 1024, n 32, k 64.
// linear x [4, 16, 256], weight [512, 256] fp32 on a tf32 kernel, the kernel linked to an
//   inner aten::addmm without shapes -> the enclosing linear: m = 64, n = 512, k = 256, tf32.
// matmul [2, 3, 64, 32] x [2, 3, 32, 16] bf16 -> m = 2*3*64 = 384, n 16, k 32.
// fp64 addmm and an mm whose inner extents differ are unrecognised.
TEST(KinetoImport, GemmShapesOfBmmLinearAndMatmul) {
  const Json events = {
      shaped_op("aten::bmm", 0, 1, {{8, 128, 64}, {8, 64, 32}}, {"c10::Half", "c10::Half"}),
      kernel("ampere_fp16_s16816gemm_fp16_128x64_ldg8_f2f_tn", 1, 5, {{"External id", 1}}),
      cpu_op("aten::linear", 20, 10, 2,
             {{"Input Dims", {{4, 16, 256}, {512, 256}, {512}}},
              {"Input type", {"float", "float", "float"}}}),
      cpu_op("aten::addmm", 21, 5, 3),
      kernel("sm80_xmma_gemm_tf32f32_tf32f32_f32_tn_n_tilesize128x128x16_kernel", 22, 4,
             {{"External id", 3}}),
      shaped_op("aten::matmul", 40, 4, {{2, 3, 64, 32}, {2, 3, 32, 16}},
                {"c10::BFloat16", "c10::BFloat16"}),
      kernel("nvjet_tst_64x8_64x16_2x1_v_bz_TNT", 41, 3, {{"External id", 4}}),
      shaped_op("aten::addmm", 60, 5, {{64}, {32, 16}, {16, 64}}, {"double", "double", "double"}),
      kernel("ampere_dgemm_64x64_tn", 61, 3, {{"External id", 5}}),
      shaped_op("aten::mm", 80, 6, {{4, 5}, {6, 7}}, {"float", "float"}),
      kernel("ampere_sgemm_32x32_sliced1x4_tn", 81, 3, {{"External id", 6}}),
  };
  KinetoImportStats stats;
  const MeasurementSet set = import_kineto(write_trace("gemms.json", events), {}, &stats);
  ASSERT_EQ(set.records.size(), 3u);
  const auto shape = [](const Measurement& m) {
    return std::vector<std::int64_t>{m.shape_int("m"), m.shape_int("n"), m.shape_int("k")};
  };
  // Sorted by (m n k)^(1/3): 384*16*32 < 1024*32*64 < 64*512*256 (cube roots 58, 128, 203).
  EXPECT_EQ(shape(set.records[0]), (std::vector<std::int64_t>{384, 16, 32}));
  EXPECT_EQ(set.records[0].dtype, Precision::kBf16);
  EXPECT_EQ(shape(set.records[1]), (std::vector<std::int64_t>{1024, 32, 64}));
  EXPECT_EQ(set.records[1].dtype, Precision::kFp16);
  EXPECT_EQ(shape(set.records[2]), (std::vector<std::int64_t>{64, 512, 256}));
  EXPECT_EQ(set.records[2].dtype, Precision::kTf32);
  EXPECT_DOUBLE_EQ(set.records[2].bytes, (64.0 * 256 + 256 * 512 + 64 * 512) * 4);
  EXPECT_EQ(stats.recognised, 3);
  EXPECT_EQ(stats.unrecognised_by_name.count("ampere_dgemm_64x64_tn"), 1u);
  EXPECT_EQ(stats.unrecognised_by_name.count("ampere_sgemm_32x32_sliced1x4_tn"), 1u);
}

// _reduce_scatter_base: in 8192 floats, out 1024 -> nccl-tests size = input = 32 KiB.
// _allgather_base: in 1024 halves, out 8192 -> size = output = 16 KiB.
// Group size missing: the trace's world size (4) is the ranks. Both 10 us; busbw x 7/8, x 3/4.
// A bare NCCL kernel (no metadata) and a barrier (0 elements) are unrecognised.
TEST(KinetoImport, CollectiveSizesFollowNcclTests) {
  const auto comms = [](double ts, int id, const char* name, int in, int out, const char* dtype) {
    Json args = {{"Collective name", name},
                 {"In msg nelems", in},
                 {"Out msg nelems", out},
                 {"dtype", dtype}};
    return cpu_op("record_param_comms", ts, 20, id, args);
  };
  Json events = {
      comms(0, 1, "_reduce_scatter_base", 8192, 1024, "Float"),
      kernel("ncclDevKernel_ReduceScatter_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
             1, 10, {{"External id", 1}}),
      comms(30, 2, "_allgather_base", 1024, 8192, "Half"),
      kernel("ncclKernel_AllGather_RING_LL_Sum_half(ncclWorkElem)", 31, 10, {{"External id", 2}}),
      comms(60, 3, "barrier", 0, 0, "Float"),
      kernel("ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)", 61, 10, {{"External id", 3}}),
      kernel("ncclDevKernel_Broadcast_RING_LL(ncclDevComm*, unsigned long, ncclWork*)", 90, 10),
  };
  events[0]["args"]["Group size"] = 8;
  KinetoImportStats stats;
  const MeasurementSet set = import_kineto(
      write_trace("comms.json", events, {{"distributedInfo", {{"world_size", 4}}}}), {}, &stats);
  ASSERT_EQ(set.records.size(), 2u);
  const Measurement& all_gather = find(set, "all_gather");
  EXPECT_EQ(all_gather.shape, Json({{"ranks", 4}, {"bytes", 16384}}));
  EXPECT_EQ(all_gather.dtype, Precision::kFp16);
  EXPECT_NEAR(all_gather.busbw_gbps, 16384.0 / 10e-6 / 1e9 * 3 / 4, 1e-9);
  const Measurement& reduce_scatter = find(set, "reduce_scatter");
  EXPECT_EQ(reduce_scatter.shape, Json({{"ranks", 8}, {"bytes", 32768}}));
  EXPECT_NEAR(reduce_scatter.algbw_gbps, 3.2768, 1e-9);
  EXPECT_NEAR(reduce_scatter.busbw_gbps, 3.2768 * 7 / 8, 1e-9);
  EXPECT_EQ(stats.kernels, 4);
  EXPECT_EQ(stats.recognised, 2);
}

TEST(KinetoImport, ImportedRecordsLoadBackFromAMeasurementFile) {
  const MeasurementSet set = import_kineto(kSmallTrace);
  const std::string path = testing::TempDir() + "/kineto_measurements.json";
  save_measurements(set, path);
  const MeasurementSet back = load_measurements(path);
  EXPECT_EQ(back.backend, "kineto");
  ASSERT_EQ(back.records.size(), set.records.size());
  for (std::size_t i = 0; i < set.records.size(); ++i) {
    EXPECT_EQ(back.records[i].label(), set.records[i].label());
    EXPECT_DOUBLE_EQ(back.records[i].median_us, set.records[i].median_us);
  }
}

TEST(KinetoImport, AMalformedTraceIsAConfigErrorNamingTheFile) {
  const std::string nodur = write_text("nodur_import.json", R"({"traceEvents": [
      {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1, "dur": 1},
      {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 2}]})");
  try {
    import_kineto(nodur);
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.file(), nodur);
    EXPECT_EQ(e.pointer(), "/traceEvents/1/dur");
  }
  const std::string props =
      write_text("props_import.json", R"({"deviceProperties": 3, "traceEvents": []})");
  try {
    import_kineto(props);
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.file(), props);
    EXPECT_EQ(e.pointer(), "/deviceProperties");
  }
  EXPECT_THROW(import_kineto(write_text("trunc_import.json", R"({"traceEvents": [)")), ConfigError);
  EXPECT_THROW(import_kineto("/nonexistent/trace.json"), IoError);
}

}  // namespace
}  // namespace strait::calibration
