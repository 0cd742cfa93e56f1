#include "sim/engine/fluid_model.hpp"

#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "sim/engine/simulator.hpp"

namespace strait::sim::engine {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// A simulator plus a log of which named activity finished when.
struct Scenario {
  Simulator sim;
  std::vector<std::pair<std::string, Time>> done;

  ResourceId link(double capacity) { return sim.fluid().add_resource(capacity); }
  ActivityId start(const std::string& name, ActivitySpec spec,
                   const std::vector<ResourceUse>& uses) {
    spec.on_done = [this, name] { done.emplace_back(name, sim.now()); };
    return sim.fluid().start(std::move(spec), uses);
  }
  Time finish_of(const std::string& name) const {
    for (const auto& [n, t] : done) {
      if (n == name) return t;
    }
    return Time::infinite();
  }
  // Runs `check` at time `t` (after the rates of the previous instant are set).
  template <class Check>
  void at(Time t, Check check) {
    sim.at(t, check);
  }
};

TEST(FluidModel, OneFlowAloneOnALinkGetsItsCapacity) {
  // 100 units over a 10 units/s link: rate 10, done at exactly 10 s = 10^13 ps.
  Scenario s;
  const ResourceId l = s.link(10);
  const ActivityId a = s.start("a", {.work = 100}, {{l}});
  s.at(Time::from_s(4), [&] {
    EXPECT_DOUBLE_EQ(s.sim.fluid().rate(a), 10);
    EXPECT_DOUBLE_EQ(s.sim.fluid().remaining(a), 60);
    EXPECT_DOUBLE_EQ(s.sim.fluid().load(l), 10);
  });
  s.sim.run();
  EXPECT_EQ(s.finish_of("a").ps(), 10'000'000'000'000);
  EXPECT_EQ(s.sim.fluid().active_count(), 0u);
}

TEST(FluidModel, EqualFlowsShareEquallyAndFinishTogetherInOneStep) {
  // 4 flows of 100 units on a 40 units/s link: 10 units/s each, all done at 10 s, in
  // start order; when the first on_done runs, all four have already left the model.
  Scenario s;
  const ResourceId l = s.link(40);
  std::vector<ActivityId> ids;
  int still_active_seen = 0;
  for (int i = 0; i < 4; ++i) {
    ids.push_back(s.sim.fluid().start({.work = 100,
                                       .on_done =
                                           [&, i] {
                                             for (const ActivityId id : ids)
                                               still_active_seen +=
                                                   s.sim.fluid().active(id) ? 1 : 0;
                                             s.done.emplace_back(std::to_string(i), s.sim.now());
                                           }},
                                      std::vector<ResourceUse>{{l}}));
  }
  s.at(Time::from_s(1), [&] {
    for (const ActivityId id : ids) EXPECT_DOUBLE_EQ(s.sim.fluid().rate(id), 10);
  });
  s.sim.run();
  ASSERT_EQ(s.done.size(), 4u);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(s.done[static_cast<std::size_t>(i)].first, std::to_string(i));
    EXPECT_EQ(s.done[static_cast<std::size_t>(i)].second, Time::from_s(10));
  }
  EXPECT_EQ(still_active_seen, 0);
}

TEST(FluidModel, TheBottleneckMovesWhenAFlowEnds) {
  // L1 = 10/s carries A and B; L2 = 20/s carries A and C. Work A 100, B 25, C 200.
  // Until 5 s: L1 is the bottleneck, A = B = 5, C gets the rest of L2: 15.
  //   B ends at 25 / 5 = 5 s; then A has 75 left, C 125.
  // Until 12.5 s: L2 is the bottleneck, A = C = 10. A ends at 5 + 75 / 10 = 12.5 s; C has 50.
  // Then C alone at 20: ends at 12.5 + 50 / 20 = 15 s.
  Scenario s;
  const ResourceId l1 = s.link(10), l2 = s.link(20);
  const ActivityId a = s.start("A", {.work = 100}, {{l1}, {l2}});
  const ActivityId b = s.start("B", {.work = 25}, {{l1}});
  const ActivityId c = s.start("C", {.work = 200}, {{l2}});
  s.at(Time::from_s(1), [&] {
    EXPECT_DOUBLE_EQ(s.sim.fluid().rate(a), 5);
    EXPECT_DOUBLE_EQ(s.sim.fluid().rate(b), 5);
    EXPECT_DOUBLE_EQ(s.sim.fluid().rate(c), 15);
  });
  s.at(Time::from_s(6), [&] {
    EXPECT_DOUBLE_EQ(s.sim.fluid().rate(a), 10);
    EXPECT_DOUBLE_EQ(s.sim.fluid().rate(c), 10);
  });
  s.sim.run();
  EXPECT_EQ(s.finish_of("B"), Time::from_s(5));
  EXPECT_EQ(s.finish_of("A"), Time::from_ms(12500));
  EXPECT_EQ(s.finish_of("C"), Time::from_s(15));
}

