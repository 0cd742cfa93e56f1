#include "sim/cost/kernel_work.hpp"

#include <array>
#include <cmath>

namespace strait::sim::cost {
namespace {

constexpr std::array<const char*, kPrecisionCount> kPrecisionNames = {"fp32", "tf32", "bf16",
                                                                      "fp16", "fp8"};
constexpr std::array<const char*, kKernelKindCount> kKindNames = {"gemm",
                                                                  "jagged_attention",
                                                                  "padded_attention",
                                                                  "embedding_lookup",
                                                                  "embedding_update",
                                                                  "elementwise",
                                                                  "optimizer",
                                                                  "jagged_attention_backward",
                                                                  "padded_attention_backward",
                                                                  "gemm_backward"};

}  // namespace

const char* to_string(Precision p) { return kPrecisionNames[static_cast<std::size_t>(p)]; }

std::optional<Precision> parse_precision(std::string_view text) {
  for (std::size_t i = 0; i < kPrecisionNames.size(); ++i) {
    if (text == kPrecisionNames[i]) return static_cast<Precision>(i);
  }
  return std::nullopt;
}

int bytes_per_element(Precision p) {
  switch (p) {
    case Precision::kFp32:
    case Precision::kTf32:
      return 4;
    case Precision::kBf16:
    case Precision::kFp16:
      return 2;
    case Precision::kFp8:
      return 1;
  }
  return 4;
}

const char* to_string(KernelKind k) { return kKindNames[static_cast<std::size_t>(k)]; }

std::optional<KernelKind> parse_kernel_kind(std::string_view text) {
  for (std::size_t i = 0; i < kKindNames.size(); ++i) {
    if (text == kKindNames[i]) return static_cast<KernelKind>(i);
  }
  return std::nullopt;
}

bool uses_tensor_cores(KernelKind k) {
  return forward_kind(k) == KernelKind::kGemm || forward_kind(k) == KernelKind::kJaggedAttention ||
         forward_kind(k) == KernelKind::kPaddedAttention;
}

bool is_attention(KernelKind k) {
  return forward_kind(k) == KernelKind::kJaggedAttention ||
         forward_kind(k) == KernelKind::kPaddedAttention;
}

bool is_embedding(KernelKind k) {
  return k == KernelKind::kEmbeddingLookup || k == KernelKind::kEmbeddingUpdate;
}

KernelKind backward_kind(KernelKind k) {
  if (k == KernelKind::kGemm) return KernelKind::kGemmBackward;
  if (k == KernelKind::kJaggedAttention) return KernelKind::kJaggedAttentionBackward;
  if (k == KernelKind::kPaddedAttention) return KernelKind::kPaddedAttentionBackward;
  return k;
}

int attention_tile_index(int tile) {
  for (std::size_t i = 0; i < kAttentionTiles.size(); ++i) {
    if (kAttentionTiles[i] == tile) return static_cast<int>(i);
  }
  return -1;
}

std::array<double, kAttentionTileCount> attention_tile_factors(
    std::span<const std::int32_t> lengths) {
  std::array<double, kAttentionTileCount> out{};
  for (std::size_t i = 0; i < kAttentionTiles.size(); ++i) {
    const double t = kAttentionTiles[i];
    double computed = 0, reference = 0;
    for (const std::int32_t l : lengths) {
      const double n = std::ceil(l / t), x = l;
      computed += t * t * n * (n + 1) / 2;
      reference += x * (x + t) / 2;
    }
    out[i] = reference > 0 ? computed / reference : 1.0;
  }
  return out;
}

KernelKind forward_kind(KernelKind k) {
  if (k == KernelKind::kGemmBackward) return KernelKind::kGemm;
  if (k == KernelKind::kJaggedAttentionBackward) return KernelKind::kJaggedAttention;
  if (k == KernelKind::kPaddedAttentionBackward) return KernelKind::kPaddedAttention;
  return k;
}

}  // namespace strait::sim::cost
