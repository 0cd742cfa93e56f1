#include "sim/workload/batch_cache.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "sim/workload/work_estimate.hpp"

namespace strait::sim::workload {

SamplingKey sampling_key(const TrainingScenario& scenario) {
  const Schedule& sched = scenario.plan.schedule;
  return {.world = scenario.layout.world,
          .replicas = scenario.layout.replicas,
          .context_parallel = scenario.layout.cp.size,
          .balance = sched.balance,
          .balance_scope = sched.balance_scope};
}

namespace {

/// The first `steps` steps of `batches`: itself when it has no more.
std::shared_ptr<const StepBatches> first_steps(std::shared_ptr<const StepBatches> batches,
                                               int steps) {
  if (static_cast<int>(batches->size()) <= steps) return batches;
  return std::make_shared<const StepBatches>(batches->begin(), batches->begin() + steps);
}

}  // namespace

std::shared_ptr<const StepBatches> BatchCache::get(const TrainingScenario& scenario, int steps) {
  check_work(scenario, steps);
  const SamplingKey key = sampling_key(scenario);
  std::shared_ptr<const StepBatches> have;
  {
    const std::lock_guard lock(mutex_);
    if (!has_base_) {
      base_name_ = scenario.name;
      base_seed_ = scenario.seed;
      has_base_ = true;
    } else if (scenario.name != base_name_ || scenario.seed != base_seed_) {
      throw std::logic_error(
          fmt::format("BatchCache: scenario '{}' (seed {}) in a cache of '{}' (seed {}): one cache "
                      "serves one base scenario",
                      scenario.name, scenario.seed, base_name_, base_seed_));
    }
    if (const auto it = kept_.find(key); it != kept_.end()) {
      // Used last: dropped last.
      order_.erase(std::find(order_.begin(), order_.end(), key));
      order_.push_back(key);
      if (static_cast<int>(it->second->size()) >= steps) return first_steps(it->second, steps);
      have = it->second;
    }
  }
  // Each step is drawn from its own stream (sample_step): the steps kept, then the rest.
  StepBatches drawn;
  drawn.reserve(static_cast<std::size_t>(steps));
  if (have) drawn.assign(have->begin(), have->end());
  for (auto s = static_cast<int>(drawn.size()); s < steps; ++s)
    drawn.push_back(sample_step(scenario, s));
  auto made = std::make_shared<const StepBatches>(std::move(drawn));
  const std::lock_guard lock(mutex_);
  ++draws_;
  auto& kept = kept_[key];
  if (!kept) {
    order_.push_back(key);
    if (order_.size() > std::max<std::size_t>(1, capacity_)) {
      kept_.erase(order_.front());
      order_.erase(order_.begin());
    }
  }
  if (!kept || kept->size() < made->size()) kept = made;
  return made;
}

std::shared_ptr<const StepBatches> batches_for(const TrainingScenario& scenario, int steps,
                                               BatchCache* cache) {
  return cache ? cache->get(scenario, steps)
               : std::make_shared<const StepBatches>(sample_steps(scenario, steps));
}

int BatchCache::draws() const {
  const std::lock_guard lock(mutex_);
  return draws_;
}

}  // namespace strait::sim::workload
