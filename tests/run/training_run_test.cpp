// Scenario tests of a whole training step, each with a hand-checkable expectation.

#include "sim/run/training_run.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "run_test_support.hpp"
#include "sim/run/training_report_json.hpp"
#include "sim/workload/op_graph_builder.hpp"
#include "traces/timeline.hpp"

namespace strait::sim::run {
namespace {

using testing_support::bundled_cost;
using testing_support::scenario_of;
using testing_support::source;

const char* kOneLayerModel = R"({"embedding": {"tables": [{"name": "t0", "rows": 1000, "dim": 16}]},
  "dense": {"dense_features": 32, "top_mlp": {"layers": [64]}}})";
const char* kFixedData = R"({"batch_size": {"per_rank": 128},
  "pooling_factors": {"default": {"distribution": "fixed", "value": 2}}})";

// One rank, one table, one MLP layer (ops: lookup, fwd, loss, loss bwd, bwd, update,
// optimizer, all on the compute stream, no collectives): the step takes exactly the sum
// of the kernels' roofline times (launch + max(compute, memory)), up to 1 ps of rounding
// per kernel, in flow and in analytical mode.
TEST(TrainingRun, OneRankStepIsTheSumOfItsKernelsRooflineTimes) {
  const auto sc = scenario_of("hgx-h100-8.json", kOneLayerModel, kFixedData, R"({"ranks": 1})");
  const auto graph = workload::build_op_graph(sc);
  Time expected = Time::zero();
  int kernels = 0;
  for (const auto& op : graph.ranks[0].ops) {
    ASSERT_EQ(op.kind, workload::OpKind::kKernel);
    expected += bundled_cost().cost(op.kernel, "H100-SXM").duration();
    ++kernels;
  }
  EXPECT_EQ(kernels, 7);
  for (auto mode : {network::NetworkMode::kFlow, network::NetworkMode::kAnalytical}) {
    TrainingRunOptions options;
    options.mode = mode;
    const auto report = run_training(sc, bundled_cost(), options);
    ASSERT_EQ(report.step_ms.size(), 1u);
    EXPECT_NEAR(report.step_ms[0], expected.to_ms(), kernels * 1e-9) << network::to_string(mode);
    EXPECT_NEAR(report.critical.compute.to_ms(), expected.to_ms(), kernels * 1e-9);
    EXPECT_EQ(report.critical.straggler_wait, Time::zero());
  }
}

const char* kSmallHstu =
    R"({"embedding": {"tables": [{"name": "item", "rows": 1000000, "dim": 64, "pooling": "sequence"}]},
  "dense": {"hstu": {"layers": 2, "model_dim": 64, "heads": 2, "head_dim": 32, "negatives": 16}}})";

std::string hstu_data(const std::string& lengths) {
  return R"({"batch_size": {"per_rank": 16}, "max_length": 4096, "sequence_length": )" + lengths +
         "}";
}
std::string plan_with(const std::string& balance) {
  return R"({"dense": {"parallelism": "ddp", "bucket_size": "8 MiB"},
             "sparse": {"group_size": 8, "placement": "host", "default": "row_wise"},
             "schedule": {"load_balance": ")" +
         balance + R"("}})";
}

double mean_straggler_ms(const TrainingReport& r) { return r.average.straggler_wait.to_ms(); }

