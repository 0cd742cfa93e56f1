#include "executor/detail/comm_thread.hpp"

#include <sys/prctl.h>

#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "sim/core/error.hpp"

namespace strait::executor::detail {
namespace {

void check(int code, const char* what) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw Error(fmt::format("strait exec: {} failed: {}", what, std::string(text, length)));
}

}  // namespace

CommThread::CommThread(double timeout_s, std::function<void(std::int32_t, double)> on_timeout)
    : timeout_s_(timeout_s), on_timeout_(std::move(on_timeout)), thread_([this] { loop(); }) {}

CommThread::~CommThread() {
  {
    const std::lock_guard lock(mutex_);
    stop_ = true;
  }
  posted_cv_.notify_one();
  thread_.join();
}

void CommThread::post(std::shared_ptr<PostedCollective> collective) {
  {
    const std::lock_guard lock(mutex_);
    posted_.push_back(std::move(collective));
  }
  posted_cv_.notify_one();
}

std::vector<CompletedCollective> CommThread::take(bool wait) {
  std::unique_lock lock(mutex_);
  if (wait) {
    main_waiting_.store(true, std::memory_order_relaxed);
    completed_cv_.wait(lock, [this] { return !completed_.empty() || error_; });
    main_waiting_.store(false, std::memory_order_relaxed);
  }
  if (error_) std::rethrow_exception(error_);
  std::vector<CompletedCollective> out;
  out.swap(completed_);
  return out;
}

void CommThread::loop() {
  // Sleeps of kPollInterval, not the default 50 us of timer slack on top.
  ::prctl(PR_SET_TIMERSLACK, 1000UL, 0UL, 0UL, 0UL);
  try {
    while (true) {
      {
        std::unique_lock lock(mutex_);
        if (in_flight_.empty()) {
          posted_cv_.wait(lock, [this] { return stop_ || !posted_.empty(); });
        }
        // Stopped: at the end of a run nothing is in flight; after a failure the job is
        // being aborted and what is in flight is abandoned.
        if (stop_) return;
      }
      start_posted();
      test_in_flight();
      check_timeout();
      if (!in_flight_.empty() && !main_waiting_.load(std::memory_order_relaxed)) {
        // The main thread runs a kernel: poll now and then, or a new post wakes us.
        std::unique_lock lock(mutex_);
        posted_cv_.wait_for(lock, kPollInterval, [this] { return stop_ || !posted_.empty(); });
      }
    }
  } catch (...) {
    {
      const std::lock_guard lock(mutex_);
      error_ = std::current_exception();
    }
    completed_cv_.notify_one();
  }
}

void CommThread::start_posted() {
  std::deque<std::shared_ptr<PostedCollective>> posted;
  {
    const std::lock_guard lock(mutex_);
    posted.swap(posted_);
  }
  for (auto& p : posted) {
    MPI_Request request = MPI_REQUEST_NULL;
    check(p->start(&request), "starting a collective");
    requests_.push_back(request);
    in_flight_.push_back({std::move(p), Clock::now()});
  }
}

void CommThread::test_in_flight() {
  if (requests_.empty()) return;
  std::vector<int> done(requests_.size());
  int count = 0;
  check(MPI_Testsome(static_cast<int>(requests_.size()), requests_.data(), &count, done.data(),
                     MPI_STATUSES_IGNORE),
        "MPI_Testsome");
  if (count <= 0 || count == MPI_UNDEFINED) return;
  const auto now = Clock::now();
  done.resize(static_cast<std::size_t>(count));
  std::vector<CompletedCollective> finished;
  for (int slot : done)
    finished.push_back({in_flight_[static_cast<std::size_t>(slot)].collective->op, now});
  std::sort(done.rbegin(), done.rend());
  for (int slot : done) {
    requests_.erase(requests_.begin() + slot);
    in_flight_.erase(in_flight_.begin() + slot);
  }
  {
    const std::lock_guard lock(mutex_);
    completed_.insert(completed_.end(), finished.begin(), finished.end());
  }
  completed_cv_.notify_one();
}

void CommThread::check_timeout() const {
  if (timeout_s_ <= 0 || in_flight_.empty()) return;
  const auto& oldest = in_flight_.front();
  const double age = std::chrono::duration<double>(Clock::now() - oldest.posted).count();
  if (age > timeout_s_) on_timeout_(oldest.collective->op, timeout_s_);
}

}  // namespace strait::executor::detail