TEST(FluidModel, WeightsSplitALinkInProportion) {
  // Heavy (weight 2) and light (weight 1), 100 units each, on 30/s: 20 and 10.
  // Heavy ends at 5 s; light has 50 left and then gets 30/s: ends at 5 + 50/30 s.
  Scenario s;
  const ResourceId l = s.link(30);
  const ActivityId heavy = s.start("heavy", {.work = 100, .weight = 2}, {{l}});
  const ActivityId light = s.start("light", {.work = 100, .weight = 1}, {{l}});
  s.at(Time::from_s(1), [&] {
    EXPECT_DOUBLE_EQ(s.sim.fluid().rate(heavy), 20);
    EXPECT_DOUBLE_EQ(s.sim.fluid().rate(light), 10);
  });
  s.sim.run();
  EXPECT_EQ(s.finish_of("heavy"), Time::from_s(5));
  EXPECT_EQ(s.finish_of("light"), Time::from_s(5) + Time::for_work(50, 30));
  EXPECT_EQ(s.finish_of("light").ps(), 6'666'666'666'667);
}

TEST(FluidModel, LowPriorityStarvesThenResumes) {
  // High (priority 0) and low (priority 1), 50 units each, on 10/s. High takes all 10
  // and ends at 5 s; low has rate 0 meanwhile, then 10/s: ends at 10 s.
  Scenario s;
  const ResourceId l = s.link(10);
  s.start("high", {.work = 50, .priority = 0}, {{l}});
  const ActivityId low = s.start("low", {.work = 50, .priority = 1}, {{l}});
  s.at(Time::from_s(1), [&] {
    EXPECT_EQ(s.sim.fluid().rate(low), 0);
    EXPECT_EQ(s.sim.fluid().remaining(low), 50);
  });
  s.sim.run();
  EXPECT_EQ(s.finish_of("high"), Time::from_s(5));
  EXPECT_EQ(s.finish_of("low"), Time::from_s(10));
}

TEST(FluidModel, LowPriorityGetsWhatHighPriorityLeaves) {
  // High (priority 0) is capped at 4/s on a 10/s link, low gets the other 6.
  // High: 40 units, ends at 10 s. Low: 90 units, 60 done by 10 s, then 10/s: ends at 13 s.
  Scenario s;
  const ResourceId l = s.link(10);
  const ActivityId high = s.start("high", {.work = 40, .priority = 0, .max_rate = 4}, {{l}});
  const ActivityId low = s.start("low", {.work = 90, .priority = 1}, {{l}});
  s.at(Time::from_s(1), [&] {
    EXPECT_DOUBLE_EQ(s.sim.fluid().rate(high), 4);
    EXPECT_DOUBLE_EQ(s.sim.fluid().rate(low), 6);
  });
  s.sim.run();
  EXPECT_EQ(s.finish_of("high"), Time::from_s(10));
  EXPECT_EQ(s.finish_of("low"), Time::from_s(13));
}

TEST(FluidModel, AFlowCrossingTwoSaturatedLinksTakesTheTighterShare) {
  // L1 = 10/s carries A, B; L2 = 8/s carries A, C. Fair shares: L1 5, L2 4, so L2
  // saturates first: A = C = 4; B takes the rest of L1: 6. Both links are full.
  Scenario s;
  const ResourceId l1 = s.link(10), l2 = s.link(8);
  const ActivityId a = s.start("A", {.work = 1000}, {{l1}, {l2}});
  const ActivityId b = s.start("B", {.work = 1000}, {{l1}});
  const ActivityId c = s.start("C", {.work = 1000}, {{l2}});
  s.at(Time::from_s(1), [&] {
    EXPECT_DOUBLE_EQ(s.sim.fluid().rate(a), 4);
    EXPECT_DOUBLE_EQ(s.sim.fluid().rate(b), 6);
    EXPECT_DOUBLE_EQ(s.sim.fluid().rate(c), 4);
    EXPECT_DOUBLE_EQ(s.sim.fluid().load(l1), 10);
    EXPECT_DOUBLE_EQ(s.sim.fluid().load(l2), 8);
  });
  s.sim.run(Time::from_s(2));
}

