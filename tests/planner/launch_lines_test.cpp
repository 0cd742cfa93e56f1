// planner/launch_lines.hpp: the torchrun, srun and mpirun lines and the files they read,
// written out in full for two hosts of two GPUs, then what changes with unequal ranks,
// unequal GPU counts, the environment and each form of entrypoint.

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "planner/launch_lines.hpp"

namespace strait::planner {
namespace {

const std::map<std::string, std::string> kCrossNic = {{"NCCL_CROSS_NIC", "0"}};

// Hosts h0 and h1 with 2 GPUs each, 2 ranks on each (ranks 0-1 on h0, 2-3 on h1).
TEST(LaunchLines, TwoHostsOfTwoGpusByHand) {
  const auto lines = launch_lines({{"h0", 2, 2}, {"h1", 2, 2}}, kCrossNic, "train.py --lr 0.1");
  EXPECT_EQ(lines.torchrun,
            (std::vector<std::string>{
                "ssh h0 env NCCL_CROSS_NIC=0 torchrun --nnodes=2 --nproc-per-node=2 --node-rank=0 "
                "--rdzv-backend=static --master-addr=h0 --master-port=29500 train.py --lr 0.1",
                "ssh h1 env NCCL_CROSS_NIC=0 torchrun --nnodes=2 --nproc-per-node=2 --node-rank=1 "
                "--rdzv-backend=static --master-addr=h0 --master-port=29500 train.py --lr 0.1"}));
  ASSERT_TRUE(lines.srun.has_value());
  EXPECT_EQ(*lines.srun,
            "srun --nodes=2 --nodelist=h0,h1 --ntasks-per-node=2 --distribution=block "
            "--gpus-per-node=2 --export=ALL,NCCL_CROSS_NIC=0 --cpu-bind=none python train.py "
            "--lr 0.1");
  EXPECT_EQ(lines.srun_refused, "");
  EXPECT_EQ(lines.mpirun,
            "mpirun -np 4 --hostfile hostfile.txt --map-by slot --bind-to none "
            "-x NCCL_CROSS_NIC=0 python train.py --lr 0.1");
  EXPECT_EQ(lines.files,
            (std::map<std::string, std::string>{{"hostfile.txt", "h0 slots=2\nh1 slots=2\n"}}));
}

// 2 ranks on h0 and 1 on h1 (3 of 4 GPUs): torchrun runs 2 and 1 processes; srun lays the
// 3 tasks out from a hostfile of one line per rank; mpirun's hostfile has 2 and 1 slots.
TEST(LaunchLines, UnequalRanksPerHostUseAnArbitrarySlurmLayout) {
  const auto lines = launch_lines({{"h0", 2, 2}, {"h1", 1, 2}}, kCrossNic, "train.py");
  EXPECT_NE(lines.torchrun[0].find(" --nproc-per-node=2 --node-rank=0 "), std::string::npos);
  EXPECT_NE(lines.torchrun[1].find(" --nproc-per-node=1 --node-rank=1 "), std::string::npos);
  ASSERT_TRUE(lines.srun.has_value());
  EXPECT_EQ(*lines.srun,
            "SLURM_HOSTFILE=slurm_hostfile.txt srun --nodes=2 --nodelist=h0,h1 --ntasks=3 "
            "--distribution=arbitrary --gpus-per-node=2 --export=ALL,NCCL_CROSS_NIC=0 "
            "--cpu-bind=none python train.py");
  EXPECT_EQ(lines.mpirun,
            "mpirun -np 3 --hostfile hostfile.txt --map-by slot --bind-to none "
            "-x NCCL_CROSS_NIC=0 python train.py");
  EXPECT_EQ(lines.files,
            (std::map<std::string, std::string>{{"hostfile.txt", "h0 slots=2\nh1 slots=1\n"},
                                                {"slurm_hostfile.txt", "h0\nh0\nh1\n"}}));
}

// A host of 4 GPUs next to one of 2: srun's one --gpus-per-node cannot ask for both, so
// there is no srun line, only the reason; torchrun and mpirun are unchanged.
TEST(LaunchLines, SrunIsRefusedWhenHostsDifferInGpuCount) {
  const auto lines = launch_lines({{"h0", 4, 4}, {"h1", 2, 2}}, {}, "train.py");
  EXPECT_FALSE(lines.srun.has_value());
  EXPECT_NE(lines.srun_refused.find("different GPU counts"), std::string::npos);
  EXPECT_EQ(lines.torchrun.size(), 2u);
  EXPECT_EQ(lines.mpirun,
            "mpirun -np 6 --hostfile hostfile.txt --map-by slot --bind-to none "
            "python train.py");
  EXPECT_EQ(lines.files.count("slurm_hostfile.txt"), 0u);
}

// No variables: no "env" before torchrun, srun exports ALL only, mpirun has no -x. Several
// variables are set in name order, the same in every line.
TEST(LaunchLines, TheEnvironmentIsSetInNameOrderByEveryLine) {
  const auto none = launch_lines({{"h0", 1, 1}}, {}, "train.py");
  EXPECT_EQ(none.torchrun[0],
            "ssh h0 torchrun --nnodes=1 --nproc-per-node=1 --node-rank=0 --rdzv-backend=static "
            "--master-addr=h0 --master-port=29500 train.py");
  EXPECT_EQ(*none.srun,
            "srun --nodes=1 --nodelist=h0 --ntasks-per-node=1 --distribution=block "
            "--gpus-per-node=1 --export=ALL --cpu-bind=none python train.py");
  EXPECT_EQ(none.mpirun,
            "mpirun -np 1 --hostfile hostfile.txt --map-by slot --bind-to none python train.py");

  const auto two = launch_lines({{"h0", 1, 1}}, {{"B_VAR", "2"}, {"A_VAR", "1"}}, "train.py");
  EXPECT_NE(two.torchrun[0].find("ssh h0 env A_VAR=1 B_VAR=2 torchrun "), std::string::npos);
  EXPECT_NE(two.srun->find(" --export=ALL,A_VAR=1,B_VAR=2 "), std::string::npos);
  EXPECT_NE(two.mpirun.find(" -x A_VAR=1 -x B_VAR=2 python train.py"), std::string::npos);
}

// The three forms of an entrypoint: torchrun takes a script or -m module after its
// options, and a command whose first word is a Python interpreter (python, python3.11,
// a path ending in one) under --no-python; srun and mpirun prefix "python" unless the
// entrypoint names its own. Words that only start with "python" are scripts.
TEST(LaunchLines, EachFormOfEntrypointRunsAsEveryLauncherTakesIt) {
  struct Form {
    std::string entrypoint, torchrun, command;
  };
  const std::vector<Form> forms = {
      {"train.py", "train.py", "python train.py"},
      {"-m pkg.main --x 1", "-m pkg.main --x 1", "python -m pkg.main --x 1"},
      {"python3.11 train.py", "--no-python python3.11 train.py", "python3.11 train.py"},
      {"/usr/bin/python3 -m pkg", "--no-python /usr/bin/python3 -m pkg", "/usr/bin/python3 -m pkg"},
      {"pythonic.py", "pythonic.py", "python pythonic.py"},
      {"python_tools/run.py", "python_tools/run.py", "python python_tools/run.py"}};
  for (const auto& f : forms) {
    const auto lines = launch_lines({{"h0", 2, 2}}, {}, f.entrypoint);
    EXPECT_TRUE(lines.torchrun[0].ends_with(" --master-port=29500 " + f.torchrun))
        << lines.torchrun[0];
    EXPECT_TRUE(lines.srun->ends_with(" --cpu-bind=none " + f.command)) << *lines.srun;
    EXPECT_TRUE(lines.mpirun.ends_with(" --bind-to none " + f.command)) << lines.mpirun;
  }
}

}  // namespace
}  // namespace strait::planner