// 8 ranks of one host train a small HSTU model on heavy-tailed lengths (lognormal, sigma
// 1.2): with no balancing the rank that draws the longest sequences sets the pace and the
// others wait at the gradient all-reduce. Balancing samples by cost (a L + b L^2) must
// lower that wait and the step time. With a fixed length every rank has the same cost:
// balancing changes nothing, to the picosecond.
TEST(TrainingRun, LoadBalancingByCostLowersStragglerWaitOnlyWhenLengthsVary) {
  const auto heavy = hstu_data(R"({"distribution": "lognormal", "mean": 600, "sigma": 1.2})");
  const auto none = run_training(
      scenario_of("hgx-h100-8.json", kSmallHstu, heavy, plan_with("none"), 2), bundled_cost(), {});
  const auto greedy =
      run_training(scenario_of("hgx-h100-8.json", kSmallHstu, heavy, plan_with("greedy"), 2),
                   bundled_cost(), {});
  const auto kk = run_training(
      scenario_of("hgx-h100-8.json", kSmallHstu, heavy, plan_with("karmarkar_karp"), 2),
      bundled_cost(), {});
  EXPECT_LT(mean_straggler_ms(greedy), 0.7 * mean_straggler_ms(none));
  EXPECT_LT(mean_straggler_ms(kk), 0.7 * mean_straggler_ms(none));
  EXPECT_LT(greedy.stats.mean_ms, none.stats.mean_ms);

  const auto fixed = hstu_data(R"({"distribution": "fixed", "value": 600})");
  const auto f_none = run_training(
      scenario_of("hgx-h100-8.json", kSmallHstu, fixed, plan_with("none"), 2), bundled_cost(), {});
  const auto f_greedy =
      run_training(scenario_of("hgx-h100-8.json", kSmallHstu, fixed, plan_with("greedy"), 2),
                   bundled_cost(), {});
  EXPECT_EQ(f_none.step_ms, f_greedy.step_ms);
  EXPECT_EQ(f_none.average.straggler_wait, f_greedy.average.straggler_wait);
}

// DDP gradient all-reduces overlap the backward pass. SM-based communication holds the
// NCCL SMs (16 of 132 on an H100) while it runs, so compute-bound kernels that overlap it
// (attention and GEMMs of a 512-wide HSTU at length 2048) run slower and the compute
// stream is busy longer than the sum of its kernels' roofline times; SM-free
// (copy-engine) communication leaves compute exactly at that sum. The slowdown is at most
// what losing 16 of 132 SMs costs: a factor 132/116.
TEST(TrainingRun, SmFreeCommunicationRemovesTheComputeSlowdown) {
  const char* model =
      R"({"embedding": {"tables": [{"name": "item", "rows": 1000000, "dim": 512, "pooling": "sequence"}]},
    "dense": {"hstu": {"layers": 4, "model_dim": 512, "heads": 4, "head_dim": 128, "negatives": 16}}})";
  const auto data = R"({"batch_size": {"per_rank": 8}, "max_length": 4096,
                        "sequence_length": {"distribution": "fixed", "value": 2048}})";
  auto plan = [](bool sm_free) {
    return std::string(R"({"dense": {"parallelism": "ddp", "bucket_size": "1 MiB"},
             "sparse": {"group_size": 8, "placement": "host", "default": "row_wise"},
             "schedule": {"sm_free_comm": )") +
           (sm_free ? "true" : "false") + "}}";
  };
  const auto free_sc = scenario_of("hgx-h100-8.json", model, data, plan(true));
  const auto graph = workload::build_op_graph(free_sc);
  double kernels_ms = 0;  // mean over ranks of the compute stream's roofline sum
  for (const auto& rank : graph.ranks) {
    for (const auto& op : rank.ops) {
      if (op.kind == workload::OpKind::kKernel &&
          graph.streams[static_cast<std::size_t>(op.stream)] == "compute") {
        kernels_ms += bundled_cost().cost(op.kernel, "H100-SXM").duration().to_ms();
      }
    }
  }
  kernels_ms /= static_cast<double>(graph.ranks.size());
  const auto free_report = run_training(free_sc, bundled_cost(), {});
  const auto sm_report =
      run_training(scenario_of("hgx-h100-8.json", model, data, plan(false)), bundled_cost(), {});
  EXPECT_NEAR(free_report.average.compute.to_ms(), kernels_ms, 1e-6);
  EXPECT_GT(sm_report.average.compute.to_ms(), kernels_ms * 1.001);
  EXPECT_LT(sm_report.average.compute.to_ms(), kernels_ms * 132.0 / 116.0);
}

