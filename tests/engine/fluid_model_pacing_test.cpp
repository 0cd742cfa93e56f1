// Paced activities (ActivitySpec::latency): the work spreads over work / bound + latency,
// the alpha-beta time, so a latency-bound transfer takes a trickle of its resources for
// its whole duration. Hand-computed finish times and rates, and parked repeats restarted
// within the instant they park equal fresh starts to the picosecond.

#include <functional>
#include <stdexcept>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "sim/engine/fluid_model.hpp"
#include "sim/engine/simulator.hpp"

namespace strait::sim::engine {
namespace {

TEST(FluidModelPacing, AloneItTakesBytesOverBandwidthPlusLatency) {
  // 100 units on a link of 10 units/s with 5 s latency: 10 + 5 = 15 s at 100/15 units/s.
  Simulator sim;
  const auto l = sim.fluid().add_resource(10);
  Time done;
  const ActivityId a = sim.fluid().start(
      {.work = 100, .on_done = [&] { done = sim.now(); }, .latency = Time::from_s(5)},
      std::vector<ResourceUse>{{l}});
  sim.at(Time::from_s(1), [&] { EXPECT_DOUBLE_EQ(sim.fluid().rate(a), 100.0 / 15.0); });
  sim.run();
  EXPECT_EQ(done, Time::from_s(15));
}

TEST(FluidModelPacing, WithoutFiniteResourcesItTakesItsLatency) {
  Simulator sim;
  Time done;
  sim.fluid().start({.work = 10, .on_done = [&] { done = sim.now(); }, .latency = Time::from_s(3)},
                    std::vector<ResourceUse>{});
  sim.run();
  EXPECT_EQ(done, Time::from_s(3));
}

TEST(FluidModelPacing, LowerPriorityTakesWhatALatencyBoundStepLeaves) {
  // Link of 10 units/s. A latency-bound step at priority 0: 10 units, 9 s latency, so
  // 1 unit/s for 10 s. Priority 1: 90 units at the 9 units/s left: also done at 10 s.
  Simulator sim;
  const auto l = sim.fluid().add_resource(10);
  std::vector<Time> done;
  const ActivityId step = sim.fluid().start({.work = 10,
                                             .priority = 0,
                                             .on_done = [&] { done.push_back(sim.now()); },
                                             .latency = Time::from_s(9)},
                                            std::vector<ResourceUse>{{l}});
  const ActivityId bulk =
      sim.fluid().start({.work = 90, .priority = 1, .on_done = [&] { done.push_back(sim.now()); }},
                        std::vector<ResourceUse>{{l}});
  sim.at(Time::from_s(5), [&] {
    EXPECT_DOUBLE_EQ(sim.fluid().rate(step), 1.0);
    EXPECT_DOUBLE_EQ(sim.fluid().rate(bulk), 9.0);
  });
  sim.run();
  EXPECT_EQ(done, (std::vector<Time>{Time::from_s(10), Time::from_s(10)}));
}

TEST(FluidModelPacing, ContendedItTakesAtLeastItsFairShare) {
  // Link of 10 units/s, equal priority. Paced: 10 units with 1 s latency (cap 10/2 = 5).
  // Unpaced: 100 units. Both at 5 until the paced one ends at 2 s (it would alone too);
  // then 90 left at 10 units/s: done at 11 s.
  Simulator sim;
  const auto l = sim.fluid().add_resource(10);
  std::vector<Time> done;
  sim.fluid().start(
      {.work = 10, .on_done = [&] { done.push_back(sim.now()); }, .latency = Time::from_s(1)},
      std::vector<ResourceUse>{{l}});
  sim.fluid().start({.work = 100, .on_done = [&] { done.push_back(sim.now()); }},
                    std::vector<ResourceUse>{{l}});
  sim.run();
  EXPECT_EQ(done, (std::vector<Time>{Time::from_s(2), Time::from_s(11)}));
}

TEST(FluidModelPacing, StepsRestartedWhereTheyParkEqualFreshStarts) {
  // A ring-like flow repeats back to back over three links (each repeat restarted in the
  // instant the previous one ends, sometimes with new work), beside a lower-priority bulk
  // flow and an equal-priority one that come and go. Parked repeats (which take their rate
  // back without a solve) and fresh activities give the same finish times.
  auto run = [](bool keep) {
    Simulator sim;
    const auto a = sim.fluid().add_resource(7);
    const auto b = sim.fluid().add_resource(11);
    const auto c = sim.fluid().add_resource(13);
    const std::vector<ResourceUse> all{{a, 1.0}, {b, 0.5}, {c, 2.0}};
    const Time latency = Time::from_ms(40);
    std::vector<Time> log;
    ActivityId kept;
    int repeats = 0;
    std::function<void()> next = [&] {
      log.push_back(sim.now());
      if (++repeats == 40) return;
      const double work = repeats % 7 == 0 ? 1.5 : 0.25;
      if (keep) {
        sim.fluid().restart(kept, work, next, latency);
      } else {
        sim.fluid().start({.work = work, .on_done = next, .latency = latency}, all);
      }
    };
    kept = sim.fluid().start(
        {.work = 0.25, .on_done = next, .keep_linked = keep, .latency = latency}, all);
    sim.fluid().start({.work = 20.0, .priority = 1, .on_done = [&] { log.push_back(sim.now()); }},
                      std::vector<ResourceUse>{{b}, {c}});
    sim.at(Time::from_s(0.3), [&] {
      sim.fluid().start({.work = 2.0, .on_done = [&] { log.push_back(sim.now()); }},
                        std::vector<ResourceUse>{{a}});
    });
    sim.run();
    return log;
  };
  const auto fresh = run(false);
  EXPECT_EQ(fresh.size(), 42U);
  EXPECT_EQ(run(true), fresh);
}

TEST(FluidModelPacing, NegativeLatencyIsRefused) {
  Simulator sim;
  const auto l = sim.fluid().add_resource(10);
  EXPECT_THROW(
      sim.fluid().start({.work = 1, .latency = Time::from_s(-1)}, std::vector<ResourceUse>{{l}}),
      std::invalid_argument);
  const ActivityId k =
      sim.fluid().start({.work = 1, .keep_linked = true}, std::vector<ResourceUse>{{l}});
  sim.run();
  EXPECT_THROW(sim.fluid().restart(k, 1, {}, Time::from_s(-1)), std::invalid_argument);
}

}  // namespace
}  // namespace strait::sim::engine
