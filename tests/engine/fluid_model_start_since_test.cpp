// FluidModel::start_since and finish_alone: work advanced outside the model while it had its
// resources to itself (the replay's solo kernel runs) comes back exactly as if it had been
// an activity all along.

#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "sim/engine/fluid_model.hpp"
#include "sim/engine/simulator.hpp"

namespace strait::sim::engine {
namespace {

// A kernel on a GPU's SMs and HBM (capacity 1 each), as the replay starts one: work 1,
// coefficients its compute and memory seconds.
struct Gpu {
  Simulator sim;
  ResourceId sm = sim.fluid().add_resource(1.0);
  ResourceId hbm = sim.fluid().add_resource(1.0);
  std::vector<std::pair<std::string, Time>> done;

  std::vector<ResourceUse> kernel(double compute_s, double memory_s) const {
    return {{sm, compute_s}, {hbm, memory_s}};
  }
  ActivitySpec spec(const std::string& name, double work = 1.0, int priority = 1) {
    ActivitySpec s;
    s.work = work;
    s.priority = priority;
    s.on_done = [this, name] { done.emplace_back(name, sim.now()); };
    return s;
  }
  // A communication kernel's hold: priority 0, a fraction of the SMs, never ending.
  ActivityId hold(double fraction) {
    ActivitySpec s;
    s.work = std::numeric_limits<double>::infinity();
    s.max_rate = fraction;
    const ResourceUse use[] = {{sm, 1.0}};
    return sim.fluid().start(std::move(s), use);
  }
  Time finish_of(const std::string& name) const {
    for (const auto& [n, t] : done) {
      if (n == name) return t;
    }
    return Time::infinite();
  }
};

// When the engine runs `uses` alone from `start` with `work`, the activity ends.
Time engine_finish(Gpu& g, const std::vector<ResourceUse>& uses, Time start, double work = 1.0) {
  g.sim.at(start, [&g, uses, work] { g.sim.fluid().start(g.spec("k", work), uses); });
  g.sim.run();
  return g.finish_of("k");
}

TEST(FluidModelStartSince, FinishAloneIsWhenAnActivityAloneEnds) {
  // From the capacities alone (the SMs and HBM have capacity 1 here), the picosecond the
  // engine gives a kernel alone: compute-bound (0.7 s of SMs, 0.2 s of HBM) from a
  // start, memory-bound, without memory traffic.
  const Time start = Time::from_us(1234567);
  using Cap = FluidModel::CapacityUse;
  for (const auto& [compute_s, memory_s] :
       {std::pair{0.7, 0.2}, std::pair{0.003, 0.009}, std::pair{1.0 / 3, 0.0}}) {
    SCOPED_TRACE(compute_s);
    Gpu g;
    const Cap caps[] = {{1.0, compute_s}, {1.0, memory_s}};
    const Time predicted = FluidModel::finish_alone(1.0, caps, start);
    EXPECT_EQ(predicted, engine_finish(g, g.kernel(compute_s, memory_s), start));
    if (compute_s == 0.7) {
      EXPECT_EQ(predicted, start + Time::from_ms(700));
    }
  }
  // A kernel with no cost ends where it starts; an infinite capacity or a zero coefficient
  // bounds nothing.
  const Cap none[] = {{1.0, 0.0}, {1.0, 0.0}};
  EXPECT_EQ(FluidModel::finish_alone(1.0, none, start), start);
  const Cap unbounded[] = {{std::numeric_limits<double>::infinity(), 0.7}, {1.0, 0.0}};
  EXPECT_EQ(FluidModel::finish_alone(1.0, unbounded, start), start);
  // Other capacities: 0.5 / 0.7 is the lesser rate.
  const Cap halves[] = {{0.5, 0.7}, {2.0, 0.2}};
  EXPECT_EQ(FluidModel::finish_alone(1.0, halves, start), start + Time::from_ms(1400));
  // The engine itself adds up the coefficients of one resource used twice (0.3 + 0.4 s of
  // SMs): the capacities given must be of distinct resources.
  Gpu g;
  EXPECT_EQ(engine_finish(g, {{g.sm, 0.3}, {g.sm, 0.4}}, start, 2.0), start + Time::from_ms(1400));
}

// The same kernel twice: started at 1 ms and joined by a 40% hold at 5 ms, or advanced
// outside the model until 5 ms and brought in with start_since just before the hold.
// Its end is the same picosecond either way, for a compute-bound kernel (the hold slows
// it) and a memory-bound one (the hold fits beside it: its predicted end stands).
TEST(FluidModelStartSince, ComesBackAsIfItHadBeenAnActivityAllAlong) {
  for (const auto& [compute_s, memory_s] : {std::pair{0.010, 0.004}, std::pair{0.003, 0.009}}) {
    SCOPED_TRACE(compute_s);
    Gpu linked, resumed;
    linked.sim.at(Time::from_ms(1), [&] {
      linked.sim.fluid().start(linked.spec("k"), linked.kernel(compute_s, memory_s));
    });
    linked.sim.at(Time::from_ms(5), [&] { linked.hold(0.4); });
    resumed.sim.at(Time::from_ms(5), [&] {
      resumed.sim.fluid().start_since(resumed.spec("k"), resumed.kernel(compute_s, memory_s),
                                      Time::from_ms(1));
      resumed.hold(0.4);
    });
    linked.sim.run(Time::from_s(1));
    resumed.sim.run(Time::from_s(1));
    ASSERT_NE(linked.finish_of("k"), Time::infinite());
    EXPECT_EQ(resumed.finish_of("k"), linked.finish_of("k"));
    // Compute-bound: 4 ms of 10 at full rate, the other 6 at 60%: 10 ms more.
    if (compute_s > memory_s) {
      EXPECT_NEAR(linked.finish_of("k").to_ms(), 15.0, 1e-6);
    } else {
      EXPECT_NEAR(linked.finish_of("k").to_ms(), 10.0, 1e-6);
    }
  }
}

TEST(FluidModelStartSince, RejectsSharedResourcesAndTimesAhead) {
  Gpu g;
  g.sim.at(Time::from_ms(2), [&] {
    EXPECT_THROW(g.sim.fluid().start_since(g.spec("late"), g.kernel(1, 1), Time::from_ms(3)),
                 std::invalid_argument);
    g.hold(0.5);
    EXPECT_THROW(g.sim.fluid().start_since(g.spec("shared"), g.kernel(1, 1), Time::from_ms(1)),
                 std::invalid_argument);
    EXPECT_EQ(g.sim.fluid().users(g.sm), 1u);
    EXPECT_EQ(g.sim.fluid().users(g.hbm), 0u);
  });
  g.sim.run(Time::from_ms(3));
}

}  // namespace
}  // namespace strait::sim::engine
