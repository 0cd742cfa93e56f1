// Launch plans: every line parsed back into the launcher's documented options, and the
// host each global rank lands on computed from the lines as each launcher documents its
// placement (the fingerprint: launch_fingerprint_test.cpp; the "torchrec" section:
// torchrec_settings_test.cpp).

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "planner/launch_plan.hpp"
#include "planner_test_support.hpp"

namespace strait::planner {
namespace {

using namespace testing_support;

// Two datacenters of two 8-GPU rail-optimized hosts, joined by a slow long-haul link.
const Json kTwoDc = Json::parse(kTwoDcCluster);

// Options each launcher documents (only those a launch line may use are checked against).
// torchrun: torch/distributed/run.py get_args_parser, docs.pytorch.org elastic/run.html.
const std::set<std::string> kTorchrunOptions = {
    "--nnodes",    "--nproc-per-node", "--rdzv-backend", "--rdzv-endpoint",    "--rdzv-id",
    "--rdzv-conf", "--standalone",     "--max-restarts", "--monitor-interval", "--start-method",
    "--role",      "--node-rank",      "--master-addr",  "--master-port",      "--local-addr",
    "--log-dir",   "--redirects",      "--tee",          "--no-python"};
// srun: slurm.schedmd.com/srun.html.
const std::set<std::string> kSrunOptions = {
    "--nodes",        "--ntasks",        "--ntasks-per-node", "--nodelist",
    "--distribution", "--gpus-per-node", "--gpus-per-task",   "--export",
    "--cpu-bind",     "--gpu-bind",      "--exclusive",       "--job-name"};
// mpirun: Open MPI mpirun(1) and docs.open-mpi.org "Scheduling processes across hosts".
const std::set<std::string> kMpirunOptions = {"-np",      "-n",        "--hostfile", "--host",
                                              "--map-by", "--rank-by", "--bind-to",  "-x"};

std::vector<std::string> tokens(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string t; in >> t;) out.push_back(t);
  return out;
}

std::map<std::string, std::string> assignments_in(const std::vector<std::string>& list) {
  std::map<std::string, std::string> out;
  for (const auto& a : list) {
    const auto eq = a.find('=');
    EXPECT_NE(eq, std::string::npos) << a;
    out[a.substr(0, eq)] = a.substr(eq + 1);
  }
  return out;
}

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string part; std::getline(in, part, separator);) out.push_back(part);
  return out;
}

// A line taken apart: variables set before the launcher, its "--name=value" or
// "-name value" options, and the program after them.
struct Command {
  std::string host;                           // torchrun: the ssh target
  std::map<std::string, std::string> env;     // set for the ranks
  std::map<std::string, std::string> before;  // set for the launcher itself
  std::map<std::string, std::string> options;
  std::vector<std::string> program;
};

/// Reads `--name=value` options from token `i` on into `c`, each one `known` must list;
/// returns the index of the first token that is not one.
std::size_t read_options(const std::vector<std::string>& t, std::size_t i,
                         const std::set<std::string>& known, const char* launcher, Command& c) {
  for (; i < t.size() && t[i].rfind("--", 0) == 0; ++i) {
    const auto eq = t[i].find('=');
    const auto name = t[i].substr(0, eq);
    EXPECT_TRUE(known.count(name)) << name << " is not a " << launcher << " option";
    c.options[name] = eq == std::string::npos ? "" : t[i].substr(eq + 1);
  }
  return i;
}

Command parse_torchrun(const std::string& line) {
  const auto t = tokens(line);
  Command c;
  std::size_t i = 0;
  EXPECT_EQ(t.at(i++), "ssh");
  c.host = t.at(i++);
  std::vector<std::string> env;
  if (t.at(i) == "env") {
    for (++i; t.at(i).find('=') != std::string::npos; ++i) env.push_back(t[i]);
  }
  c.env = assignments_in(env);
  EXPECT_EQ(t.at(i++), "torchrun");
  i = read_options(t, i, kTorchrunOptions, "torchrun", c);
  c.program.assign(t.begin() + static_cast<std::ptrdiff_t>(i), t.end());
  return c;
}

