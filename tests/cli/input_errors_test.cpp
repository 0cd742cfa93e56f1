// Mistakes a user makes on the command line or in an input file: each gives exit code 2
// (usage: "strait: ...") or 1 (bad input: "strait: error: ..."), one message on stderr
// that names what was wrong, and no stack of other output.
//
// Usage errors are matched from the subcommand name on: the text between "strait: " and
// "collective:" is a presentation detail, the message after it is the contract.

#include <cstdio>
#include <string>

#include <gtest/gtest.h>

#include "strait_process.hpp"

namespace strait::cli::testing {
namespace {

constexpr const char* kCluster = "configs/clusters/hgx-h100-8.json";

// An option close to none is refused with every option the command has.
TEST(CliInputErrors, UnknownOptionIsAUsageError) {
  const auto run = run_strait({"collective", "--cluster", kCluster, "--bogus"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.err,
            "strait: collective: unknown option '--bogus'; the options are --cluster, --op, "
            "--algo, --protocol, --mode, --ranks, --minbytes, --maxbytes, --stepfactor, "
            "--stepbytes, --datatype, --root, --peer, --channels, --chunk-bytes, --ecmp, --json, "
            "--help (see 'strait collective --help')\n");
  EXPECT_EQ(run.out, "");
}

// An option is never guessed from its prefix: sweep has --jsonl, and --json must not
// quietly become it (outputs_and_options_test.cpp has every command).
TEST(CliInputErrors, AnOptionPrefixIsNotGuessed) {
  const auto run = run_strait({"sweep", "configs/sweeps/dlrm-8gpu-quick.json", "--json", "x"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.err,
            "strait: sweep: unknown option '--json'; options are not abbreviated: did you mean "
            "--jsonl? (see 'strait sweep --help')\n");
  EXPECT_EQ(run.out, "");
}

// plan --steps 0 crashed (a null reference in the memory model), --steps -1 was an
// internal error: both are usage errors with the range a scenario file's "steps" has.
TEST(CliInputErrors, PlanStepsOutsideTheirRangeAreUsageErrors) {
  for (const char* steps : {"0", "-1", "1001"}) {
    const auto run =
        run_strait({"plan", "--cluster", kCluster, "--model", "configs/models/dlrm-tiny.json",
                    "--data", "configs/data/dlrm-tiny.json", "--steps", steps});
    EXPECT_EQ(run.exit_code, 2) << steps;
    EXPECT_EQ(run.err,
              std::string("strait: plan: --steps: expected 1..1000 steps, got ") + steps + "\n");
  }
}

// A planner budget of 1e308 s was converted to simulated time (undefined behaviour).
TEST(CliInputErrors, PlanBudgetHasARange) {
  const auto run = run_strait({"plan", "configs/scenarios/dlrm-1gpu.json", "--budget", "1e308"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.err,
            "strait: plan: --budget: expected a positive duration up to 1e6 s such as 60s or 5 "
            "min, got '1e308'\n");
}

// A run is estimated before anything is built and refused past its work limit with the
// figures and the option that lifts it (a model of a million layers took 24 GiB and was
// killed); dlrm-1gpu: 1 rank x 4 steps x (24 + 2 x 12) ops, 4 x 192 held whole, 26 tables x
// 256 pooling factors x 4 steps drawn, 26 placements = 27,618 items.
TEST(CliInputErrors, ARunPastItsWorkLimitIsRefusedWithItsFigures) {
  auto run = run_strait(
      {"simulate", "configs/scenarios/dlrm-1gpu.json", "--max-work", "100", "--json", "-"});
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_EQ(run.err,
            "strait: error: configs/scenarios/dlrm-1gpu.json: the run is estimated at 2.76e+04 "
            "items (1 ranks x 4 steps x ~48 ops, one rank's 768 held whole, 2.66e+04 values "
            "drawn, 26 table placements), past the work limit of 100 items (an item takes about "
            "15-50 bytes and 0.2-1 us to build and replay); lift it with --max-work or the "
            "scenario's \"max_work\", or run fewer steps, ranks or layers\n");
  EXPECT_EQ(run.out, "");
  run = run_strait({"simulate", "configs/scenarios/dlrm-1gpu.json", "--max-work", "0"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.err, "strait: simulate: --max-work: expected 1 .. 1e15 work items, got 0\n");
}

// Sizes are counted before any runs: 10^7 of them (-f 1.0000001) or a step of 0 are
// refused, with the option that lifts the limit.
TEST(CliInputErrors, CollectiveCapsItsSizes) {
  auto run = run_strait({"collective", "--cluster", kCluster, "-b", "1", "-e", "1G", "-i", "1"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.err,
            "strait: collective: 1 B to 1.00 GiB by 1 B is 1073741824 sizes; at most 10000 "
            "(raise --stepbytes)\n");
  run = run_strait({"collective", "--cluster", kCluster, "-b", "1", "-e", "1G", "-i", "0"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.err, "strait: collective: --stepbytes: expected a positive size\n");
  run = run_strait(
      {"collective", "--cluster", kCluster, "-b", "1M", "-e", "1M", "--chunk-bytes", "0"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.err, "strait: collective: --chunk-bytes: expected a positive size\n");
}

TEST(CliInputErrors, MisspelledOpIsAUsageErrorListingValidOps) {
  const auto run = run_strait({"collective", "--cluster", kCluster, "--op", "allreduc"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.err,
            "strait: collective: --op: expected one of all_reduce, all_gather, reduce_scatter, "
            "all_to_all, "
            "broadcast, reduce, sendrecv, got 'allreduc'\n");
  EXPECT_EQ(run.out, "");
}

TEST(CliInputErrors, MissingClusterIsAUsageError) {
  const auto run = run_strait({"collective", "-b", "1M"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.err,
            "strait: collective: the option '--cluster' is required but missing (see 'strait "
            "collective --help')\n");
}

TEST(CliInputErrors, MisspelledClusterKeyNamesFilePointerAndSuggestion) {
  // The bundled 8-GPU host with "nvlink" under defaults/host spelled "nvlinks".
  std::string text = read_text(std::string(STRAIT_SOURCE_DIR) + "/" + kCluster);
  const auto at = text.find("\"nvlink\"");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 8, "\"nvlinks\"");
  const std::string path = temp_path("cluster.json");
  write_text(path, text);

  const auto run = run_strait({"collective", "--cluster", path});
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_EQ(run.err, "strait: error: " + path +
                         ": /defaults/host/nvlinks: unknown key; did you mean \"nvlink\"?\n");
  EXPECT_EQ(run.out, "");
  std::remove(path.c_str());
}

TEST(CliInputErrors, MissingScenarioFileCannotBeOpened) {
  const std::string path = temp_path("no-such-scenario.json");
  const auto run = run_strait({"simulate", path});
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_EQ(run.err, "strait: error: " + path + ": cannot open file for reading\n");
}

TEST(CliInputErrors, MalformedScenarioReportsLineAndColumn) {
  // The value of "cluster" is missing: the parser stops at the '}' on line 2, column 13.
  const std::string path = temp_path("malformed.json");
  write_text(path, "{\"name\": \"x\", \"steps\": 3,\n \"cluster\": }\n");
  const auto run = run_strait({"simulate", path});
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_EQ(run.err, "strait: error: " + path + ": /: malformed JSON at line 2, column 13\n");
  std::remove(path.c_str());
}

TEST(CliInputErrors, RankSetBeyondTheClusterIsBadInput) {
  const auto run = run_strait({"collective", "--cluster", kCluster, "--ranks", "0-99"});
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_TRUE(starts_with(
      run.err,
      "strait: error: rank set '0-99': GPU 99 does not exist (the cluster has GPUs 0..7)"));
  EXPECT_EQ(run.err.find('\n'), run.err.size() - 1) << "one line expected: " << run.err;
}

TEST(CliInputErrors, NonFiniteStepFactorIsAUsageError) {
  for (const char* factor : {"nan", "inf"}) {
    const auto run =
        run_strait({"collective", "--cluster", kCluster, "-b", "1K", "-e", "1M", "-f", factor});
    EXPECT_EQ(run.exit_code, 2) << factor;
    EXPECT_EQ(run.err,
              std::string("strait: collective: --stepfactor: expected a finite number > 1, got ") +
                  factor + "\n")
        << factor;
  }
}

TEST(CliInputErrors, NegativeChannelsAreAUsageError) {
  const auto run = run_strait({"collective", "--cluster", kCluster, "--channels", "-1"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.err,
            "strait: collective: --channels: expected 0 (one per NIC rail) or more, got -1\n");
}

TEST(CliInputErrors, ADirectoryIsNotAClusterFile) {
  const auto run = run_strait({"collective", "--cluster", "configs/clusters"});
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_EQ(run.err, "strait: error: configs/clusters: is a directory, not a JSON file\n");
}

// -f 1.0000001 cannot grow 1 KiB by even a byte: the sweep still walks up to -e.
TEST(CliInputErrors, ATinyStepFactorStillReachesTheLargestSize) {
  const auto run = run_strait(
      {"collective", "--cluster", kCluster, "-b", "1000", "-e", "1003", "-f", "1.0000001"});
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_TRUE(contains(run.out, "  1003 ")) << run.out;
}

TEST(CliInputErrors, GraphOfACollectivesScenarioSaysWhatItNeeds) {
  const auto run = run_strait({"graph", "configs/scenarios/collectives-3dc.json"});
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_EQ(
      run.err,
      "strait: error: configs/scenarios/collectives-3dc.json: is a scenario of collectives; "
      "'strait graph' shows the ops of a training scenario (one with model, data and plan)\n");
}

}  // namespace
}  // namespace strait::cli::testing