// 2D sparse parallelism on three datacenters (768 GPUs): with the embedding
// model-parallel group placed inside a datacenter (256 ranks), the input, output and
// gradient all-to-alls never leave it: zero bytes of them cross datacenters, while the
// dense gradients (and the replica sync) do. Analytical mode keeps the test fast.
TEST(TrainingRun, TwoDimensionalSparseParallelismKeepsEmbeddingTrafficInsideDatacenters) {
  const std::string plan = R"({"dense": {"parallelism": "ddp", "bucket_size": "32 MiB"},
      "sparse": {"group_size": 256, "placement": "datacenter", "replica_sync_every": 100, "default": "row_wise"},
      "schedule": {"cross_dc_sync": "hierarchical"}})";
  auto sc = scenario_of("scale-across-3dc.json", kSmallHstu,
                        hstu_data(R"({"distribution": "fixed", "value": 256})"), plan);
  TrainingRunOptions options;
  options.mode = network::NetworkMode::kAnalytical;
  const auto r = run_training(sc, bundled_cost(), options);
  using topology::LinkClass;
  using workload::CommClass;
  for (auto c : {CommClass::kInputDist, CommClass::kOutputDist, CommClass::kGradDist}) {
    const auto& t = r.class_traffic[static_cast<std::size_t>(c)];
    EXPECT_GT(t.bytes(LinkClass::kScaleOut) + t.bytes(LinkClass::kNvlink), 0)
        << workload::to_string(c);
    EXPECT_EQ(t.bytes(LinkClass::kCrossDc), 0) << workload::to_string(c);
  }
  EXPECT_GT(
      r.class_traffic[static_cast<std::size_t>(CommClass::kDenseSync)].bytes(LinkClass::kCrossDc),
      0);
  EXPECT_GT(
      r.class_traffic[static_cast<std::size_t>(CommClass::kReplicaSync)].bytes(LinkClass::kCrossDc),
      0);

  // Placing the group across the whole cluster sends embedding all-to-alls over the WAN.
  const std::string spread = R"({"dense": {"parallelism": "ddp", "bucket_size": "32 MiB"},
      "sparse": {"group_size": 768, "placement": "cluster", "default": "row_wise"}})";
  const auto wide =
      run_training(scenario_of("scale-across-3dc.json", kSmallHstu,
                               hstu_data(R"({"distribution": "fixed", "value": 256})"), spread),
                   bundled_cost(), options);
  EXPECT_GT(wide.class_traffic[static_cast<std::size_t>(CommClass::kOutputDist)].bytes(
                LinkClass::kCrossDc),
            0);
}

// Every rank's breakdown adds up to the mean over every step (compute + exposed
// communication + straggler wait + bubble), for the critical and the average rank; the
// step time itself is over the steady steps (here steps 1 and 2: warm-up 1, no drain).
TEST(TrainingRun, BreakdownsAddUpToTheStepTime) {
  const auto data = hstu_data(R"({"distribution": "lognormal", "mean": 600, "sigma": 1.0})");
  const auto r = run_training(
      scenario_of("hgx-h100-8.json", kSmallHstu, data, plan_with("none"), 3), bundled_cost(), {});
  for (const auto* a : {&r.critical, &r.average}) {
    const double sum = a->compute.to_ms() + a->exposed_comm_total().to_ms() +
                       a->straggler_wait.to_ms() + a->bubble.to_ms();
    EXPECT_NEAR(sum, r.stats.all_steps_mean_ms, 1e-6 * r.stats.mean_ms);
  }
  EXPECT_TRUE(r.stats.steady);
  EXPECT_EQ(r.stats.warmup_steps, 1);
  EXPECT_EQ(r.stats.drain_steps, 0);
  EXPECT_DOUBLE_EQ(r.stats.mean_ms, (r.step_ms[1] + r.step_ms[2]) / 2);
  EXPECT_DOUBLE_EQ(r.stats.all_steps_mean_ms, (r.step_ms[0] + r.step_ms[1] + r.step_ms[2]) / 3);
  EXPECT_GT(r.samples_per_sec, 0);
  EXPECT_GT(r.mfu, 0);
  EXPECT_LT(r.mfu, 1);
}

