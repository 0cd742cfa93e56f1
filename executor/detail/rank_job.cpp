#include "executor/detail/rank_job.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <ctime>
#include <exception>
#include <fstream>
#include <iostream>
#include <vector>

#include <fmt/format.h>

#include "sim/core/error.hpp"

namespace strait::executor::detail {
namespace {

// Where this rank is, for the SIGTERM handler: mpirun sends SIGTERM to the surviving
// ranks when one dies, and the handler writes the line of the op this rank was in
// (preformatted: write(2) and _exit are async-signal-safe, formatting is not).
volatile std::sig_atomic_t g_current_op = -1;
std::vector<std::string> g_stopped_lines;  // per op of this rank; built before the handler
std::string g_stopped_outside;             // when no op is in progress

extern "C" void on_sigterm(int) {
  const std::sig_atomic_t op = g_current_op;
  const std::string& line = op >= 0 && static_cast<std::size_t>(op) < g_stopped_lines.size()
                                ? g_stopped_lines[static_cast<std::size_t>(op)]
                                : g_stopped_outside;
  [[maybe_unused]] const auto written = ::write(STDERR_FILENO, line.data(), line.size());
  ::_exit(1);
}

void install_stop_handler(const sim::workload::OpGraph& graph, int rank) {
  g_stopped_lines.clear();
  for (const auto& op : graph.ranks[static_cast<std::size_t>(rank)].ops) {
    g_stopped_lines.push_back(
        fmt::format("strait exec: rank {} stopped in op '{}' (step {}) after a peer failed\n", rank,
                    graph.names[static_cast<std::size_t>(op.name)], op.step));
  }
  g_stopped_outside =
      fmt::format("strait exec: rank {} stopped between ops after a peer failed\n", rank);
  struct sigaction action {};
  action.sa_handler = on_sigterm;
  sigemptyset(&action.sa_mask);
  sigaction(SIGTERM, &action, nullptr);
}

// The peers wait on this rank's collectives: end the whole job, naming where.
[[noreturn]] void abort_job(const sim::workload::OpGraph& graph, int rank, const char* what) {
  const std::sig_atomic_t index = g_current_op;
  const auto& ops = graph.ranks[static_cast<std::size_t>(rank)].ops;
  if (index >= 0 && static_cast<std::size_t>(index) < ops.size()) {
    const auto& op = ops[static_cast<std::size_t>(index)];
    std::cerr << fmt::format("strait exec: rank {} failed in op '{}' (step {}): {}\n", rank,
                             graph.names[static_cast<std::size_t>(op.name)], op.step, what);
  } else {
    std::cerr << fmt::format("strait exec: rank {} failed: {}\n", rank, what);
  }
  std::cerr << std::flush;
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::abort();  // MPI_Abort does not return
}

// Busy seconds of all cores since boot: /proc/stat's first line (user, nice, system, idle,
// iowait, irq, softirq, steal), everything but idle and iowait; 0 where it cannot be read.
double machine_busy_seconds() {
  std::ifstream in("/proc/stat");
  std::string cpu;
  double user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
  if (!(in >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal) ||
      cpu != "cpu")
    return 0;
  return (user + nice + system + irq + softirq + steal) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

double process_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

}  // namespace

void CpuWatch::start() {
  machine_busy_s_ = -machine_busy_seconds();
  process_s_ = -process_seconds();
}

void CpuWatch::stop() {
  machine_busy_s_ += machine_busy_seconds();
  process_s_ += process_seconds();
}

void check_mpi(int code, const char* what) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw Error(fmt::format("strait exec: {} failed: {}", what, std::string(text, length)));
}

double job_wait_limit_s(double collective_timeout_s) {
  return collective_timeout_s > 0 ? std::max(collective_timeout_s, 300.0) : 0.0;
}

void wait_for_job(MPI_Request& request, const char* what, int rank, double timeout_s) {
  const auto start = std::chrono::steady_clock::now();
  int flag = 0;
  while (true) {
    check_mpi(MPI_Test(&request, &flag, MPI_STATUS_IGNORE), what);
    if (flag) return;
    const double waited =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (timeout_s > 0 && waited > timeout_s) {
      std::cerr << fmt::format(
                       "strait exec: rank {}: {} did not complete in {:g} s (a peer "
                       "stopped outside an op)\n",
                       rank, what, timeout_s)
                << std::flush;
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
  }
}

void set_current_op(std::int32_t op) { g_current_op = op; }

namespace {

// "RANK:OP_INDEX" in `variable`: the op index for this rank, or -1.
std::int32_t hook_op_index(const char* variable, int rank) {
  const char* value = std::getenv(variable);
  if (value == nullptr) return -1;
  const std::string text(value);
  const auto colon = text.find(':');
  if (colon == std::string::npos) return -1;
  try {
    if (std::stoi(text.substr(0, colon)) != rank) return -1;
    return std::stoi(text.substr(colon + 1));
  } catch (const std::exception&) {
    return -1;
  }
}

}  // namespace

FaultHooks::FaultHooks(int rank)
    : kill_op_(hook_op_index("STRAIT_EXEC_KILL", rank)),
      fail_op_(hook_op_index("STRAIT_EXEC_FAIL", rank)) {}

void FaultHooks::at(std::int32_t index) const {
  if (index == kill_op_) std::raise(SIGKILL);
  if (index == fail_op_) throw Error("injected failure (STRAIT_EXEC_FAIL)");
}

void unsupported_collective(const sim::workload::OpGraph& graph, const sim::workload::Op& op) {
  throw Error(fmt::format("strait exec: {} collectives are not supported yet (op '{}')",
                          sim::network::to_string(op.collective.op),
                          graph.names[static_cast<std::size_t>(op.name)]));
}

MeasuredRun run_rank_job(const sim::workload::OpGraph& graph, const MpiSession& session,
                         const std::string& backend, int warmup_runs, double collective_timeout_s,
                         const std::function<RankTimes()>& measure) {
  const auto ranks = static_cast<int>(graph.ranks.size());
  if (session.size() != ranks) {
    throw Error(fmt::format(
        "strait exec: the op graph has {} ranks but MPI started {} processes (run mpirun -np {})",
        ranks, session.size(), ranks));
  }
  const int me = session.rank();
  MeasuredRun run;
  run.graph = &graph;
  run.backend = backend;
  run.warmup_runs = warmup_runs;
  std::vector<std::int64_t> mine;
  double machine_busy_s = 0, process_s = 0;
  install_stop_handler(graph, me);
  try {
    const RankTimes measured = measure();
    run.wall_s = measured.wall_s;
    machine_busy_s = measured.cpu.machine_busy_s();
    process_s = measured.cpu.process_s();
    for (std::size_t i = 0; i < measured.times.start.size(); ++i) {
      mine.push_back(measured.times.start[i].ps());
      mine.push_back(measured.times.end[i].ps());
    }
  } catch (const std::exception& e) {
    abort_job(graph, me, e.what());
  }
  // Every rank's (start, end) pairs to rank 0, in rank order.
  const double limit_s = job_wait_limit_s(collective_timeout_s);
  const int count = static_cast<int>(mine.size());
  std::vector<int> counts(static_cast<std::size_t>(ranks)), displs;
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Igather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD, &request),
            "MPI_Igather");
  wait_for_job(request, "gathering the op counts", me, limit_s);
  std::vector<std::int64_t> all;
  if (me == 0) {
    int total = 0;
    for (int c : counts) {
      displs.push_back(total);
      total += c;
    }
    all.resize(static_cast<std::size_t>(total));
  }
  check_mpi(MPI_Igatherv(mine.data(), count, MPI_INT64_T, all.data(), counts.data(), displs.data(),
                         MPI_INT64_T, 0, MPI_COMM_WORLD, &request),
            "MPI_Igatherv");
  wait_for_job(request, "gathering the op times", me, limit_s);
  double wall = run.wall_s;
  check_mpi(MPI_Ireduce(&run.wall_s, &wall, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD, &request),
            "MPI_Ireduce");
  wait_for_job(request, "gathering the wall times", me, limit_s);
  run.wall_s = wall;
  // What other processes took: only where every rank shares rank 0's machine.
  MPI_Comm host = MPI_COMM_NULL;
  check_mpi(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &host),
            "MPI_Comm_split_type");
  int host_ranks = 0;
  MPI_Comm_size(host, &host_ranks);
  MPI_Comm_free(&host);
  double job_cpu_s = 0;
  check_mpi(
      MPI_Ireduce(&process_s, &job_cpu_s, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD, &request),
      "MPI_Ireduce");
  wait_for_job(request, "gathering the CPU times", me, limit_s);
  if (me == 0 && host_ranks == ranks && wall > 0 && machine_busy_s > 0) {
    run.machine_cores = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
    run.other_busy_cores = std::max(0.0, (machine_busy_s - job_cpu_s) / wall);
  }
  if (me != 0) return run;
  for (int r = 0; r < ranks; ++r) {
    OpTimes t;
    const auto base = static_cast<std::size_t>(displs[static_cast<std::size_t>(r)]);
    for (int k = 0; k < counts[static_cast<std::size_t>(r)]; k += 2) {
      t.start.push_back(Time::from_ps(all[base + static_cast<std::size_t>(k)]));
      t.end.push_back(Time::from_ps(all[base + static_cast<std::size_t>(k) + 1]));
    }
    run.ranks.push_back(std::move(t));
  }
  return run;
}

}  // namespace strait::executor::detail
