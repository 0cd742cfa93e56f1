#pragma once
// CommThread: the communication "stream" of one rank of the CPU executor. A thread of its
// own starts the rank's MPI non-blocking collectives and progresses them while the main
// thread runs kernels, as NCCL progresses collectives on a GPU while kernels run, and
// stamps each one's completion when it sees it.
//
//   - MPI_THREAD_SERIALIZED: while a CommThread exists it is the only thread that calls
//     MPI (the main thread's barrier comes before, its gathers after).
//   - Polling: MPI_Testsome over the collectives in flight; busy while the main thread
//     waits for a collective (a completion is seen within microseconds), every
//     kPollInterval while it runs a kernel (the poll costs the kernel a few percent of
//     its core; a completion is seen up to about that late).
//   - A collective in flight longer than the timeout calls on_timeout (which aborts).
//   - An MPI error on the thread is rethrown by the main thread's next take().

#include <mpi.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace strait::executor::detail {

using Clock = std::chrono::steady_clock;

/// How often the thread polls MPI while the main thread runs a kernel.
inline constexpr std::chrono::microseconds kPollInterval{20};

/// A collective to start: its MPI call (made on the comm thread) and the buffers it uses
/// (shared: the executor posts the same one in every run).
struct PostedCollective {
  std::int32_t op = 0;
  std::function<int(MPI_Request*)> start;
  std::vector<char> send, recv;
  std::vector<int> send_counts, send_displs, recv_counts, recv_displs;
};

struct CompletedCollective {
  std::int32_t op = 0;
  Clock::time_point end;
};

class CommThread {
 public:
  /// `on_timeout(op, seconds)` is called on the comm thread when collective `op` has been
  /// in flight longer than `timeout_s` (> 0); it is expected not to return (MPI_Abort).
  CommThread(double timeout_s, std::function<void(std::int32_t, double)> on_timeout);
  ~CommThread();
  CommThread(const CommThread&) = delete;
  CommThread& operator=(const CommThread&) = delete;

  /// Hands a collective to the thread (main thread).
  void post(std::shared_ptr<PostedCollective> collective);
  /// Collectives completed since the last call, in completion order; when `wait`, blocks
  /// until there is at least one (the thread polls busily meanwhile). Rethrows an error of
  /// the thread.
  std::vector<CompletedCollective> take(bool wait);

 private:
  struct InFlight {
    std::shared_ptr<PostedCollective> collective;
    Clock::time_point posted;
  };

  void loop();
  void start_posted();
  void test_in_flight();
  void check_timeout() const;

  double timeout_s_;
  std::function<void(std::int32_t, double)> on_timeout_;

  std::mutex mutex_;
  std::condition_variable posted_cv_, completed_cv_;
  std::deque<std::shared_ptr<PostedCollective>> posted_;  // guarded by mutex_
  std::vector<CompletedCollective> completed_;            // guarded by mutex_
  std::exception_ptr error_;                              // guarded by mutex_
  bool stop_ = false;                                     // guarded by mutex_
  std::atomic<bool> main_waiting_{false};

  // Owned by the thread.
  std::vector<InFlight> in_flight_;
  std::vector<MPI_Request> requests_;

  std::thread thread_;  // last: starts after everything above exists
};

}  // namespace strait::executor::detail
