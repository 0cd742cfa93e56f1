// The work estimate (work_estimate.hpp): an upper bound of the ops the builder makes for
// every bundled scenario small enough to build here, within twice, and a run past
// the limit refused before anything is built, with its figures.
#include "sim/workload/work_estimate.hpp"

#include <gtest/gtest.h>

#include <cstdio>

#include "sim/workload/batch.hpp"
#include "sim/workload/op_graph_builder.hpp"
#include "test_support.hpp"

namespace strait::sim::workload {
namespace {

using testing_support::source;

class BundledWork : public ::testing::TestWithParam<const char*> {};

TEST_P(BundledWork, EstimateBoundsTheBuiltOpsWithinTwice) {
  const auto sc = TrainingScenario::load(source(std::string("configs/scenarios/") + GetParam()));
  double ops = 0;
  build_op_graph(sc, {}, [&](const RankOps& rank) { ops += static_cast<double>(rank.ops.size()); });
  const WorkEstimate w = estimate_work(sc, sc.steps);
  std::printf("%s: %.0f ops built, %.0f estimated (%.2fx)\n", GetParam(), ops, w.ops(),
              w.ops() / ops);
  EXPECT_GE(w.ops(), ops);
  EXPECT_LE(w.ops(), 2 * ops);
}

INSTANTIATE_TEST_SUITE_P(Workload, BundledWork,
                         ::testing::Values("dlrm-1gpu.json", "dlrm-8gpu.json",
                                           "dlrm-mlperf-128.json", "dlrm-tiny-cpu.json",
                                           "hstu-1gpu.json", "hstu-dlrm-v3-1gpu.json",
                                           "hstu-recsys-bench.json", "hstu-tiny-cpu-4.json",
                                           "hstu-3dc.json"));

std::string work_error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const WorkLimitError& e) {
    return e.what();
  }
  return "no error";
}

// hstu-1gpu with a million HSTU layers: 1 rank x 4 steps x (24 + 2 x 1 + 24 x 1e6) ops =
// 9.6e7 ops, 4 x 9.6e7 = 3.84e8 for the rank's ops held whole, 4 steps x 32 sequences drawn,
// 1 table placement: 4.8e8 items, past the default limit of 2e8 before the dense stack or
// a batch is built (this run took 24 GiB and was killed after 157 s).
TEST(WorkLimit, AMillionLayersAreRefusedWithTheFiguresAndTheOption) {
  auto sc = TrainingScenario::load(source("configs/scenarios/hstu-1gpu.json"));
  sc.model.hstu.layers = 1'000'000;
  const std::string message = work_error_of([&] { build_op_graph(sc); });
  EXPECT_NE(message.find("hstu-1gpu.json: the run is estimated at 4.8e+08 items (1 ranks x 4 "
                         "steps x ~2.4e+07 ops, one rank's 3.84e+08 held whole, 128 values "
                         "drawn, 1 table placements), past the work limit of 2e+08 items"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("lift it with --max-work or the scenario's \"max_work\""),
            std::string::npos)
      << message;
  EXPECT_EQ(work_error_of([&] { sample_steps(sc, sc.steps); }), message);
  sc.max_work = 5e8;  // lifted
  EXPECT_NO_THROW(check_work(sc, sc.steps));
}

TEST(WorkLimit, AHugeBatchOfSequencesIsRefusedBeforeItIsDrawn) {
  auto sc = TrainingScenario::load(source("configs/scenarios/hstu-1gpu.json"));
  sc.data.batch_per_replica = 1 << 24;
  sc.data.global_batch = 0;
  const WorkEstimate w = estimate_work(sc, sc.steps);
  EXPECT_DOUBLE_EQ(w.samples, 4.0 * (1 << 24));  // 4 steps of 2^24 sequences on 1 replica
  EXPECT_NE(work_error_of([&] { sample_steps(sc, 100); }).find("values drawn"), std::string::npos);
}

TEST(WorkLimit, ManyTablesOnManyRanksCountTheirPlacements) {
  auto sc = TrainingScenario::load(source("configs/scenarios/dlrm-mlperf-128.json"));
  const auto tables = static_cast<double>(sc.model.tables.size());
  EXPECT_DOUBLE_EQ(estimate_work(sc, 1).placements, 128 * tables);
  sc.max_work = 128 * tables;  // the placements alone fill it
  EXPECT_NE(work_error_of([&] { check_work(sc, 1); }), "no error");
}

}  // namespace
}  // namespace strait::sim::workload