Command parse_srun(const std::string& line) {
  const auto t = tokens(line);
  Command c;
  std::size_t i = 0;
  std::vector<std::string> before;
  for (; t.at(i) != "srun"; ++i) before.push_back(t[i]);
  c.before = assignments_in(before);
  i = read_options(t, i + 1, kSrunOptions, "srun", c);
  auto exported = split(c.options.at("--export"), ',');
  EXPECT_EQ(exported.front(), "ALL");
  c.env = assignments_in({exported.begin() + 1, exported.end()});
  EXPECT_EQ(t.at(i++), "python");
  c.program.assign(t.begin() + static_cast<std::ptrdiff_t>(i), t.end());
  return c;
}

Command parse_mpirun(const std::string& line) {
  const auto t = tokens(line);
  Command c;
  std::size_t i = 0;
  EXPECT_EQ(t.at(i++), "mpirun");
  std::vector<std::string> env;
  for (; i < t.size() && t[i].front() == '-'; i += 2) {
    EXPECT_TRUE(kMpirunOptions.count(t[i])) << t[i] << " is not an mpirun option";
    if (t[i] == "-x")
      env.push_back(t.at(i + 1));
    else
      c.options[t[i]] = t.at(i + 1);
  }
  c.env = assignments_in(env);
  EXPECT_EQ(t.at(i++), "python");
  c.program.assign(t.begin() + static_cast<std::ptrdiff_t>(i), t.end());
  return c;
}

std::map<std::string, std::string> env_of(const Json& launch) {
  std::map<std::string, std::string> out;
  for (const auto& block : launch["env"])
    for (const auto& [name, s] : block.items()) out[name] = s["value"].get<std::string>();
  return out;
}

// Global rank -> hostname, as torchrun's static rendezvous places them: node n's workers
// take the ranks after the lower node ranks' --nproc-per-node, in local-rank order.
std::vector<std::string> torchrun_placement(const Json& launch) {
  std::map<int, std::pair<std::string, int>> nodes;  // node rank -> host, nproc
  for (const auto& line : launch["launch"]["torchrun"]) {
    const auto c = parse_torchrun(line.get<std::string>());
    EXPECT_EQ(std::stoi(c.options.at("--nnodes")), launch["nodes"].get<int>());
    EXPECT_EQ(c.options.at("--rdzv-backend"), "static");
    EXPECT_EQ(c.options.at("--master-addr"), launch["hosts"][0]["hostname"]);
    nodes[std::stoi(c.options.at("--node-rank"))] = {c.host,
                                                     std::stoi(c.options.at("--nproc-per-node"))};
  }
  std::vector<std::string> out;
  for (const auto& [rank, node] : nodes)
    out.insert(out.end(), static_cast<std::size_t>(node.second), node.first);
  return out;
}

// srun: block puts --ntasks-per-node consecutive ranks on each --nodelist node in order;
// arbitrary puts rank r on line r of the SLURM_HOSTFILE.
std::vector<std::string> srun_placement(const Json& launch) {
  const auto c = parse_srun(launch["launch"]["srun"].get<std::string>());
  EXPECT_EQ(std::stoi(c.options.at("--nodes")), launch["nodes"].get<int>());
  std::vector<std::string> out;
  if (c.options.at("--distribution") == "arbitrary") {
    const auto file = launch["files"][c.before.at("SLURM_HOSTFILE")].get<std::string>();
    out = split(file, '\n');
    EXPECT_EQ(std::stoi(c.options.at("--ntasks")), static_cast<int>(out.size()));
    return out;
  }
  EXPECT_EQ(c.options.at("--distribution"), "block");
  const int per_node = std::stoi(c.options.at("--ntasks-per-node"));
  for (const auto& node : split(c.options.at("--nodelist"), ','))
    out.insert(out.end(), static_cast<std::size_t>(per_node), node);
  return out;
}