// The steady mean's 95% interval, by hand: steps 10, 12, 14 after one warm-up step of 20
// and before one drain step of 5: mean 12, sample deviation 2, t(0.975, 2) = 4.302653, so
// 12 -+ 4.302653 x 2 / sqrt(3) = 12 -+ 4.968275. One steady step: the mean itself.
TEST(TrainingRun, TheSteadyMeanCarriesItsStudentInterval) {
  const auto s = step_statistics({20, 10, 12, 14, 5}, SteadyState{1, 1});
  EXPECT_EQ(s.counted_steps, 3);
  EXPECT_DOUBLE_EQ(s.mean_ms, 12);
  EXPECT_NEAR(s.mean_ci95_low_ms, 12 - 4.968275, 1e-6);
  EXPECT_NEAR(s.mean_ci95_high_ms, 12 + 4.968275, 1e-6);
  const auto one = step_statistics({20, 10, 5}, SteadyState{1, 1});
  EXPECT_EQ(one.counted_steps, 1);
  EXPECT_DOUBLE_EQ(one.mean_ci95_low_ms, 10);
  EXPECT_DOUBLE_EQ(one.mean_ci95_high_ms, 10);
}

// Same scenario and seed, same report (but for wall-clock figures).
TEST(TrainingRun, IsDeterministicForASeed) {
  const auto data = hstu_data(R"({"distribution": "lognormal", "mean": 600, "sigma": 1.0})");
  const auto a =
      run_training(scenario_of("hgx-h100-8.json", kSmallHstu, data, plan_with("none"), 2, 11),
                   bundled_cost(), {});
  const auto b =
      run_training(scenario_of("hgx-h100-8.json", kSmallHstu, data, plan_with("none"), 2, 11),
                   bundled_cost(), {});
  const auto c =
      run_training(scenario_of("hgx-h100-8.json", kSmallHstu, data, plan_with("none"), 2, 12),
                   bundled_cost(), {});
  EXPECT_EQ(a.step_ms, b.step_ms);
  EXPECT_EQ(a.events, b.events);
  EXPECT_NE(a.step_ms, c.step_ms);
}

// Analytical mode runs untraced replays in dataflow order (each rank runs on until it
// waits for a peer) and traced ones in time order on the engine: on bundled scenarios
// (stragglers, 2D sparse plans, three datacenters, context parallelism) every reported
// figure is the same, the events counted included. Traffic is a sum of doubles over the
// collectives, added in another order: equal to the last bits.
TEST(TrainingRun, DataflowOrderMatchesTimeOrder) {
  for (const char* name :
       {"dlrm-8gpu", "dlrm-mlperf-64", "hstu-3dc", "hstu-1024", "hstu-dlrm-v3-1gpu"}) {
    const auto scenario =
        workload::TrainingScenario::load(source(fmt::format("configs/scenarios/{}.json", name)));
    const auto cost = load_cost_model(scenario, source("configs/profiles"));
    TrainingRunOptions options;
    options.mode = network::NetworkMode::kAnalytical;
    auto untraced = training_report_json(run_training(scenario, cost, options));
    traces::Timeline timeline;
    options.timeline = &timeline;
    options.trace_ranks = {0};
    auto traced = training_report_json(run_training(scenario, cost, options));
    for (const char* traffic : {"traffic_bytes", "traffic_bytes_by_comm_class"}) {
      const auto a = untraced[traffic].flatten(), b = traced[traffic].flatten();
      ASSERT_EQ(a.size(), b.size()) << name;
      for (const auto& [key, value] : a.items()) {
        if (!value.is_number()) {
          EXPECT_EQ(value, b.at(key)) << name << " " << traffic << key;
          continue;
        }
        const double x = value.get<double>(), y = b.at(key).get<double>();
        EXPECT_NEAR(x, y, 1e-12 * std::abs(y)) << name << " " << traffic << key;
      }
    }
    for (auto* j : {&untraced, &traced}) {
      for (const char* key :
           {"build_wall_s", "sim_wall_s", "traffic_bytes", "traffic_bytes_by_comm_class"})
        j->erase(key);
    }
    EXPECT_EQ(untraced.dump(), traced.dump()) << name;
    EXPECT_GT(timeline.spans().size(), 0u) << name;
  }
}

}  // namespace
}  // namespace strait::sim::run

