#include "traces/timeline.hpp"

#include <gtest/gtest.h>

namespace strait::traces {
namespace {

TEST(Timeline, InternsTrackAndSpanNamesSoRepeatsShareIds) {
  Timeline timeline;
  const TrackId comm = timeline.track("comm");
  const NameId step = timeline.name("ring step");
  const NameId cat = timeline.name("collective");
  for (int i = 0; i < 1000; ++i) {
    timeline.add_span(i % 4, comm, step, cat, Time::from_ns(i), Time::from_ns(i + 1));
  }
  EXPECT_EQ(timeline.spans().size(), 1000u);
  EXPECT_EQ(timeline.track_count(), 1u);
  EXPECT_EQ(timeline.name_count(), 2u);
  EXPECT_EQ(timeline.name_of(timeline.spans()[999].name), "ring step");
  EXPECT_EQ(timeline.track_name(timeline.spans()[0].track), "comm");
}

TEST(Timeline, KeepsSpanArgumentsWithTheirTypes) {
  Timeline timeline;
  timeline.add_span(0, "comm", "all_to_all", "collective", Time::zero(), Time::from_us(2),
                    {{"bytes", 1048576}, {"algo", "ring"}, {"share", 0.5}});
  timeline.add_span(0, "compute", "gemm", "kernel", Time::zero(), Time::from_us(1));
  const Span& a2a = timeline.spans()[0];
  const auto args = timeline.args(a2a);
  ASSERT_EQ(args.size(), 3u);
  EXPECT_EQ(timeline.name_of(args[0].key), "bytes");
  EXPECT_EQ(std::get<std::int64_t>(args[0].value), 1048576);
  EXPECT_EQ(timeline.name_of(std::get<InternedString>(args[1].value).id), "ring");
  EXPECT_DOUBLE_EQ(std::get<double>(args[2].value), 0.5);
  EXPECT_TRUE(timeline.args(timeline.spans()[1]).empty());
}

TEST(Timeline, ListsRanksAndTheLatestTime) {
  Timeline timeline;
  timeline.set_rank_name(5, "rank 5 (dc1/host0/gpu1)");
  timeline.add_span(2, "compute", "fwd", "kernel", Time::from_us(1), Time::from_us(3));
  timeline.add_counter(kGlobalRank, "cross_dc utilization", Time::from_us(4), 0.8);
  timeline.add_flow(7, {2, timeline.track("comm"), Time::from_us(1)},
                    {3, timeline.track("comm"), Time::from_us(2)});
  EXPECT_EQ(timeline.ranks(), (std::vector<int>{2, 3, 5}));
  EXPECT_EQ(timeline.end_time(), Time::from_us(4));
  EXPECT_EQ(timeline.rank_name(5), "rank 5 (dc1/host0/gpu1)");
  EXPECT_EQ(timeline.rank_name(2), "");
}

}  // namespace
}  // namespace strait::traces
