// The rules every strait command follows for its outputs and options (issue 37):
//   1. each file a command writes is named after its report, one line each:
//      "wrote PATH (WHAT)" ("# wrote ..." in collective's nccl-tests table);
//   2. "-" for a file-writing option is standard output, which then carries that output
//      alone (the report and the "wrote" lines go to stderr), or, where a stream cannot take
//      it (a directory, a file appended to and read back), a usage error; never a file "-";
//   3. an option is never guessed from a prefix: a mistyped or abbreviated one is a usage
//      error naming the options it abbreviates, else the closest one, else all of them.
// Runs use small inputs: dlrm-1gpu and dlrm-tiny-cpu (2 ranks), 2 plan evaluations, a
// two-point sweep, exec of dlrm-tiny on one rank (no mpirun; skipped without MPI), the quick
// elementwise calibration (6 cases), a 15-kernel Kineto trace (11 recognised, 7 records).

#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "strait_process.hpp"

namespace strait::cli::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kOneGpu = "configs/scenarios/dlrm-1gpu.json";
constexpr const char* kTinyCpu = "configs/scenarios/dlrm-tiny-cpu.json";
constexpr const char* kCluster = "configs/clusters/hgx-h100-8.json";
constexpr const char* kKineto = "tests/calibration/data/kineto_small.json";

// A file named "-" where the runs start (the repository root) would be a "-" taken for a name.
bool dash_file_exists() { return fs::exists(fs::path(STRAIT_SOURCE_DIR) / "-"); }

// The text after the last occurrence of `marker` (the "wrote" lines after a report).
std::string after_last(const std::string& text, const std::string& marker) {
  const auto at = text.rfind(marker);
  return at == std::string::npos ? std::string() : text.substr(at + marker.size());
}

// The Chrome trace's spans ("X" events), which the "wrote" line of a trace counts.
std::size_t spans_of(const json& trace) {
  std::size_t n = 0;
  for (const auto& e : trace["traceEvents"]) n += e.value("ph", "") == "X";
  return n;
}

std::string trace_line(const std::string& path, std::size_t spans) {
  return "wrote " + path + " (Chrome/Perfetto trace, " + std::to_string(spans) +
         " spans; open it in ui.perfetto.dev)\n";
}

// `plan` on the tiny CPU scenario, 2 final-mode evaluations (a second or so).
std::vector<std::string> plan_args(std::vector<std::string> outputs) {
  std::vector<std::string> args = {"plan", kTinyCpu, "--evaluations", "2"};
  args.insert(args.end(), outputs.begin(), outputs.end());
  return args;
}

// A two-point sweep of dlrm-1gpu (steps 1 and 2).
std::string two_point_sweep() {
  const auto path = temp_path("sweep.json");
  write_text(path, R"({"name": "two", "scenario": ")" + std::string(STRAIT_SOURCE_DIR) + "/" +
                       kOneGpu + R"(",
    "axes": [{"name": "steps", "pointer": "/scenario/steps", "values": [1, 2]}]})");
  return path;
}

// The quick elementwise calibration: 6 measurements, no collectives.
std::vector<std::string> calibrate_run_args(const std::string& out) {
  return {"calibrate",        "run",        "--backend",   "cpu",   "--quick",
          "--no-collectives", "--families", "elementwise", "--out", out};
}

// dlrm-tiny on one CPU rank, 2 steps: `strait exec` runs it without mpirun (a singleton
// MPI job), in a second or two.
std::string one_rank_scenario() {
  const auto path = temp_path("one-rank.json");
  const std::string root = std::string(STRAIT_SOURCE_DIR) + "/configs/";
  write_text(path, R"({"name": "one-rank", "cluster": ")" + root +
                       R"(clusters/localhost-cpu.json", "model": ")" + root +
                       R"(models/dlrm-tiny.json", "data": ")" + root + R"(data/dlrm-tiny.json",
    "plan": {"ranks": 1, "dense": {"parallelism": "ddp"}, "sparse": {"default": "table_wise"}},
    "steps": 2, "seed": 1})");
  return path;
}

// `strait exec` of the one-rank scenario; false (the test then skips) without MPI.
bool run_exec(const std::vector<std::string>& options, StraitRun& run) {
  std::vector<std::string> args = {"exec", one_rank_scenario()};
  args.insert(args.end(), options.begin(), options.end());
  run = run_strait(args, 120);
  return !contains(run.err, "this build has no MPI");
}

// ---- 1. Each command names the files it wrote ---------------------------------------------