// mpirun --map-by slot: each hostfile host's slots in turn, in file order, -np ranks.
std::vector<std::string> mpirun_placement(const Json& launch) {
  const auto c = parse_mpirun(launch["launch"]["mpirun"].get<std::string>());
  EXPECT_EQ(c.options.at("--map-by"), "slot");
  std::vector<std::string> out;
  for (const auto& line :
       split(launch["files"][c.options.at("--hostfile")].get<std::string>(), '\n')) {
    const auto t = tokens(line);
    EXPECT_EQ(t.at(1).rfind("slots=", 0), 0u) << line;
    out.insert(out.end(), static_cast<std::size_t>(std::stoi(t.at(1).substr(6))), t.at(0));
  }
  EXPECT_EQ(std::stoi(c.options.at("-np")), static_cast<int>(out.size()));
  return out;
}

Json launch_of(const Json& cluster, const Json& plan, const LaunchOptions& options = {}) {
  const auto sc = scenario_of(cluster, Json::parse(kSmallDlrm), Json::parse(kSmallDlrmData), plan);
  return launch_plan_json(sc.plan, plan, sc, options);
}

// Each rank's host from the cluster itself (rank r runs on GPU r), in launch-plan names.
std::vector<std::string> cluster_placement(const Json& cluster_json, int world) {
  const auto cluster = cluster_of(cluster_json.dump());
  std::vector<std::string> out;
  for (int r = 0; r < world; ++r) {
    auto name = cluster.hosts()[static_cast<std::size_t>(cluster.gpu(r).host)].name;
    std::replace(name.begin(), name.end(), '/', '-');
    out.push_back(name);
  }
  return out;
}

// 32 ranks on 4 hosts of 8: every line names the launcher's own options, sets the same
// environment (NCCL_CROSS_NIC=0 on this rail-optimized fabric), and runs the program.
TEST(PlannerLaunch, EveryLineUsesDocumentedOptionsAndTheSameEnvironment) {
  const auto launch = launch_of(kTwoDc, Json::parse(R"({"sparse": {"group_size": 16,
                                                        "placement": "datacenter"}})"));
  const auto env = env_of(launch);
  EXPECT_EQ(env, (std::map<std::string, std::string>{{"NCCL_CROSS_NIC", "0"}}));
  const auto program = tokens(launch["entrypoint"].get<std::string>());
  EXPECT_EQ(program.front(), "train.py");
  ASSERT_EQ(launch["launch"]["torchrun"].size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) {
    const auto c = parse_torchrun(launch["launch"]["torchrun"][i].get<std::string>());
    EXPECT_EQ(c.host, launch["hosts"][i]["hostname"]);
    EXPECT_EQ(c.options.at("--nnodes"), "4");
    EXPECT_EQ(c.options.at("--nproc-per-node"), "8");
    EXPECT_EQ(c.options.at("--node-rank"), std::to_string(i));
    EXPECT_EQ(c.options.at("--master-port"), "29500");
    EXPECT_EQ(c.env, env);
    EXPECT_EQ(c.program, program);
  }
  const auto srun = parse_srun(launch["launch"]["srun"].get<std::string>());
  EXPECT_EQ(srun.options.at("--ntasks-per-node"), "8");
  EXPECT_EQ(srun.options.at("--gpus-per-node"), "8");
  EXPECT_EQ(srun.options.at("--nodelist"), "west-host0,west-host1,east-host0,east-host1");
  EXPECT_EQ(srun.env, env);
  EXPECT_EQ(srun.program, program);
  const auto mpirun = parse_mpirun(launch["launch"]["mpirun"].get<std::string>());
  EXPECT_EQ(mpirun.options.at("-np"), "32");
  EXPECT_EQ(mpirun.options.at("--bind-to"), "none");
  EXPECT_EQ(mpirun.env, env);
  EXPECT_EQ(mpirun.program, program);
  EXPECT_EQ(launch["files"]["hostfile.txt"],
            "west-host0 slots=8\nwest-host1 slots=8\neast-host0 slots=8\neast-host1 slots=8\n");
}

