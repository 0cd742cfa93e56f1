#include "sim/cost/gpu_model.hpp"

#include <gtest/gtest.h>

#include "sim/engine/simulator.hpp"

namespace strait::sim::cost {
namespace {

Time us(double t) { return Time::from_us(t); }

// One GPU of a GpuModel on a simulator, and when each of its kernels ended.
struct OneGpu {
  engine::Simulator sim;
  GpuModel model{sim.fluid()};
  GpuResources gpu = model.add_gpu();
  std::vector<Time> ends;

  // Kernel k reached by its stream now: its launch overhead, then an activity.
  void launch(const FlowKernel& k) {
    sim.after(k.launch_overhead, [this, k] {
      model.start_kernel(
          gpu, k, [this] { ends.push_back(sim.now()); }, {}, sim.now(), sim.now());
    });
  }
};

// A flow kernel is its cost's compute and memory seconds and launch overhead.
TEST(GpuModel, AFlowKernelTakesItsCostsSecondsAndLaunchOverhead) {
  KernelCost c;
  c.compute_seconds = 3e-6;
  c.hbm_bytes = 1e6;
  c.memory_seconds = 2e-6;
  c.launch_overhead = us(1);
  const FlowKernel k = flow_kernel(c);
  EXPECT_EQ(k.compute_seconds, 3e-6);
  EXPECT_EQ(k.memory_seconds, 2e-6);
  EXPECT_EQ(k.launch_overhead, us(1));
}

// A kernel of 3 us of compute and 2 us of memory traffic after a 1 us launch, alone on its
// GPU: it ends at its roofline, 1 + max(3, 2) = 4 us after its stream reached it, in the
// engine and by end_alone's arithmetic alike (at 0 and at 10 us).
TEST(GpuModel, AKernelAloneEndsAtItsRooflineAsEndAloneSays) {
  const FlowKernel k{3e-6, 2e-6, us(1)};
  EXPECT_EQ(GpuModel::end_alone(k, us(0)), us(4));
  EXPECT_EQ(GpuModel::end_alone(k, us(10)), us(14));
  OneGpu g;
  EXPECT_TRUE(g.model.idle(g.gpu));
  g.launch(k);
  g.sim.run();
  ASSERT_EQ(g.ends.size(), 1u);
  EXPECT_EQ(g.ends[0], GpuModel::end_alone(k, us(0)));
}

// Two memory-bound kernels (1 us compute, 2 us memory, no launch) share HBM by max-min:
// each moves at half the bandwidth, so both end at 4 us; the GPU is busy while they run.
TEST(GpuModel, TwoMemoryBoundKernelsSplitHbmBandwidth) {
  const FlowKernel k{1e-6, 2e-6, Time::zero()};
  OneGpu g;
  g.launch(k);
  g.launch(k);
  g.sim.at(us(1), [&] { EXPECT_FALSE(g.model.idle(g.gpu)); });
  g.sim.run();
  ASSERT_EQ(g.ends.size(), 2u);
  EXPECT_EQ(g.ends[0], us(4));
  EXPECT_EQ(g.ends[1], us(4));
}

// NCCL's hold takes its fraction of the SMs first: a compute-bound kernel of 10 us beside a
// hold of half the SMs runs at half speed until the hold is released at 4 us (2 us of its
// work done), then at full speed: it ends at 4 + 8 = 12 us.
TEST(GpuModel, TheCollectivesSmHoldSlowsComputeByItsFraction) {
  const FlowKernel k{10e-6, 0, Time::zero()};
  OneGpu g;
  const engine::ActivityId hold = g.model.hold_sms(g.gpu, 0.5);
  g.launch(k);
  g.sim.at(us(4), [&] { g.model.release(hold); });
  g.sim.run();
  ASSERT_EQ(g.ends.size(), 1u);
  EXPECT_EQ(g.ends[0], us(12));
  EXPECT_TRUE(g.model.idle(g.gpu));
}

}  // namespace
}  // namespace strait::sim::cost
