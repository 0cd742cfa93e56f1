// The dispatcher in cli/main.cpp: help, usage and unknown commands, with their exit codes
// (0 ok, 2 usage error).

#include <gtest/gtest.h>

#include "strait_process.hpp"

namespace strait::cli::testing {
namespace {

TEST(CliMain, HelpListsTheThreeCommandsAndExitsZero) {
  const auto run = run_strait({"--help"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_TRUE(contains(run.out, "usage: strait <command>"));
  for (const char* command : {"simulate", "collective", "graph"}) {
    EXPECT_TRUE(contains(run.out, std::string("\n  ") + command + " ")) << command;
  }
  EXPECT_EQ(run.err, "");
}

TEST(CliMain, NoArgumentsPrintsUsageAndExitsTwo) {
  const auto run = run_strait({});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_TRUE(contains(run.out, "usage: strait <command>"));
}

TEST(CliMain, UnknownCommandExitsTwoNamingIt) {
  const auto run = run_strait({"simulat"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.err, "strait: unknown command 'simulat' (see 'strait --help')\n");
  EXPECT_EQ(run.out, "");
}

TEST(CliMain, VersionExitsZero) {
  const auto run = run_strait({"--version"});
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_TRUE(contains(run.out, "strait "));
}

}  // namespace
}  // namespace strait::cli::testing