// Two datacenters: ranks 0-15 in west, 16-31 in east. Each launcher's documented placement
// of the lines' ranks gives every rank the host the launch plan lists and the cluster puts
// GPU r on, so the model-parallel groups stay inside their datacenter.
// The three forms of an entrypoint (launch_lines.hpp), each as every launcher runs it:
// torchrun after its options (with --no-python for a command that names its Python), srun
// and mpirun after "python" unless the entrypoint names its own (mpirun after its last
// -x, NCCL_CROSS_NIC=0 on this fabric).
TEST(PlannerLaunch, EveryLauncherRunsEachFormOfEntrypoint) {
  struct Form {
    std::string entrypoint, torchrun, command;  // torchrun's form, srun's and mpirun's
  };
  const std::vector<Form> forms = {
      {"train.py --lr 0.1", "train.py --lr 0.1", "python train.py --lr 0.1"},
      {"-m my_trainer --config c.yaml", "-m my_trainer --config c.yaml",
       "python -m my_trainer --config c.yaml"},
      {"python -m my_trainer --config c.yaml", "--no-python python -m my_trainer --config c.yaml",
       "python -m my_trainer --config c.yaml"},
      {"/opt/venv/bin/python3.11 train.py", "--no-python /opt/venv/bin/python3.11 train.py",
       "/opt/venv/bin/python3.11 train.py"},
      {"python_tools/train.py", "python_tools/train.py", "python python_tools/train.py"}};
  for (const auto& f : forms) {
    const auto launch = launch_of(kTwoDc, Json::object(), {f.entrypoint});
    EXPECT_EQ(launch["entrypoint"], f.entrypoint);
    ASSERT_EQ(launch["launch"]["torchrun"].size(), 4u);
    for (const auto& line : launch["launch"]["torchrun"])
      EXPECT_TRUE(line.get<std::string>().ends_with(" --master-port=29500 " + f.torchrun)) << line;
    const auto srun = launch["launch"]["srun"].get<std::string>();
    EXPECT_TRUE(srun.ends_with(" --cpu-bind=none " + f.command)) << srun;
    const auto mpirun = launch["launch"]["mpirun"].get<std::string>();
    EXPECT_TRUE(mpirun.ends_with(" -x NCCL_CROSS_NIC=0 " + f.command)) << mpirun;
  }
}

TEST(PlannerLaunch, EveryLauncherPutsEachRankOnItsHostInTwoDatacenters) {
  const auto launch = launch_of(kTwoDc, Json::parse(R"({"sparse": {"group_size": 16,
                                                        "placement": "datacenter"}})"));
  const auto expected = cluster_placement(kTwoDc, 32);
  std::vector<std::string> listed;
  for (const auto& r : launch["ranks"]) {
    listed.push_back(r["hostname"].get<std::string>());
    EXPECT_EQ(r["datacenter"], r["rank"].get<int>() < 16 ? "west" : "east");
    EXPECT_EQ(r["hostname"].get<std::string>().substr(0, 4), r["datacenter"]);
  }
  EXPECT_EQ(listed, expected);
  EXPECT_EQ(torchrun_placement(launch), expected);
  EXPECT_EQ(srun_placement(launch), expected);
  EXPECT_EQ(mpirun_placement(launch), expected);
}

// A plan over 2 of a host's 8 GPUs runs 2 processes there, not 8.
TEST(PlannerLaunch, APlanOverFewerRanksThanTheHostsGpusStartsThatMany) {
  const auto launch = launch_of(kTwoDc, Json::parse(R"({"ranks": 2})"));
  EXPECT_EQ(launch["world_size"], 2);
  ASSERT_EQ(launch["launch"]["torchrun"].size(), 1u);
  const auto c = parse_torchrun(launch["launch"]["torchrun"][0].get<std::string>());
  EXPECT_EQ(c.options.at("--nnodes"), "1");
  EXPECT_EQ(c.options.at("--nproc-per-node"), "2");
  EXPECT_EQ(parse_srun(launch["launch"]["srun"].get<std::string>()).options.at("--ntasks-per-node"),
            "2");
  EXPECT_EQ(parse_mpirun(launch["launch"]["mpirun"].get<std::string>()).options.at("-np"), "2");
  EXPECT_EQ(mpirun_placement(launch), cluster_placement(kTwoDc, 2));
}

