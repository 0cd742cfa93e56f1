#include "sim/engine/simulator.hpp"

#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "sim/core/rng.hpp"

namespace strait::sim::engine {
namespace {

TEST(Simulator, RunUntilStopsThereAndResumes) {
  // Events at 1, 2 and 3 s. run(2 s) runs the first two (an event at exactly `until`
  // runs) and leaves now at 2 s; run(2.5 s) runs nothing and moves now to 2.5 s; run()
  // runs the last one and ends at 3 s.
  Simulator sim;
  std::vector<Time> seen;
  for (int s = 1; s <= 3; ++s) sim.at(Time::from_s(s), [&] { seen.push_back(sim.now()); });
  EXPECT_EQ(sim.run(Time::from_s(2)), Time::from_s(2));
  EXPECT_EQ(seen, (std::vector<Time>{Time::from_s(1), Time::from_s(2)}));
  EXPECT_EQ(sim.run(Time::from_ms(2500)), Time::from_ms(2500));
  EXPECT_EQ(seen.size(), 2u);
  EXPECT_EQ(sim.run(), Time::from_s(3));
  EXPECT_EQ(seen.size(), 3u);
  EXPECT_EQ(sim.now(), Time::from_s(3));
}

TEST(Simulator, AfterIsRelativeToNow) {
  // An event at 2 s schedules another 500 ms later: it runs at 2.5 s.
  Simulator sim;
  Time seen;
  sim.at(Time::from_s(2), [&] { sim.after(Time::from_ms(500), [&] { seen = sim.now(); }); });
  sim.run();
  EXPECT_EQ(seen, Time::from_ms(2500));
}

TEST(Simulator, EventsCountScheduledEventsAndCompletions) {
  // Two events, one of which starts one activity (10 units on a 10 units/s link):
  // 3 events handled, the run ends when the activity does, at 1 + 1 = 2 s.
  Simulator sim;
  const ResourceId link = sim.fluid().add_resource(10);
  const ResourceUse use{link};
  sim.at(Time::from_s(1), [&] { sim.fluid().start({.work = 10}, {&use, 1}); });
  sim.at(Time::from_s(1), [] {});
  EXPECT_EQ(sim.run(), Time::from_s(2));
  EXPECT_EQ(sim.events(), 3u);
}

TEST(Simulator, ZeroWorkActivitiesStartedInCallbacksFinishInTheSameInstant) {
  // A chain of 5 zero-work activities, each started by the previous one's on_done, plus
  // one on an infinite resource: all complete at 1 s, the time of the event starting them.
  Simulator sim;
  const ResourceId wire = sim.fluid().add_resource(std::numeric_limits<double>::infinity());
  const ResourceUse use{wire};
  int chain = 0;
  std::function<void()> next = [&] {
    if (++chain < 5) sim.fluid().start({.work = 0, .on_done = next}, {});
  };
  Time unconstrained_done;
  sim.at(Time::from_s(1), [&] {
    sim.fluid().start({.work = 0, .on_done = next}, {});
    sim.fluid().start({.work = 1e9, .on_done = [&] { unconstrained_done = sim.now(); }}, {&use, 1});
  });
  EXPECT_EQ(sim.run(), Time::from_s(1));
  EXPECT_EQ(chain, 5);
  EXPECT_EQ(unconstrained_done, Time::from_s(1));
}

// A random scenario: flows over 6 links started at random times; returns the completion
// sequence as (activity number, time).
std::vector<std::pair<int, Time>> run_random_scenario(std::uint64_t seed) {
  Simulator sim;
  Rng rng(seed);
  std::vector<ResourceId> links;
  for (int r = 0; r < 6; ++r) links.push_back(sim.fluid().add_resource(10 + 90 * rng.uniform()));
  std::vector<std::pair<int, Time>> done;
  for (int i = 0; i < 200; ++i) {
    std::vector<ResourceUse> uses;
    for (int k = 0; k < 3; ++k) uses.push_back({links[rng.uniform_int(links.size())]});
    const double work = 1 + 100 * rng.uniform();
    sim.at(Time::from_ms(static_cast<double>(rng.uniform_int(5000))), [&sim, &done, uses, work, i] {
      sim.fluid().start(
          {.work = work, .on_done = [&sim, &done, i] { done.emplace_back(i, sim.now()); }}, uses);
    });
  }
  sim.run();
  return done;
}

TEST(Simulator, TwoIdenticalRunsGiveIdenticalCompletionSequences) {
  const auto first = run_random_scenario(11);
  const auto second = run_random_scenario(11);
  ASSERT_EQ(first.size(), 200u);
  EXPECT_EQ(first, second);
}

}  // namespace
}  // namespace strait::sim::engine
