#include "sim/cost/kernel_shapes.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "sim/core/error.hpp"

namespace strait::sim::cost {
namespace {

double causal_pairs(double length) { return length * (length + 1) / 2; }

}  // namespace

KernelWork gemm_work(const GemmShape& s, Precision p) {
  KernelWork w;
  w.kind = KernelKind::kGemm;
  w.precision = p;
  w.m = static_cast<std::int64_t>(s.m);
  w.n = static_cast<std::int64_t>(s.n);
  w.k = static_cast<std::int64_t>(s.k);
  const double count = s.count;
  w.flops = count * (2 * s.m * s.n * s.k);
  w.hbm_bytes = count * ((s.m * s.k + s.k * s.n + s.m * s.n) * bytes_per_element(p));
  return w;
}

KernelWork gemm_backward_work(const KernelWork& forward) {
  KernelWork w = forward;
  w.kind = backward_kind(forward.kind);
  w.flops *= 2;
  w.hbm_bytes *= 2;
  return w;
}

GemmShape gemm_shape(const KernelWork& w) {
  const bool backward = w.kind == KernelKind::kGemmBackward;
  GemmShape s{static_cast<double>(w.m), static_cast<double>(w.n), static_cast<double>(w.k), 1};
  const double one = (backward ? 4.0 : 2.0) * s.m * s.n * s.k;
  const double runs = one > 0 ? w.flops / one : 0;
  if (runs < 0.5 || std::abs(runs - std::round(runs)) > 1e-6 * runs)
    throw Error(fmt::format("a {} op of {} x {} x {} with {} flops is not a whole number of {}",
                            to_string(w.kind), w.m, w.n, w.k, w.flops,
                            backward ? "input and weight gradient pairs" : "GEMMs"));
  s.count = static_cast<int>(std::lround(runs));
  return s;
}

AttentionShape attention_shape(std::span<const int> lengths, bool padded, int heads, int head_dim) {
  AttentionShape s;
  s.padded = padded;
  s.heads = heads;
  s.qk_dim = head_dim;
  s.v_dim = head_dim;
  double tokens = 0, pairs = 0, squares = 0;
  int max_len = 0;
  for (const int l : lengths) {
    tokens += l;
    pairs += causal_pairs(l);
    squares += static_cast<double>(l) * l;
    max_len = std::max(max_len, l);
  }
  const auto batch = static_cast<double>(lengths.size());
  if (padded) {
    pairs = batch * causal_pairs(max_len);
    squares = batch * max_len * max_len;
  }
  s.tokens = padded ? batch * max_len : tokens;
  s.pairs = pairs;
  s.scores = squares;
  s.mean_length = padded ? static_cast<double>(max_len) : (batch > 0 ? tokens / batch : 0);
  const int longest[] = {max_len};
  if (!lengths.empty())
    s.tile_factor = attention_tile_factors(padded ? std::span<const int>(longest) : lengths);
  return s;
}

KernelWork attention_work(const AttentionShape& s, Precision p) {
  KernelWork w;
  w.kind = s.padded ? KernelKind::kPaddedAttention : KernelKind::kJaggedAttention;
  w.precision = p;
  const double e = bytes_per_element(p);
  const double h = s.heads, dqk = s.qk_dim, dv = s.v_dim;
  w.flops = 2 * h * (dqk + dv) * s.pairs;
  // Q, K, V, U read and the output written for every touched token; unfused, the scores
  // are written and read back per head, and the bias matrix read.
  w.hbm_bytes = s.tokens * h * (2 * dqk + 2 * dv) * e + s.tokens * h * dv * e;
  if (!s.fused) w.hbm_bytes += 2 * s.scores * h * e + (s.relative_bias ? s.scores * e : 0);
  w.mean_length = s.mean_length;
  w.tile_factor = s.tile_factor;
  w.heads = s.heads;
  w.head_dim = s.qk_dim;
  return w;
}

KernelWork attention_backward_work(const KernelWork& forward) {
  KernelWork w = forward;
  w.kind = backward_kind(forward.kind);
  w.flops *= 2.5;
  w.hbm_bytes *= 2;
  return w;
}

AttentionBatch attention_batch(const KernelWork& w) {
  const bool padded = forward_kind(w.kind) == KernelKind::kPaddedAttention;
  AttentionBatch b;
  b.length = std::max(1, static_cast<int>(std::lround(w.mean_length)));
  b.batch = 1;
  const int one_sample[] = {b.length};
  KernelWork one =
      attention_work(attention_shape(one_sample, padded, w.heads, w.head_dim), Precision::kFp32);
  if (w.kind != forward_kind(w.kind)) one = attention_backward_work(one);
  if (one.flops > 0) b.batch = std::max(1, static_cast<int>(std::lround(w.flops / one.flops)));
  return b;
}

KernelWork embedding_lookup_work(const EmbeddingShape& s, Precision p) {
  KernelWork w;
  w.kind = KernelKind::kEmbeddingLookup;
  w.precision = p;
  const double e = bytes_per_element(p);
  w.flops = s.ids * s.dim;
  w.hbm_bytes = s.ids * (s.dim * e + kIdBytes) + s.out_rows * s.dim * e;
  w.embedding_dim = static_cast<int>(std::lround(s.dim));
  w.unique_fraction = s.unique_fraction;
  return w;
}

KernelWork embedding_update_work(const EmbeddingShape& s, Precision p, double state_bytes_per_row) {
  KernelWork w;
  w.kind = KernelKind::kEmbeddingUpdate;
  w.precision = p;
  const double e = bytes_per_element(p);
  const double unique = s.ids * s.unique_fraction;
  w.flops = s.ids * s.dim + 4 * unique * s.dim;
  w.hbm_bytes = s.ids * s.dim * e + 2 * unique * s.dim * e + 2 * (unique * state_bytes_per_row);
  w.embedding_dim = static_cast<int>(std::lround(s.dim));
  w.unique_fraction = s.unique_fraction;
  return w;
}

void EmbeddingOpWork::add(const EmbeddingShape& s, double state_bytes_per_row) {
  const KernelWork w = kind_ == KernelKind::kEmbeddingUpdate
                           ? embedding_update_work(s, precision_, state_bytes_per_row)
                           : embedding_lookup_work(s, precision_);
  ids_ += s.ids;
  width_ids_ += s.ids * s.dim;
  unique_ += s.ids * s.unique_fraction;
  flops_ += w.flops;
  bytes_ += w.hbm_bytes;
}

KernelWork EmbeddingOpWork::work() const {
  KernelWork w;
  w.kind = kind_;
  w.precision = precision_;
  w.flops = flops_;
  w.hbm_bytes = bytes_;
  w.embedding_dim = ids_ > 0 ? static_cast<int>(std::lround(width_ids_ / ids_)) : 0;
  w.unique_fraction = ids_ > 0 ? unique_ / ids_ : 1.0;
  return w;
}

EmbeddingShape embedding_shape(const KernelWork& w) {
  EmbeddingShape s;
  s.dim = w.embedding_dim;
  s.unique_fraction = w.unique_fraction;
  if (w.flops <= 0 || w.embedding_dim <= 0) return s;
  const double d = w.embedding_dim;
  const bool update = w.kind == KernelKind::kEmbeddingUpdate;
  const double per_id = update ? d * (1 + 4 * w.unique_fraction) : d;
  const auto ids = std::max<std::int64_t>(1, std::llround(w.flops / per_id));
  s.ids = static_cast<double>(ids);
  if (update) {
    s.out_rows = s.ids;
    return s;
  }
  const double e = bytes_per_element(w.precision);
  const double out_rows = (w.hbm_bytes - s.ids * (d * e + kIdBytes)) / (d * e);
  s.out_rows = static_cast<double>(std::clamp<std::int64_t>(std::llround(out_rows), 1, ids));
  return s;
}

KernelWork elementwise_work(double flops, double bytes, Precision p) {
  KernelWork w;
  w.kind = KernelKind::kElementwise;
  w.precision = p;
  w.flops = flops;
  w.hbm_bytes = bytes;
  return w;
}

KernelWork elementwise_backward_work(const KernelWork& forward, double flop_factor) {
  KernelWork w = forward;
  w.flops *= flop_factor;
  w.hbm_bytes *= 2;
  return w;
}

KernelWork copy_work(double bytes) { return elementwise_work(0, 2 * bytes, Precision::kFp32); }

std::int64_t elementwise_copy_bytes(const KernelWork& w) {
  return std::max<std::int64_t>(0, std::llround(w.hbm_bytes / 2));
}

KernelWork optimizer_work(double params, double param_bytes, double state_bytes) {
  KernelWork w;
  w.kind = KernelKind::kOptimizer;
  w.precision = Precision::kFp32;
  w.flops = 10 * params;
  w.hbm_bytes = params * (3 * param_bytes + 2 * state_bytes);
  return w;
}

std::int64_t optimizer_params(const KernelWork& w) {
  return std::max<std::int64_t>(0, std::llround(w.flops / 10));
}

}  // namespace strait::sim::cost