namespace strait::sim::run {
namespace {

// The forward attention kernel of a one-layer HSTU on one rank, and its H100 time
// without the fixed launch overhead.
struct Attention {
  workload::Kernel kernel;
  double seconds = 0;
};
Attention attention(const std::string& lengths, int batch, bool padded) {
  const std::string model =
      std::string(
          R"({"embedding": {"tables": [{"name": "item", "rows": 1000000, "dim": 256, "pooling": "sequence"}]},
    "dense": {"hstu": {"layers": 1, "model_dim": 256, "heads": 2, "head_dim": 128, "negatives": 16, "attention": ")") +
      (padded ? "padded" : "jagged") + R"("}}})";
  const std::string data = R"({"batch_size": {"per_rank": )" + std::to_string(batch) +
                           R"(}, "max_length": 4096, "sequence_length": )" + lengths + "}";
  const auto sc = testing_support::scenario_of("hgx-h100-8.json", model, data, R"({"ranks": 1})");
  const auto graph = workload::build_op_graph(sc);
  for (const auto& op : graph.ranks[0].ops) {
    const auto kind = op.kernel.kind;
    if (op.kind == workload::OpKind::kKernel && op.phase == workload::StepPhase::kForward &&
        (kind == workload::KernelKind::kJaggedAttention ||
         kind == workload::KernelKind::kPaddedAttention)) {
      const auto c = testing_support::bundled_cost().cost(op.kernel, "H100-SXM");
      return {op.kernel, (c.duration() - c.launch_overhead).to_s()};
    }
  }
  ADD_FAILURE() << "no attention kernel";
  return {};
}

// Jagged attention works on sum_i L_i (L_i + 1) / 2 causal pairs: at one length (one
// efficiency), twice the samples take twice the time. Padded attention computes every
// sample at the batch's L_max: a heavy-tailed batch costs exactly what a batch of the
// same size at L_max costs, and more than its jagged version.
TEST(TrainingRun, JaggedAttentionTimeFollowsSumOfSquaresAndPaddedFollowsBatchTimesMaxSquared) {
  const auto fixed = R"({"distribution": "fixed", "value": 512})";
  EXPECT_NEAR(attention(fixed, 16, false).seconds, 2 * attention(fixed, 8, false).seconds, 2e-12);

  const auto heavy = R"({"distribution": "lognormal", "mean": 300, "sigma": 1.2})";
  const auto padded = attention(heavy, 16, true);
  const auto jagged = attention(heavy, 16, false);
  const double l_max = padded.kernel.mean_length;  // a padded kernel runs at L_max
  const auto at_max = attention(
      R"({"distribution": "fixed", "value": )" + std::to_string(static_cast<int>(l_max)) + "}", 16,
      true);
  EXPECT_DOUBLE_EQ(padded.kernel.flops, at_max.kernel.flops);
  EXPECT_DOUBLE_EQ(padded.seconds, at_max.seconds);
  EXPECT_LT(jagged.kernel.flops, 0.5 * padded.kernel.flops);
  EXPECT_LT(jagged.seconds, padded.seconds);
}

}  // namespace
}  // namespace strait::sim::run

namespace strait::sim::run {
namespace {

using testing_support::bundled_cost;
using testing_support::scenario_of;

const char* kMoeHstu =
    R"({"embedding": {"tables": [{"name": "item", "rows": 1000000, "dim": 256, "pooling": "sequence"}]},
  "dense": {"hstu": {"layers": 2, "model_dim": 256, "heads": 2, "head_dim": 128, "negatives": 16},
            "moe": {"layers": 1, "experts": 8, "top_k": 2, "expert_hidden": 1024}}})";
const char* kData512 = R"({"batch_size": {"per_rank": 8}, "max_length": 4096,
  "sequence_length": {"distribution": "fixed", "value": 512}})";

double term(const TrainingReport& r, const std::string& name) {
  return r.memory.ranks.at(static_cast<std::size_t>(r.fit.rank)).term(name);
}

