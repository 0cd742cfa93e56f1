#pragma once
// CalibrationProfile: one GPU type's device spec plus, per kernel family, how close its
// kernels come to the peaks. The file format is in configs/profiles/README.md.
//
// Per KernelKind there are two efficiencies, each a constant or an EfficiencyTable:
//   compute: fraction of the peak FLOP/s achieved (the table for GEMM and attention);
//   memory:  fraction of the HBM bandwidth achieved (the table for embedding, elementwise
//            and optimizer kernels).
// Table keys, fixed per family (the file names them, the loader checks the name):
//   gemm                     "mnk_cube_root"  (m*n*k)^(1/3): interpolating linearly in its
//                                              log2 is interpolating in log2(m*n*k); the cube
//                                              root just reads as the edge of a square GEMM
//   jagged/padded_attention  "mean_length"    mean sequence length (tokens)
//   embedding_lookup/update  "row_bytes"      embedding_dim * bytes_per_element(precision)
//   elementwise, optimizer   "hbm_bytes"      bytes the kernel moves
// Embedding kinds also carry "repeat_hit_rate" h in [-1, 1]: the fraction of repeated row
// accesses (1 - unique_fraction of them) that the L2 cache serves, so the bytes reaching HBM
// are hbm_bytes * (1 - h * (1 - unique_fraction)). A negative h says repeats cost more
// than the bytes they save: an update kernel that sums a hot row's occurrences in sequence
// (strait's TBE backward on an H200 fits -0.32 from Zipf ids; bench/README.md, "On a GPU").
// Embedding kinds may carry "call_latency" c (default 0): a fixed time per call on top of
// the device's launch overhead, for what a table-batched embedding call does whatever its
// size (index sorting, de-duplication and run-length encoding, the chain of kernels one
// call launches). Fitted as the intercept of time against bytes at one row size
// (`strait calibrate fit`; the H100 profile from the TBE bench at pooling 1 and 20).
// Attention kinds may carry "tile_rows" t (one of kAttentionTiles): the kernel's query tile;
// their compute time is multiplied by the batch's tile-quantization factor at t
// (attention_tile_factors in kernel_work.hpp). Absent: no quantization. In place of one
// compute table they may give one per head dimension ("compute_efficiency_by_head_dim":
// {"64": table, "128": table, ...}); between head dimensions the efficiency is
// interpolated linearly in log2(head_dim), clamped at the ends.
//
// Implementations. A family's tables describe one kernel implementation ("cublas",
// "cutlass-hstu", "strait", ...), named with its own provenance. A family may hold several
// ({"default": name, "implementations": [family object, ...]}); `kernels` holds the ones in
// use (the defaults, or what a plan's "kernels" chose: with_choice), `alternatives` the rest.
// Profiles are estimates until `strait calibrate` refits them; each states its provenance.

#include <array>
#include <string>
#include <utility>
#include <vector>

#include "sim/core/config_node.hpp"
#include "sim/core/error.hpp"
#include "sim/cost/collective_factors.hpp"
#include "sim/cost/device_spec.hpp"
#include "sim/cost/efficiency_table.hpp"
#include "sim/cost/kernel_work.hpp"

namespace strait::sim::cost {

/// A kernel cannot be costed: unknown GPU type, a precision the GPU lacks, or an
/// implementation its profile does not have.
class CostError : public Error {
 public:
  using Error::Error;
};

struct KernelEfficiency {
  EfficiencyTable compute;       // fraction of peak FLOP/s
  EfficiencyTable memory;        // fraction of HBM bandwidth
  double repeat_hit_rate = 0.0;  // embedding kinds only, in [-1, 1]
  Time call_latency;             // embedding kinds only: fixed time per call, see above
  int tile_rows = 0;             // attention kinds only: query tile, 0 = no quantization
  /// The kernel implementation the tables describe ("cublaslt", "strait", "fbgemm-tbe",
  /// "traced", ...): what a job costed with them runs. Empty: not named.
  std::string implementation;
  /// Where this implementation's numbers come from (optional, free text).
  std::string provenance;
  /// Attention kinds only: compute tables per head dimension, sorted by head dimension;
  /// when present they replace `compute` (compute_efficiency, below).
  std::vector<std::pair<int, EfficiencyTable>> compute_by_head_dim;

  /// Fraction of peak FLOP/s at log2 of the family's table key, for kernels of `head_dim`
  /// (used only with per-head-dimension tables).
  double compute_efficiency(double log2_key, int head_dim) const;
};

/// Where a profile's numbers come from ("estimated" from datasheets and published
/// figures, or "fitted" from measurements by `strait calibrate`).
/// Fitted profiles also carry "machine", "date", "versions", "validation" (held-out errors
/// per family) and "records" (measured vs fitted per shape), kept verbatim in `fit`.
struct Provenance {
  std::string status;  // "estimated" | "measured" | "fitted"
  std::string summary;
  std::vector<std::string> sources;  // at least one
  Json fit = Json::object();         // the optional keys above, as read
};

/// The name of the table key of a kernel family ("mnk_cube_root", "mean_length", ...).
const char* table_key_name(KernelKind k);

struct CalibrationProfile {
  std::string file;  // where it was loaded from (for error messages)
  DeviceSpec device;
  Provenance provenance;
  std::array<KernelEfficiency, kKernelKindCount> kernels;  // in use
  /// Per family, the implementations not in use (see "Implementations" above).
  std::array<std::vector<KernelEfficiency>, kKernelKindCount> alternatives;
  CollectiveFactors collectives;  // optional section: fitted communication factors

  const KernelEfficiency& kernel(KernelKind k) const {
    return kernels[static_cast<std::size_t>(k)];
  }

  /// The names of a family's implementations, the one in use first.
  std::vector<std::string> implementations(KernelKind k) const;
  /// Puts implementation `name` of family `k` in use (the one in use joins the
  /// alternatives); CostError naming the profile, the family and what it has, if absent.
  void choose(KernelKind k, const std::string& name);

  /// Reads and validates a whole profile document: every kernel family must be present,
  /// unknown keys are rejected; errors are ConfigErrors with file and JSON pointer.
  static CalibrationProfile from_config(const ConfigNode& root);
};

/// Loads one profile file (IoError if unreadable, ConfigError if invalid).
CalibrationProfile load_profile(const std::string& path);
/// The profile as its file reads (every family, backward attention included; the
/// "collectives" section when present). from_config(to_json(p)) equals p.
Json to_json(const CalibrationProfile& profile);

}  // namespace strait::sim::cost
