// run_sweep_mpi: points handed out one at a time by rank 0 (dynamic, so a slow point never
// idles the other ranks). Rank 0 serves requests on its main thread (the only thread that
// calls MPI: MPI_THREAD_FUNNELED) and runs points on a second thread; every finished point
// goes to the OrderedWriter, which writes rows in point order.
//
// Messages: a worker sends kTagResult (an empty body the first time, then its last point's
// outcome as JSON); rank 0 answers kTagWork with the next point index, or -1 to stop.

#include <mpi.h>

#include <cstdlib>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>

#include "sweep/detail/ordered_writer.hpp"
#include "sweep/detail/point_runner.hpp"
#include "sweep/sweep.hpp"

namespace strait::sweep {
namespace {

constexpr int kTagResult = 1;
constexpr int kTagWork = 2;

// Finalizes MPI on the way out; aborts the whole job instead when an exception is leaving
// (the other ranks would otherwise wait for rank 0 forever).
class MpiSession {
 public:
  MpiSession() {
    int provided = 0;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }
  ~MpiSession() {
    // Rank 0 always releases the workers before it lets an error out (see drain); a worker
    // with an error of its own would leave rank 0 waiting for it.
    if (std::uncaught_exceptions() > 0 && rank_ != 0) MPI_Abort(MPI_COMM_WORLD, 1);
    MPI_Finalize();
  }
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
  int rank() const { return rank_; }
  int size() const { return size_; }

 private:
  int rank_ = 0, size_ = 1;
};

std::string encode(const detail::PointOutcome& o) {
  return Json{{"index", o.index}, {"failed", o.failed}, {"csv", o.csv_row}, {"json", o.json_line}}
      .dump();
}

detail::PointOutcome decode(const std::string& text) {
  const auto j = Json::parse(text);
  return {j.at("index").get<std::size_t>(), j.at("csv").get<std::string>(),
          j.at("json").get<std::string>(), j.at("failed").get<bool>()};
}

// Rank 0: the next worker message (a result, or empty for "ready") into `buffer`; returns
// the worker's rank.
int receive_result(std::string& buffer) {
  MPI_Status status;
  MPI_Probe(MPI_ANY_SOURCE, kTagResult, MPI_COMM_WORLD, &status);
  int size = 0;
  MPI_Get_count(&status, MPI_CHAR, &size);
  buffer.resize(static_cast<std::size_t>(size));
  MPI_Recv(buffer.data(), size, MPI_CHAR, status.MPI_SOURCE, kTagResult, MPI_COMM_WORLD,
           MPI_STATUS_IGNORE);
  return status.MPI_SOURCE;
}

// Rank 0: tells `worker` which point to run next (-1: stop).
void send_work(int worker, long long index) {
  MPI_Send(&index, 1, MPI_LONG_LONG, worker, kTagWork, MPI_COMM_WORLD);
}

// Answers every worker's next message with "stop" (used when rank 0 cannot go on).
void drain(int workers) {
  std::string buffer;
  while (workers-- > 0) send_work(receive_result(buffer), -1);
}

void worker(const detail::PointRunner& runner) {
  std::string message;  // empty: "ready"
  while (true) {
    MPI_Send(message.data(), static_cast<int>(message.size()), MPI_CHAR, 0, kTagResult,
             MPI_COMM_WORLD);
    long long index = -1;
    MPI_Recv(&index, 1, MPI_LONG_LONG, 0, kTagWork, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (index < 0) return;
    message = encode(runner.run(static_cast<std::size_t>(index)));
  }
}

// Rank 0: hands out points in order to the other ranks and to its own point thread.
class Coordinator {
 public:
  Coordinator(const SweepSpec& spec, const SweepOptions& options, detail::SweepOutput& output,
              const detail::PointRunner& runner)
      : options_(options),
        runner_(runner),
        writer_(output, spec.points().size(), options.progress),
        next_(output.resumed()),
        total_(spec.points().size()) {}

  SweepProgress run(int ranks) {
    std::exception_ptr local_error;
    std::thread local([&] {
      try {
        for (auto i = take(); i >= 0; i = take())
          writer_.submit(runner_.run(static_cast<std::size_t>(i)));
      } catch (...) {
        local_error = std::current_exception();
        std::lock_guard lock(mutex_);
        failed_ = true;
      }
    });
    try {
      serve(ranks - 1);
    } catch (...) {
      {
        std::lock_guard lock(mutex_);
        failed_ = true;
      }
      local.join();
      throw;
    }
    local.join();
    if (local_error) std::rethrow_exception(local_error);
    return writer_.progress();
  }

  bool complete() const { return writer_.complete(); }

 private:
  long long take() {
    std::lock_guard lock(mutex_);
    if (failed_ || next_ >= total_ || (options_.stop && options_.stop->load())) return -1;
    return static_cast<long long>(next_++);
  }

  void serve(int workers) {
    std::exception_ptr error;
    std::string buffer;
    while (workers > 0) {
      const int source = receive_result(buffer);
      if (!buffer.empty() && !error) {
        try {
          writer_.submit(decode(buffer));
        } catch (...) {  // keep answering, with "stop", until every worker has stopped
          error = std::current_exception();
          std::lock_guard lock(mutex_);
          failed_ = true;
        }
      }
      const long long index = take();
      send_work(source, index);
      if (index < 0) --workers;
    }
    if (error) std::rethrow_exception(error);
  }

  const SweepOptions& options_;
  const detail::PointRunner& runner_;
  detail::OrderedWriter writer_;
  std::mutex mutex_;  // guards next_ and failed_
  std::size_t next_;
  const std::size_t total_;
  bool failed_ = false;
};

}  // namespace

bool mpi_built() { return true; }

SweepSummary run_sweep_mpi(const SweepSpec& spec, const SweepOptions& options, int& rank) {
  // Before MPI: every rank leaves with the error, none waits for another.
  check_values(spec);
  MpiSession mpi;
  rank = mpi.rank();
  const detail::PointRunner runner(spec, options.default_profiles_dir, options.reuse_expansions);
  if (mpi.rank() != 0) {
    worker(runner);
    return {{}, false, mpi.size()};
  }
  std::unique_ptr<detail::SweepOutput> output;
  try {
    output = std::make_unique<detail::SweepOutput>(spec, options.csv_path, options.jsonl_path,
                                                   options.resume);
  } catch (...) {
    drain(mpi.size() - 1);
    throw;
  }
  Coordinator coordinator(spec, options, *output, runner);
  const auto progress = coordinator.run(mpi.size());
  return {progress, !coordinator.complete(), mpi.size()};
}

}  // namespace strait::sweep