TEST(CliWroteLines, SimulateNamesItsResultAndTrace) {
  const auto result = temp_path("result.json"), trace = temp_path("trace.json");
  const auto run = run_strait({"simulate", kOneGpu, "--json", result, "--trace", trace});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(
      after_last(run.out, " M events/s)\n"),
      "wrote " + result + " (result as JSON)\n" + trace_line(trace, spans_of(read_json(trace))));
}

// The spans counted are the timeline's, as a Chrome trace of the same run holds them.
TEST(CliWroteLines, SimulateNamesItsKinetoTraceDirectory) {
  const auto chrome = temp_path("chrome.json"), dir = temp_path("kineto");
  ASSERT_EQ(run_strait({"simulate", kTinyCpu, "--trace", chrome}).exit_code, 0);
  const auto run = run_strait({"simulate", kTinyCpu, "--trace-format", "kineto", "--trace", dir});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(after_last(run.out, " M events/s)\n"),
            "wrote " + dir + " (2 Kineto traces rank-<r>.json, " +
                std::to_string(spans_of(read_json(chrome))) + " spans; HTA reads the directory)\n");
}

TEST(CliWroteLines, CollectiveNamesItsJsonInACommentLine) {
  const auto result = temp_path("collective.json");
  const auto run =
      run_strait({"collective", "--cluster", kCluster, "-b", "1M", "-e", "1M", "--json", result});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(after_last(run.out, " s of wall time\n"), "# wrote " + result + " (results as JSON)\n");
}

TEST(CliWroteLines, GraphNamesItsJson) {
  const auto graph = temp_path("graph.json");
  const auto run = run_strait({"graph", kOneGpu, "--json", graph});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out, "wrote " + graph + " (op graph of rank 0 as JSON)\n");
}

// The four files of `strait plan`, each with what reads it.
TEST(CliWroteLines, PlanNamesItsFourFiles) {
  const auto report = temp_path("report.json"), plan = temp_path("plan.json"),
             torchrec = temp_path("sharding.json"), launch = temp_path("launch.json");
  const auto run = run_strait(
      plan_args({"--json", report, "--out", plan, "--torchrec", torchrec, "--launch", launch}));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::string lines = "wrote " + report + " (report as JSON)\n" + "wrote " + plan +
                            " (plan: strait simulate --plan)\n" + "wrote " + torchrec +
                            " (TorchRec sharding plan: strait simulate --torchrec)\n" + "wrote " +
                            launch + " (launch plan: strait exec, and its launcher lines)\n";
  ASSERT_GT(run.out.size(), lines.size());
  EXPECT_EQ(run.out.substr(run.out.size() - lines.size()), lines);
}

TEST(CliWroteLines, SweepNamesItsCsvAndJsonLines) {
  const auto csv = temp_path("two.csv"), jsonl = temp_path("two.jsonl");
  const auto run =
      run_strait({"sweep", two_point_sweep(), "--threads", "1", "--csv", csv, "--jsonl", jsonl});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(after_last(run.out, " threads\n"), "wrote " + csv + " (CSV, a row per point)\n" +
                                                   "wrote " + jsonl +
                                                   " (JSON Lines, each point's full report)\n");
}

// --out, exec's older name of --json, names the same result.
TEST(CliWroteLines, ExecNamesItsResultAndTrace) {
  const auto result = temp_path("measured.json"), trace = temp_path("measured-trace.json");
  for (const char* option : {"--json", "--out"}) {
    StraitRun run;
    if (!run_exec({option, result, "--trace", trace}, run)) GTEST_SKIP() << run.err;
    ASSERT_EQ(run.exit_code, 0) << run.err;
    EXPECT_TRUE(run.out.ends_with("\nwrote " + result +
                                  " (measured result as JSON: strait compare's MEASURED)\n" +
                                  trace_line(trace, spans_of(read_json(trace)))))
        << option << "\n"
        << run.out;
  }
}

TEST(CliWroteLines, CompareNamesItsJsonAndTrace) {
  const auto sim = temp_path("sim.json"), sim_trace = temp_path("sim-trace.json");
  ASSERT_EQ(run_strait({"simulate", kTinyCpu, "--json", sim, "--trace", sim_trace}).exit_code, 0);
  const auto result = temp_path("compare.json"), both = temp_path("both.json");
  const auto run = run_strait({"compare", sim, sim, "--sim-trace", sim_trace, "--measured-trace",
                               sim_trace, "--json", result, "--trace", both});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto trace = read_json(both);
  EXPECT_TRUE(contains(run.out, "\nwrote " + result + " (comparison as JSON)\nwrote " + both +
                                    " (Chrome/Perfetto trace of both runs, " +
                                    std::to_string(spans_of(trace)) +
                                    " spans; open it in ui.perfetto.dev)\n"));
  EXPECT_TRUE(run.out.ends_with("ui.perfetto.dev)\n")) << run.out;
}

