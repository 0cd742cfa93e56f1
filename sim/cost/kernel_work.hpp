#pragma once
// KernelWork: what the cost model needs to know about one GPU kernel.
//
// The workload layer (sim/workload) builds these for every kernel op; the cost layer turns
// them into time and into SM and HBM use (see cost_model.hpp). The enums live here, in the
// lower layer, so that the workload layer can use them without the cost layer depending on
// it. Every field is in plain units: FLOPs, bytes, elements.

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace strait::sim::cost {

/// Numeric precision a kernel computes in; picks the peak FLOP/s of the device.
enum class Precision { kFp32, kTf32, kBf16, kFp16, kFp8 };
inline constexpr int kPrecisionCount = 5;

/// "fp32", "tf32", "bf16", "fp16", "fp8" (the names profile files use).
const char* to_string(Precision p);
/// The inverse of to_string; nullopt for any other text.
std::optional<Precision> parse_precision(std::string_view text);
/// Bytes of one element in memory: 4 (fp32, tf32), 2 (bf16, fp16), 1 (fp8).
int bytes_per_element(Precision p);

/// Kernel families the cost model knows; each has its own efficiency table.
enum class KernelKind {
  kGemm,                     // dense matmul (MLP, HSTU linear layers, DCN, MoE experts)
  kJaggedAttention,          // HSTU attention on the jagged layout
  kPaddedAttention,          // the same on [batch, max_len] padding
  kEmbeddingLookup,          // table-batched embedding forward
  kEmbeddingUpdate,          // embedding backward fused with the optimizer
  kElementwise,              // norms, activations, interaction, loss, copies, jagged<->padded
  kOptimizer,                // dense optimizer step (Adam, AdaGrad)
  kJaggedAttentionBackward,  // its backward (dQ, dK, dV): its own efficiency
  kPaddedAttentionBackward,
  kGemmBackward,  // a GEMM's backward: input and weight gradient, its own efficiency
};
inline constexpr int kKernelKindCount = 10;

/// "gemm", "jagged_attention", "padded_attention", "embedding_lookup", "embedding_update",
/// "elementwise", "optimizer", "jagged_attention_backward", "padded_attention_backward",
/// "gemm_backward" (the names profile files use).
const char* to_string(KernelKind k);
/// The inverse of to_string; nullopt for any other text.
std::optional<KernelKind> parse_kernel_kind(std::string_view text);
/// A plan's choice of kernel implementation per family (family -> implementation name,
/// as profiles name them; calibration_profile.hpp).
using KernelChoice = std::map<KernelKind, std::string>;

/// True for the families that run on tensor cores (GEMM, attention): their FLOPs are costed
/// at the peak of their precision; the others run on CUDA cores, costed at the fp32 peak.
bool uses_tensor_cores(KernelKind k);
/// True for the four attention families (jagged, padded; forward, backward).
bool is_attention(KernelKind k);
/// True for embedding lookup and update (their bytes follow the profile's repeat_hit_rate).
bool is_embedding(KernelKind k);
/// The backward family of GEMM or a forward attention family (others: itself).
KernelKind backward_kind(KernelKind k);
/// The forward family of a backward GEMM or attention family (others: itself).
KernelKind forward_kind(KernelKind k);

/// Query-tile sizes (query rows per thread block) an attention kernel may use; a profile's
/// attention families name one as their "tile_rows".
inline constexpr std::array<int, 5> kAttentionTiles = {16, 32, 64, 128, 256};
inline constexpr int kAttentionTileCount = 5;
/// Index of `tile` in kAttentionTiles, or -1.
int attention_tile_index(int tile);
/// Tile quantization of causal attention over sequences of `lengths`, per tile t of
/// kAttentionTiles: a kernel with t x t tiles computes t^2 n (n + 1) / 2 pairs of a sequence
/// of length L (n = ceil(L / t), the diagonal tiles in full), which for L a multiple of t is
/// L (L + t) / 2. The factor is sum t^2 n (n + 1) / 2 over sum L (L + t) / 2: 1 when every
/// length is a multiple of t (what efficiency tables measured at such lengths include
/// already), above 1 for ragged ends (L = t + 1 costs 3 tiles instead of 1). 1 when empty.
std::array<double, kAttentionTileCount> attention_tile_factors(
    std::span<const std::int32_t> lengths);

struct KernelWork {
  KernelKind kind = KernelKind::kElementwise;
  Precision precision = Precision::kBf16;
  double flops = 0;      // floating-point operations (a multiply-add counts 2)
  double hbm_bytes = 0;  // bytes read + written in HBM, every embedding row access counted
  // Family-specific shape, the keys of the efficiency tables:
  std::int64_t m = 0, n = 0, k = 0;  // GEMM (batched GEMMs: m covers the batch)
  double mean_length = 0;            // attention: mean sequence length
  int heads = 0, head_dim = 0;       // attention (not a table key yet)
  // Attention: attention_tile_factors of the batch's lengths (all 1: no quantization).
  std::array<double, kAttentionTileCount> tile_factor = {1, 1, 1, 1, 1};
  int embedding_dim = 0;         // embedding lookup/update: row length in elements
  double unique_fraction = 1.0;  // embedding: unique rows / rows looked up, in (0, 1]

  bool operator==(const KernelWork&) const = default;
};

}  // namespace strait::sim::cost
