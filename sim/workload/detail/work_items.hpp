#pragma once
// Builders of the dense stack's work items: a GEMM and an elementwise (memory-bound) kernel
// (their work from sim/cost/kernel_shapes.hpp, the one place kernel work is defined), and
// a kernel or a collective as a layer's work item.

#include <cstdint>

#include "sim/cost/kernel_shapes.hpp"
#include "sim/workload/detail/dense_stack.hpp"

namespace strait::sim::workload::detail {

/// `count` GEMMs C[m, n] = A[m, k] B[k, n] as one kernel (cost::gemm_work).
inline Kernel gemm(double m, double n, double k, Precision p, int count = 1) {
  return cost::gemm_work({m, n, k, count}, p);
}

/// A memory-bound kernel (norms, activations, dropout, copies, losses): its flops and bytes.
inline Kernel elementwise(double flops, double bytes, Precision p) {
  return cost::elementwise_work(flops, bytes, p);
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
