// Over 400 lines: what every exec backend does around its work (header comment): MPI checks,
// watchdog, hooks, the gather, one life cycle.

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
#include <utility>
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
    end_job(fmt::format("strait exec: rank {} failed in op '{}' (step {}): {}\n", rank,
                        graph.names[static_cast<std::size_t>(op.name)], op.step, what));
  }
  end_job(fmt::format("strait exec: rank {} failed: {}\n", rank, what));
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

void end_job(const std::string& line) {
  std::cerr << line << std::flush;
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::_Exit(1);  // MPI_Abort does not return
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
      end_job(fmt::format(
          "strait exec: rank {}: {} did not complete in {:g} s (a peer stopped outside an op)\n",
          rank, what, timeout_s));
    }
  }
}

namespace {

constexpr int kArrivalTag = 7001;        // wait_for_ranks' messages (no other point-to-point on
                                         // MPI_COMM_WORLD; collectives never match them)
constexpr double kRootFirstS = 5;        // how much longer the other ranks wait than rank 0
constexpr std::size_t kNamedRanks = 16;  // missing ranks named one by one, then counted

// "rank 1", "ranks 1, 3", "ranks 1, 2, ... (16 named) and 40 more".
std::string rank_list(const std::vector<int>& ranks) {
  std::string text = ranks.size() == 1 ? "rank " : "ranks ";
  for (std::size_t i = 0; i < std::min(ranks.size(), kNamedRanks); ++i)
    text += fmt::format("{}{}", i > 0 ? ", " : "", ranks[i]);
  if (ranks.size() > kNamedRanks) text += fmt::format(" and {} more", ranks.size() - kNamedRanks);
  return text;
}

}  // namespace

void wait_for_ranks(const char* phase, int rank, double timeout_s) {
  using Clock = std::chrono::steady_clock;
  int size = 1;
  check_mpi(MPI_Comm_size(MPI_COMM_WORLD, &size), "MPI_Comm_size");
  // Rank 0 hears from and tells every other rank; the others hear from and tell rank 0.
  // Only rank 0 can name the missing: an Ibarrier says nothing about who entered it.
  std::vector<int> peers;
  for (int r = rank == 0 ? 1 : 0; r < (rank == 0 ? size : 1); ++r) peers.push_back(r);
  std::vector<MPI_Request> heard(peers.size(), MPI_REQUEST_NULL);
  std::vector<MPI_Request> told(peers.size(), MPI_REQUEST_NULL);
  for (std::size_t k = 0; k < peers.size(); ++k) {
    check_mpi(MPI_Irecv(nullptr, 0, MPI_BYTE, peers[k], kArrivalTag, MPI_COMM_WORLD, &heard[k]),
              "MPI_Irecv");
    check_mpi(MPI_Isend(nullptr, 0, MPI_BYTE, peers[k], kArrivalTag, MPI_COMM_WORLD, &told[k]),
              "MPI_Isend");
  }
  MPI_Request barrier = MPI_REQUEST_NULL;
  check_mpi(MPI_Ibarrier(MPI_COMM_WORLD, &barrier), "MPI_Ibarrier");
  const auto limit = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(std::max(timeout_s, 0.0)));
  auto deadline = Clock::now() + limit;
  bool heard_from_root = rank == 0;
  while (true) {
    int passed = 0, all_heard = 0, all_told = 0;
    check_mpi(MPI_Test(&barrier, &passed, MPI_STATUS_IGNORE), "MPI_Test");
    check_mpi(
        MPI_Testall(static_cast<int>(heard.size()), heard.data(), &all_heard, MPI_STATUSES_IGNORE),
        "MPI_Testall");
    check_mpi(
        MPI_Testall(static_cast<int>(told.size()), told.data(), &all_told, MPI_STATUSES_IGNORE),
        "MPI_Testall");
    if (passed && all_heard && all_told) return;
    if (timeout_s <= 0) continue;
    const auto now = Clock::now();
    if (!heard_from_root && all_heard) {
      // Rank 0 is here and will name the missing ranks when its own time is up.
      heard_from_root = true;
      deadline = std::max(deadline, now + limit +
                                        std::chrono::duration_cast<Clock::duration>(
                                            std::chrono::duration<double>(kRootFirstS)));
    }
    if (now <= deadline) continue;
    std::vector<int> missing;
    for (std::size_t k = 0; k < peers.size(); ++k) {
      int arrived = 0;
      check_mpi(MPI_Test(&heard[k], &arrived, MPI_STATUS_IGNORE), "MPI_Test");
      if (!arrived) missing.push_back(peers[k]);
    }
    const std::string who = missing.empty() ? "a peer" : rank_list(missing);
    end_job(
        fmt::format("strait exec: rank {}: {} did not complete in {:g} s: {} did not arrive "
                    "(stopped or stalled before it)\n",
                    rank, phase, timeout_s, who));
  }
}

