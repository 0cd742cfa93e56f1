#include "sweep/detail/ordered_writer.hpp"

namespace strait::sweep::detail {

OrderedWriter::OrderedWriter(SweepOutput& output, std::size_t total,
                             std::function<void(const SweepProgress&)> progress)
    : output_(output), on_progress_(std::move(progress)), start_(std::chrono::steady_clock::now()) {
  progress_.total = total;
  progress_.done = output.resumed();
  progress_.failed = output.resumed_failures();
  report();
}

void OrderedWriter::write(const PointOutcome& outcome) {
  output_.append(outcome);
  ++progress_.done;
  ++progress_.ran;
  if (outcome.failed) ++progress_.failed;
  report();
}

void OrderedWriter::submit(PointOutcome outcome) {
  std::lock_guard lock(mutex_);
  held_.emplace(outcome.index, std::move(outcome));
  for (auto it = held_.find(progress_.done); it != held_.end(); it = held_.find(progress_.done)) {
    write(it->second);
    held_.erase(it);
  }
}

void OrderedWriter::report() {
  progress_.elapsed_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  if (on_progress_) on_progress_(progress_);
}

}  // namespace strait::sweep::detail