TEST(CliWroteLines, CalibrateNamesItsMeasurementsAndProfile) {
  const auto measurements = temp_path("m.json"), profile = temp_path("profile.json");
  auto run = run_strait(calibrate_run_args(measurements));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out, "wrote " + measurements + " (6 measurements, cpu backend)\n");

  run = run_strait({"calibrate", "fit", measurements, "--base",
                    "configs/profiles/cpu-localhost.json", "--out", profile});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_TRUE(run.out.ends_with("\nwrote " + profile + " (calibration profile of gpu_type CPU)\n"))
      << run.out;

  const auto imported = temp_path("imported.json");
  run = run_strait({"calibrate", "import-kineto", kKineto, "--out", imported});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out, "11 of 15 GPU kernels recognised\nwrote " + imported + " (7 measurements)\n");
}

// ---- 2. "-" is standard output, or refused -----------------------------------------------

// The JSON alone on stdout, the report on stderr.
void expect_json_on_stdout(const StraitRun& run, const std::string& report_part) {
  EXPECT_EQ(run.exit_code, 0) << run.err;
  const auto parsed = json::parse(run.out, nullptr, /*allow_exceptions=*/false);
  EXPECT_FALSE(parsed.is_discarded()) << "stdout is not JSON alone:\n" << run.out.substr(0, 2000);
  EXPECT_TRUE(contains(run.err, report_part));
  EXPECT_FALSE(dash_file_exists());
}

TEST(CliDashIsStandardOutput, SimulateJsonAndChromeTrace) {
  const auto trace = temp_path("trace.json");
  auto run = run_strait({"simulate", kOneGpu, "--json", "-", "--trace", trace});
  expect_json_on_stdout(run, "strait simulate: scenario 'dlrm-1gpu'");
  EXPECT_TRUE(run.err.ends_with(trace_line(trace, spans_of(read_json(trace))))) << run.err;
  EXPECT_EQ(json::parse(run.out)["scenario"], "dlrm-1gpu");

  const auto result = temp_path("result.json");
  run = run_strait({"simulate", kOneGpu, "--trace", "-", "--json", result});
  expect_json_on_stdout(run, "strait simulate: scenario 'dlrm-1gpu'");
  EXPECT_TRUE(run.err.ends_with("wrote " + result + " (result as JSON)\n")) << run.err;
  EXPECT_GT(spans_of(json::parse(run.out)), 0u);
}

