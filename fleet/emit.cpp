#include "fleet/emit.hpp"

#include <stdexcept>

#include <fmt/format.h>

namespace mtperf::fleet {
namespace {

std::string command(const std::vector<std::string>& args) {
  std::string out = "mtperf fleet";
  for (const auto& a : args)
    out += " " + shell_quote(a);
  return out;
}

// The fleet's key as a file every host reads from a shared filesystem, made before the ranks
// start (mode 600, this user's alone) and never written into the recipe or a command line.
constexpr const char* kKeyFileLines =
    "# The fleet's key: a file on a filesystem every host shares, readable by this user alone\n"
    "# (made once, kept for the next runs). It never appears on a command line.\n"
    "key=\"${MTPERF_KEY_FILE:-$HOME/.mtperf/fleet.key}\"\n"
    "if [ ! -s \"$key\" ]; then\n"
    "  (umask 077 && mkdir -p \"$(dirname \"$key\")\" &&\n"
    "   head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \\n' >\"$key\")\n"
    "fi\n";

std::string slurm(const EmitOptions& o) {
  return fmt::format(
      "#!/bin/bash\n"
      "# One mtperf fleet rank per node; rank 0 (the first node of the step) coordinates.\n"
      "#SBATCH --job-name={}\n"
      "#SBATCH --nodes={}\n"
      "#SBATCH --ntasks-per-node=1\n"
      "#SBATCH --exclusive\n"
      "set -e\n"
      "{}"
      "srun --nodes={} --ntasks-per-node=1 {} --key-file \"$key\" --format json "
      "-o fleet-$SLURM_JOB_ID.json\n",
      o.name, o.size, kKeyFileLines, o.size, command(o.args));
}

std::string mpirun(const EmitOptions& o) {
  return fmt::format(
      "# One rank per host of HOSTFILE; rank 0 writes its address into the rendezvous file,\n"
      "# which must be on a filesystem every host shares. No MPI library is used by mtperf.\n"
      "set -e\n"
      "{}"
      "mpirun -np {} --map-by ppr:1:node --hostfile HOSTFILE {} --key-file \"$key\" "
      "--rendezvous \"$PWD/.mtperf-fleet-rendezvous\" --format json -o fleet.json\n",
      kKeyFileLines, o.size, command(o.args));
}

std::string pdsh(const EmitOptions& o) {
  return fmt::format(
      "# pdsh's %n is the host's index in -w's list, which makes it the rank; the first host\n"
      "# is rank 0 and the coordinator.\n"
      "set -e\n"
      "{}"
      "pdsh -w HOST0,HOST1,... -f {} \"{} --key-file $key --rank %n --size {} "
      "--coordinator HOST0\"\n",
      kKeyFileLines, o.size, command(o.args), o.size);
}

std::string kubernetes(const EmitOptions& o) {
  std::string args;
  for (const auto& a : o.args)
    args += fmt::format("        - {}\n", a.empty() ? "\"\"" : "'" + a + "'");
  // The key from a Secret, mounted as a file only this container's user reads.
  const std::string secret = o.key_secret.empty() ? o.name + "-key" : o.key_secret;
  const std::string key_arg = "        - --key-file\n        - /etc/mtperf-key/key\n";
  const std::string key_mount =
      "        volumeMounts:\n"
      "        - name: fleet-key\n"
      "          mountPath: /etc/mtperf-key\n"
      "          readOnly: true\n";
  const std::string key_volume = fmt::format(
      "      volumes:\n"
      "      - name: fleet-key\n"
      "        secret:\n"
      "          secretName: {}\n"
      "          defaultMode: 0400\n",
      secret);
  std::string security = o.rdma ? "        securityContext:\n"
                                  "          privileged: true\n"
                                  "        resources:\n"
                                  "          limits:\n"
                                  "            rdma/hca_shared_devices_a: 1\n"
                                : "        securityContext:\n"
                                  "          capabilities:\n"
                                  "            add: [\"IPC_LOCK\"]\n";
  return fmt::format(
      "# A headless Service gives rank 0 a stable name, {name}-0.{name}; an Indexed Job runs\n"
      "# one pod per node (anti-affinity), each rank from JOB_COMPLETION_INDEX. The fleet's\n"
      "# key is the Secret {secret}, made once:\n"
      "#   kubectl create secret generic {secret} \\\n"
      "#     --from-file=key=<(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \\n')\n"
      "apiVersion: v1\n"
      "kind: Service\n"
      "metadata:\n"
      "  name: {name}\n"
      "spec:\n"
      "  clusterIP: None\n"
      "  selector:\n"
      "    app: {name}\n"
      "  ports:\n"
      "  - name: fleet\n"
      "    port: 12866\n"
      "---\n"
      "apiVersion: batch/v1\n"
      "kind: Job\n"
      "metadata:\n"
      "  name: {name}\n"
      "spec:\n"
      "  completionMode: Indexed\n"
      "  completions: {size}\n"
      "  parallelism: {size}\n"
      "  backoffLimit: 0\n"
      "  template:\n"
      "    metadata:\n"
      "      labels:\n"
      "        app: {name}\n"
      "    spec:\n"
      "      subdomain: {name}\n"
      "      hostNetwork: true\n"
      "      dnsPolicy: ClusterFirstWithHostNet\n"
      "      restartPolicy: Never\n"
      "      affinity:\n"
      "        podAntiAffinity:\n"
      "          requiredDuringSchedulingIgnoredDuringExecution:\n"
      "          - labelSelector:\n"
      "              matchLabels:\n"
      "                app: {name}\n"
      "            topologyKey: kubernetes.io/hostname\n"
      "      containers:\n"
      "      - name: mtperf\n"
      "        image: {image}\n"
      "        command:\n"
      "        - mtperf\n"
      "        - fleet\n"
      "        - --size\n"
      "        - \"{size}\"\n"
      "        - --coordinator\n"
      "        - {name}-0.{name}\n"
      "{key_arg}{args}{key_mount}{security}{key_volume}",
      fmt::arg("name", o.name), fmt::arg("size", o.size), fmt::arg("image", o.image),
      fmt::arg("args", args), fmt::arg("key_mount", key_mount), fmt::arg("key_arg", key_arg),
      fmt::arg("security", security), fmt::arg("key_volume", key_volume),
      fmt::arg("secret", secret));
}

}  // namespace

std::string shell_quote(const std::string& word) {
  if (!word.empty() &&
      word.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                             "-_./:=,+@%") == std::string::npos)
    return word;
  std::string out = "'";
  for (char c : word)
    out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string emit(const EmitOptions& o) {
  if (o.kind == "slurm") return slurm(o);
  if (o.kind == "mpirun") return mpirun(o);
  if (o.kind == "pdsh") return pdsh(o);
  if (o.kind == "kubernetes") return kubernetes(o);
  throw std::invalid_argument("--emit " + o.kind + ": one of slurm, mpirun, kubernetes, pdsh");
}

}  // namespace mtperf::fleet
