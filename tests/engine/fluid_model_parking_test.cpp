// Parked activities (ActivitySpec::keep_linked, FluidModel::restart): a repeated transfer
// stays linked to its resources between runs. Rates and finish times must equal those of
// starting a fresh activity each time, shared or not.

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "sim/engine/fluid_model.hpp"
#include "sim/engine/simulator.hpp"

namespace strait::sim::engine {
namespace {

TEST(FluidModelParking, RestartAloneRunsAtItsBoundAgain) {
  // 100 units over links of 10 and 20 units/s: 10 s; restarted 5 s later with 50 units:
  // 5 s more, done at 20 s. Parked in between, it is not active and has no rate.
  Simulator sim;
  const auto slow = sim.fluid().add_resource(10);
  const auto fast = sim.fluid().add_resource(20);
  std::vector<Time> done;
  ActivitySpec spec{.work = 100, .keep_linked = true};
  spec.on_done = [&] { done.push_back(sim.now()); };
  const ActivityId a = sim.fluid().start(std::move(spec), std::vector<ResourceUse>{{slow}, {fast}});
  sim.at(Time::from_s(12), [&] {
    EXPECT_FALSE(sim.fluid().active(a));
    EXPECT_EQ(sim.fluid().rate(a), 0.0);
    EXPECT_EQ(sim.fluid().active_count(), 0U);
  });
  sim.at(Time::from_s(15), [&] {
    sim.fluid().restart(a, 50, [&] { done.push_back(sim.now()); });
    EXPECT_TRUE(sim.fluid().active(a));
    EXPECT_EQ(sim.fluid().rate(a), 10.0);  // set at once: it shares no resource
  });
  sim.run();
  ASSERT_EQ(done.size(), 2U);
  EXPECT_EQ(done[0], Time::from_s(10));
  EXPECT_EQ(done[1], Time::from_s(20));
  sim.fluid().cancel(a);
  EXPECT_FALSE(sim.fluid().active(a));
}

TEST(FluidModelParking, AParkedActivityLeavesItsShareToOthers) {
  // Link of 10 units/s. k: 50 units from 0 s, parked after; b: 100 units from 0 s.
  // 0-10 s: both at 5 (k done at 10 s, b has 50 left). 10-13 s: k parked, b alone at 10
  // (20 left at 13 s). At 13 s k restarts with 30: both at 5 until b ends at 17 s (k has
  // 10 left), then k alone at 10: done at 18 s.
  Simulator sim;
  const auto l = sim.fluid().add_resource(10);
  std::vector<std::pair<char, Time>> done;
  ActivitySpec ks{.work = 50, .keep_linked = true};
  ks.on_done = [&] { done.emplace_back('k', sim.now()); };
  const ActivityId k = sim.fluid().start(std::move(ks), std::vector<ResourceUse>{{l}});
  ActivitySpec bs{.work = 100};
  bs.on_done = [&] { done.emplace_back('b', sim.now()); };
  const ActivityId b = sim.fluid().start(std::move(bs), std::vector<ResourceUse>{{l}});
  sim.at(Time::from_s(11), [&] { EXPECT_DOUBLE_EQ(sim.fluid().rate(b), 10.0); });
  sim.at(Time::from_s(13),
         [&] { sim.fluid().restart(k, 30, [&] { done.emplace_back('k', sim.now()); }); });
  sim.at(Time::from_s(14), [&] {
    EXPECT_DOUBLE_EQ(sim.fluid().rate(b), 5.0);
    EXPECT_DOUBLE_EQ(sim.fluid().rate(k), 5.0);
  });
  sim.run();
  const std::vector<std::pair<char, Time>> expected{
      {'k', Time::from_s(10)}, {'b', Time::from_s(17)}, {'k', Time::from_s(18)}};
  EXPECT_EQ(done, expected);
}

TEST(FluidModelParking, RepeatsEqualFreshStarts) {
  // Three links, a repeated flow over all three and two competing flows that come and go.
  // Running the repeats as one parked activity or as fresh activities gives the same
  // finish times, to the picosecond.
  auto run = [](bool keep) {
    Simulator sim;
    const auto a = sim.fluid().add_resource(7);
    const auto b = sim.fluid().add_resource(11);
    const auto c = sim.fluid().add_resource(13);
    const std::vector<ResourceUse> all{{a, 1.0}, {b, 0.5}, {c, 2.0}};
    std::vector<Time> log;
    ActivityId kept;
    int repeats = 0;
    std::function<void()> next = [&] {
      log.push_back(sim.now());
      if (++repeats == 6) return;
      sim.after(Time::from_us(300), [&] {
        const double work = 3.0 + repeats;
        if (keep) {
          sim.fluid().restart(kept, work, next);
        } else {
          sim.fluid().start({.work = work, .on_done = next}, all);
        }
      });
    };
    ActivitySpec first{.work = 3.0, .keep_linked = keep};
    first.on_done = next;
    kept = sim.fluid().start(std::move(first), all);
    sim.at(Time::from_s(0.2), [&] {
      sim.fluid().start({.work = 2.0, .on_done = [&] { log.push_back(sim.now()); }},
                        std::vector<ResourceUse>{{a}});
    });
    sim.at(Time::from_s(1.1), [&] {
      sim.fluid().start({.work = 9.0, .on_done = [&] { log.push_back(sim.now()); }},
                        std::vector<ResourceUse>{{b}, {c}});
    });
    sim.run();
    return log;
  };
  const auto fresh = run(false);
  EXPECT_EQ(fresh.size(), 8U);
  EXPECT_EQ(run(true), fresh);
}

TEST(FluidModelParking, RestartNeedsAParkedActivity) {
  Simulator sim;
  const auto l = sim.fluid().add_resource(10);
  const ActivityId a = sim.fluid().start({.work = 10}, std::vector<ResourceUse>{{l}});
  EXPECT_THROW(sim.fluid().restart(a, 5, {}), std::invalid_argument);  // still running
  sim.run();
  EXPECT_THROW(sim.fluid().restart(a, 5, {}), std::invalid_argument);  // ended, not kept
}

}  // namespace
}  // namespace strait::sim::engine
