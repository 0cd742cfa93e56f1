#include "traces/string_table.hpp"

#include <gtest/gtest.h>

namespace strait::traces {
namespace {

TEST(StringTable, InternsEachTextOnceWithDenseIds) {
  StringTable table;
  EXPECT_EQ(table.intern("compute"), 0);
  EXPECT_EQ(table.intern("comm"), 1);
  EXPECT_EQ(table.intern("compute"), 0);
  EXPECT_EQ(table.size(), 2u);
  EXPECT_EQ(table.str(1), "comm");
  EXPECT_EQ(table.find("comm"), 1);
  EXPECT_EQ(table.find("nvlink"), -1);
}

TEST(StringTable, CopiesAndMovesKeepLookupsValid) {
  StringTable original;
  for (int i = 0; i < 100; ++i) original.intern("step " + std::to_string(i));
  StringTable copy = original;
  original = StringTable();  // the copy must not point into the old storage
  EXPECT_EQ(copy.find("step 42"), 42);
  StringTable moved = std::move(copy);
  EXPECT_EQ(moved.find("step 99"), 99);
  EXPECT_EQ(moved.intern("step 7"), 7);
  EXPECT_EQ(moved.intern("new"), 100);
}

}  // namespace
}  // namespace strait::traces