TEST(FluidModel, CoefficientsScaleTheWorkOnAResource) {
  // X costs 2 link units per unit of work, Y costs 1; link 30/s, equal weights:
  // 2*lambda + lambda = 30, so both run at 10/s and X loads the link with 20.
  // Y (50 units) ends at 5 s; X (100 units) has 50 left and then runs at 30/2 = 15/s:
  // ends at 5 + 50/15 s (8.33 s).
  Scenario s;
  const ResourceId l = s.link(30);
  const ActivityId x = s.start("X", {.work = 100}, {{l, 2.0}});
  const ActivityId y = s.start("Y", {.work = 50}, {{l, 1.0}});
  s.at(Time::from_s(1), [&] {
    EXPECT_DOUBLE_EQ(s.sim.fluid().rate(x), 10);
    EXPECT_DOUBLE_EQ(s.sim.fluid().rate(y), 10);
    EXPECT_DOUBLE_EQ(s.sim.fluid().load(l), 30);
  });
  s.sim.run();
  EXPECT_EQ(s.finish_of("Y"), Time::from_s(5));
  EXPECT_EQ(s.finish_of("X"), Time::from_s(5) + Time::for_work(50, 15));
}

TEST(FluidModel, MaxRateCapsAnActivityAndOthersTakeTheRest) {
  // Capped (max 3/s) and free on a 10/s link: 3 and 7. 30 units each: free ends at
  // 30/7 s (4.29 s); capped stays at its 3/s cap alone and ends at 30/3 = 10 s.
  Scenario s;
  const ResourceId l = s.link(10);
  const ActivityId capped = s.start("capped", {.work = 30, .max_rate = 3}, {{l}});
  const ActivityId free = s.start("free", {.work = 30}, {{l}});
  s.at(Time::from_s(1), [&] {
    EXPECT_DOUBLE_EQ(s.sim.fluid().rate(capped), 3);
    EXPECT_DOUBLE_EQ(s.sim.fluid().rate(free), 7);
  });
  s.sim.run();
  EXPECT_EQ(s.finish_of("free"), Time::for_work(30, 7));
  EXPECT_EQ(s.finish_of("capped"), Time::from_s(10));
}

TEST(FluidModel, CancelStopsAnActivityWithoutItsCallbackAndFreesItsShare) {
  // Two flows of 100 on 10/s: 5 each. At 2 s one is cancelled (90 left on the other),
  // which then runs at 10/s and ends at 2 + 9 = 11 s.
  Scenario s;
  const ResourceId l = s.link(10);
  const ActivityId gone = s.start("gone", {.work = 100}, {{l}});
  s.start("kept", {.work = 100}, {{l}});
  s.at(Time::from_s(2), [&] {
    s.sim.fluid().cancel(gone);
    EXPECT_FALSE(s.sim.fluid().active(gone));
    s.sim.fluid().cancel(gone);  // no effect the second time
  });
  s.sim.run();
  ASSERT_EQ(s.done.size(), 1u);
  EXPECT_EQ(s.finish_of("kept"), Time::from_s(11));
}

TEST(FluidModel, SetCapacityMidRunChangesTheRateFromThen) {
  // 100 units on 10/s; at 4 s the link goes to 20/s: 60 left, ends at 4 + 3 = 7 s.
  Scenario s;
  const ResourceId l = s.link(10);
  s.start("a", {.work = 100}, {{l}});
  s.at(Time::from_s(4), [&] { s.sim.fluid().set_capacity(l, 20); });
  s.sim.run();
  EXPECT_EQ(s.finish_of("a"), Time::from_s(7));
  EXPECT_DOUBLE_EQ(s.sim.fluid().capacity(l), 20);
}