// 12 ranks: 8 on west-host0, 4 on west-host1. torchrun runs 8 and 4; srun lays the tasks
// out from a SLURM_HOSTFILE (arbitrary distribution); mpirun's hostfile has 8 and 4 slots.
TEST(PlannerLaunch, UnequalRanksPerHostArePlacedByEveryLauncher) {
  const auto launch = launch_of(kTwoDc, Json::parse(R"({"ranks": 12})"));
  ASSERT_EQ(launch["nodes"], 2);
  EXPECT_EQ(launch["hosts"][1]["ranks"], 4);
  EXPECT_EQ(launch["hosts"][1]["first_rank"], 8);
  const auto second = parse_torchrun(launch["launch"]["torchrun"][1].get<std::string>());
  EXPECT_EQ(second.options.at("--nproc-per-node"), "4");
  const auto srun = parse_srun(launch["launch"]["srun"].get<std::string>());
  EXPECT_EQ(srun.options.at("--distribution"), "arbitrary");
  EXPECT_EQ(srun.options.count("--ntasks-per-node"), 0u);
  const auto expected = cluster_placement(kTwoDc, 12);
  EXPECT_EQ(torchrun_placement(launch), expected);
  EXPECT_EQ(srun_placement(launch), expected);
  EXPECT_EQ(mpirun_placement(launch), expected);
}

// East's hosts have 4 GPUs: srun's one --gpus-per-node cannot ask for both, so the plan
// says why instead of a wrong line; torchrun and mpirun still place every rank.
TEST(PlannerLaunch, SrunIsRefusedWithAReasonWhenHostsDifferInGpuCount) {
  Json cluster = kTwoDc;
  cluster["datacenters"][1]["host"] = {{"gpus", 4}, {"nics", 4}};
  const auto launch = launch_of(cluster, Json::object());
  EXPECT_FALSE(launch["launch"].contains("srun"));
  EXPECT_NE(launch["launch_refused"]["srun"].get<std::string>().find("different GPU counts"),
            std::string::npos);
  const auto expected = cluster_placement(cluster, 24);
  EXPECT_EQ(torchrun_placement(launch), expected);
  EXPECT_EQ(mpirun_placement(launch), expected);
}

// No line sets a forced protocol or algorithm (strait picks them per size, as NCCL does) or
// the non-blocking communicator flag (it is not SM-free communication), even for a plan
// asking for SM-free communication and hierarchical cross-datacenter sync; the notes say
// what the program must do instead.
TEST(PlannerLaunch, NoForcedProtocolAlgorithmOrNonBlockingFlag) {
  const auto launch = launch_of(kTwoDc, Json::parse(R"({"schedule": {"sm_free_comm": true,
                                                        "cross_dc_sync": "hierarchical"}})"));
  const auto set = launch["env"].dump() + launch["launch"].dump();
  for (const char* banned : {"NCCL_PROTO", "NCCL_ALGO", "TORCH_NCCL_USE_COMM_NONBLOCKING"})
    EXPECT_EQ(set.find(banned), std::string::npos) << banned;
  const auto text = launch.dump();
  for (const char* banned : {"NCCL_PROTO", "TORCH_NCCL_USE_COMM_NONBLOCKING"})
    EXPECT_EQ(text.find(banned), std::string::npos) << banned;
  EXPECT_NE(text.find("NCCL_CTA_POLICY_ZERO"), std::string::npos);
  EXPECT_NE(text.find("hierarchical cross-datacenter sync"), std::string::npos);
}

}  // namespace
}  // namespace strait::planner
