#include "planner/launch_lines.hpp"

#include <algorithm>
#include <cctype>
#include <string_view>

#include <fmt/format.h>

namespace strait::planner {
namespace {

constexpr int kMasterPort = 29500;  // torchrun's default --master-port
constexpr const char* kHostfile = "hostfile.txt";
constexpr const char* kSlurmHostfile = "slurm_hostfile.txt";

std::string joined(const std::vector<std::string>& parts, const char* separator) {
  std::string out;
  for (const auto& p : parts) {
    if (!out.empty()) out += separator;
    out += p;
  }
  return out;
}

// A word that names a Python interpreter: python, python3, python3.11, or a path ending in one.
bool is_python(std::string_view word) {
  if (const auto slash = word.rfind('/'); slash != std::string_view::npos)
    word.remove_prefix(slash + 1);
  if (!word.starts_with("python")) return false;
  word.remove_prefix(6);
  return std::all_of(word.begin(), word.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c)) || c == '.';
  });
}

// The entrypoint as torchrun takes it (after its own options) and as srun and mpirun run it
// (launch_lines.hpp). torchrun starts a script or -m module with its own Python, and runs
// the command as it is under --no-python (torch/distributed/run.py), which a command that
// names its interpreter needs; srun and mpirun run a command, so a script or -m gets "python".
struct EntrypointForms {
  std::string torchrun, command;
};

EntrypointForms entrypoint_forms(const std::string& entrypoint) {
  const auto begin = std::min(entrypoint.find_first_not_of(" \t"), entrypoint.size());
  const auto end = std::min(entrypoint.find_first_of(" \t", begin), entrypoint.size());
  if (is_python(std::string_view(entrypoint).substr(begin, end - begin)))
    return {"--no-python " + entrypoint, entrypoint};
  return {entrypoint, "python " + entrypoint};
}

std::vector<std::string> assignments(const std::map<std::string, std::string>& env) {
  std::vector<std::string> out;
  out.reserve(env.size());
  for (const auto& [name, value] : env) out.push_back(name + "=" + value);
  return out;
}

// torchrun (docs.pytorch.org/docs/stable/elastic/run.html, torch/distributed/run.py): the
// c10d rendezvous backend numbers the nodes itself and ignores --node-rank, so which host
// ran which ranks would not be the plan's. The static backend takes --node-rank as the
// node's group rank (run.py: rdzv_configs["rank"] = args.node_rank) at --master-addr:
// --master-port, and the agent gives its workers the global ranks after the sum of the
// lower node ranks' --nproc-per-node (elastic agent, _assign_worker_ranks): host i runs
// exactly the plan's ranks, also when hosts run different counts. `env` sets the variables
// for torchrun, whose workers inherit them.
std::vector<std::string> torchrun_lines(const std::vector<LaunchHost>& hosts,
                                        const std::string& env, const std::string& entrypoint) {
  std::vector<std::string> lines;
  for (std::size_t i = 0; i < hosts.size(); ++i) {
    lines.push_back(fmt::format(
        "ssh {} {}torchrun --nnodes={} --nproc-per-node={} --node-rank={} --rdzv-backend=static "
        "--master-addr={} --master-port={} {}",
        hosts[i].hostname, env.empty() ? "" : "env " + env + " ", hosts.size(), hosts[i].ranks, i,
        hosts.front().hostname, kMasterPort, entrypoint));
  }
  return lines;
}

// srun (slurm.schedmd.com/srun.html): --distribution=block puts consecutive tasks on one
// node, filling the --nodelist nodes in order with --ntasks-per-node each. With unequal
// counts, arbitrary distribution lays --ntasks tasks out "in the order of the file" that
// SLURM_HOSTFILE names (one host per task). --gpus-per-node asks for the hosts' GPUs whole,
// so local rank l uses GPU l as the plan placed it; --export=ALL,VAR=value passes the
// environment; --cpu-bind=none leaves CPU placement to the program, as torchrun does.
void add_srun(const std::vector<LaunchHost>& hosts, const std::vector<std::string>& env,
              const std::string& command, LaunchLines& out) {
  const int gpus = hosts.front().gpus;
  const bool same_gpus =
      std::all_of(hosts.begin(), hosts.end(), [&](const LaunchHost& h) { return h.gpus == gpus; });
  if (!same_gpus) {
    out.srun_refused =
        "the hosts have different GPU counts and srun's --gpus-per-node is one count for "
        "every node; run each GPU count as a component of a Slurm heterogeneous job, or use "
        "the torchrun or mpirun lines";
    return;
  }
  const int ranks = hosts.front().ranks;
  const bool same_ranks = std::all_of(hosts.begin(), hosts.end(),
                                      [&](const LaunchHost& h) { return h.ranks == ranks; });
  std::vector<std::string> names;
  std::string per_rank;
  int world = 0;
  for (const auto& h : hosts) {
    names.push_back(h.hostname);
    for (int r = 0; r < h.ranks; ++r) per_rank += h.hostname + "\n";
    world += h.ranks;
  }
  std::vector<std::string> exported{"ALL"};
  exported.insert(exported.end(), env.begin(), env.end());
  const std::string layout = same_ranks
                                 ? fmt::format("--ntasks-per-node={} --distribution=block", ranks)
                                 : fmt::format("--ntasks={} --distribution=arbitrary", world);
  if (!same_ranks) out.files[kSlurmHostfile] = per_rank;
  out.srun = fmt::format(
      "{}srun --nodes={} --nodelist={} {} --gpus-per-node={} --export={} --cpu-bind=none {}",
      same_ranks ? "" : fmt::format("SLURM_HOSTFILE={} ", kSlurmHostfile), hosts.size(),
      joined(names, ","), layout, gpus, joined(exported, ","), command);
}

// mpirun (Open MPI, docs.open-mpi.org "Scheduling processes across hosts", mpirun(1)):
// mapping by slot fills each host's slots before the next host, in hostfile order, so
// "host slots=ranks" lines in the plan's order and -np = their sum put every rank on its
// host; -x VAR=value exports one variable each; --bind-to none as --cpu-bind=none above.
std::string mpirun_line(const std::vector<LaunchHost>& hosts, const std::vector<std::string>& env,
                        const std::string& command, LaunchLines& out) {
  std::string hostfile;
  int world = 0;
  for (const auto& h : hosts) {
    hostfile += fmt::format("{} slots={}\n", h.hostname, h.ranks);
    world += h.ranks;
  }
  out.files[kHostfile] = hostfile;
  std::string exports;
  for (const auto& e : env) exports += " -x " + e;
  return fmt::format("mpirun -np {} --hostfile {} --map-by slot --bind-to none{} {}", world,
                     kHostfile, exports, command);
}

}  // namespace

LaunchLines launch_lines(const std::vector<LaunchHost>& hosts,
                         const std::map<std::string, std::string>& env,
                         const std::string& entrypoint) {
  const auto vars = assignments(env);
  const auto forms = entrypoint_forms(entrypoint);
  LaunchLines out;
  out.torchrun = torchrun_lines(hosts, joined(vars, " "), forms.torchrun);
  add_srun(hosts, vars, forms.command, out);
  out.mpirun = mpirun_line(hosts, vars, forms.command, out);
  return out;
}

}  // namespace strait::planner
