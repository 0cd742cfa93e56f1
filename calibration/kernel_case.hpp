#pragma once
// KernelCase and CollectiveCase: what the benchmark suite measures, and the work each
// kernel does, counted by sim/cost/kernel_shapes.hpp's formulas, the ones the simulator
// builds its ops with, so a fitted efficiency means the same thing to the cost model as to
// the benchmark. The cases' shapes: a GEMM of m x n x k (its backward: the input and
// weight gradient); attention over whole sequences (heads of head_dim for Q, K, U and V,
// fused); an embedding lookup of tables x batch x pooling ids into tables x batch bags, its
// update with row-wise AdaGrad (one f32 state per row); a copy (its bytes count the read
// and the write); Adam in fp32.
// The grid covers the bundled models' shapes on each backend: the tiny CPU models
// (configs/models/*-tiny.json) for "cpu", the full-size ones for "cuda"; a held-out set of
// other shapes (`SampleSet::kValidation`) lies between and beside the grid points.

#include <cstdint>
#include <string>
#include <vector>

#include "calibration/measurement.hpp"
#include "sim/core/rng.hpp"

namespace strait::calibration {

struct KernelCase {
  Family family;
  nlohmann::json shape;  // as in Measurement::shape
  sim::cost::Precision dtype = sim::cost::Precision::kFp32;
  SampleSet set = SampleSet::kFit;
  double flops = 0;
  double bytes = 0;
  /// Embedding cases: ids drawn uniformly (0) or Zipf with this exponent.
  double id_skew = 0;
};

struct CollectiveCase {
  sim::network::CollectiveOp op = sim::network::CollectiveOp::kAllReduce;
  std::int64_t bytes = 0;  // nccl-tests size convention
  SampleSet set = SampleSet::kFit;
};

/// The record of `c` timed as `samples_us` (not empty): family, shape, dtype, set and work
/// from the case, repetitions, median and spread from the samples. Device, versions, date
/// and warm-up are the caller's to set.
Measurement measure(const KernelCase& c, const std::vector<double>& samples_us);

/// The kernel implementation a backend's records of family `kind` time, as profiles name
/// it: "cuda": cuBLASLt GEMMs ("cublaslt"), strait's attention ("strait") and TBE
/// ("strait-tbe"), device copies ("cuda-memcpy"), strait's Adam ("strait-adam"); "cpu":
/// "eigen", "strait-cpu-reference", "strait-cpu-tbe", "memcpy", "strait-cpu-adam"; "kineto"
/// (a production job's trace): "traced". Empty for any other backend.
std::string implementation_of(const std::string& backend, sim::cost::KernelKind kind);

/// True for a case that times a backward pass: a backward family, or shape "pass":
/// "backward" (GEMM, attention).
bool is_backward(const KernelCase& c);

/// Cases for `backend` ("cpu" or "cuda"). `quick` keeps a few shapes per family (tests).
std::vector<KernelCase> kernel_cases(const std::string& backend, bool quick);
/// Collective sizes 8 B .. `max_bytes` by factors of 2 (fit) with held-out sizes 1.5x
/// every other fit size (validation), for all-reduce, all-gather, reduce-scatter,
/// all-to-all, all-to-all-v and send/recv.
std::vector<CollectiveCase> collective_cases(std::int64_t max_bytes, bool quick);

// One case per family, its work from sim/cost/kernel_shapes.hpp.
/// A GEMM of a linear layer's shape, forward or (`backward`, shape "pass": "backward") its
/// input and weight gradient.
KernelCase gemm_case(std::int64_t m, std::int64_t n, std::int64_t k, sim::cost::Precision p,
                     bool backward = false);
/// Jagged or padded HSTU attention over `lengths` (tokens per sample), one pass.
KernelCase attention_case(bool padded, bool backward, const std::vector<int>& lengths, int heads,
                          int head_dim, sim::cost::Precision p);
KernelCase embedding_lookup_case(int tables, int batch, int dim, int pooling,
                                 std::int64_t rows_per_table, double id_skew,
                                 sim::cost::Precision p);
/// `unique_fraction` of the ids are distinct rows (measured by the backend; 1 = estimate).
KernelCase embedding_update_case(int tables, int batch, int dim, int pooling,
                                 std::int64_t rows_per_table, double id_skew,
                                 sim::cost::Precision p);
KernelCase elementwise_case(std::int64_t bytes);
KernelCase optimizer_case(std::int64_t params);

/// Table rows for embedding ids: uniform over [0, rows) (skew 0) or Zipf(skew) with rank 1
/// = row 0 (P(row r) ~ (r + 1)^-skew), by inverse CDF.
class RowSampler {
 public:
  RowSampler(std::int64_t rows, double skew);
  std::int64_t operator()(Rng& rng) const;

 private:
  std::int64_t rows_;
  std::vector<double> cdf_;  // empty: uniform
};

/// Inputs of an embedding case, as kernels/tbe.hpp takes them: ids uniform over each
/// table's rows, or Zipf(id_skew) (rank 1 = row 0), deterministic for `seed`.
struct TbeInputs {
  std::vector<std::int64_t> table_row_offsets;  // [tables + 1]
  std::vector<std::int64_t> indices;            // [tables * batch * pooling]
  std::vector<std::int64_t> offsets;            // [tables * batch + 1]
  double unique_fraction = 1;                   // distinct (table, row) pairs / ids
};
TbeInputs make_tbe_inputs(const KernelCase& c, std::uint64_t seed);
/// Records an embedding case's measured unique fraction; an update's work follows it.
void set_unique_fraction(KernelCase& c, double unique_fraction);

/// Bytes rank i sends to rank j in an all-to-all-v case of `bytes` per rank (row-major
/// [i * n + j]): peer j gets a share proportional to min(i, j) + 1, at least 4 bytes, so
/// sizes differ per pair but each pair's two directions match.
std::vector<std::int64_t> all_to_allv_matrix(int n, std::int64_t bytes);

/// Sequence lengths of `batch` samples from a lognormal with `mean` (capped at `max_len`),
/// deterministic for `seed`.
std::vector<int> sample_lengths(int batch, double mean, int max_len, std::uint64_t seed);

}  // namespace strait::calibration
