#include "sim/cost/gpu_model.hpp"

#include <limits>

namespace strait::sim::cost {

GpuResources GpuModel::add_gpu() {
  GpuResources gpu;
  gpu.sm = fluid_->add_resource(kShare);
  gpu.hbm = fluid_->add_resource(kShare);
  return gpu;
}

engine::ActivityId GpuModel::hold_sms(GpuResources gpu, double fraction) {
  engine::ActivitySpec hold;
  hold.work = std::numeric_limits<double>::infinity();
  hold.priority = kHoldPriority;
  hold.max_rate = fraction;
  const engine::ResourceUse use[] = {{gpu.sm, 1.0}};
  return fluid_->start(std::move(hold), use);
}

}  // namespace strait::sim::cost
