// strait calibrate run: what a user sees while it measures, where stderr is not a terminal
// (under mpirun it is a pipe), and the file it writes.

#include <string>

#include <gtest/gtest.h>

#include "strait_process.hpp"

namespace strait::cli::testing {
namespace {

// The CPU suite's quick copies (six cases: 16 KiB .. 1 MiB and two held out): stderr gets a
// line at every tenth of the cases, here every case, with what was measured; stdout says
// what was written, and the file holds the six records.
TEST(CliCalibrate, WithoutATerminalEveryTenthOfTheCasesPrintsALine) {
  const std::string out = temp_path("copies.json");
  const auto run = run_strait({"calibrate", "run", "--backend", "cpu", "--quick",
                               "--no-collectives", "--families", "elementwise", "--out", out});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.err.rfind("strait calibrate: 1/6 cases  elementwise bytes=16384 op=copy fp32\n", 0),
            0u)
      << run.err;
  EXPECT_NE(run.err.find("strait calibrate: 6/6 cases  "), std::string::npos) << run.err;
  EXPECT_EQ(run.out, "wrote 6 measurements (cpu backend) to " + out + "\n");
  EXPECT_EQ(read_json(out)["records"].size(), 6u);
}

}  // namespace
}  // namespace strait::cli::testing