ProcessDeadline::ProcessDeadline(std::string line, double timeout_s) : line_(std::move(line)) {
  if (!(timeout_s > 0)) return;
  thread_ = std::thread([this, timeout_s] {
    std::unique_lock lock(mutex_);
    if (done_changed_.wait_for(lock, std::chrono::duration<double>(timeout_s),
                               [this] { return done_; }))
      return;
    // write(2) and _Exit: the main thread is inside MPI and must not be waited for.
    [[maybe_unused]] const auto written = ::write(STDERR_FILENO, line_.data(), line_.size());
    std::_Exit(1);
  });
}

ProcessDeadline::~ProcessDeadline() {
  if (!thread_.joinable()) return;
  {
    const std::lock_guard lock(mutex_);
    done_ = true;
  }
  done_changed_.notify_one();
  thread_.join();
}

int launcher_rank() {
  for (const char* variable : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"}) {
    const char* value = std::getenv(variable);
    if (value == nullptr) continue;
    try {
      return std::stoi(value);
    } catch (const std::exception&) {
    }
  }
  return -1;
}

void stall_if_hooked(const char* stage, int rank) {
  const char* value = std::getenv("STRAIT_EXEC_STALL");
  if (value == nullptr) return;
  const std::string text(value);
  const auto colon = text.find(':');
  if (colon == std::string::npos || text.substr(colon + 1) != stage) return;
  try {
    if (std::stoi(text.substr(0, colon)) != rank) return;
  } catch (const std::exception&) {
    return;
  }
  while (true) ::pause();  // until mpirun's SIGTERM (or SIGKILL) ends this process
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

namespace {

// Refuses a job whose MPI world is not the graph's ranks.
void check_world_size(const sim::workload::OpGraph& graph, const MpiSession& session) {
  const auto ranks = static_cast<int>(graph.ranks.size());
  if (session.size() != ranks) {
    throw Error(fmt::format(
        "strait exec: the op graph has {} ranks but MPI started {} processes (run mpirun -np {})",
        ranks, session.size(), ranks));
  }
}

// The op times as (start, end) pairs in picoseconds, the shape they are gathered in.
std::vector<std::int64_t> flat_op_times(const OpTimes& times) {
  std::vector<std::int64_t> flat;
  for (std::size_t i = 0; i < times.start.size(); ++i) {
    flat.push_back(times.start[i].ps());
    flat.push_back(times.end[i].ps());
  }
  return flat;
}

// Every rank's flat op times on rank 0, in rank order: rank r's are counts[r] values from
// all[displs[r]] (counts on rank 0 only, displs and all empty elsewhere).
struct GatheredTimes {
  std::vector<int> counts, displs;
  std::vector<std::int64_t> all;
};

GatheredTimes gather_op_times(const std::vector<std::int64_t>& mine, int ranks, int me,
                              double limit_s) {
  GatheredTimes gathered;
  const int count = static_cast<int>(mine.size());
  gathered.counts.resize(static_cast<std::size_t>(ranks));
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Igather(&count, 1, MPI_INT, gathered.counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD,
                        &request),
            "MPI_Igather");
  wait_for_job(request, "gathering the op counts", me, limit_s);
  if (me == 0) {
    int total = 0;
    for (int c : gathered.counts) {
      gathered.displs.push_back(total);
      total += c;
    }
    gathered.all.resize(static_cast<std::size_t>(total));
  }
  check_mpi(
      MPI_Igatherv(mine.data(), count, MPI_INT64_T, gathered.all.data(), gathered.counts.data(),
                   gathered.displs.data(), MPI_INT64_T, 0, MPI_COMM_WORLD, &request),
      "MPI_Igatherv");
  wait_for_job(request, "gathering the op times", me, limit_s);
  return gathered;
}

// The slowest rank's wall time, on rank 0 (`wall_s` elsewhere).
double slowest_wall_s(double wall_s, int me, double limit_s) {
  double wall = wall_s;
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Ireduce(&wall_s, &wall, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD, &request),
            "MPI_Ireduce");
  wait_for_job(request, "gathering the wall times", me, limit_s);
  return wall;
}

