// Over 400 lines: the benchmark suite's cases for every backend and family beside the work each
// does, so a case and its counted work stay in step.

#include "calibration/kernel_case.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

#include "sim/core/rng.hpp"
#include "sim/cost/kernel_shapes.hpp"

namespace strait::calibration {
namespace {

using sim::cost::KernelKind;
using sim::cost::Precision;
using sim::network::CollectiveOp;

Family kernel_family(KernelKind k) { return Family{k, std::nullopt}; }

KernelCase with_set(KernelCase c, SampleSet set) {
  c.set = set;
  return c;
}

// Row-wise AdaGrad keeps one f32 state per row (what the suite's TBE update runs); Adam
// in fp32 keeps two per parameter (its optimizer cases).
constexpr double kAdagradStateBytes = 4;
constexpr double kAdamStateBytes = 8;

void add_gemms(std::vector<KernelCase>& out, const std::vector<std::int64_t>& ms,
               const std::vector<std::int64_t>& ns, const std::vector<std::int64_t>& ks,
               Precision p, SampleSet set, bool backward = false) {
  for (auto m : ms)
    for (auto n : ns)
      for (auto k : ks) out.push_back(with_set(gemm_case(m, n, k, p, backward), set));
}

void cpu_cases(std::vector<KernelCase>& out, bool quick) {
  const auto fit = SampleSet::kFit, val = SampleSet::kValidation;
  const Precision f32 = Precision::kFp32;
  // GEMM: the tiny models' MLP and HSTU projections (tokens or samples x 16..512).
  // Their backward (input and weight gradient) on part of the grid.
  if (quick) {
    add_gemms(out, {256}, {64}, {64, 256}, f32, fit);
    add_gemms(out, {512}, {128}, {128}, f32, val);
    add_gemms(out, {256}, {64}, {64}, f32, fit, true);
  } else {
    add_gemms(out, {128, 512, 2048}, {32, 128, 512}, {16, 64, 256}, f32, fit);
    add_gemms(out, {256, 1024}, {64, 256}, {32, 128}, f32, val);
    add_gemms(out, {128, 2048}, {32, 512}, {16, 256}, f32, fit, true);
    add_gemms(out, {512}, {128}, {64}, f32, val, true);
  }
  // HSTU attention: the tiny model's 2 heads x 32 over lognormal histories. The CPU
  // reference skips padding, so padded cases use samples of one length (no padding): the
  // work the simulator counts for a padded kernel is then the work the CPU does.
  using Means = std::vector<double>;
  const Means fit_means = quick ? Means{64} : Means{32, 64, 128, 256};
  const Means val_means = quick ? Means{96} : Means{48, 96, 192};
  std::uint64_t seed = 1;
  for (bool padded : {false, true}) {
    for (const auto& [means, set] : {std::pair{fit_means, fit}, std::pair{val_means, val}}) {
      for (double mean : means) {
        const int max_len = static_cast<int>(std::min(1024.0, 4 * mean));
        const auto lengths = padded ? std::vector<int>(16, static_cast<int>(mean))
                                    : sample_lengths(16, mean, max_len, seed++);
        for (bool backward : {false, true}) {
          out.push_back(with_set(attention_case(padded, backward, lengths, 2, 32, f32), set));
        }
      }
    }
  }
  // Embeddings: 8 tables of 64k rows (the tiny models' shards: 20k-200k rows, 32-171 MB
  // per rank), dims 16..128, pooled.
  struct Tbe {
    int tables, batch, dim, pooling;
    std::int64_t rows;
    double skew;
    SampleSet set;
  };
  std::vector<Tbe> tbes;
  if (quick) {
    tbes = {{4, 256, 32, 8, 65536, 0, fit},
            {4, 256, 64, 8, 65536, 0, fit},
            {4, 256, 48, 8, 65536, 0, val}};
  } else {
    // Row sizes of 1 to 8 cache lines: a CPU lookup is bound by row fetches, whose cost
    // steps with the lines a row spans, so the fit covers each; the held-out shapes change
    // batch, pooling, table count and skew at those row sizes.
    for (int dim : {16, 32, 48, 64, 96, 128}) tbes.push_back({8, 512, dim, 8, 65536, 0, fit});
    for (int dim : {16, 64}) tbes.push_back({8, 512, dim, 8, 65536, 1.1, fit});
    tbes.push_back({8, 256, 32, 12, 65536, 0, val});
    tbes.push_back({8, 256, 96, 12, 65536, 0, val});
    tbes.push_back({4, 1024, 64, 6, 65536, 0, val});
    tbes.push_back({8, 512, 48, 8, 65536, 1.1, val});
  }
  for (const Tbe& t : tbes) {
    out.push_back(with_set(
        embedding_lookup_case(t.tables, t.batch, t.dim, t.pooling, t.rows, t.skew, f32), t.set));
    out.push_back(with_set(
        embedding_update_case(t.tables, t.batch, t.dim, t.pooling, t.rows, t.skew, f32), t.set));
  }
  // Copies and Adam: 16 KiB .. 64 MiB, held out between the grid points.
  const int top = quick ? 20 : 26;
  for (int lg = 14; lg <= top; lg += 2) {
    out.push_back(elementwise_case(std::int64_t{1} << lg));
    out.push_back(optimizer_case((std::int64_t{1} << lg) / 28));
  }
  for (int lg = 15; lg < top; lg += 4) {
    out.push_back(with_set(elementwise_case(std::int64_t{3} << (lg - 1)), val));
    out.push_back(with_set(optimizer_case((std::int64_t{3} << (lg - 1)) / 28), val));
  }
}

void cuda_cases(std::vector<KernelCase>& out, bool quick) {
  const auto fit = SampleSet::kFit, val = SampleSet::kValidation;
  // GEMM: square sizes 256..16384 and the bundled models' projection and MLP shapes.
  const int top = quick ? 2048 : 16384;
  for (Precision p : {Precision::kBf16, Precision::kFp16, Precision::kFp8}) {
    for (std::int64_t s = 256; s <= top; s *= 2) out.push_back(gemm_case(s, s, s, p));
    for (std::int64_t s : {384, 3072}) out.push_back(with_set(gemm_case(s, s, s, p), val));
  }
  if (!quick) {
    add_gemms(out, {32768, 131072}, {1024, 2048}, {256, 512, 1024}, Precision::kBf16, fit);
    add_gemms(out, {65536}, {1536}, {384, 768}, Precision::kBf16, val);
    add_gemms(out, {8192, 65536}, {256, 1024}, {512, 3456}, Precision::kBf16, fit);
  }
  // GEMM backward (input and weight gradient) in bf16: square sizes, then the bundled
  // models' shapes: HSTU projections (tokens x model dim) and DLRM MLP and DCN layers
  // (samples x 256..3456), which run well below the square sizes of the same mnk.
  for (std::int64_t s = 256; s <= top; s *= 2)
    out.push_back(gemm_case(s, s, s, Precision::kBf16, true));
  out.push_back(with_set(gemm_case(3072, 3072, 3072, Precision::kBf16, true), val));
  if (!quick) {
    const Precision bf16 = Precision::kBf16;
    add_gemms(out, {16384, 65536}, {512, 2048}, {512, 1024}, bf16, fit, true);
    add_gemms(out, {8192, 65536}, {256, 1024}, {512, 3456}, bf16, fit, true);
    add_gemms(out, {32768}, {1536}, {768}, bf16, val, true);
    add_gemms(out, {16384}, {512}, {3456}, bf16, val, true);
  }
  // HSTU attention: 4 heads x 128 (hstu-large) and 4 x 64 (hstu-medium), lognormal lengths.
  std::uint64_t seed = 1;
  for (int head_dim : {64, 128}) {
    for (double mean :
         quick ? std::vector<double>{256} : std::vector<double>{128, 256, 512, 1024, 2048, 4096}) {
      const auto lengths = sample_lengths(32, mean, 8192, seed++);
      for (bool backward : {false, true}) {
        out.push_back(attention_case(false, backward, lengths, 4, head_dim, Precision::kBf16));
        out.push_back(attention_case(true, backward, lengths, 4, head_dim, Precision::kBf16));
      }
    }
    for (double mean : quick ? std::vector<double>{} : std::vector<double>{384, 1536}) {
      const auto lengths = sample_lengths(32, mean, 8192, seed++);
      for (bool backward : {false, true}) {
        out.push_back(
            with_set(attention_case(false, backward, lengths, 4, head_dim, Precision::kBf16), val));
      }
    }
  }
  // Embeddings: dims 32..512 in fp32 and fp16 (512: HSTU item tables), pooling 20 and 1
  // (the two sizes per row size give the family's fixed time per call), 1M rows per table.
  for (Precision p : {Precision::kFp32, Precision::kFp16}) {
    for (int dim : {32, 64, 128, 256, 512}) {
      for (int pooling : {20, 1}) {
        out.push_back(embedding_lookup_case(8, 8192, dim, pooling, 1 << 20, 0, p));
        out.push_back(embedding_update_case(8, 8192, dim, pooling, 1 << 20, 0, p));
      }
    }
    // Skewed ids (Zipf 1.1: hot rows), the cache's share of repeated reads.
    for (int dim : {64, 256}) {
      out.push_back(embedding_lookup_case(8, 8192, dim, 20, 1 << 20, 1.1, p));
      out.push_back(embedding_update_case(8, 8192, dim, 20, 1 << 20, 1.1, p));
    }
    out.push_back(with_set(embedding_lookup_case(8, 4096, 96, 30, 1 << 20, 1.1, p), val));
    out.push_back(with_set(embedding_update_case(8, 4096, 96, 30, 1 << 20, 1.1, p), val));
  }
  // Copies and Adam: 64 KiB .. 4 GiB.
  for (int lg = 16; lg <= (quick ? 24 : 32); lg += 2) {
    out.push_back(elementwise_case(std::int64_t{1} << lg));
    out.push_back(optimizer_case((std::int64_t{1} << lg) / 28));
  }
  for (int lg = 19; lg <= (quick ? 23 : 31); lg += 4) {
    out.push_back(with_set(elementwise_case(std::int64_t{3} << (lg - 1)), val));
  }
}

}  // namespace

Measurement measure(const KernelCase& c, const std::vector<double>& samples_us) {
  const Summary s = summarize(samples_us);
  Measurement m;
  m.family = c.family;
  m.shape = c.shape;
  m.dtype = c.dtype;
  m.set = c.set;
  m.flops = c.flops;
  m.bytes = c.bytes;
  m.repetitions = static_cast<int>(samples_us.size());
  m.median_us = s.median_us;
  m.spread = s.spread;
  return m;
}

KernelCase gemm_case(std::int64_t m, std::int64_t n, std::int64_t k, Precision p, bool backward) {
  KernelCase c;
  c.family = kernel_family(KernelKind::kGemm);
  c.shape = {{"m", m}, {"n", n}, {"k", k}};
  if (backward) c.shape["pass"] = "backward";
  c.dtype = p;
  const sim::cost::GemmShape shape{static_cast<double>(m), static_cast<double>(n),
                                   static_cast<double>(k)};
  sim::cost::KernelWork w = sim::cost::gemm_work(shape, p);
  if (backward) w = sim::cost::gemm_backward_work(w);
  c.flops = w.flops;
  c.bytes = w.hbm_bytes;
  return c;
}

std::string implementation_of(const std::string& backend, KernelKind kind) {
  const KernelKind k = sim::cost::forward_kind(kind);
  const bool cuda = backend == "cuda";
  if (backend == "kineto") return "traced";
  if (!cuda && backend != "cpu") return "";
  if (k == KernelKind::kGemm) return cuda ? "cublaslt" : "eigen";
  if (sim::cost::is_attention(k)) return cuda ? "strait" : "strait-cpu-reference";
  if (sim::cost::is_embedding(k)) return cuda ? "strait-tbe" : "strait-cpu-tbe";
  if (k == KernelKind::kElementwise) return cuda ? "cuda-memcpy" : "memcpy";
  return cuda ? "strait-adam" : "strait-cpu-adam";
}

bool is_backward(const KernelCase& c) {
  if (c.family.kernel && *c.family.kernel != sim::cost::forward_kind(*c.family.kernel)) return true;
  const auto it = c.shape.find("pass");
  return it != c.shape.end() && it->is_string() && it->get<std::string>() == "backward";
}

KernelCase attention_case(bool padded, bool backward, const std::vector<int>& lengths, int heads,
                          int head_dim, Precision p) {
  KernelCase c;
  c.family = kernel_family(padded ? KernelKind::kPaddedAttention : KernelKind::kJaggedAttention);
  c.dtype = p;
  const auto shape = sim::cost::attention_shape(lengths, padded, heads, head_dim);
  sim::cost::KernelWork w = sim::cost::attention_work(shape, p);
  if (backward) w = sim::cost::attention_backward_work(w);
  c.flops = w.flops;
  c.bytes = w.hbm_bytes;
  nlohmann::json lens = lengths;
  // The padded kernel computes every sample at the longest length: its table key.
  c.shape = {{"pass", backward ? "backward" : "forward"},
             {"batch", lengths.size()},
             {"heads", heads},
             {"head_dim", head_dim},
             {"max_len", lengths.empty() ? 0 : *std::max_element(lengths.begin(), lengths.end())},
             {"mean_length", shape.mean_length},
             {"lengths", lens}};
  return c;
}

KernelCase embedding_lookup_case(int tables, int batch, int dim, int pooling,
                                 std::int64_t rows_per_table, double id_skew, Precision p) {
  KernelCase c;
  c.family = kernel_family(KernelKind::kEmbeddingLookup);
  c.dtype = p;
  c.id_skew = id_skew;
  c.shape = {{"tables", tables},      {"batch", batch},         {"dim", dim},
             {"pooling", pooling},    {"rows", rows_per_table}, {"id_skew", id_skew},
             {"unique_fraction", 1.0}};
  const double ids = static_cast<double>(tables) * batch * pooling;
  const double out_rows = static_cast<double>(tables) * batch;
  const auto w = sim::cost::embedding_lookup_work({ids, out_rows, static_cast<double>(dim)}, p);
  c.flops = w.flops;
  c.bytes = w.hbm_bytes;
  return c;
}

KernelCase embedding_update_case(int tables, int batch, int dim, int pooling,
                                 std::int64_t rows_per_table, double id_skew, Precision p) {
  KernelCase c = embedding_lookup_case(tables, batch, dim, pooling, rows_per_table, id_skew, p);
  c.family = kernel_family(KernelKind::kEmbeddingUpdate);
  set_unique_fraction(c, 1.0);  // refined by the backend once the ids are drawn
  return c;
}

void set_unique_fraction(KernelCase& c, double unique_fraction) {
  c.shape["unique_fraction"] = unique_fraction;
  // A lookup reads every id's row whatever the repeats (the cache model is the profile's
  // repeat_hit_rate); an update touches each unique row once.
  if (c.family.kernel != KernelKind::kEmbeddingUpdate) return;
  const double ids = static_cast<double>(c.shape.at("tables").get<int>()) *
                     c.shape.at("batch").get<int>() * c.shape.at("pooling").get<int>();
  const double dim = c.shape.at("dim").get<int>();
  const auto w = sim::cost::embedding_update_work({ids, ids, dim, unique_fraction}, c.dtype,
                                                  kAdagradStateBytes);
  c.flops = w.flops;
  c.bytes = w.hbm_bytes;
}

RowSampler::RowSampler(std::int64_t rows, double skew) : rows_(std::max<std::int64_t>(1, rows)) {
  if (skew <= 0) return;
  cdf_.resize(static_cast<std::size_t>(rows_));
  double sum = 0;
  for (std::int64_t r = 0; r < rows_; ++r) {
    sum += std::pow(static_cast<double>(r + 1), -skew);
    cdf_[static_cast<std::size_t>(r)] = sum;
  }
  for (double& x : cdf_) x /= sum;
}

std::int64_t RowSampler::operator()(Rng& rng) const {
  if (cdf_.empty())
    return static_cast<std::int64_t>(rng.uniform_int(static_cast<std::uint64_t>(rows_)));
  const auto row = std::lower_bound(cdf_.begin(), cdf_.end(), rng.uniform()) - cdf_.begin();
  return std::min<std::int64_t>(row, rows_ - 1);
}

TbeInputs make_tbe_inputs(const KernelCase& c, std::uint64_t seed) {
  const int tables = c.shape.at("tables").get<int>(), batch = c.shape.at("batch").get<int>(),
            pooling = c.shape.at("pooling").get<int>();
  const auto rows = c.shape.at("rows").get<std::int64_t>();
  TbeInputs in;
  for (int t = 0; t <= tables; ++t) in.table_row_offsets.push_back(t * rows);
  const RowSampler sample(rows, c.id_skew);
  Rng rng(seed);
  in.offsets.push_back(0);
  for (int t = 0; t < tables; ++t) {
    for (int b = 0; b < batch; ++b) {
      for (int i = 0; i < pooling; ++i) {
        const std::int64_t row = sample(rng);
        in.indices.push_back(row);
      }
      in.offsets.push_back(static_cast<std::int64_t>(in.indices.size()));
    }
  }
  std::vector<std::int64_t> keys(in.indices.size());
  for (std::size_t i = 0; i < keys.size(); ++i) {
    keys[i] = static_cast<std::int64_t>(i / static_cast<std::size_t>(batch * pooling)) * rows +
              in.indices[i];
  }
  std::sort(keys.begin(), keys.end());
  const auto distinct = std::unique(keys.begin(), keys.end()) - keys.begin();
  in.unique_fraction = static_cast<double>(distinct) / static_cast<double>(keys.size());
  return in;
}

KernelCase elementwise_case(std::int64_t bytes) {
  KernelCase c;
  c.family = kernel_family(KernelKind::kElementwise);
  c.dtype = Precision::kFp32;
  c.shape = {{"op", "copy"}, {"bytes", bytes}};
  // `bytes` counts the read and the write: a copy of half of them.
  c.bytes = sim::cost::copy_work(static_cast<double>(bytes) / 2).hbm_bytes;
  return c;
}

KernelCase optimizer_case(std::int64_t params) {
  KernelCase c;
  c.family = kernel_family(KernelKind::kOptimizer);
  c.dtype = Precision::kFp32;
  c.shape = {{"op", "adam"}, {"params", params}};
  const auto w = sim::cost::optimizer_work(static_cast<double>(params), 4, kAdamStateBytes);
  c.flops = w.flops;
  c.bytes = w.hbm_bytes;
  return c;
}

std::vector<std::int64_t> all_to_allv_matrix(int n, std::int64_t bytes) {
  const auto un = static_cast<std::size_t>(n);
  const std::size_t pairs = un * (un + 1) / 2;  // exact: un (un + 1) is even
  const auto total = static_cast<double>(pairs);
  const auto elems = static_cast<double>(std::max<std::int64_t>(bytes / 4, 1));
  std::vector<std::int64_t> out(un * un);
  for (std::size_t i = 0; i < un; ++i) {
    for (std::size_t j = 0; j < un; ++j) {
      const auto share =
          static_cast<std::int64_t>(elems * static_cast<double>(std::min(i, j) + 1) / total);
      out[i * un + j] = 4 * std::max<std::int64_t>(share, 1);
    }
  }
  return out;
}

std::vector<int> sample_lengths(int batch, double mean, int max_len, std::uint64_t seed) {
  Rng rng(seed);
  constexpr double kSigma = 0.6;
  const double mu = std::log(mean) - kSigma * kSigma / 2;
  std::vector<int> out(static_cast<std::size_t>(batch));
  for (int& l : out) {
    l = std::clamp(static_cast<int>(std::lround(rng.lognormal(mu, kSigma))), 1, max_len);
  }
  return out;
}

std::vector<KernelCase> kernel_cases(const std::string& backend, bool quick) {
  std::vector<KernelCase> out;
  if (backend == "cuda") {
    cuda_cases(out, quick);
  } else {
    cpu_cases(out, quick);
  }
  return out;
}

std::vector<CollectiveCase> collective_cases(std::int64_t max_bytes, bool quick) {
  std::vector<CollectiveCase> out;
  const CollectiveOp ops[] = {CollectiveOp::kAllReduce,     CollectiveOp::kAllGather,
                              CollectiveOp::kReduceScatter, CollectiveOp::kAllToAll,
                              CollectiveOp::kAllToAllV,     CollectiveOp::kSendRecv};
  const std::int64_t top = quick ? std::min<std::int64_t>(max_bytes, 1 << 20) : max_bytes;
  for (CollectiveOp op : ops) {
    // 8 B .. top by 2x (fit), as nccl-tests steps, and 1.5x every other fit size (held
    // out): between fit sizes, where the library may change protocol.
    for (std::int64_t s = 8; s <= top; s *= 2) {
      out.push_back({op, s, SampleSet::kFit});
      const bool held = (std::countr_zero(static_cast<std::uint64_t>(s)) % 2) == 1;
      if (held && s * 2 <= top && (!quick || s >= 1024)) {
        out.push_back({op, s + s / 2, SampleSet::kValidation});
      }
    }
  }
  return out;
}

}  // namespace strait::calibration
