#include "fleet/launcher.hpp"

#include <cstdlib>
#include <stdexcept>

#include "platform/number.hpp"

namespace mtperf::fleet {
namespace {

const char* const kVariables[] = {
    "OMPI_COMM_WORLD_RANK",
    "OMPI_COMM_WORLD_SIZE",
    "OMPI_MCA_ess_base_jobid",
    "PMIX_NAMESPACE",
    "PMI_RANK",
    "PMI_SIZE",
    "SLURM_PROCID",
    "SLURM_NTASKS",
    "SLURM_STEP_NODELIST",
    "SLURM_JOB_NODELIST",
    "SLURM_JOB_ID",
    "SLURM_STEP_ID",
    "JOB_COMPLETION_INDEX",
    "HOSTNAME",
};

const std::string* find(const Environment& env, const char* name) {
  auto it = env.find(name);
  return it == env.end() || it->second.empty() ? nullptr : &it->second;
}

uint32_t number(const std::string& text, const std::string& name) {
  const auto v = parse_whole(text, 0, UINT32_MAX);
  if (!v) throw std::invalid_argument(name + "=" + text + " is not a whole number");
  return uint32_t(*v);
}

std::string assignment(const Environment& env, const char* name) {
  const std::string* v = find(env, name);
  return std::string(name) + "=" + (v ? *v : "");
}

}  // namespace

Environment launch_environment() {
  Environment env;
  for (const char* name : kVariables)
    if (const char* v = std::getenv(name)) env[name] = v;
  return env;
}

std::string bind_of(const std::vector<std::string>& addresses, uint32_t per_host,
                    uint32_t local_rank) {
  if (addresses.size() != per_host)
    throw std::invalid_argument("--per-host " + std::to_string(per_host) + " takes " +
                                std::to_string(per_host) +
                                " --bind addresses, one per rank of a "
                                "host; " +
                                std::to_string(addresses.size()) + " given");
  if (local_rank >= per_host)
    throw std::invalid_argument("this is rank " + std::to_string(local_rank) +
                                " of its host, but --per-host is " + std::to_string(per_host) +
                                " (start --per-host ranks on each host)");
  return addresses[local_rank];
}

std::vector<std::string> expand_hostlist(std::string_view list, size_t max_hosts) {
  std::vector<std::string> out;
  auto bad = [&](const std::string& why) {
    throw std::invalid_argument("host list '" + std::string(list) + "': " + why);
  };
  size_t i = 0;
  while (i < list.size()) {
    // One name: text with [ranges] in it, up to a comma outside brackets.
    size_t j = i;
    int depth = 0;
    while (j < list.size() && (depth > 0 || list[j] != ',')) {
      if (list[j] == '[') ++depth;
      if (list[j] == ']' && --depth < 0) bad("']' without '['");
      ++j;
    }
    if (depth != 0) bad("'[' without ']'");
    std::string_view item = list.substr(i, j - i);
    i = j + 1;
    if (item.empty()) continue;
    std::vector<std::string> names{""};
    size_t k = 0;
    while (k < item.size()) {
      size_t open = item.find('[', k);
      std::string_view text = item.substr(k, open == std::string_view::npos ? open : open - k);
      for (auto& n : names)
        n += text;
      if (open == std::string_view::npos) break;
      size_t close = item.find(']', open);
      std::string_view ranges = item.substr(open + 1, close - open - 1);
      std::vector<std::string> parts;
      size_t r = 0;
      while (r <= ranges.size()) {
        size_t comma = ranges.find(',', r);
        std::string_view part =
            ranges.substr(r, comma == std::string_view::npos ? comma : comma - r);
        r = comma == std::string_view::npos ? ranges.size() + 1 : comma + 1;
        size_t dash = part.find('-');
        std::string_view lo = part.substr(0, dash);
        std::string_view hi = dash == std::string_view::npos ? lo : part.substr(dash + 1);
        const auto first = parse_whole(lo), last = parse_whole(hi);
        if (!first || !last) bad("'" + std::string(part) + "' is not a number or a range");
        const uint64_t a = *first, b = *last;
        if (b < a) bad("range " + std::string(part) + " runs backwards");
        if (b - a >= max_hosts) bad("more than " + std::to_string(max_hosts) + " hosts");
        for (uint64_t v = a; v <= b; ++v) {
          std::string s = std::to_string(v);
          if (s.size() < lo.size()) s.insert(0, lo.size() - s.size(), '0');
          parts.push_back(std::move(s));
        }
      }
      std::vector<std::string> next;
      if (names.size() * parts.size() > max_hosts)
        bad("more than " + std::to_string(max_hosts) + " hosts");
      for (const auto& n : names)
        for (const auto& p : parts)
          next.push_back(n + p);
      names = std::move(next);
      k = close + 1;
    }
    for (auto& n : names)
      out.push_back(std::move(n));
    if (out.size() > max_hosts) bad("more than " + std::to_string(max_hosts) + " hosts");
  }
  if (out.empty()) bad("no host in it");
  return out;
}

Launch detect_launch(const Environment& env, const LaunchGiven& given) {
  Launch l;
  l.coordinator = given.coordinator;
  l.rendezvous = given.rendezvous;
  const bool slurm = find(env, "SLURM_PROCID") && find(env, "SLURM_NTASKS");
  if (given.rank) {
    if (!given.size) throw std::invalid_argument("--rank needs --size (give both, or neither)");
    l.launcher = "command line";
    l.rank = *given.rank;
    l.size = *given.size;
    l.why = "--rank " + std::to_string(l.rank) + " --size " + std::to_string(l.size);
  } else if (find(env, "OMPI_COMM_WORLD_RANK") && find(env, "OMPI_COMM_WORLD_SIZE")) {
    l.launcher = "Open MPI";
    l.rank = number(*find(env, "OMPI_COMM_WORLD_RANK"), "OMPI_COMM_WORLD_RANK");
    l.size = number(*find(env, "OMPI_COMM_WORLD_SIZE"), "OMPI_COMM_WORLD_SIZE");
    l.why = assignment(env, "OMPI_COMM_WORLD_RANK") + " " + assignment(env, "OMPI_COMM_WORLD_SIZE");
    if (const std::string* ns = find(env, "PMIX_NAMESPACE")) l.job = *ns;
    if (const std::string* j = find(env, "OMPI_MCA_ess_base_jobid")) l.job = *j;
  } else if (find(env, "PMI_RANK") && find(env, "PMI_SIZE")) {
    l.launcher = "MPICH/PMI";
    l.rank = number(*find(env, "PMI_RANK"), "PMI_RANK");
    l.size = number(*find(env, "PMI_SIZE"), "PMI_SIZE");
    l.why = assignment(env, "PMI_RANK") + " " + assignment(env, "PMI_SIZE");
  } else if (slurm) {
    l.launcher = "Slurm";
    l.rank = number(*find(env, "SLURM_PROCID"), "SLURM_PROCID");
    l.size = number(*find(env, "SLURM_NTASKS"), "SLURM_NTASKS");
    l.why = assignment(env, "SLURM_PROCID") + " " + assignment(env, "SLURM_NTASKS");
    if (const std::string* j = find(env, "SLURM_JOB_ID")) {
      l.job = *j;
      if (const std::string* s = find(env, "SLURM_STEP_ID")) l.job += "." + *s;
    }
    if (l.coordinator.empty() && l.rendezvous.empty()) {
      const char* var = find(env, "SLURM_STEP_NODELIST")  ? "SLURM_STEP_NODELIST"
                        : find(env, "SLURM_JOB_NODELIST") ? "SLURM_JOB_NODELIST"
                                                          : nullptr;
      if (!var)
        throw std::invalid_argument(
            "Slurm set SLURM_PROCID but neither SLURM_STEP_NODELIST nor SLURM_JOB_NODELIST: give "
            "--coordinator HOST");
      l.coordinator = expand_hostlist(*find(env, var), 1 << 20).front();
      l.why += ", coordinator " + l.coordinator + " (first host of " + var + ")";
    }
  } else if (find(env, "JOB_COMPLETION_INDEX")) {
    l.launcher = "Kubernetes";
    l.rank = number(*find(env, "JOB_COMPLETION_INDEX"), "JOB_COMPLETION_INDEX");
    if (!given.size)
      throw std::invalid_argument(
          "a Kubernetes Indexed Job sets JOB_COMPLETION_INDEX but not the size: give --size "
          "(the Job's completions)");
    l.size = *given.size;
    l.why = assignment(env, "JOB_COMPLETION_INDEX") + ", --size " + std::to_string(l.size);
  } else {
    throw std::invalid_argument(
        "no launcher found (none of OMPI_COMM_WORLD_RANK, PMI_RANK, SLURM_PROCID, "
        "JOB_COMPLETION_INDEX is set): start one process per host with srun, mpirun or a "
        "Kubernetes Indexed Job, or give --rank, --size and --coordinator");
  }
  // The launcher's own variable: under mpirun in an allocation SLURM_LOCALID is the helper's.
  const char* local = l.launcher == "Open MPI"    ? "OMPI_COMM_WORLD_LOCAL_RANK"
                      : l.launcher == "MPICH/PMI" ? "MPI_LOCALRANKID"
                      : l.launcher == "Slurm"     ? "SLURM_LOCALID"
                                                  : nullptr;
  if (const std::string* v = local ? find(env, local) : nullptr) l.local_rank = number(*v, local);
  if (given.size && *given.size != l.size)
    throw std::invalid_argument("--size " + std::to_string(*given.size) + " but " + l.launcher +
                                " says " + std::to_string(l.size) + " (" + l.why + ")");
  if (slurm && l.launcher != "Slurm" && l.launcher != "command line")
    l.why += " (" + assignment(env, "SLURM_PROCID") +
             " is ignored: it numbers the launcher's per-node helpers, not the ranks)";
  if (l.size < 2 || l.size > 65536)
    throw std::invalid_argument("a fleet of " + std::to_string(l.size) + " ranks (" + l.why +
                                "): it needs 2..65536");
  if (l.rank >= l.size)
    throw std::invalid_argument("rank " + std::to_string(l.rank) + " is outside 0.." +
                                std::to_string(l.size - 1) + " (" + l.why + ")");
  if (l.coordinator.empty() && l.rendezvous.empty() && l.rank != 0)
    throw std::invalid_argument(l.launcher +
                                " does not say where rank 0 is: give --coordinator "
                                "HOST[:PORT] or --rendezvous FILE on a filesystem all ranks share");
  if (!l.coordinator.empty() && !given.coordinator.empty())
    l.why += ", coordinator " + l.coordinator + " (--coordinator)";
  if (!l.rendezvous.empty()) l.why += ", rendezvous file " + l.rendezvous;
  return l;
}

}  // namespace mtperf::fleet
