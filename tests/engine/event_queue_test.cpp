#include "sim/engine/event_queue.hpp"

#include <string>

#include <gtest/gtest.h>

namespace strait::sim::engine {
namespace {

TEST(EventQueue, EqualTimesPopInScheduleOrder) {
  // Scheduled: a@5, b@3, c@5, d@3. Expected order: b d (time 3, in schedule order), a c.
  EventQueue queue;
  std::string order;
  queue.schedule(Time::from_s(5), [&] { order += 'a'; });
  queue.schedule(Time::from_s(3), [&] { order += 'b'; });
  queue.schedule(Time::from_s(5), [&] { order += 'c'; });
  queue.schedule(Time::from_s(3), [&] { order += 'd'; });
  EXPECT_EQ(queue.next_time(), Time::from_s(3));
  queue.run_due(Time::from_s(3));
  EXPECT_EQ(order, "bd");
  EXPECT_EQ(queue.next_time(), Time::from_s(5));
  queue.run_due(Time::from_s(5));
  EXPECT_EQ(order, "bdac");
  EXPECT_TRUE(queue.empty());
  EXPECT_EQ(queue.events_run(), 4u);
}

TEST(EventQueue, EventsScheduledAtTheCurrentTimeRunInTheSameCall) {
  // a@1 schedules b@1 and c@2: run_due(1) runs a then b, and leaves c.
  EventQueue queue;
  std::string order;
  queue.schedule(Time::from_s(1), [&] {
    order += 'a';
    queue.schedule(Time::from_s(1), [&] { order += 'b'; });
    queue.schedule(Time::from_s(2), [&] { order += 'c'; });
  });
  queue.run_due(Time::from_s(1));
  EXPECT_EQ(order, "ab");
  EXPECT_EQ(queue.next_time(), Time::from_s(2));
}

TEST(EventQueue, AnEmptyQueueHasNoNextTime) {
  EventQueue queue;
  EXPECT_TRUE(queue.empty());
  EXPECT_TRUE(queue.next_time().is_infinite());
}

}  // namespace
}  // namespace strait::sim::engine
