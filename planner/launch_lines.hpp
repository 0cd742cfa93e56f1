#pragma once
// Launch lines: the commands that start a plan's ranks with torchrun, srun (Slurm) or
// mpirun (Open MPI), each putting every global rank on the host the plan gives it and
// setting the same environment for every rank. The plan's ranks are consecutive per host,
// in host order: host i runs the ranks after those of hosts 0..i-1, as local ranks
// 0..ranks-1 (its GPUs 0..ranks-1).
//
//   torchrun  one line per host (run there, e.g. over ssh), static rendezvous at host 0
//   srun      one line: block distribution over --nodelist when every host runs as many
//             ranks, else arbitrary distribution over a SLURM_HOSTFILE (one line per rank);
//             refused when the hosts have different GPU counts (--gpus-per-node is one count)
//   mpirun    one line over a hostfile of "host slots=ranks", mapped by slot
// The files the lines read (hostfiles) come with them, by name. Why each option is there,
// with its documentation, is in launch_lines.cpp.
//
// The entrypoint every line runs takes one of three forms:
//   SCRIPT ARGS              a Python script, as torchrun takes it; srun and mpirun run
//                            "python SCRIPT ARGS"
//   -m MODULE ARGS           a module, torchrun's -m; srun and mpirun run "python -m ..."
//   PYTHON ARGS              a command whose first word is a Python interpreter (python,
//                            python3, python3.11, a path ending in one): every line runs it
//                            as written, torchrun with --no-python

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace strait::planner {

struct LaunchHost {
  std::string hostname;
  int ranks = 0;  // the plan's ranks on this host
  int gpus = 0;   // the host's GPUs
};

struct LaunchLines {
  std::vector<std::string> torchrun;  // one per host, in host order
  std::optional<std::string> srun;    // empty when srun cannot place the ranks
  std::string srun_refused;           // why, when srun is empty
  std::string mpirun;
  std::map<std::string, std::string> files;  // file name -> contents, read by the lines
};

/// The lines that run `entrypoint` (one of the forms above) on `hosts` (at least one) with
/// `env` (variable -> value) set for every rank.
LaunchLines launch_lines(const std::vector<LaunchHost>& hosts,
                         const std::map<std::string, std::string>& env,
                         const std::string& entrypoint);

}  // namespace strait::planner