TEST(FluidModel, AZeroCapacityLinkStallsItsUsersUntilRestored) {
  // 100 units on 10/s; the link is down from 2 s to 5 s: 80 left, ends at 5 + 8 = 13 s.
  Scenario s;
  const ResourceId l = s.link(10);
  s.start("a", {.work = 100}, {{l}});
  s.at(Time::from_s(2), [&] { s.sim.fluid().set_capacity(l, 0); });
  s.at(Time::from_s(5), [&] { s.sim.fluid().set_capacity(l, 10); });
  s.sim.run();
  EXPECT_EQ(s.finish_of("a"), Time::from_s(13));
}

TEST(FluidModel, InfiniteResourcesDoNotConstrain) {
  // A uses an infinite wire and a 10/s link: rate 10, 100 units end at 10 s. B uses only
  // the wire and C nothing at all: both end at once, at 0 s.
  Scenario s;
  const ResourceId wire = s.link(kInf), l = s.link(10);
  s.start("A", {.work = 100}, {{wire}, {l}});
  s.start("B", {.work = 100}, {{wire}});
  s.start("C", {.work = 100}, {});
  s.sim.run();
  EXPECT_EQ(s.finish_of("A"), Time::from_s(10));
  EXPECT_EQ(s.finish_of("B"), Time::zero());
  EXPECT_EQ(s.finish_of("C"), Time::zero());
}

TEST(FluidModel, AnActivityIdGoesStaleAfterCompletion) {
  // One 10-unit flow on 10/s ends at 1 s; its id is then inactive, and a new activity
  // that reuses the slot gets a different generation.
  Scenario s;
  const ResourceId l = s.link(10);
  const ActivityId first = s.start("first", {.work = 10}, {{l}});
  s.sim.run();
  EXPECT_FALSE(s.sim.fluid().active(first));
  EXPECT_EQ(s.sim.fluid().rate(first), 0);
  const ActivityId second = s.start("second", {.work = 10}, {{l}});
  EXPECT_EQ(second.index, first.index);
  EXPECT_NE(second.generation, first.generation);
  EXPECT_TRUE(s.sim.fluid().active(second));
  EXPECT_FALSE(s.sim.fluid().active(first));
}

TEST(FluidModel, IndependentComponentsDoNotDisturbEachOther) {
  // Link 1 carries A (100 units); link 2 carries B then, at 3 s, C as well. A keeps 10/s
  // throughout and ends at 10 s; B and C split link 2 from 3 s.
  Scenario s;
  const ResourceId l1 = s.link(10), l2 = s.link(10);
  const ActivityId a = s.start("A", {.work = 100}, {{l1}});
  s.start("B", {.work = 100}, {{l2}});
  s.at(Time::from_s(3), [&] { s.start("C", {.work = 100}, {{l2}}); });
  s.at(Time::from_s(4), [&] { EXPECT_DOUBLE_EQ(s.sim.fluid().rate(a), 10); });
  s.sim.run();
  EXPECT_EQ(s.finish_of("A"), Time::from_s(10));
  // B: 30 by 3 s, then 5/s: 70 / 5 = 14 s more, ends at 17 s.
  EXPECT_EQ(s.finish_of("B"), Time::from_s(17));
}

TEST(FluidModel, BadArgumentsAreRejected) {
  FluidModel fluid([] { return Time::zero(); });
  EXPECT_THROW(fluid.add_resource(0), std::invalid_argument);
  EXPECT_THROW(fluid.add_resource(-1), std::invalid_argument);
  const ResourceId l = fluid.add_resource(1, "nic0");
  EXPECT_EQ(fluid.name(l), "nic0");
  EXPECT_EQ(fluid.resource_count(), 1u);
  EXPECT_THROW(fluid.set_capacity(l, -1), std::invalid_argument);
  const std::vector<ResourceUse> uses{{l}};
  EXPECT_THROW(fluid.start({.work = -1}, uses), std::invalid_argument);
  EXPECT_THROW(fluid.start({.work = 1, .weight = 0}, uses), std::invalid_argument);
  const std::vector<ResourceUse> unknown{{ResourceId{7}}};
  EXPECT_THROW(fluid.start({.work = 1}, unknown), std::invalid_argument);
  EXPECT_EQ(fluid.active_count(), 0u);
}

}  // namespace
}  // namespace strait::sim::engine
