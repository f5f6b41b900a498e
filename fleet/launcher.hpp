#pragma once
// Which launcher started this `mtperf fleet` process, and so its rank, the fleet's size and
// where rank 0 (the coordinator) is. mtperf never starts processes on other hosts itself: Slurm
// (srun), Open MPI or MPICH (mpirun), a Kubernetes Indexed Job or a pdsh/ssh loop does, and each
// process reads what that launcher put in its environment. Pure functions of the environment
// and the command line, so every launcher's case is unit-tested without the launcher.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mtperf::fleet {

using Environment = std::map<std::string, std::string>;

// The variables detect_launch reads, from this process's environment.
Environment launch_environment();

// What the command line gave (--rank, --size, --coordinator, --rendezvous).
struct LaunchGiven {
  std::optional<uint32_t> rank, size;
  std::string coordinator;  // HOST or HOST:PORT; "" = from the launcher
  std::string rendezvous;   // a file on a shared filesystem; "" = none
};

struct Launch {
  std::string launcher;  // "command line", "Open MPI", "MPICH/PMI", "Slurm", "Kubernetes"
  uint32_t rank = 0, size = 0;
  // Rank 0's host (or HOST:PORT); "" when the rendezvous file says it.
  std::string coordinator;
  std::string rendezvous;
  std::string job;  // the launcher's job id, when it gives one (names the rendezvous record)
  // This rank's index among the ranks on its host (SLURM_LOCALID, OMPI_COMM_WORLD_LOCAL_RANK,
  // MPI_LOCALRANKID); 0 where the launcher does not say. Picks its adapter with --per-host.
  uint32_t local_rank = 0;
  std::string why;  // which variables decided it, for `mtperf fleet`'s first line
};

// Reads the launcher from env: --rank/--size given win; then Open MPI (OMPI_COMM_WORLD_RANK and
// _SIZE), MPICH/PMI (PMI_RANK, PMI_SIZE), Slurm (SLURM_PROCID, SLURM_NTASKS; the coordinator
// is the first host of SLURM_STEP_NODELIST, else SLURM_JOB_NODELIST), a Kubernetes Indexed Job
// (JOB_COMPLETION_INDEX; the size from --size). Under mpirun inside a Slurm allocation both are
// set and the MPI rank wins: SLURM_PROCID then numbers mpirun's per-node helpers. Throws
// std::invalid_argument saying what is missing (no launcher found and no --rank/--size, a rank
// outside the size, no way to find the coordinator).
Launch detect_launch(const Environment& env, const LaunchGiven& given);

// Slurm's host list syntax: "node[1-4,7],gpu[01-02],login" -> node1 node2 node3 node4 node7
// gpu01 gpu02 login; the width of a zero-padded range is kept. At most `max_hosts` names; throws
// std::invalid_argument naming the bad part.
// --bind ADDRESS[,ADDRESS...] with --per-host N: the address of the rank with this local rank
// (one rank per adapter). Throws std::invalid_argument when the list is not N long or the
// local rank is not below N.
std::string bind_of(const std::vector<std::string>& addresses, uint32_t per_host,
                    uint32_t local_rank);

std::vector<std::string> expand_hostlist(std::string_view list, size_t max_hosts = 65536);

}  // namespace mtperf::fleet
