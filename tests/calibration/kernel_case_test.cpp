#include "calibration/kernel_case.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "calibration/detail/kernel_fit.hpp"
#include "sim/cost/kernel_shapes.hpp"

namespace strait::calibration {
namespace {

using sim::cost::KernelKind;
using sim::cost::KernelWork;

// The work sim/cost/kernel_shapes.hpp gives the shape a case records (read back from its
// JSON, as a measurement file keeps it): the formula the simulator builds its ops with.
KernelWork formula_work(const KernelCase& c) {
  const auto& s = c.shape;
  const KernelKind family = *c.family.kernel;
  const bool backward = is_backward(c);
  if (family == KernelKind::kGemm) {
    const KernelWork f = sim::cost::gemm_work(
        {s.at("m").get<double>(), s.at("n").get<double>(), s.at("k").get<double>()}, c.dtype);
    return backward ? sim::cost::gemm_backward_work(f) : f;
  }
  if (sim::cost::is_attention(family)) {
    const auto lengths = s.at("lengths").get<std::vector<int>>();
    const KernelWork f = sim::cost::attention_work(
        sim::cost::attention_shape(lengths, family == KernelKind::kPaddedAttention,
                                   s.at("heads").get<int>(), s.at("head_dim").get<int>()),
        c.dtype);
    return backward ? sim::cost::attention_backward_work(f) : f;
  }
  if (sim::cost::is_embedding(family)) {
    const double tables = s.at("tables").get<int>(), batch = s.at("batch").get<int>(),
                 ids = tables * batch * s.at("pooling").get<int>();
    const double dim = s.at("dim").get<int>(), u = s.value("unique_fraction", 1.0);
    // The suite's update is row-wise AdaGrad: one f32 of state per row.
    return family == KernelKind::kEmbeddingLookup
               ? sim::cost::embedding_lookup_work({ids, tables * batch, dim, u}, c.dtype)
               : sim::cost::embedding_update_work({ids, ids, dim, u}, c.dtype, 4);
  }
  if (family == KernelKind::kElementwise) {
    // The backends copy half the bytes (integer division): the read and the write.
    return sim::cost::copy_work(static_cast<double>(s.at("bytes").get<std::int64_t>() / 2));
  }
  // Adam in fp32: two f32 states per parameter.
  return sim::cost::optimizer_work(static_cast<double>(s.at("params").get<std::int64_t>()), 4, 8);
}

// Every case of both backends' grids (and quick grids) carries exactly the FLOPs and bytes
// the simulator's formula gives its shape, and the fit turns its record into the KernelWork
// the formula gives (same family, work and table keys), for every kernel family.
TEST(KernelCase, EveryCaseCountsTheSimulatorsWorkOfItsShape) {
  std::set<KernelKind> kinds;
  for (const std::string backend : {"cpu", "cuda"}) {
    for (const bool quick : {false, true}) {
      for (KernelCase c : kernel_cases(backend, quick)) {
        // A backend records the unique fraction it drew; an update's work follows it.
        if (c.family.kernel == KernelKind::kEmbeddingUpdate) set_unique_fraction(c, 0.37);
        SCOPED_TRACE(backend + " " + c.shape.dump());
        const KernelWork want = formula_work(c);
        EXPECT_EQ(c.flops, want.flops);
        EXPECT_EQ(c.bytes, want.hbm_bytes);
        const KernelWork fit = detail::work_of(measure(c, {1.0}));
        EXPECT_EQ(fit.kind, want.kind);
        EXPECT_EQ(fit.flops, want.flops);
        EXPECT_EQ(fit.hbm_bytes, want.hbm_bytes);
        EXPECT_EQ(fit.m, want.m);
        EXPECT_EQ(fit.n, want.n);
        EXPECT_EQ(fit.k, want.k);
        EXPECT_EQ(fit.mean_length, want.mean_length);
        EXPECT_EQ(fit.heads, want.heads);
        EXPECT_EQ(fit.head_dim, want.head_dim);
        EXPECT_EQ(fit.tile_factor, want.tile_factor);
        EXPECT_EQ(fit.embedding_dim, want.embedding_dim);
        kinds.insert(fit.kind);
      }
    }
  }
  EXPECT_EQ(kinds.size(), static_cast<std::size_t>(sim::cost::kKernelKindCount));
}

// The measurements the bundled profiles were fitted from (cpu-localhost.json, h200-sxm.json
// and the H100 profile's GEMMs: configs/profiles/*, provenance) were counted with the
// formulas the simulator counts its ops with: a change to one that moves what the fits mean
// fails here.
TEST(KernelCase, TheBundledProfilesMeasurementsCountTheSimulatorsWork) {
  for (const char* file : {"cpu-localhost-measurements.json", "h200-measurements.json"}) {
    const auto set = load_measurements(std::string(STRAIT_SOURCE_DIR) + "/bench/results/" + file);
    int kernels = 0;
    for (const Measurement& m : set.records) {
      if (!m.family.kernel) continue;
      SCOPED_TRACE(std::string(file) + " " + m.label());
      KernelCase c;
      c.family = m.family;
      c.shape = m.shape;
      c.dtype = m.dtype;
      const KernelWork want = formula_work(c);
      EXPECT_EQ(m.flops, want.flops);
      EXPECT_EQ(m.bytes, want.hbm_bytes);
      ++kernels;
    }
    EXPECT_GT(kernels, 100);
  }
}

// Hand-checked cases: a 256 x 64 x 64 fp32 GEMM is 2 m n k = 2,097,152 flops and
// (16384 + 4096 + 16384) x 4 = 147,456 bytes; 4 tables x 256 samples x 8 ids of dim 32 in
// fp32 are 8192 ids: 262,144 flops, 8192 x (128 + 8) + 1024 x 128 = 1,245,184 bytes.
TEST(KernelCase, CasesGiveTheFormulasFigures) {
  const auto g = gemm_case(256, 64, 64, sim::cost::Precision::kFp32);
  EXPECT_EQ(g.flops, 2097152);
  EXPECT_EQ(g.bytes, 147456);
  const auto l = embedding_lookup_case(4, 256, 32, 8, 65536, 0, sim::cost::Precision::kFp32);
  EXPECT_EQ(l.flops, 262144);
  EXPECT_EQ(l.bytes, 1245184);
  EXPECT_EQ(elementwise_case(1 << 20).bytes, 1 << 20);
  EXPECT_EQ(optimizer_case(1000).bytes, 28000);
}

}  // namespace
}  // namespace strait::calibration
