#include "sim/workload/batch.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "sim/core/error.hpp"
#include "sim/core/rng.hpp"
#include "sim/workload/load_balance.hpp"
#include "sim/workload/work_estimate.hpp"

namespace strait::sim::workload {
namespace {

constexpr std::int64_t kExactPoolingSamples = 256;
constexpr std::int64_t kMaxPoolingFactor = 1'000'000;
constexpr double kMaxBalanceWork = 2e7;  // items x bins for Karmarkar-Karp

bool has_sequences(const ModelConfig& model) {
  for (const auto& t : model.tables) {
    if (t.pooling == Pooling::kSequence) return true;
  }
  return false;
}

void summarize(ReplicaBatch& b, const SampleCost& cost) {
  b.tokens = b.pairs = b.squares = b.padded_pairs = b.padded_squares = b.cost = 0;
  b.max_length = 0;
  b.tile_factor = {1, 1, 1, 1, 1};
  if (b.lengths.empty()) {
    b.tokens = static_cast<double>(b.samples);
    b.cost = cost(1.0) * static_cast<double>(b.samples);
    return;
  }
  b.samples = static_cast<std::int64_t>(b.lengths.size());
  b.tile_factor = cost::attention_tile_factors(b.lengths);
  for (auto l : b.lengths) {
    const double x = l;
    b.tokens += x;
    b.pairs += attended_pairs(x, cost.window);
    b.squares += score_elements(x, cost.window);
    b.cost += cost(x);
    b.max_length = std::max(b.max_length, l);
  }
  const double n = static_cast<double>(b.samples);
  b.padded_pairs = n * attended_pairs(b.max_length, cost.window);
  b.padded_squares = n * score_elements(b.max_length, cost.window);
}

/// Rebalances the samples of replicas [first, first + count) by cost.
void balance(std::vector<ReplicaBatch>& batches, int first, int count, LoadBalance method,
             const SampleCost& cost) {
  std::vector<std::int32_t> lengths;
  std::vector<double> costs;
  for (int g = first; g < first + count; ++g) {
    for (auto l : batches[static_cast<std::size_t>(g)].lengths) {
      lengths.push_back(l);
      costs.push_back(cost(l));
    }
  }
  const auto bins = method == LoadBalance::kGreedy
                        ? balance_greedy(costs, count)
                        : balance_karmarkar_karp_bounded(costs, count, kMaxBalanceWork);
  for (int g = first; g < first + count; ++g) batches[static_cast<std::size_t>(g)].lengths.clear();
  for (std::size_t i = 0; i < lengths.size(); ++i) {
    batches[static_cast<std::size_t>(first + bins[i])].lengths.push_back(lengths[i]);
  }
}

double pooled_ids(const Distribution& d, std::int64_t samples, Rng& rng) {
  if (samples <= kExactPoolingSamples) {
    double sum = 0;
    for (std::int64_t i = 0; i < samples; ++i)
      sum += static_cast<double>(d.sample(rng, 0, kMaxPoolingFactor));
    return sum;
  }
  const double n = static_cast<double>(samples);
  return std::max(0.0, std::round(n * d.mean() + std::sqrt(n * d.variance()) * rng.normal()));
}

}  // namespace

double attended_pairs(double length, int window) {
  const double w = window;
  if (window <= 0 || length <= w) return length * (length + 1) / 2;
  return w * (w + 1) / 2 + (length - w) * w;
}

double score_elements(double length, int window) {
  return window > 0 ? length * std::min(length, static_cast<double>(window)) : length * length;
}

SampleCost sample_cost(const ModelConfig& model) {
  if (!model.has_hstu()) return {};
  const auto& h = model.hstu;
  const double d = h.model_dim, heads = h.heads, dqk = h.head_dim, dv = h.linear_dim;
  SampleCost c;
  c.a = h.layers * (2 * d * heads * (2 * dqk + 3 * dv) + heads * (dqk + dv)) + 2 * d * h.negatives;
  c.b = h.layers * heads * (dqk + dv);
  c.window = h.attention_window;
  return c;
}

std::vector<std::vector<ReplicaBatch>> sample_steps(const TrainingScenario& scenario, int steps) {
  check_work(scenario, steps);  // before a batch of 2^34 sequences is drawn
  std::vector<std::vector<ReplicaBatch>> out;
  out.reserve(static_cast<std::size_t>(std::max(0, steps)));
  for (int s = 0; s < steps; ++s) out.push_back(sample_step(scenario, s));
  return out;
}

std::vector<ReplicaBatch> sample_step(const TrainingScenario& scenario, int step) {
  const Layout& layout = scenario.layout;
  const DataConfig& data = scenario.data;
  const ModelConfig& model = scenario.model;
  const int replicas = layout.replicas;
  const std::int64_t batch = data.batch_for(replicas);
  const bool sequences = has_sequences(model);
  const SampleCost cost = sample_cost(model);
  const Rng step_rng = Rng(scenario.seed).fork(static_cast<std::uint64_t>(step));

  std::vector<ReplicaBatch> out(static_cast<std::size_t>(replicas));
  for (int g = 0; g < replicas; ++g) {
    auto& b = out[static_cast<std::size_t>(g)];
    b.samples = batch;
    if (!sequences) continue;
    Rng rng = step_rng.fork(static_cast<std::uint64_t>(g));
    b.lengths.resize(static_cast<std::size_t>(batch));
    for (auto& l : b.lengths)
      l = static_cast<std::int32_t>(data.sequence_length.sample(rng, 1, data.max_length));
  }

  const Schedule& sched = scenario.plan.schedule;
  if (sequences && sched.balance != LoadBalance::kNone) {
    // Replica g's domain is that of its first rank; scopes are contiguous replica runs.
    const auto domain = domains(scenario.cluster, layout.world, sched.balance_scope);
    int first = 0;
    for (int g = 1; g <= replicas; ++g) {
      const bool boundary =
          g == replicas || domain[static_cast<std::size_t>(g * layout.cp.size)] !=
                               domain[static_cast<std::size_t>(first * layout.cp.size)];
      if (!boundary) continue;
      const int count = g - first;
      if (count > 1) balance(out, first, count, sched.balance, cost);
      first = g;
    }
  }

  for (int g = 0; g < replicas; ++g) {
    auto& b = out[static_cast<std::size_t>(g)];
    summarize(b, cost);
    Rng rng = step_rng.fork(static_cast<std::uint64_t>(replicas + g));
    b.ids.resize(model.tables.size());
    for (std::size_t t = 0; t < model.tables.size(); ++t) {
      b.ids[t] = model.tables[t].pooling == Pooling::kSequence
                     ? b.tokens
                     : pooled_ids(data.pooling[t], b.samples, rng);
    }
  }
  return out;
}

}  // namespace strait::sim::workload
