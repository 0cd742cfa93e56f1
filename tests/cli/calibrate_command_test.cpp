// strait calibrate run: what a user sees while it measures, where stderr is not a terminal
// (under mpirun it is a pipe), and the file it writes.

#include <string>

#include <gtest/gtest.h>

#include "strait_process.hpp"

namespace strait::cli::testing {
namespace {

// The CPU suite's quick copies (six cases: 16 KiB .. 1 MiB and two held out): stderr gets a
// line when a part or a family starts (one family here), naming the part, the cases done
// of all and the family; the file holds the six records.
TEST(CliCalibrate, WithoutATerminalEachFamilyStartPrintsALine) {
  const std::string out = temp_path("copies.json");
  const auto run = run_strait({"calibrate", "run", "--backend", "cpu", "--quick",
                               "--no-collectives", "--families", "elementwise", "--out", out});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.err, "strait calibrate: kernels 0/6, ETA ?: elementwise\n");
  EXPECT_EQ(read_json(out)["records"].size(), 6u);
}

// A run stopped after three of the six cases kept them (the file is saved as it goes);
// --resume keeps those three records as they were, measures the other three, and ends with
// the six cases an uninterrupted run has, in the same order.
TEST(CliCalibrate, AResumedRunKeepsItsRecordsAndEndsWithEveryCase) {
  const std::string whole = temp_path("whole.json"), part = temp_path("part.json");
  auto run = run_strait({"calibrate", "run", "--backend", "cpu", "--quick", "--no-collectives",
                         "--families", "elementwise", "--out", whole});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  auto stopped = read_json(whole);
  stopped["records"].erase(stopped["records"].begin() + 3, stopped["records"].end());
  write_text(part, stopped.dump(1));
  run = run_strait({"calibrate", "run", "--backend", "cpu", "--quick", "--no-collectives",
                    "--families", "elementwise", "--out", part, "--resume"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.err, "strait calibrate: kernels 3/6, ETA ?: elementwise\n");
  const auto resumed = read_json(part)["records"], full = read_json(whole)["records"];
  ASSERT_EQ(resumed.size(), 6u);
  for (std::size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(resumed[i]["family"], full[i]["family"]) << i;
    EXPECT_EQ(resumed[i]["shape"], full[i]["shape"]) << i;
    if (i < 3) {
      EXPECT_EQ(resumed[i], stopped["records"][i]) << i;  // kept, not re-measured
    }
  }
  // Another backend's file is not continued.
  run = run_strait({"calibrate", "run", "--backend", "cuda", "--quick", "--out", part, "--resume"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.err, "strait: calibrate run: --resume: " + part +
                         " holds cpu measurements, not cuda: resume it with --backend cpu or "
                         "write to another --out\n");
}

}  // namespace
}  // namespace strait::cli::testing
