#pragma once
// Builders of the dense stack's work items: a GEMM, an elementwise (memory-bound) kernel,
// the backward of a forward kernel, and a collective inside a layer. Formulas next to each.

#include <cstdint>

#include "sim/workload/detail/dense_stack.hpp"

namespace strait::sim::workload::detail {

/// C[m, n] = A[m, k] B[k, n]: 2 m n k flops, (m k + k n + m n) e bytes.
inline Kernel gemm(double m, double n, double k, Precision p) {
  Kernel g;
  g.kind = KernelKind::kGemm;
  g.precision = p;
  g.m = static_cast<std::int64_t>(m);
  g.n = static_cast<std::int64_t>(n);
  g.k = static_cast<std::int64_t>(k);
  g.flops = 2 * m * n * k;
  g.hbm_bytes = (m * k + k * n + m * n) * bytes_per_element(p);
  return g;
}

/// A memory-bound kernel (norms, activations, dropout, copies, losses): its flops and bytes.
inline Kernel elementwise(double flops, double bytes, Precision p) {
  Kernel e;
  e.kind = KernelKind::kElementwise;
  e.precision = p;
  e.flops = flops;
  e.hbm_bytes = bytes;
  return e;
}

/// Backward of a forward kernel: `flop_factor` x flops, 2x bytes, same shape, costed as
/// its family's backward (GEMM and attention have their own; sim/cost's backward_kind).
inline Kernel backward_of(Kernel k, double flop_factor) {
  k.kind = cost::backward_kind(k.kind);
  k.flops *= flop_factor;
  k.hbm_bytes *= 2;
  return k;
}

inline WorkItem kernel_item(std::int32_t name, const Kernel& k) {
  WorkItem w;
  w.name = name;
  w.kernel = k;
  return w;
}

inline WorkItem comm_item(std::int32_t name, network::CollectiveOp op, CommClass c, CommGroup g,
                          double bytes) {
  WorkItem w;
  w.name = name;
  w.is_comm = true;
  w.op = op;
  w.comm_class = c;
  w.group = g;
  w.bytes = static_cast<Bytes>(bytes);
  return w;
}

}  // namespace strait::sim::workload::detail
