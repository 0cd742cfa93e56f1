#pragma once
// GpuModel: SM and HBM contention on a GPU in flow mode, on the engine's fluid model (the
// GPU's counterpart of the flow network's links).
//
// Each GPU has two fluid resources of capacity kShare = 1.0, both in "fraction of the
// device per second": `sm` (compute throughput) and `hbm` (bandwidth). A kernel
// (FlowKernel, from its CostModel cost) waits its launch overhead, using nothing, then is
// an activity of work 1.0 with coefficients {sm: compute_seconds, hbm: memory_seconds}.
// Alone it runs at rate 1 / max(compute_seconds, memory_seconds): the roofline exactly
// (end_alone). Concurrent kernels share both resources by max-min, so two memory-bound
// kernels split HBM bandwidth and a compute-bound one beside a memory-bound one barely
// slows it.
// SM contention. While an SM-based collective is in flight, each member GPU holds an
// activity on `sm` at a higher priority than kernels, capped at max_rate =
// CostModel::comm_sm_fraction (NCCL's SMs / all SMs) (hold_sms); compute kernels share
// what is left. SM-free (copy-engine) collectives hold none.
// Known limits: a kernel too small to fill the GPU still claims all of it when alone; no
// L2 sharing between kernels.

#include <utility>

#include "sim/core/units.hpp"
#include "sim/cost/cost_model.hpp"
#include "sim/engine/fluid_model.hpp"

namespace strait::sim::cost {

/// A kernel as flow mode runs it: after launch_overhead, an activity of work 1.0 on its
/// GPU's SMs (coefficient compute_seconds) and HBM (coefficient memory_seconds).
struct FlowKernel {
  double compute_seconds = 0;
  double memory_seconds = 0;
  Time launch_overhead;
};

/// The flow kernel of a kernel that costs `c`.
inline FlowKernel flow_kernel(const KernelCost& c) {
  return {c.compute_seconds, c.memory_seconds, c.launch_overhead};
}

/// A GPU's two resources in the fluid model.
struct GpuResources {
  engine::ResourceId sm;
  engine::ResourceId hbm;
};

class GpuModel {
 public:
  /// The capacity of a GPU's SMs and of its HBM: a kernel's coefficients on them are its
  /// seconds alone, so alone it takes them whole.
  static constexpr double kShare = 1.0;
  /// Priorities: NCCL's SM hold is served before the kernels.
  static constexpr int kHoldPriority = 0;
  static constexpr int kKernelPriority = 1;

  explicit GpuModel(engine::FluidModel& fluid) : fluid_(&fluid) {}

  /// Adds a GPU: its SMs and its HBM, each a resource of capacity kShare.
  GpuResources add_gpu();
  /// Whether nothing uses `gpu`'s SMs or HBM (a kernel starting now runs at its bound).
  bool idle(GpuResources gpu) const {
    return fluid_->users(gpu.sm) == 0 && fluid_->users(gpu.hbm) == 0;
  }
  /// A hint: `gpu`'s resources are about to be used, so fetch them into cache.
  void prefetch(GpuResources gpu) const {
    fluid_->prefetch(gpu.sm);
    fluid_->prefetch(gpu.hbm);
  }
  /// Kernel `k`, its launch overhead over, as an activity on `gpu`, started `now`, or
  /// (`since` before now) one that has run alone there since `since` (its rate and
  /// predicted end those it had then: FluidModel::start_since). `on_done` runs at its end;
  /// `touches` is the memory it reads first.
  template <class OnDone>
  engine::ActivityId start_kernel(GpuResources gpu, const FlowKernel& k, OnDone&& on_done,
                                  engine::Touches touches, Time since, Time now) {
    const engine::ResourceUse uses[] = {{gpu.sm, k.compute_seconds}, {gpu.hbm, k.memory_seconds}};
    engine::ActivitySpec spec;
    spec.work = 1.0;
    spec.priority = kKernelPriority;
    spec.on_done = std::forward<OnDone>(on_done);
    spec.touches = touches;
    if (since < now) return fluid_->start_since(std::move(spec), uses, since);
    return fluid_->start(std::move(spec), uses);
  }
  /// NCCL's SM hold while a collective runs on `gpu`: an activity on its SMs with no end,
  /// at kHoldPriority, capped at `fraction` of them (CostModel::comm_sm_fraction, > 0).
  /// It lasts until release().
  engine::ActivityId hold_sms(GpuResources gpu, double fraction);
  /// Ends a hold.
  void release(engine::ActivityId hold) { fluid_->cancel(hold); }
  /// When kernel `k`, reached by its stream at `launched`, ends if it has its GPU to itself:
  /// its launch overhead, then its bound, with the engine's arithmetic on the capacities
  /// add_gpu gives (FluidModel::finish_alone); no resource is read.
  static Time end_alone(const FlowKernel& k, Time launched) {
    const engine::FluidModel::CapacityUse uses[] = {{kShare, k.compute_seconds},
                                                    {kShare, k.memory_seconds}};
    return engine::FluidModel::finish_alone(1.0, uses, launched + k.launch_overhead);
  }

 private:
  engine::FluidModel* fluid_;
};

}  // namespace strait::sim::cost
