#pragma once
// `mtperf fleet --emit KIND`: what to run to start a fleet with an existing launcher — an sbatch
// script (Slurm), an mpirun line (Open MPI), a Kubernetes Indexed Job with its headless Service,
// a pdsh line. mtperf prints them; it never starts processes on other hosts itself.
#include <string>
#include <vector>

namespace mtperf::fleet {

struct EmitOptions {
  std::string kind;                     // slurm | mpirun | kubernetes | pdsh
  uint32_t size = 4;                    // ranks (nodes)
  std::vector<std::string> args;        // the fleet's own arguments, as given (without --emit)
  std::string image = "mtperf:latest";  // kubernetes: the container image
  std::string name = "mtperf-fleet";    // kubernetes: the Job and Service name
  std::string key_secret;               // kubernetes: the Secret holding the key ("" = NAME-key)
  bool rdma = false;                    // kubernetes: privileged, the RDMA device resource
};

// The recipe's text. Throws std::invalid_argument for an unknown kind.
std::string emit(const EmitOptions& o);

// A word quoted for a POSIX shell when it needs it.
std::string shell_quote(const std::string& word);

}  // namespace mtperf::fleet
