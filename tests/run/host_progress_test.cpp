// Collectives of ranks that progress them on the host (sim/run/detail/host_progress.hpp):
// a call whose data is done completes once every member has left the kernel it was in.

#include "sim/run/detail/host_progress.hpp"

#include <gtest/gtest.h>

#include <cstdlib>

#include "run_test_support.hpp"
#include "sim/cost/calibration_profile.hpp"
#include "sim/run/op_replay.hpp"

namespace strait::sim::run {
namespace {

using testing_support::all_reduce;
using testing_support::kernel;
using testing_support::source;
using testing_support::two_rank_graph;
using workload::CommClass;
using workload::Op;

constexpr auto kDense = static_cast<std::size_t>(CommClass::kDenseSync);

// The bundled CPU profile with its collectives progressed by `progress`.
cost::CostModel cpu_cost(cost::CollectiveProgress progress) {
  auto profile = cost::load_profile(source("configs/profiles/cpu-localhost.json"));
  profile.device.collective_progress = progress;
  cost::ProfileSet set;
  set.add(std::move(profile));
  return cost::CostModel(std::move(set));
}

// Flow mode integrates kernel rates: its times may be a picosecond off the sums.
void expect_time(Time actual, Time expected) {
  EXPECT_LE(std::abs(actual.ps() - expected.ps()), 2) << actual.ps() << " vs " << expected.ps();
}

ReplayResult replay_on_cpus(const workload::OpGraph& g, const cost::CostModel& cost,
                            network::NetworkMode mode) {
  const auto cluster = topology::Cluster::load(source("configs/clusters/localhost-cpu.json"));
  ReplayOptions options;
  options.mode = mode;
  return replay(g, cluster, cost, options);
}

// A DDP step in miniature on two CPU ranks: kernel A, then the dense all-reduce on its own
// stream, then kernels L (independent of the all-reduce) and C (after it). Rank 0 has a
// short L0 and a long C0, rank 1 a long L1 and a short C1; the all-reduce's data takes
// D < L0. On a device that moves it alone, the call ends at A + D, so rank 0's C0 starts
// at A + L0 and the step ends at A + L0 + C0. Progressed on the host, it completes when
// both ranks have left the kernel they ran at A + D: L0 on rank 0 ends at A + L0, L1 on
// rank 1 at A + L1; so C0 starts at A + L1, the step ends at A + L1 + C0, and rank 0 waits
// L1 - L0 for the call (exposed dense sync).
TEST(HostProgress, ACallCompletesWhenEveryMemberHasLeftItsKernel) {
  const Op a = kernel(1, 0);
  const Op l0 = kernel(40, 0, {0}), l1 = kernel(120, 0, {0});
  const Op c0 = kernel(120, 0, {1}), c1 = kernel(20, 0, {1});
  const auto sync = all_reduce(CommClass::kDenseSync, 1, 2, {0});
  const auto g = two_rank_graph({a, sync, l0, c0}, {a, sync, l1, c1});
  const auto host = cpu_cost(cost::CollectiveProgress::kHost);
  const auto device = cpu_cost(cost::CollectiveProgress::kDevice);
  auto t = [&](const Op& op) { return host.cost(op.kernel, "CPU").duration(); };

  for (const auto mode : {network::NetworkMode::kAnalytical, network::NetworkMode::kFlow}) {
    SCOPED_TRACE(network::to_string(mode));
    // D: the all-reduce after A alone.
    const auto alone = replay_on_cpus(two_rank_graph({a, sync}, {a, sync}), device, mode);
    const Time d = alone.drain_end - t(a);
    ASSERT_GT(d, Time::zero());
    ASSERT_LT(d, t(l0));

    const auto on_device = replay_on_cpus(g, device, mode);
    expect_time(on_device.step_end.at(0), t(a) + t(l0) + t(c0));
    expect_time(on_device.ranks[0].exposed_comm[kDense], Time::zero());

    const auto on_host = replay_on_cpus(g, host, mode);
    const Time makespan = t(a) + t(l1) + t(c0);
    expect_time(on_host.step_end.at(0), makespan);
    const auto& r0 = on_host.ranks[0];
    expect_time(r0.compute, t(a) + t(l0) + t(c0));
    expect_time(r0.exposed_comm[kDense], t(l1) - t(l0));
    expect_time(r0.straggler_wait, Time::zero());
    const auto& r1 = on_host.ranks[1];
    expect_time(r1.compute, t(a) + t(l1) + t(c1));
    expect_time(r1.exposed_comm[kDense], Time::zero());
    expect_time(r1.straggler_wait + r1.bubble, makespan - r1.compute);
  }
}

// A member that waits for the call (nothing else to run) does not hold it back: both ranks
// issue the all-reduce after A and then need it, so it ends at A + D as on a device.
TEST(HostProgress, MembersThatWaitForTheCallDoNotHoldItBack) {
  const Op a = kernel(1, 0), c = kernel(2, 0, {1});
  const auto sync = all_reduce(CommClass::kDenseSync, 1, 2, {0});
  const auto g = two_rank_graph({a, sync, c}, {a, sync, c});
  for (const auto mode : {network::NetworkMode::kAnalytical, network::NetworkMode::kFlow}) {
    SCOPED_TRACE(network::to_string(mode));
    const auto on_host = replay_on_cpus(g, cpu_cost(cost::CollectiveProgress::kHost), mode);
    const auto on_device = replay_on_cpus(g, cpu_cost(cost::CollectiveProgress::kDevice), mode);
    EXPECT_EQ(on_host.step_end, on_device.step_end);
    EXPECT_EQ(on_host.ranks[0].exposed_comm, on_device.ranks[0].exposed_comm);
  }
}

// Ranks that progress collectives on the host replay with their kernels apart: the replay
// graph of an analytical, untraced run merges runs of kernels only where no rank does.
TEST(HostProgress, KernelRunsAreNotMergedForHostProgressedRanks) {
  const auto g = two_rank_graph({kernel(1, 0), kernel(1, 0)}, {kernel(1, 0), kernel(1, 0)});
  const auto cluster = topology::Cluster::load(source("configs/clusters/localhost-cpu.json"));
  ReplayOptions options;
  options.mode = network::NetworkMode::kAnalytical;
  const auto host = cpu_cost(cost::CollectiveProgress::kHost);
  const auto device = cpu_cost(cost::CollectiveProgress::kDevice);
  EXPECT_FALSE(replay_graph(g, cluster, host, options).merges_kernel_runs());
  EXPECT_TRUE(replay_graph(g, cluster, device, options).merges_kernel_runs());
  EXPECT_TRUE(with_host_progress(options, cluster, host).host_progress);
  EXPECT_FALSE(with_host_progress(options, cluster, device).host_progress);
  // Both replays, each in its own order, give the same step for kernels alone.
  EXPECT_EQ(replay(g, cluster, host, options).step_end,
            replay(g, cluster, device, options).step_end);
}

// The unit itself: calls due on busy members complete with the last of their kernels.
TEST(HostProgress, PendingCallsCompleteWithTheLastMembersKernel) {
  detail::HostProgress host({1, 1, 0});
  auto call = std::make_shared<detail::GroupCall>();
  call->members = {{0, 5}, {1, 7}, {2, 9}};
  EXPECT_TRUE(host.data_done(call));  // nobody in a kernel
  host.kernel_started(0);
  host.kernel_started(1);
  EXPECT_FALSE(host.data_done(call));
  int completed = 0;
  host.kernel_ended(0, [&](const detail::GroupCall&) { ++completed; });
  EXPECT_EQ(completed, 0);
  host.kernel_ended(1, [&](const detail::GroupCall& c) {
    ++completed;
    EXPECT_EQ(c.members.size(), 3u);
  });
  EXPECT_EQ(completed, 1);
  EXPECT_FALSE(detail::HostProgress({0, 0}).active());
}

}  // namespace
}  // namespace strait::sim::run