TEST(CliDashIsStandardOutput, CollectiveAndGraphJson) {
  auto run =
      run_strait({"collective", "--cluster", kCluster, "-b", "1M", "-e", "1M", "--json", "-"});
  expect_json_on_stdout(run, "# Avg bus bandwidth");
  EXPECT_EQ(json::parse(run.out)["op"], "all_reduce");

  run = run_strait({"graph", kOneGpu, "--json", "-"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(json::parse(run.out)["rank"], 0);
  EXPECT_EQ(run.err, "");
  EXPECT_FALSE(dash_file_exists());
}

// Each of plan's four outputs on stdout, the other three in files named on stderr.
TEST(CliDashIsStandardOutput, EachOfPlansFourFiles) {
  const std::vector<std::pair<std::string, std::string>> outputs = {
      {"--json", "(report as JSON)"},
      {"--out", "(plan: strait simulate --plan)"},
      {"--torchrec", "(TorchRec sharding plan: strait simulate --torchrec)"},
      {"--launch", "(launch plan: strait exec, and its launcher lines)"}};
  for (const auto& [on_stdout, unused] : outputs) {
    std::vector<std::string> args;
    std::string lines;
    for (const auto& [option, what] : outputs) {
      const auto path = option == on_stdout ? std::string("-") : temp_path(option.substr(2));
      args.insert(args.end(), {option, path});
      if (path != "-") lines += "wrote " + path + " " + what + "\n";
    }
    const auto run = run_strait(plan_args(args));
    expect_json_on_stdout(run, "strait plan: ");
    EXPECT_TRUE(run.err.ends_with(lines)) << on_stdout << "\n" << run.err;
    const auto j = json::parse(run.out, nullptr, false);
    if (on_stdout == "--launch") {
      EXPECT_TRUE(j.contains("job")) << j.dump().substr(0, 200);
    }
  }
}

TEST(CliDashIsStandardOutput, CompareJsonAndTrace) {
  const auto sim = temp_path("sim.json"), sim_trace = temp_path("sim-trace.json");
  ASSERT_EQ(run_strait({"simulate", kTinyCpu, "--json", sim, "--trace", sim_trace}).exit_code, 0);
  const std::vector<std::string> inputs = {
      "compare", sim, sim, "--sim-trace", sim_trace, "--measured-trace", sim_trace};
  auto args = inputs;
  args.insert(args.end(), {"--json", "-"});
  auto run = run_strait(args);
  expect_json_on_stdout(run, "strait compare: scenario 'dlrm-tiny-cpu', 2 ranks");
  EXPECT_TRUE(json::parse(run.out).contains("step_time"));

  args = inputs;
  args.insert(args.end(), {"--trace", "-"});
  run = run_strait(args);
  expect_json_on_stdout(run, "strait compare: scenario 'dlrm-tiny-cpu', 2 ranks");
  EXPECT_GT(spans_of(json::parse(run.out)), 0u);
}

TEST(CliDashIsStandardOutput, ExecResultAndTrace) {
  const auto trace = temp_path("measured-trace.json");
  for (const char* option : {"--json", "--out"}) {
    StraitRun run;
    if (!run_exec({option, "-", "--trace", trace}, run)) GTEST_SKIP() << run.err;
    expect_json_on_stdout(run, "strait exec: scenario 'one-rank', 1 ranks");
    EXPECT_EQ(json::parse(run.out)["scenario"], "one-rank") << option;
    EXPECT_TRUE(run.err.ends_with(trace_line(trace, spans_of(read_json(trace))))) << run.err;
  }
  const auto result = temp_path("measured.json");
  StraitRun run;
  if (!run_exec({"--trace", "-", "--json", result}, run)) GTEST_SKIP() << run.err;
  expect_json_on_stdout(run, "strait exec: scenario 'one-rank', 1 ranks");
  EXPECT_GT(spans_of(json::parse(run.out)), 0u);
  EXPECT_TRUE(run.err.ends_with("wrote " + result +
                                " (measured result as JSON: strait compare's MEASURED)\n"))
      << run.err;
}

TEST(CliDashIsStandardOutput, CalibrateRunFitAndImport) {
  auto run = run_strait(calibrate_run_args("-"));
  expect_json_on_stdout(run, "strait calibrate: kernels 0/6");
  const auto measurements = json::parse(run.out);
  EXPECT_EQ(measurements["records"].size(), 6u);

  const auto m = temp_path("m.json");
  write_text(m, run.out);
  run = run_strait(
      {"calibrate", "fit", m, "--base", "configs/profiles/cpu-localhost.json", "--out", "-"});
  expect_json_on_stdout(run, "elementwise");
  EXPECT_EQ(json::parse(run.out)["gpu_type"], "CPU");

  run = run_strait({"calibrate", "import-kineto", kKineto, "--out", "-"});
  expect_json_on_stdout(run, "11 of 15 GPU kernels recognised\n");
  EXPECT_EQ(json::parse(run.out)["records"].size(), 7u);
}

// Where a stream cannot take an output, "-" is a usage error saying why; nothing runs.
TEST(CliDashIsStandardOutput, IsRefusedWhereAStreamCannotTakeTheOutput) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"simulate", kOneGpu, "--trace-format", "kineto", "--trace", "-"},
       "simulate: --trace -: standard output cannot take a Kineto trace, a directory of "
       "rank-<r>.json files; name a directory"},
      {{"sweep", two_point_sweep(), "--csv", "-"},
       "sweep: --csv -: standard output cannot take a sweep's CSV: rows are appended as points "
       "finish and --resume reads them back; name a file"},
      {{"sweep", two_point_sweep(), "--jsonl", "-"},
       "sweep: --jsonl -: standard output cannot take a sweep's JSON Lines: rows are appended "
       "as points finish and --resume reads them back; name a file"},
      {{"calibrate", "run", "--out", "-", "--resume"},
       "calibrate run: --out -: standard output cannot take a run to --resume: it is read "
       "back; name a file"},
      // Two outputs on one stream would be one unreadable mixture.
      {plan_args({"--out", "-", "--json", "-"}),
       "plan: --out and --json both write to standard output (-); send one of them to a file"},
      {{"simulate", kOneGpu, "--json", "-", "--trace", "-"},
       "simulate: --json and --trace both write to standard output (-); send one of them to a "
       "file"},
  };
  for (const auto& [args, message] : cases) {
    const auto run = run_strait(args);
    EXPECT_EQ(run.exit_code, 2) << args[0];
    EXPECT_EQ(run.err, "strait: " + message + "\n");
    EXPECT_EQ(run.out, "");
  }
  EXPECT_FALSE(dash_file_exists());
}