// On rank 0, what other processes took of the machine during the measured run (`cpu`:
// this rank's watch): only where every rank shares rank 0's machine. Every rank calls it.
void note_machine_load(MeasuredRun& run, const CpuWatch& cpu, int ranks, int me, double limit_s) {
  MPI_Comm host = MPI_COMM_NULL;
  check_mpi(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &host),
            "MPI_Comm_split_type");
  int host_ranks = 0;
  MPI_Comm_size(host, &host_ranks);
  MPI_Comm_free(&host);
  const double process_s = cpu.process_s();
  double job_cpu_s = 0;
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(
      MPI_Ireduce(&process_s, &job_cpu_s, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD, &request),
      "MPI_Ireduce");
  wait_for_job(request, "gathering the CPU times", me, limit_s);
  if (me == 0 && host_ranks == ranks && run.wall_s > 0 && cpu.machine_busy_s() > 0) {
    run.machine_cores = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
    run.other_busy_cores = std::max(0.0, (cpu.machine_busy_s() - job_cpu_s) / run.wall_s);
  }
}

// Rank 0's gathered flat times back as each rank's op times.
std::vector<OpTimes> unflatten_op_times(const GatheredTimes& gathered, int ranks) {
  std::vector<OpTimes> out;
  for (int r = 0; r < ranks; ++r) {
    OpTimes t;
    const auto base = static_cast<std::size_t>(gathered.displs[static_cast<std::size_t>(r)]);
    for (int k = 0; k < gathered.counts[static_cast<std::size_t>(r)]; k += 2) {
      t.start.push_back(Time::from_ps(gathered.all[base + static_cast<std::size_t>(k)]));
      t.end.push_back(Time::from_ps(gathered.all[base + static_cast<std::size_t>(k) + 1]));
    }
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace

MeasuredRun run_rank_job(const sim::workload::OpGraph& graph, const MpiSession& session,
                         const std::string& backend, int warmup_runs, double collective_timeout_s,
                         const std::function<RankTimes()>& measure) {
  check_world_size(graph, session);
  const auto ranks = static_cast<int>(graph.ranks.size());
  const int me = session.rank();
  MeasuredRun run;
  run.graph = &graph;
  run.backend = backend;
  run.warmup_runs = warmup_runs;
  RankTimes measured;
  std::vector<std::int64_t> mine;
  install_stop_handler(graph, me);
  try {
    measured = measure();
    mine = flat_op_times(measured.times);
  } catch (const std::exception& e) {
    abort_job(graph, me, e.what());
  }
  const double limit_s = job_wait_limit_s(collective_timeout_s);
  const GatheredTimes gathered = gather_op_times(mine, ranks, me, limit_s);
  run.wall_s = slowest_wall_s(measured.wall_s, me, limit_s);
  note_machine_load(run, measured.cpu, ranks, me, limit_s);
  if (me != 0) return run;
  run.ranks = unflatten_op_times(gathered, ranks);
  return run;
}

}  // namespace strait::executor::detail