// FSDP over the 8 GPUs of a host shards dense parameters, gradients and optimizer state:
// each rank keeps exactly 1/8 of the optimizer state, and 1/8 of the parameters plus the
// largest layer while it is gathered (here the MoE layer, most of the model), still less
// than DDP's full copy; the step syncs with all-gathers and reduce-scatters.
TEST(TrainingRun, FsdpShardsDenseStateAndSyncsByGatherAndReduceScatter) {
  const auto ddp = run_training(
      scenario_of(
          "hgx-h100-8.json", kMoeHstu, kData512,
          R"({"dense": {"parallelism": "ddp"}, "sparse": {"group_size": 8, "placement": "host"}})"),
      bundled_cost(), {});
  const auto fsdp = run_training(
      scenario_of("hgx-h100-8.json", kMoeHstu, kData512,
                  R"({"dense": {"parallelism": "fsdp", "group_size": 8, "placement": "host"},
                      "sparse": {"group_size": 8, "placement": "host"}})"),
      bundled_cost(), {});
  EXPECT_NEAR(term(fsdp, "dense_optimizer"), term(ddp, "dense_optimizer") / 8,
              1e-9 * term(ddp, "dense_optimizer"));
  EXPECT_LT(term(fsdp, "dense_params"), term(ddp, "dense_params"));
  EXPECT_GT(term(fsdp, "dense_params"), term(ddp, "dense_params") / 8);
  EXPECT_GT(fsdp.class_traffic[static_cast<std::size_t>(workload::CommClass::kDenseSync)].transfers,
            0u);
  EXPECT_GT(fsdp.stats.mean_ms, 0);
}

// Expert parallelism over a host sends tokens to their experts with all-to-alls (MoE
// class); context parallelism 2 splits each sequence over two ranks and exchanges K/V
// (context_parallel class), halving attention-score memory per rank: with an unfused
// kernel 8 samples x 512^2 x 2 heads x 2 B x 2 layers = 16 MiB, 8 MiB at degree 2; the
// fused kernel (the default) keeps none.
TEST(TrainingRun, ExpertAndContextParallelismMoveTheirOwnTraffic) {
  const auto moe = run_training(
      scenario_of(
          "hgx-h100-8.json", kMoeHstu, kData512,
          R"({"sparse": {"group_size": 8, "placement": "host"}, "moe": {"expert_parallel": 8, "placement": "host"}})"),
      bundled_cost(), {});
  EXPECT_GT(moe.class_traffic[static_cast<std::size_t>(workload::CommClass::kMoe)].bytes(
                topology::LinkClass::kNvlink),
            0);

  const std::string cp1 = R"({"sparse": {"group_size": 8, "placement": "host"}})";
  const std::string cp2 = R"({"sparse": {"group_size": 8, "placement": "host"},
                              "context_parallel": {"degree": 2, "mode": "all_gather", "placement": "host"}})";
  const std::string unfused = std::string(kSmallHstu)
                                  .replace(std::string(kSmallHstu).find("\"negatives\""), 0,
                                           R"("attention_kernel": "unfused", )");
  const auto one =
      run_training(scenario_of("hgx-h100-8.json", unfused, kData512, cp1), bundled_cost(), {});
  const auto two =
      run_training(scenario_of("hgx-h100-8.json", unfused, kData512, cp2), bundled_cost(), {});
  const auto fused =
      run_training(scenario_of("hgx-h100-8.json", kSmallHstu, kData512, cp2), bundled_cost(), {});
  EXPECT_GT(
      two.class_traffic[static_cast<std::size_t>(workload::CommClass::kContextParallel)].transfers,
      0u);
  EXPECT_EQ(
      one.class_traffic[static_cast<std::size_t>(workload::CommClass::kContextParallel)].transfers,
      0u);
  EXPECT_DOUBLE_EQ(term(one, "attention_scores"), 16.0 * kMiB);
  EXPECT_DOUBLE_EQ(term(two, "attention_scores"), 8.0 * kMiB);
  EXPECT_EQ(term(fused, "attention_scores"), 0.0);
}

}  // namespace
}  // namespace strait::sim::run