// Two options naming one file would leave only the last one written.
TEST(CliDashIsStandardOutput, TwoOutputsNamingOneFileAreRefused) {
  const auto file = temp_path("same.json");
  const auto run = run_strait(plan_args({"--out", file, "--launch", file}));
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.err, "strait: plan: --out and --launch both write " + file + "; name two files\n");
  EXPECT_FALSE(fs::exists(file));
}

// ---- 3. No option is guessed from a prefix ------------------------------------------------

// Every command (and calibrate's subcommands), an abbreviation of its options.
TEST(CliNoPrefixGuessing, EveryCommandRefusesAnAbbreviationNamingWhatItAbbreviates) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"simulate", kOneGpu, "--tra", "t.json"},
       "simulate: unknown option '--tra'; options are not abbreviated: did you mean --trace, "
       "--trace-format or --trace-ranks? (see 'strait simulate --help')"},
      {{"collective", "--clu", kCluster},
       "collective: unknown option '--clu'; options are not abbreviated: did you mean "
       "--cluster? (see 'strait collective --help')"},
      {{"plan", kTinyCpu, "--torch", "s.json"},
       "plan: unknown option '--torch'; options are not abbreviated: did you mean --torchrec, "
       "--torchrec-module or --torchrec-sequence-module? (see 'strait plan --help')"},
      {{"graph", kOneGpu, "--ra", "1"},
       "graph: unknown option '--ra'; options are not abbreviated: did you mean --rank? (see "
       "'strait graph --help')"},
      {{"sweep", "configs/sweeps/dlrm-8gpu-quick.json", "--json", "x"},
       "sweep: unknown option '--json'; options are not abbreviated: did you mean --jsonl? "
       "(see 'strait sweep --help')"},
      {{"calibrate", "run", "--fam", "gemm", "--out", "m.json"},
       "calibrate run: unknown option '--fam'; options are not abbreviated: did you mean "
       "--families? (see 'strait calibrate run --help')"},
      {{"calibrate", "fit", "m.json", "--gpu", "CPU", "--out", "p.json"},
       "calibrate fit: unknown option '--gpu'; options are not abbreviated: did you mean "
       "--gpu-type? (see 'strait calibrate fit --help')"},
      {{"calibrate", "report", "p.json", "--al"},
       "calibrate report: unknown option '--al'; options are not abbreviated: did you mean "
       "--all? (see 'strait calibrate report --help')"},
      {{"calibrate", "import-kineto", kKineto, "--dev", "H100", "--out", "m.json"},
       "calibrate import-kineto: unknown option '--dev'; options are not abbreviated: did you "
       "mean --device? (see 'strait calibrate import-kineto --help')"},
      {{"exec", kTinyCpu, "--warm", "2"},
       "exec: unknown option '--warm'; options are not abbreviated: did you mean --warmup? (see "
       "'strait exec --help')"},
      {{"compare", "s.json", "m.json", "--sim", "t.json"},
       "compare: unknown option '--sim'; options are not abbreviated: did you mean "
       "--sim-trace? (see 'strait compare --help')"},
  };
  for (const auto& [args, message] : cases) {
    const auto run = run_strait(args);
    EXPECT_EQ(run.exit_code, 2) << args[0];
    EXPECT_EQ(run.err, "strait: " + message + "\n");
    EXPECT_EQ(run.out, "");
  }
}

// A mistyped option names the closest one; one close to none lists every option.
TEST(CliNoPrefixGuessing, AMistypedOptionNamesTheClosestOrEveryOption) {
  auto run = run_strait({"simulate", kOneGpu, "--trase", "t.json"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.err,
            "strait: simulate: unknown option '--trase'; did you mean --trace? (see 'strait "
            "simulate --help')\n");
  // import-kineto's input is --kineto (compare's name): --trace names a trace written.
  run = run_strait({"calibrate", "import-kineto", "--trace", kKineto, "--out", "m.json"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.err,
            "strait: calibrate import-kineto: unknown option '--trace'; the options are --out, "
            "--device, --help (see 'strait calibrate import-kineto --help')\n");
  run = run_strait({"graph", kOneGpu, "--bogus"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.err,
            "strait: graph: unknown option '--bogus'; the options are --rank, --json, --help "
            "(see 'strait graph --help')\n");
}

}  // namespace
}  // namespace strait::cli::testing