namespace strait::sim::run {
namespace {

// A plan chooses kernel implementations per family: the step then costs the chosen
// tables (strait's own attention is slower than the default CUTLASS kernels, so the step
// grows by exactly the attention's difference, every other kernel unchanged), the report
// names them, and an implementation no profile has is the plan's error.
TEST(TrainingRun, APlanChoosesKernelImplementations) {
  const std::string model =
      R"({"embedding": {"tables": [{"name": "item", "rows": 100000, "dim": 128, "pooling": "sequence"}]},
    "dense": {"hstu": {"layers": 1, "model_dim": 256, "heads": 2, "head_dim": 128, "negatives": 16}}})";
  const std::string data =
      R"({"batch_size": {"per_rank": 4}, "max_length": 1024, "sequence_length": {"distribution": "fixed", "value": 1024}})";
  const auto plain =
      testing_support::scenario_of("hgx-h100-8.json", model, data, R"({"ranks": 1})");
  const auto own = testing_support::scenario_of(
      "hgx-h100-8.json", model, data,
      R"({"ranks": 1, "kernels": {"jagged_attention": "strait", "jagged_attention_backward": "strait"}})");
  const auto& cost = testing_support::bundled_cost();
  const auto a = run_training(plain, cost, {});
  const auto b = run_training(own, cost, {});
  EXPECT_EQ(a.kernel_implementations.at("H100-SXM").at("jagged_attention"), "cutlass-hstu");
  EXPECT_EQ(b.kernel_implementations.at("H100-SXM").at("jagged_attention"), "strait");
  EXPECT_EQ(b.kernel_implementations.at("H100-SXM").at("gemm"), "cublaslt");

  // The attention kernels' durations under each choice, straight from the profiles.
  auto attention_ms = [&](const cost::CostModel& c) {
    double ms = 0;
    // The graph is named: a range-for over a temporary's member ends its life first.
    const auto graph = workload::build_op_graph(plain);
    for (const auto& op : graph.ranks[0].ops) {
      if (op.kind == workload::OpKind::kKernel && op.step == 0 &&
          cost::is_attention(op.kernel.kind))
        ms += c.cost(op.kernel, "H100-SXM").duration().to_ms();
    }
    return ms;
  };
  const auto chosen = cost.with_choice(own.plan.kernels, {"H100-SXM"});
  const double extra = attention_ms(chosen) - attention_ms(cost);
  EXPECT_GT(extra, 0.1 * a.step_ms[0]);
  EXPECT_NEAR(b.step_ms[0] - a.step_ms[0], extra, 1e-6);

  const auto unknown = testing_support::scenario_of(
      "hgx-h100-8.json", model, data, R"({"ranks": 1, "kernels": {"gemm": "triton"}})");
  try {
    run_training(unknown, cost, {});
    ADD_FAILURE() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("/kernels/gemm: the H100-SXM profile"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("no gemm implementation \"triton\" (it has "
                                         "\"cublaslt\", \"cublas\")"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace strait::sim::run

namespace strait::sim::run {
namespace {

// 8 GPUs of 1,000 TFLOP/s for 1 ms can do 8e12 FLOPs: 8e12 passes, 1.6e13 (200% MFU) is a
// defect that must not be reported; so is a rank computing 2 ms in a 1 ms run.
TEST(PhysicalBounds, ModelFlopsAbovePeakOrComputeLongerThanTheRunAreErrors) {
  const double peak = 8 * 1e15;
  const Time ms = Time::from_us(1000);
  std::vector<RankAccount> ranks(8);
  ranks[3].compute = ms;
  EXPECT_NO_THROW(check_physical_bounds("s.json", 8e12, peak, ms, ranks));
  try {
    check_physical_bounds("s.json", 1.6e13, peak, ms, ranks);
    ADD_FAILURE() << "no error";
  } catch (const PhysicalBoundError& e) {
    EXPECT_STREQ(e.what(),
                 "s.json: the result breaks a physical bound: 1.6e+13 model FLOPs in 0.001 s is "
                 "200% of the GPUs' highest peak; not reported (a defect: please report it with "
                 "the scenario)");
  }
  ranks[5].compute = ms + ms;
  try {
    check_physical_bounds("s.json", 8e12, peak, ms, ranks);
    ADD_FAILURE() << "no error";
  } catch (const PhysicalBoundError& e) {
    EXPECT_STREQ(e.what(),
                 "s.json: the result breaks a physical bound: rank 5 computes for 2 ms in a run "
                 "of 1 ms; not reported (a defect: please report it with the scenario)");
  }
}

}  // namespace
}  // namespace strait::sim::run
